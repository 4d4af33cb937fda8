// Codecs: every attribute type written with the dialect's encoders round-trips through the API
// unchanged, on every database; and the decoders turn driver values into API values.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { postgresTraits, sqliteTraits, type DialectTraits } from '../../src/db/dialect-traits.js';
import { decoderFor } from '../../src/jsonapi/codecs.js';
import { DIALECTS } from '../support/harness.js';
import { INTEGER_RANGES } from '../../src/jsonapi/predicates.js';
import { createFixtureApp, getOk, idsOf, insertSpecimens, path, type FixtureApp, type Json, type SpecimenRow } from './fixtures.js';

const MAX_SAFE = Number.MAX_SAFE_INTEGER; // 9007199254740991, the largest id
// Integer attributes take 32-bit values (INTEGER_RANGES): filters refuse more. The specimens'
// count column is int8 all the same, so PostgreSQL still hands the codec strings.
const [INT_MIN, INT_MAX] = INTEGER_RANGES.integer;

const SPECIMENS: SpecimenRow[] = [
  {
    id: 1,
    flag: true,
    happened_at: new Date('2026-01-02T03:04:05.678Z'),
    count: INT_MAX,
    amount: 1.5,
    doc: { a: 1, nested: { b: [1, 'two', null, true, 2.5] }, 'ünï': 'cödé ☃' },
    ref_id: MAX_SAFE,
    label: 'héllo "quoted" ☃ \\ back',
  },
  {
    id: 2,
    flag: false,
    happened_at: new Date('1999-12-31T23:59:59.999Z'),
    count: -42,
    amount: -0.25,
    doc: [1, 2, 3],
    ref_id: 2,
    label: '',
  },
  { id: 3 },
  { id: 4, flag: true, happened_at: new Date('2026-06-01T00:00:00.000Z'), count: 0, amount: 0, doc: {}, ref_id: 1, label: 'x' },
  { id: 5, happened_at: new Date('2026-01-02T03:04:05.677Z'), count: INT_MIN, amount: 0.1, doc: 'a json string' },
  { id: 6, happened_at: new Date('2026-01-02T03:04:05.679Z'), amount: 123456.789, doc: '123' },
  { id: 7, amount: 1e-7, doc: 42 },
  { id: 8, doc: false },
  { id: 9, doc: [] },
  { id: 10, doc: null },
];

/** What the API must render for each specimen, attribute by attribute. */
const EXPECTED: Record<number, Record<string, unknown>> = {
  1: {
    flag: true,
    happened_at: '2026-01-02T03:04:05.678Z',
    count: INT_MAX,
    amount: 1.5,
    doc: { a: 1, nested: { b: [1, 'two', null, true, 2.5] }, 'ünï': 'cödé ☃' },
    ref: String(MAX_SAFE),
    label: 'héllo "quoted" ☃ \\ back',
  },
  2: { flag: false, happened_at: '1999-12-31T23:59:59.999Z', count: -42, amount: -0.25, doc: [1, 2, 3], ref: '2', label: '' },
  3: { flag: null, happened_at: null, count: null, amount: null, doc: null, ref: null, label: null },
  4: { flag: true, happened_at: '2026-06-01T00:00:00.000Z', count: 0, amount: 0, doc: {}, ref: '1', label: 'x' },
  5: { flag: null, happened_at: '2026-01-02T03:04:05.677Z', count: INT_MIN, amount: 0.1, doc: 'a json string', ref: null, label: null },
  6: { flag: null, happened_at: '2026-01-02T03:04:05.679Z', count: null, amount: 123456.789, doc: '123', ref: null, label: null },
  7: { flag: null, happened_at: null, count: null, amount: 1e-7, doc: 42, ref: null, label: null },
  8: { flag: null, happened_at: null, count: null, amount: null, doc: false, ref: null, label: null },
  9: { flag: null, happened_at: null, count: null, amount: null, doc: [], ref: null, label: null },
  10: { flag: null, happened_at: null, count: null, amount: null, doc: null, ref: null, label: null },
};

