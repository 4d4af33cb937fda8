// Sandbox snapshots (src/sandbox/snapshots.ts, docs/sandbox.md "Reset and snapshots"):
// - snapshots: one named save point of an account's data; `seed` is the one taken when the account
//   was seeded, which POST /v1/test_helpers/reset goes back to. It keeps the account's clock
//   offset at that moment (a restore sets the clock back to it) and the rows saved per table.
// - snapshot_<table>, one per data table (src/db/account-data.ts): the saved rows, a snapshot_id
//   followed by every column of the table as it is here, without keys, constraints or triggers, so
//   that saving and restoring are each one INSERT ... SELECT per table. A later migration that adds
//   a column to a data table adds it to the copy too (test/sandbox/account-data.test.ts checks);
//   one that adds a data table creates its copy the same way.
// - Indexes on the two foreign keys to rows that exist by the thousand per site that had none
//   (memberships.offer_grant_id, outgoing_messages.contact_id): deleting an offer grant or a
//   contact checks the rows referring to it, and without an index each check reads the whole
//   table (a restore deletes every grant and contact of the account: minutes at 100,000 contacts).
// - PostgreSQL: the counter upkeep functions learn to stand aside for one transaction, which a
//   restore asks of them before it rewrites every row of the account (withCounterUpkeepSuspended
//   in src/db/site-counters.ts).
import { sql, type Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import { createCounterTriggers } from '../site-counters.js';
import type { AppMigration } from './index.js';

/** The data tables as of this migration (frozen: a migration never changes once shipped). */
const DATA_TABLES = [
  'contacts', 'customers', 'contact_tags', 'contact_taggings', 'custom_fields', 'contact_notes', 'products', 'offers',
  'offer_products', 'courses', 'modules', 'lessons', 'media', 'podcasts', 'podcast_episodes', 'email_sequences',
  'newsletters', 'forms', 'form_fields', 'form_tags', 'form_email_sequences', 'form_submissions', 'landing_pages',
  'website_pages', 'blogs', 'blog_posts', 'purchases', 'offer_grants', 'memberships', 'transactions',
  'purchase_transactions', 'orders', 'order_items', 'kajabi_payments_payouts', 'events', 'event_registrations',
  'assessments', 'assessment_attempts', 'newsletter_subscriptions', 'email_sequence_subscriptions', 'email_broadcasts',
  'email_events', 'outgoing_messages',
];

/** Creates the copy table of a data table: snapshot_id, then the table's columns and types. */
export async function createSnapshotTable(db: Kysely<unknown>, table: string): Promise<void> {
  const copy = `snapshot_${table}`;
  await sql.raw(`create table ${copy} as select cast(0 as bigint) as snapshot_id, ${table}.* from ${table} where 1 = 0`).execute(db);
  await sql.raw(`create index ${copy}_snapshot_idx on ${copy} (snapshot_id)`).execute(db);
}

export const snapshots: AppMigration = {
  name: '0013_snapshots',
  summary: 'Creates the sandbox snapshot tables.',
  rewritesLargeTable: false,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    await t
      .addIdColumn(db.schema.createTable('snapshots'))
      .addColumn('account_id', t.foreignKeyType, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('clock_offset_ms', 'bigint', (c) => c.notNull())
      /** JSON object: rows saved per data table. */
      .addColumn('row_counts', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestampType, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('snapshots_account_name_idx').on('snapshots').columns(['account_id', 'name']).unique().execute();
    for (const table of DATA_TABLES) await createSnapshotTable(db, table);
    await db.schema.createIndex('memberships_offer_grant_idx').on('memberships').column('offer_grant_id').execute();
    await db.schema.createIndex('outgoing_messages_contact_idx').on('outgoing_messages').column('contact_id').execute();
    if (t.name === 'postgres') await createCounterTriggers(db, t.name);
  },
};
