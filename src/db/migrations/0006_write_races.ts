// Access granted at most once, enforced by the database: a contact holds an offer through at most
// one active grant made by hand (purchase_id null), and a purchase gives access through at most
// one active grant. Grants of one offer from different sources may coexist (bought, and also
// granted by hand): each ends with its own source. The domain inserts grants with
// ON CONFLICT DO NOTHING on these indexes (src/domain/offer-grants.ts), so a grant that another
// transaction made first is simply not made again.
//
// Existing data may already hold duplicates (concurrent grants before this migration). Of each
// set of duplicate active grants the oldest (lowest id) stays; the newer ones are revoked now and
// the memberships they gave end now, exactly as a revoke through the API would. The contact keeps
// its access through the grant that stays; the welcome emails the duplicates recorded stay in
// outgoing_messages, as they record what was sent. Nothing is deleted.
import { sql, type Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import type { AppMigration } from './index.js';

/** Active grants of one source: the same contact and offer by hand, or the same purchase. */
const DUPLICATE_OF_OLDER = {
  byHand: sql`offer_grants.purchase_id is null and exists (
    select 1 from offer_grants older
    where older.contact_id = offer_grants.contact_id and older.offer_id = offer_grants.offer_id
      and older.purchase_id is null and older.revoked_at is null and older.id < offer_grants.id)`,
  byPurchase: sql`offer_grants.purchase_id is not null and exists (
    select 1 from offer_grants older
    where older.purchase_id = offer_grants.purchase_id and older.revoked_at is null and older.id < offer_grants.id)`,
};

export const writeRaces: AppMigration = {
  name: '0006_write_races',
  summary: 'Revokes duplicate active offer grants and adds unique indexes on offer_grants.',
  rewritesLargeTable: true,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    const now = t.encodeTimestamp(new Date());
    for (const duplicate of Object.values(DUPLICATE_OF_OLDER)) {
      const newerDuplicates = sql`select offer_grants.id from offer_grants where offer_grants.revoked_at is null and ${duplicate}`;
      // Memberships first: once revoked, the duplicates no longer look like duplicates.
      await sql`update memberships set ended_at = ${now}, updated_at = ${now}
        where ended_at is null and offer_grant_id in (${newerDuplicates})`.execute(db);
      await sql`update offer_grants set revoked_at = ${now}, updated_at = ${now} where id in (${newerDuplicates})`.execute(db);
    }
    await db.schema
      .createIndex('offer_grants_active_hand_uq')
      .on('offer_grants')
      .columns(['contact_id', 'offer_id'])
      .unique()
      .where(sql.ref('purchase_id'), 'is', null)
      .where(sql.ref('revoked_at'), 'is', null)
      .execute();
    await db.schema
      .createIndex('offer_grants_active_purchase_uq')
      .on('offer_grants')
      .column('purchase_id')
      .unique()
      .where(sql.ref('purchase_id'), 'is not', null)
      .where(sql.ref('revoked_at'), 'is', null)
      .execute();
  },
};
