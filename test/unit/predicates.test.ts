// The predicate grammar, pure: which suffixes apply to which types, how values are read (per
// dialect, since booleans and timestamps are encoded for the driver), and the SQL they become.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import { escapeLike, postgresTraits, sqliteTraits, type DialectTraits } from '../../src/db/dialect-traits.js';
import { ApiError } from '../../src/jsonapi/errors.js';
import {
  coerceScalar,
  parseBoolean,
  parsePredicateValue,
  parseTimestamp,
  PREDICATE_MEANINGS,
  PREDICATES_BY_TYPE,
  predicateCondition,
  SUFFIXES_LONGEST_FIRST,
  type PredicateSuffix,
} from '../../src/jsonapi/predicates.js';
import type { AttributeType } from '../../src/jsonapi/resource.js';

const TRAITS: DialectTraits[] = [sqliteTraits, postgresTraits];

/** Asserts that `run` throws a 400 naming `parameter`. */
function assertBadParameter(run: () => unknown, parameter: string): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof ApiError, String(error));
    assert.equal(error.status, 400);
    assert.equal(error.errors[0]?.code, 'invalid_parameter');
    assert.deepEqual(error.errors[0]?.source, { parameter });
    return true;
  });
}

describe('the predicate grammar', () => {
  it('gives each attribute type exactly these suffixes', () => {
    assert.deepEqual(PREDICATES_BY_TYPE, {
      string: ['eq', 'not_eq', 'cont', 'i_cont', 'not_cont', 'start', 'end', 'gt', 'gte', 'gteq', 'lt', 'lte', 'lteq', 'in', 'not_in', 'null'],
      integer: ['eq', 'not_eq', 'gt', 'gte', 'gteq', 'lt', 'lte', 'lteq', 'in', 'not_in', 'null'],
      number: ['eq', 'not_eq', 'gt', 'gte', 'gteq', 'lt', 'lte', 'lteq', 'in', 'not_in', 'null'],
      id: ['eq', 'not_eq', 'in', 'not_in', 'null'],
      datetime: ['eq', 'not_eq', 'gt', 'gte', 'gteq', 'lt', 'lte', 'lteq', 'in', 'not_in', 'null', 'cont', 'not_cont', 'start', 'end'],
      boolean: ['eq', 'not_eq', 'null'],
      json: ['null'],
    });
  });

  it('documents every suffix', () => {
    assert.deepEqual(Object.keys(PREDICATE_MEANINGS).sort(), [...SUFFIXES_LONGEST_FIRST].sort());
    for (const meaning of Object.values(PREDICATE_MEANINGS)) assert.ok(meaning.length > 5);
  });

  it('tries a suffix before every suffix it ends with (not_eq before eq, i_cont before cont)', () => {
    const order = (s: PredicateSuffix) => SUFFIXES_LONGEST_FIRST.indexOf(s);
    const pairs: Array<[PredicateSuffix, PredicateSuffix]> = [];
    for (const longer of SUFFIXES_LONGEST_FIRST) {
      for (const shorter of SUFFIXES_LONGEST_FIRST) {
        if (longer !== shorter && longer.endsWith(`_${shorter}`)) pairs.push([longer, shorter]);
      }
    }
    assert.deepEqual(pairs.map((p) => p.join('>')).sort(), ['i_cont>cont', 'not_cont>cont', 'not_eq>eq', 'not_in>in']);
    for (const [longer, shorter] of pairs) assert.ok(order(longer) < order(shorter), `${longer} before ${shorter}`);
  });
});

describe('escapeLike', () => {
  const CASES: Array<[string, string]> = [
    ['plain', 'plain'],
    ['50%', '50\\%'],
    ['a_b', 'a\\_b'],
    ['back\\slash', 'back\\\\slash'],
    ['%_\\', '\\%\\_\\\\'],
    ['', ''],
  ];
  for (const [raw, escaped] of CASES) {
    it(`${JSON.stringify(raw)} → ${JSON.stringify(escaped)}`, () => assert.equal(escapeLike(raw), escaped));
  }
});

