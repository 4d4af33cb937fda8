// The request journal's upstream flag (docs/upstream-strict.md): whether the upstream API would
// accept each journaled request, and if not why ("filter[email_eq] is a sitebiz extension").
// Null for entries written before this migration: they were never classified.
import type { Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import type { AppMigration } from './index.js';

export const journalUpstream: AppMigration = {
  name: '0018_journal_upstream',
  summary: 'Adds the upstream flag and reason to the request journal (nullable columns).',
  rewritesLargeTable: false,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    await db.schema.alterTable('request_journal').addColumn('upstream', t.booleanType).execute();
    await db.schema.alterTable('request_journal').addColumn('upstream_reason', 'text').execute();
  },
};
