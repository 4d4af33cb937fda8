// trigramNarrowed chooses between plans with the same answer: the index's candidates beside the
// exact condition, the candidates' ids (PostgreSQL), or the exact condition alone (the list read in
// its own order) when the index proposes too many rows to read and sort. The answers of every plan
// are compared with the plain definition in test/text-search.test.ts; this checks the choice.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SQLiteDatabase } from '../../src/db/sqlite-driver.js';
import { expressionBuilder, Kysely, SqliteDialect } from 'kysely';
import { postgresTraits, sqliteTraits } from '../../src/db/dialect-traits.js';
import { CONTACT_TEXT_INDEX, TRIGRAM_CANDIDATE_CAP, type TrigramProbe } from '../../src/db/text-search.js';
import { containsText, trigramNarrowed, type AnyEB } from '../../src/jsonapi/resource.js';

describe('trigramNarrowed: which plan a search takes', () => {
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new SQLiteDatabase(':memory:') }) });
  const eb = expressionBuilder<any, any>() as AnyEB;
  const use = { index: CONTACT_TEXT_INDEX, rowId: 'contacts.id', columns: ['email'], texts: ['brennan'] };
  const text = (traits: typeof sqliteTraits, probe: TrigramProbe | undefined) => {
    const ctx = { traits, now: new Date(), table: 'contacts' };
    return db.selectFrom('contacts').select('id').where(trigramNarrowed(eb, ctx, use, containsText(eb, ctx, 'contacts.email', 'brennan'), probe)).compile().sql;
  };

  it('SQLite: the FTS candidates below the cap, and when nothing was asked', () => {
    assert.match(text(sqliteTraits, { candidates: TRIGRAM_CANDIDATE_CAP - 1 }), /"contacts_text" match/);
    assert.match(text(sqliteTraits, { candidates: 0 }), /"contacts_text" match/);
    assert.match(text(sqliteTraits, undefined), /"contacts_text" match/);
  });

  it('PostgreSQL: the candidates’ ids below the cap, the planner’s own choice when nothing was asked', () => {
    assert.match(text(postgresTraits, { candidates: 2, ids: [7, 9] }), /"contacts"\."id" = any\(/);
    assert.doesNotMatch(text(postgresTraits, undefined), /any\(|match/);
  });

  it('reads the list in its own order from the cap on', () => {
    for (const traits of [sqliteTraits, postgresTraits]) {
      const plan = text(traits, { candidates: TRIGRAM_CANDIDATE_CAP });
      assert.doesNotMatch(plan, /match|any\(/);
      assert.match(plan, /like/);
    }
  });
});
