// The sandbox's records about sites (docs/permissions.md, "The sandbox and sites"):
// - request_journal.user_id, site_ids, site_count: the user whose key made the request, and the
//   sites the request's reads and writes reached, as ",1,2," (every id between commas, ascending;
//   "" for none) and how many. A user limited to some sites sees an entry only when each of them
//   is one of its sites, or, for an entry about no site, when it made the request.
// - sandbox_faults.user_id, site_ids, site_count: who created the fault, and the sites it is
//   limited to, in the same form ("" and 0: the whole account). A fault limited to sites answers
//   only requests of keys whose every site is among them.
// Entries and faults written before this migration are about no site and of no user: only
// principals reaching every site see them, as before.
import type { Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import type { AppMigration } from './index.js';

export const sandboxSiteScope: AppMigration = {
  name: '0016_sandbox_site_scope',
  summary: 'Adds user and site columns to the request journal and sandbox faults.',
  rewritesLargeTable: false,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    for (const table of ['request_journal', 'sandbox_faults']) {
      // No foreign key: like client_id, the row outlives a deleted user.
      await db.schema.alterTable(table).addColumn('user_id', t.foreignKeyType).execute();
      await db.schema.alterTable(table).addColumn('site_ids', 'text', (c) => c.notNull().defaultTo('')).execute();
      await db.schema.alterTable(table).addColumn('site_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    }
  },
};
