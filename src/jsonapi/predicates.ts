// Predicate filters: `filter[<attribute>_<suffix>]=<value>`. The table below is the whole grammar:
// each suffix, the attribute types it applies to, how its value is read, and the SQL it becomes.
import type { Expression, SqlBool } from 'kysely';
import type { DialectTraits } from '../db/dialect-traits.js';
import { escapeLike } from '../db/dialect-traits.js';
import { invalidParameter } from './errors.js';
import { splitList } from './query-parser.js';
import type { AnyEB, AttributeType } from './resource.js';

export type PredicateSuffix =
  | 'eq'
  | 'not_eq'
  | 'cont'
  | 'i_cont'
  | 'not_cont'
  | 'start'
  | 'end'
  | 'gt'
  | 'gte'
  | 'gteq'
  | 'lt'
  | 'lte'
  | 'lteq'
  | 'in'
  | 'not_in'
  | 'null';

// Strings also order (lexicographically, by the database's collation): title_gte=M.
const TEXT: readonly PredicateSuffix[] = ['eq', 'not_eq', 'cont', 'i_cont', 'not_cont', 'start', 'end', 'gt', 'gte', 'gteq', 'lt', 'lte', 'lteq', 'in', 'not_in', 'null'];
const ORDERED: readonly PredicateSuffix[] = ['eq', 'not_eq', 'gt', 'gte', 'gteq', 'lt', 'lte', 'lteq', 'in', 'not_in', 'null'];

export const PREDICATES_BY_TYPE: Record<AttributeType, readonly PredicateSuffix[]> = {
  string: TEXT,
  integer: ORDERED,
  number: ORDERED,
  id: ['eq', 'not_eq', 'in', 'not_in', 'null'],
  // Text suffixes match the ISO 8601 rendering: publish_at_start=2026-03 is "in March 2026".
  datetime: [...ORDERED, 'cont', 'not_cont', 'start', 'end'],
  boolean: ['eq', 'not_eq', 'null'],
  json: ['null'],
};

export const PREDICATE_MEANINGS: Record<PredicateSuffix, string> = {
  eq: 'equals',
  not_eq: 'does not equal (records whose value is null do not match)',
  cont: 'contains the text, ignoring case (timestamps: their ISO 8601 text)',
  i_cont: 'contains the text, ignoring case (same as cont)',
  not_cont: 'does not contain the text, ignoring case',
  start: 'starts with the text, ignoring case',
  end: 'ends with the text, ignoring case',
  gt: 'greater than',
  gte: 'greater than or equal',
  gteq: 'greater than or equal (same as gte)',
  lt: 'less than',
  lte: 'less than or equal',
  lteq: 'less than or equal (same as lte)',
  in: 'equals one of a comma-separated list',
  not_in: 'equals none of a comma-separated list',
  null: 'true: the value is null; false: it is not',
};

/** Longest first, so `title_not_eq` is read as `title` + `not_eq`, not `title_not` + `eq`. */
export const SUFFIXES_LONGEST_FIRST: readonly PredicateSuffix[] = (Object.keys(PREDICATE_MEANINGS) as PredicateSuffix[]).sort(
  (a, b) => b.length - a.length,
);

/**
 * The whole numbers an attribute type holds on both databases: integer columns are 32-bit
 * (PostgreSQL refuses a larger parameter for them, which would be a 500), ids are 64-bit and
 * read as exact JavaScript numbers.
 */
