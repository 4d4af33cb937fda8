// `sitebiz import` (src/import/): where each import stands, so an interrupted one continues where it
// stopped. import_runs: one row per source (its base URL and client id) and target account, with
// the id offsets it writes with (all 0 when ids are kept; see docs/import.md) and whether it is
// done. import_pages: each page of each list step that is written, committed in the same
// transaction as the page's records, so a page is either written and checked off or neither.
import type { Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import type { AppMigration } from './index.js';

export const importCheckpoints: AppMigration = {
  name: '0019_import_checkpoints',
  summary: 'Creates import_runs and import_pages (import checkpoints).',
  rewritesLargeTable: false,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    await t
      .addIdColumn(db.schema.createTable('import_runs'))
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('account_id', t.foreignKeyType, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      /** JSON object: table → what is added to the source's ids (all 0: ids kept). */
      .addColumn('id_offsets', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('started_at', t.timestampType, (c) => c.notNull())
      .addColumn('finished_at', t.timestampType)
      .execute();
    await db.schema.createIndex('import_runs_source_idx').on('import_runs').columns(['source', 'status']).execute();
    await db.schema
      .createTable('import_pages')
      .addColumn('run_id', t.foreignKeyType, (c) => c.notNull().references('import_runs.id').onDelete('cascade'))
      /** The list walked, e.g. contacts@site:12; page 0 marks the whole step done. */
      .addColumn('step', 'text', (c) => c.notNull())
      .addColumn('page', 'integer', (c) => c.notNull())
      .addColumn('records', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('import_pages_pk', ['run_id', 'step', 'page'])
      .execute();
  },
};