describe('parseTimestamp', () => {
  // [text, ISO string or undefined]
  const CASES: Array<[string, string | undefined]> = [
    ['2026-06-01', '2026-06-01T00:00:00.000Z'],
    [' 2026-06-01 ', '2026-06-01T00:00:00.000Z'],
    ['2026-06-01T12:30', '2026-06-01T12:30:00.000Z'],
    ['2026-06-01T12:30:45', '2026-06-01T12:30:45.000Z'],
    ['2026-06-01 12:30:45', '2026-06-01T12:30:45.000Z'],
    ['2026-06-01T12:30:45.1Z', '2026-06-01T12:30:45.100Z'],
    ['2026-06-01T12:30:45.123Z', '2026-06-01T12:30:45.123Z'],
    ['2026-06-01T12:30:45.123456789Z', '2026-06-01T12:30:45.123Z'],
    ['2026-06-01T12:30:45.123', '2026-06-01T12:30:45.123Z'],
    ['2026-06-01T12:30:45+02:00', '2026-06-01T10:30:45.000Z'],
    ['2026-06-01T12:30:45-0130', '2026-06-01T14:00:45.000Z'],
    ['2026-06-01t12:30:45z', '2026-06-01T12:30:45.000Z'],
    ['2026-06-01T00:30:00+01:00', '2026-05-31T23:30:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29', '2000-02-29T00:00:00.000Z'],
    ['2026-12-31T23:59:59.999Z', '2026-12-31T23:59:59.999Z'],
    // not dates
    ['', undefined],
    ['yesterday', undefined],
    ['2026', undefined],
    ['2026-06', undefined],
    ['26-06-01', undefined],
    ['2026/06/01', undefined],
    ['2026-06-01Z', undefined],
    ['2026-06-01T12', undefined],
    ['2026-06-01T12:30:45+02', undefined],
    ['1780315200000', undefined],
    // impossible calendar dates are refused, not rolled into the next month
    ['2026-13-01', undefined],
    ['2026-00-10', undefined],
    ['2026-06-00', undefined],
    ['2026-06-31', undefined],
    ['2026-02-29', undefined],
    ['2026-02-30', undefined],
    ['2026-02-30T10:00:00Z', undefined],
    ['1900-02-29', undefined],
    ['2026-04-31', undefined],
    // years 1 to 9999 in UTC only (PostgreSQL has no year 0; SQLite compares the ISO text)
    ['0001-01-01', '0001-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['0000-01-01', undefined],
    ['9999-12-31T23:30:00-01:00', undefined],
    // impossible times
    ['2026-06-01T25:00:00Z', undefined],
    ['2026-06-01T12:60:00Z', undefined],
    ['2026-06-01T12:00:60Z', undefined],
  ];
  for (const [text, iso] of CASES) {
    it(`${JSON.stringify(text)} → ${iso ?? 'undefined'}`, () => {
      assert.equal(parseTimestamp(text)?.toISOString(), iso);
    });
  }
});

describe('parseBoolean', () => {
  const CASES: Array<[string, boolean | 'error']> = [
    ['true', true],
    ['TRUE', true],
    [' True ', true],
    ['1', true],
    ['false', false],
    ['False', false],
    ['0', false],
    ['yes', 'error'],
    ['no', 'error'],
    ['', 'error'],
    ['2', 'error'],
  ];
  for (const [raw, expected] of CASES) {
    it(`${JSON.stringify(raw)} → ${String(expected)}`, () => {
      if (expected === 'error') assertBadParameter(() => parseBoolean(raw, 'filter[x]'), 'filter[x]');
      else assert.equal(parseBoolean(raw, 'filter[x]'), expected);
    });
  }
});

/** An expected value per dialect, or the same for both. */
type PerDialect = unknown | { sqlite: unknown; postgres: unknown };
const perDialect = (v: PerDialect, traits: DialectTraits): unknown =>
  v !== null && typeof v === 'object' && 'sqlite' in v && 'postgres' in v ? (v as Record<string, unknown>)[traits.name] : v;
const ERROR = Symbol('error');

describe('coerceScalar', () => {
  // [type, raw, expected (ERROR: a 400 naming the parameter)]
  const CASES: Array<[AttributeType, string, PerDialect | typeof ERROR]> = [
    ['string', 'Any text, even 1', 'Any text, even 1'],
    ['string', '', ''],
    ['integer', '12', 12],
    ['integer', ' 12 ', 12],
    ['integer', '-3', -3],
    ['integer', '0', 0],
    ['integer', '1.5', ERROR],
    ['integer', '1e3', ERROR],
    ['integer', '', ERROR],
    ['integer', 'twelve', ERROR],
    ['id', '42', 42],
    ['id', '4x', ERROR],
    ['number', '1.5', 1.5],
    ['number', '-0.25', -0.25],
    ['number', '42', 42],
    ['number', '1e3', ERROR], // plain decimal notation only
    ['number', '0x10', ERROR],
    ['number', '', ERROR],
    ['number', ' ', ERROR],
    ['number', 'Infinity', ERROR],
    ['number', 'NaN', ERROR],
    ['number', 'cheap', ERROR],
    ['boolean', 'true', { sqlite: 1, postgres: true }],
    ['boolean', '0', { sqlite: 0, postgres: false }],
    ['boolean', 'maybe', ERROR],
    ['datetime', '2026-01-01', '2026-01-01T00:00:00.000Z'],
    ['datetime', '2026-01-01T10:00:00+01:00', '2026-01-01T09:00:00.000Z'],
    ['datetime', '2026-02-30', ERROR],
    ['datetime', 'soon', ERROR],
    ['json', '{}', ERROR],
  ];
  for (const traits of TRAITS) {
    for (const [type, raw, expected] of CASES) {
      it(`${traits.name}: ${type} ${JSON.stringify(raw)}`, () => {
        if (expected === ERROR) assertBadParameter(() => coerceScalar(type, raw, 'filter[p]', traits), 'filter[p]');
        else assert.deepEqual(coerceScalar(type, raw, 'filter[p]', traits), perDialect(expected, traits));
      });
    }
  }
});

describe('parsePredicateValue', () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => String(i)).join(',');
  // [type, suffix, raw, expected (ERROR: a 400 naming the parameter)]
  const CASES: Array<[AttributeType, PredicateSuffix, string, PerDialect | typeof ERROR]> = [
    // LIKE patterns, with wildcards in the text escaped
    ['string', 'cont', 'abc', '%abc%'],
    ['string', 'i_cont', 'abc', '%abc%'],
    ['string', 'not_cont', 'abc', '%abc%'],
    ['string', 'start', 'abc', 'abc%'],
    ['string', 'end', 'abc', '%abc'],
    ['string', 'cont', '50%_\\', '%50\\%\\_\\\\%'],
    ['string', 'start', '%', '\\%%'],
    ['string', 'cont', ' ', '% %'],
    ['string', 'cont', '', ERROR],
    ['string', 'start', '', ERROR],
    // scalars
    ['string', 'eq', 'x', 'x'],
    ['string', 'not_eq', '', ''],
    ['integer', 'gt', '5', 5],
    ['integer', 'lteq', 'x', ERROR],
    ['number', 'gte', '2.5', 2.5],
    ['id', 'eq', '7', 7],
    ['boolean', 'eq', 'true', { sqlite: 1, postgres: true }],
    ['boolean', 'not_eq', 'false', { sqlite: 0, postgres: false }],
    ['boolean', 'eq', 'yes', ERROR],
    ['datetime', 'lt', '2026-06-01T12:00:00.5Z', '2026-06-01T12:00:00.500Z'],
    ['datetime', 'gt', 'tomorrow', ERROR],
    // lists
    ['string', 'in', 'a, b,,c', ['a', 'b', 'c']],
    ['string', 'not_in', 'a', ['a']],
    ['string', 'in', ' , ', ERROR],
    ['string', 'in', '', ERROR],
    ['integer', 'in', '1,2,3', [1, 2, 3]],
    ['integer', 'in', '1,x', ERROR],
    ['id', 'not_in', '4, 5', [4, 5]],
    ['number', 'in', '0.5,1', [0.5, 1]],
    ['datetime', 'in', '2026-01-01,2026-01-02T10:00:00+01:00', ['2026-01-01T00:00:00.000Z', '2026-01-02T09:00:00.000Z']],
    ['integer', 'in', many(500), Array.from({ length: 500 }, (_, i) => i)],
    ['integer', 'in', many(501), ERROR],
    // null tests take a boolean whatever the type
    ['string', 'null', 'true', true],
    ['json', 'null', 'false', false],
    ['datetime', 'null', '1', true],
    ['integer', 'null', 'maybe', ERROR],
  ];
  for (const traits of TRAITS) {
    for (const [type, suffix, raw, expected] of CASES) {
      const shown = raw.length > 40 ? `${raw.slice(0, 20)}…(${raw.split(',').length} items)` : JSON.stringify(raw);
      it(`${traits.name}: ${type} _${suffix} ${shown}`, () => {
        const parse = () => parsePredicateValue(type, suffix, raw, 'filter[p]', traits);
        if (expected === ERROR) assertBadParameter(parse, 'filter[p]');
        else assert.deepEqual(parse(), perDialect(expected, traits));
      });
    }
  }
});

