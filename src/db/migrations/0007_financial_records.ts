// Money outlives the people who paid it (docs/permissions.md, "Deleting a contact"):
// - customers.contact_id becomes nullable, ON DELETE SET NULL: deleting a contact keeps its
//   customer record (name, email, net revenue) detached, instead of cascading into it;
// - purchases, transactions and orders refer to their customer with ON DELETE NO ACTION instead
//   of CASCADE: a customer that has financial records cannot be deleted on its own (a site's
//   deletion still takes everything of the site in one statement);
// - oauth_grants.family_id: every grant made by refreshing another carries the family of the
//   grant it replaced, so presenting an already exchanged refresh token can revoke the whole
//   family (docs/authentication.md). Existing grants start a family each.
//
// SQLite cannot alter a constraint: the four tables are rebuilt (DialectTraits.alterForeignKeys),
// with the counter triggers dropped and recreated around the rebuild in the same transaction.
import { sql, type Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import { createCounterTriggers, dropCounterTriggers } from '../site-counters.js';
import type { AppMigration } from './index.js';

/** Tables that record money, each referring to the customer who paid. */
const FINANCIAL_TABLES = ['purchases', 'transactions', 'orders'] as const;

export const financialRecords: AppMigration = {
  name: '0007_financial_records',
  summary: 'Keeps financial records when a contact or customer goes: rebuilds customers, purchases, transactions and orders on SQLite, changes their foreign keys on PostgreSQL; adds oauth_grants.family_id.',
  rewritesLargeTable: true,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    await t.withTablesReplaceable(db, async (trx) => {
      await dropCounterTriggers(trx, t.name);
      await t.alterForeignKeys(trx, 'customers', [{ column: 'contact_id', references: 'contacts', onDelete: 'set null', nullable: true }]);
      for (const table of FINANCIAL_TABLES) {
        await t.alterForeignKeys(trx, table, [{ column: 'customer_id', references: 'customers', onDelete: 'no action', nullable: false }]);
      }
      await createCounterTriggers(trx, t.name);
    });

    await db.schema.alterTable('oauth_grants').addColumn('family_id', 'text').execute();
    await sql`update oauth_grants set family_id = cast(id as text)`.execute(db);
    await db.schema.createIndex('oauth_grants_family_idx').on('oauth_grants').columns(['family_id']).execute();
  },
};
