// trigramNarrowed chooses between two plans with the same answer: the index's candidates beside
// the exact condition, or the exact condition alone (the list read in its own order) when the
// index proposes too many rows to read and sort. The answers of both are compared with the plain
// definition in test/text-search.test.ts; this checks the choice itself.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expressionBuilder, Kysely, SqliteDialect } from 'kysely';
import SQLite from 'better-sqlite3';
import { sqliteTraits } from '../../src/db/dialect-traits.js';
import { CONTACT_TEXT_INDEX, TRIGRAM_CANDIDATE_CAP } from '../../src/db/text-search.js';
import { containsText, trigramNarrowed, type AnyEB } from '../../src/jsonapi/resource.js';

describe('trigramNarrowed: index candidates or the exact condition alone', () => {
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) });
  const eb = expressionBuilder<any, any>() as AnyEB;
  const ctx = { traits: sqliteTraits, now: new Date(), table: 'contacts' };
  const use = { index: CONTACT_TEXT_INDEX, rowId: 'contacts.id', columns: ['email'], texts: ['brennan'] };
  const text = (candidates: unknown) =>
    db.selectFrom('contacts').select('id').where(trigramNarrowed(eb, ctx, use, containsText(eb, ctx, 'contacts.email', 'brennan'), candidates)).compile().sql;

  it('uses the index below the cap, and when nothing was asked', () => {
    assert.match(text(TRIGRAM_CANDIDATE_CAP - 1), /"contacts_text" match/);
    assert.match(text(0), /"contacts_text" match/);
    assert.match(text(undefined), /"contacts_text" match/);
  });

  it('reads the list in its own order from the cap on', () => {
    assert.doesNotMatch(text(TRIGRAM_CANDIDATE_CAP), /match/);
    assert.match(text(TRIGRAM_CANDIDATE_CAP), /like/);
  });
});
