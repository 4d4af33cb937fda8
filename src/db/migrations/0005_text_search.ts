// Trigram indexes for substring search over the contact columns that contacts and customers
// filter on (filter[search], filter[<field>_contains]): an FTS5 trigram table kept by triggers on
// SQLite, a pg_trgm GIN index on PostgreSQL. See src/db/text-search.ts.
//
// A change of the indexed columns is a new migration that drops this index and creates the new one.
import type { Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import { CONTACT_TEXT_INDEX, createTrigramIndex } from '../text-search.js';
import type { AppMigration } from './index.js';

export const textSearch: AppMigration = {
  name: '0005_text_search',
  summary: 'Builds the trigram search index over contacts (FTS5 table on SQLite, pg_trgm GIN index on PostgreSQL).',
  rewritesLargeTable: true,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    await createTrigramIndex(db, t.name, CONTACT_TEXT_INDEX);
  },
};