describe('predicateCondition', () => {
  const compilers = {
    sqlite: new Kysely<Record<string, Record<string, unknown>>>({
      dialect: {
        createAdapter: () => new SqliteAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (db) => new SqliteIntrospector(db),
        createQueryCompiler: () => new SqliteQueryCompiler(),
      },
    }),
    postgres: new Kysely<Record<string, Record<string, unknown>>>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (db) => new PostgresIntrospector(db),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
    }),
  };
  const where = (traits: DialectTraits, suffix: PredicateSuffix, value: unknown) => {
    const compiled = compilers[traits.name]
      .selectFrom('books')
      .select('id')
      .where((eb) => predicateCondition(eb, 'books.title', 'string', suffix, value, traits))
      .compile();
    // Placeholders differ ($1 or ?); everything else must match.
    return { sql: compiled.sql.replace(/^select "id" from "books" where /, '').replace(/\$\d+/g, '?'), parameters: compiled.parameters };
  };

  // [suffix, value, SQL on SQLite, SQL on PostgreSQL, parameters]
  const CASES: Array<[PredicateSuffix, unknown, string, string, unknown[]]> = [
    ['eq', 'x', '"books"."title" = ?', '"books"."title" = ?', ['x']],
    ['not_eq', 'x', '"books"."title" <> ?', '"books"."title" <> ?', ['x']],
    ['gt', 1, '"books"."title" > ?', '"books"."title" > ?', [1]],
    ['gte', 1, '"books"."title" >= ?', '"books"."title" >= ?', [1]],
    ['gteq', 1, '"books"."title" >= ?', '"books"."title" >= ?', [1]],
    ['lt', 1, '"books"."title" < ?', '"books"."title" < ?', [1]],
    ['lte', 1, '"books"."title" <= ?', '"books"."title" <= ?', [1]],
    ['lteq', 1, '"books"."title" <= ?', '"books"."title" <= ?', [1]],
    ['in', [1, 2], '"books"."title" in (?, ?)', '"books"."title" in (?, ?)', [1, 2]],
    ['not_in', [1], '"books"."title" not in (?)', '"books"."title" not in (?)', [1]],
    ['null', true, '"books"."title" is null', '"books"."title" is null', []],
    ['null', false, '"books"."title" is not null', '"books"."title" is not null', []],
    // SQLite's LIKE ignores ASCII case already; PostgreSQL compares the text with ASCII letters
    // lowered (ILIKE would fold all of Unicode), the expression its trigram indexes hold.
    ['cont', '%a%', `"books"."title" like ? escape '\\'`, `translate("books"."title", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') like ? escape '\\'`, ['%a%']],
    ['i_cont', '%a%', `"books"."title" like ? escape '\\'`, `translate("books"."title", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') like ? escape '\\'`, ['%a%']],
    ['start', 'a%', `"books"."title" like ? escape '\\'`, `translate("books"."title", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') like ? escape '\\'`, ['a%']],
    ['end', '%a', `"books"."title" like ? escape '\\'`, `translate("books"."title", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') like ? escape '\\'`, ['%a']],
    ['not_cont', '%a%', `not "books"."title" like ? escape '\\'`, `not translate("books"."title", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') like ? escape '\\'`, ['%a%']],
  ];
  for (const traits of TRAITS) {
    for (const [suffix, value, sqliteSql, postgresSql, parameters] of CASES) {
      it(`${traits.name}: _${suffix}`, () => {
        assert.deepEqual(where(traits, suffix, value), {
          sql: traits.name === 'sqlite' ? sqliteSql : postgresSql,
          parameters,
        });
      });
    }
  }
});