const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

for (const dialect of DIALECTS) {
  describe(`engine: codecs round-trip [${dialect}]`, () => {
    let t: FixtureApp;
    let token: string;
    before(async () => {
      t = await createFixtureApp(dialect);
      token = await t.token();
      await insertSpecimens(t.handle, t.tenant.siteId, SPECIMENS);
    });
    after(() => t.close());

    it('renders every attribute type of every specimen exactly, in lists', async () => {
      const doc = await getOk(t, '/v1/specimens?sort=id', token);
      assert.deepEqual(idsOf(doc), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      for (const record of doc.data as Json[]) {
        assert.equal(typeof record.id, 'string');
        assert.deepEqual(record.attributes, EXPECTED[Number(record.id)], `specimen ${record.id}`);
      }
    });

    it('renders the same on show', async () => {
      for (const id of [1, 2, 3, 5, 6]) {
        const doc = await getOk(t, `/v1/specimens/${id}`, token);
        assert.equal(doc.data.id, String(id));
        assert.deepEqual(doc.data.attributes, EXPECTED[id]);
      }
    });

    it('renders datetimes as YYYY-MM-DDTHH:mm:ss.sssZ and orders them by the millisecond', async () => {
      const doc = await getOk(t, '/v1/specimens?sort=happened_at&filter[happened_at_null]=false', token);
      assert.deepEqual(idsOf(doc), [2, 5, 1, 6, 4]);
      for (const r of doc.data as Json[]) assert.match(r.attributes.happened_at, ISO_MILLIS);
    });

    it('finds each record again by filtering on the value it rendered', async () => {
      const list = await getOk(t, '/v1/specimens?sort=id', token);
      const rendered = new Map((list.data as Json[]).map((r) => [Number(r.id), r.attributes]));
      const find = async (params: Record<string, string>) => idsOf(await getOk(t, path('/v1/specimens', { ...params, sort: 'id' }), token));
      for (const id of [1, 2, 4, 5, 6]) {
        assert.deepEqual(await find({ 'filter[happened_at_eq]': rendered.get(id)!.happened_at }), [id], `happened_at of ${id}`);
      }
      assert.deepEqual(await find({ 'filter[flag_eq]': 'true' }), [1, 4]);
      assert.deepEqual(await find({ 'filter[flag_eq]': 'false' }), [2]);
      assert.deepEqual(await find({ 'filter[flag_null]': 'true' }), [3, 5, 6, 7, 8, 9, 10]);
      assert.deepEqual(await find({ 'filter[count_eq]': String(INT_MAX) }), [1]);
      assert.deepEqual(await find({ 'filter[count_eq]': String(INT_MIN) }), [5]);
      assert.deepEqual(await find({ 'filter[count_lt]': '0' }), [2, 5]);
      assert.deepEqual(await find({ 'filter[ref_eq]': String(MAX_SAFE) }), [1]);
      assert.deepEqual(await find({ 'filter[ref_in]': '1,2' }), [2, 4]);
      assert.deepEqual(await find({ 'filter[amount_eq]': '-0.25' }), [2]);
      assert.deepEqual(await find({ 'filter[amount_eq]': '0.1' }), [5]);
      assert.deepEqual(await find({ 'filter[amount_gt]': '0' }), [1, 5, 6, 7]);
      assert.deepEqual(await find({ 'filter[label_eq]': 'héllo "quoted" ☃ \\ back' }), [1]);
      assert.deepEqual(await find({ 'filter[label_eq]': '' }), [2]);
      assert.deepEqual(await find({ 'filter[label_cont]': '☃ \\' }), [1]);
      // SQL NULL and JSON null both read as null.
      assert.deepEqual(await find({ 'filter[doc_null]': 'true' }), [3]);
      // A JSON null is a stored JSON value: it renders as null but is not SQL NULL.
      assert.deepEqual(await find({ 'filter[doc_null]': 'false' }), [1, 2, 4, 5, 6, 7, 8, 9, 10]);
    });

    it('sorts booleans false < true with nulls last, the same on both databases', async () => {
      assert.deepEqual(idsOf(await getOk(t, '/v1/specimens?sort=flag&page[size]=4', token)), [2, 1, 4, 3]);
      assert.deepEqual(idsOf(await getOk(t, '/v1/specimens?sort=-flag&page[size]=10', token)), [10, 9, 8, 7, 6, 5, 3, 4, 1, 2]);
    });
  });
}

describe('engine: decoders of driver values', () => {
  // [traits, attribute type, driver value, API value]
  const CASES: Array<[DialectTraits, Parameters<typeof decoderFor>[0], unknown, unknown]> = [
    // SQLite: integers for booleans, text for timestamps and JSON
    [sqliteTraits, 'boolean', 1, true],
    [sqliteTraits, 'boolean', 0, false],
    [sqliteTraits, 'boolean', null, null],
    [sqliteTraits, 'datetime', '2026-01-02T03:04:05.678Z', '2026-01-02T03:04:05.678Z'],
    [sqliteTraits, 'datetime', null, null],
    [sqliteTraits, 'json', '{"a":[1,null]}', { a: [1, null] }],
    [sqliteTraits, 'json', '"text"', 'text'],
    [sqliteTraits, 'json', '"123"', '123'],
    [sqliteTraits, 'json', 'null', null],
    [sqliteTraits, 'json', null, null],
    [sqliteTraits, 'integer', 42, 42],
    [sqliteTraits, 'number', 12.5, 12.5],
    [sqliteTraits, 'id', 7, '7'],
    [sqliteTraits, 'string', 'x', 'x'],
    [sqliteTraits, 'string', null, null],
    // PostgreSQL: booleans, Date objects, parsed jsonb, strings for bigint and numeric
    [postgresTraits, 'boolean', true, true],
    [postgresTraits, 'boolean', false, false],
    [postgresTraits, 'boolean', null, null],
    [postgresTraits, 'datetime', new Date('2026-01-02T03:04:05.678Z'), '2026-01-02T03:04:05.678Z'],
    [postgresTraits, 'datetime', new Date('2026-01-02T03:04:05.000Z'), '2026-01-02T03:04:05.000Z'],
    [postgresTraits, 'datetime', null, null],
    [postgresTraits, 'json', { a: [1, null] }, { a: [1, null] }],
    [postgresTraits, 'json', [1, 2], [1, 2]],
    [postgresTraits, 'json', 'text', 'text'],
    [postgresTraits, 'json', '123', '123'],
    [postgresTraits, 'json', 42, 42],
    [postgresTraits, 'json', false, false],
    [postgresTraits, 'json', null, null],
    [postgresTraits, 'integer', '9007199254740991', MAX_SAFE],
    [postgresTraits, 'integer', 42, 42],
    [postgresTraits, 'number', '12.50', 12.5],
    [postgresTraits, 'number', 0.1, 0.1],
    [postgresTraits, 'id', '9007199254740991', '9007199254740991'],
    [postgresTraits, 'id', null, null],
  ];
  for (const [traits, type, driver, api] of CASES) {
    it(`${traits.name} ${type}: ${JSON.stringify(driver) ?? String(driver)} → ${JSON.stringify(api)}`, () => {
      assert.deepEqual(decoderFor(type, traits)(driver), api);
    });
  }

  for (const traits of [sqliteTraits, postgresTraits]) {
    it(`${traits.name}: encodes what it decodes`, () => {
      assert.deepEqual(traits.encodeBoolean(true), traits.name === 'sqlite' ? 1 : true);
      assert.deepEqual(traits.encodeBoolean(false), traits.name === 'sqlite' ? 0 : false);
      assert.equal(traits.encodeTimestamp(new Date('2026-01-02T03:04:05.6Z')), '2026-01-02T03:04:05.600Z');
      assert.equal(traits.encodeJson({ a: ['b'] }), '{"a":["b"]}');
      assert.equal(traits.encodeJson('s'), '"s"');
    });
  }
});