export const INTEGER_RANGES = {
  integer: [-2_147_483_648, 2_147_483_647],
  id: [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
} as const;

/** Reads one scalar of an attribute type from query text; throws a 400 naming the parameter. */
export function coerceScalar(type: AttributeType, raw: string, parameter: string, traits: DialectTraits): unknown {
  switch (type) {
    case 'string':
      return raw;
    case 'integer':
    case 'id': {
      const [min, max] = INTEGER_RANGES[type];
      const n = Number(raw);
      if (!/^-?\d+$/.test(raw.trim()) || n < min || n > max) {
        throw invalidParameter(parameter, `${parameter} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
      }
      return n;
    }
    case 'number': {
      const n = Number(raw);
      // Plain decimal notation only: Number() would also read 0x10, 1e3 and Infinity.
      if (!/^-?\d+(\.\d+)?$/.test(raw.trim()) || !Number.isFinite(n)) throw invalidParameter(parameter, `${parameter} must be a number, got ${JSON.stringify(raw)}`);
      return n;
    }
    case 'boolean':
      return traits.encodeBoolean(parseBoolean(raw, parameter));
    case 'datetime': {
      const date = parseTimestamp(raw);
      if (!date) throw invalidParameter(parameter, `${parameter} must be an ISO 8601 date or date-time, got ${JSON.stringify(raw)}`);
      return traits.encodeTimestamp(date);
    }
    case 'json':
      throw invalidParameter(parameter, `${parameter} cannot compare JSON values`);
  }
}

export function parseBoolean(raw: string, parameter: string): boolean {
  const v = raw.trim().toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw invalidParameter(parameter, `${parameter} must be true or false, got ${JSON.stringify(raw)}`);
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Accepts ISO 8601 dates and date-times; a date-time without a zone is read as UTC. */
export function parseTimestamp(raw: string): Date | undefined {
  const text = raw.trim();
  if (!ISO_DATE.test(text)) return undefined;
  // Date.parse rolls a day past the month's end into the next month (2026-02-30 → March 2).
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  if (day > daysInMonth(year, month)) return undefined;
  const hasZone = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(text) && text.length > 10;
  const normalized = text.length === 10 || hasZone ? text : `${text}Z`;
  const ms = Date.parse(normalized.replace(' ', 'T'));
  if (Number.isNaN(ms)) return undefined;
  // Years 1 to 9999 in UTC only: PostgreSQL refuses year 0, and SQLite compares the ISO text.
  const date = new Date(ms);
  const utcYear = date.getUTCFullYear();
  return utcYear >= 1 && utcYear <= 9999 ? date : undefined;
}

/**
 * Reads the value of one predicate filter into what its SQL binds: a scalar, a list, a LIKE
 * pattern or a null test. Throws a 400 naming the parameter; runs before any query.
 */
export function parsePredicateValue(
  type: AttributeType,
  suffix: PredicateSuffix,
  raw: string,
  parameter: string,
  traits: DialectTraits,
): unknown {
  switch (suffix) {
    case 'in':
    case 'not_in': {
      const items = splitList(raw);
      if (items.length === 0) throw invalidParameter(parameter, `${parameter} needs a comma-separated list of values`);
      if (items.length > 500) throw invalidParameter(parameter, `${parameter} takes at most 500 values`);
      return items.map((item) => coerceScalar(type, item, parameter, traits));
    }
    case 'null':
      return parseBoolean(raw, parameter);
    case 'cont':
    case 'i_cont':
    case 'not_cont':
    case 'start':
    case 'end': {
      if (raw === '') throw invalidParameter(parameter, `${parameter} needs some text to look for`);
      const text = escapeLike(raw);
      return suffix === 'start' ? `${text}%` : suffix === 'end' ? `%${text}` : `%${text}%`;
    }
    default:
      return coerceScalar(type, raw, parameter, traits);
  }
}

/** Builds the SQL condition of one predicate filter from a value read by parsePredicateValue. */
export function predicateCondition(
  eb: AnyEB,
  column: string | Expression<unknown>,
  type: AttributeType,
  suffix: PredicateSuffix,
  value: unknown,
  traits: DialectTraits,
): Expression<SqlBool> {
  const ref = typeof column === 'string' ? eb.ref(column) : column;
  const asText = type === 'datetime' ? traits.timestampText(ref) : ref;
  switch (suffix) {
    case 'eq':
      return eb(ref, '=', value);
    case 'not_eq':
      return eb(ref, '<>', value);
    case 'gt':
      return eb(ref, '>', value);
    case 'gte':
    case 'gteq':
      return eb(ref, '>=', value);
    case 'lt':
      return eb(ref, '<', value);
    case 'lte':
    case 'lteq':
      return eb(ref, '<=', value);
    case 'in':
      return eb(ref, 'in', value as unknown[]);
    case 'not_in':
      return eb(ref, 'not in', value as unknown[]);
    case 'null':
      return value ? eb(ref, 'is', null) : eb(ref, 'is not', null);
    // Attributes with text predicates belong to catalogue tables of hundreds of rows per site
    // (offers, pages, tags, notes), which a plain scan serves; the large contact columns are
    // searched through their trigram index by named filters (src/db/text-search.ts).
    case 'cont':
    case 'i_cont':
    case 'start':
    case 'end':
      return traits.likeInsensitive(eb, asText, value as string);
    case 'not_cont':
      return eb.not(traits.likeInsensitive(eb, asText, value as string));
  }
}
