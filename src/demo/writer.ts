// Writes generated rows: multi-row INSERTs, chunked under the bound-parameter limits of both
// databases, table by table in dependency order, learning each row's id from RETURNING.
import { CompiledQuery, type Kysely } from 'kysely';
import type { DialectTraits } from '../db/dialect-traits.js';
import type { Database } from '../db/schema.js';
import { Row, TABLES_WITHOUT_ID, type AnyRow, type RowSet, type TableName, type Value } from './rows.js';

/**
 * Bound parameters per statement. SQLite allows 32766 (SQLITE_MAX_VARIABLE_NUMBER since 3.32) and
 * PostgreSQL 65535; stay well under the smaller one.
 */
export const MAX_PARAMETERS_PER_STATEMENT = 30_000;
/**
 * Rows per statement even when few columns would allow more. Measured on SQLite: a thousand rows
 * a statement is about three times faster than one, and larger statements gain nothing.
 */
const MAX_ROWS_PER_STATEMENT = 1_000;

export interface WriteStats {
  statements: number;
  rows: Map<TableName, number>;
}

export function newWriteStats(): WriteStats {
  return { statements: 0, rows: new Map() };
}

/**
 * Inserts the rows of `set`, table by table in `order` (a table after every table it refers to).
 * Rows of tables with an id column get their id set, so rows written later can refer to them.
 */
export async function writeRows(
  db: Kysely<Database>,
  traits: DialectTraits,
  set: RowSet,
  order: readonly TableName[],
  stats: WriteStats = newWriteStats(),
): Promise<WriteStats> {
  const unknown = set.tables().filter((t) => !order.includes(t));
  if (unknown.length > 0) throw new Error(`demo writer: no place in the write order for ${unknown.join(', ')}`);
  for (const table of order) {
    const rows = set.rows(table);
    if (rows.length > 0) await writeTable(db, traits, table, rows, stats);
  }
  return stats;
}

async function writeTable(db: Kysely<Database>, traits: DialectTraits, table: TableName, rows: readonly AnyRow[], stats: WriteStats) {
  const columns = columnsOf(rows);
  const perStatement = Math.max(1, Math.min(MAX_ROWS_PER_STATEMENT, Math.floor(MAX_PARAMETERS_PER_STATEMENT / columns.length)));
  const returnsId = !TABLES_WITHOUT_ID.has(table);
  for (let start = 0; start < rows.length; start += perStatement) {
    const chunk = rows.slice(start, start + perStatement);
    const parameters: unknown[] = [];
    for (const row of chunk) {
      const values = row.values as Record<string, Value | undefined>;
      for (const column of columns) parameters.push(encodeValue(traits, values[column], table, column));
    }
    const sqlText = insertStatement(db, traits, table, columns, chunk.length, returnsId);
    const result = await db.executeQuery<{ id: unknown }>(CompiledQuery.raw(sqlText, parameters));
    stats.statements++;
    if (returnsId) {
      // Ids are assigned in VALUES order on both databases; RETURNING's order is not promised,
      // so sort what comes back.
      if (result.rows.length !== chunk.length) throw new Error(`demo writer: ${table} returned ${result.rows.length} ids for ${chunk.length} rows`);
      const ids = result.rows.map((r) => Number(r.id)).sort((a, b) => a - b);
      chunk.forEach((row, i) => {
        row.id = ids[i];
      });
    }
  }
  stats.rows.set(table, (stats.rows.get(table) ?? 0) + rows.length);
}

/** SQL text of an INSERT shape (dialect, table, columns, row count), compiled once by Kysely. */
const statements = new Map<string, string>();
const MAX_CACHED_STATEMENTS = 200;

/**
 * The INSERT for `rowCount` rows of `columns`, with one placeholder per value in row-major
 * order. Kysely compiles it once per shape; building its syntax tree for every chunk of
 * thousands of values would cost more than the database spends on them.
 */
function insertStatement(db: Kysely<Database>, traits: DialectTraits, table: TableName, columns: string[], rowCount: number, returnsId: boolean): string {
  const key = `${traits.name}|${table}|${columns.join(',')}|${rowCount}|${returnsId}`;
  const cached = statements.get(key);
  if (cached !== undefined) return cached;
  const placeholders = Array.from({ length: rowCount }, () => Object.fromEntries(columns.map((c) => [c, null])));
  // Any table: the rows were checked against the schema types when they were built.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const insert = (db as unknown as Kysely<any>).insertInto(table).values(placeholders);
  const compiled = returnsId ? insert.returning('id').compile() : insert.compile();
  if (compiled.parameters.length !== rowCount * columns.length) throw new Error(`demo writer: unexpected INSERT shape for ${table}`);
  if (statements.size >= MAX_CACHED_STATEMENTS) statements.clear();
  statements.set(key, compiled.sql);
  return compiled.sql;
}

/** Every column any row of the table sets, in first-seen order; a row without one gets null. */
function columnsOf(rows: readonly AnyRow[]): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row.values)) seen.add(key);
  return [...seen];
}

/** A generated value as the driver takes it: a Row becomes its id, a Date, boolean or object its dialect's encoding. */
export function encodeValue(traits: DialectTraits, value: Value | undefined, table: string, column: string): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof Row) {
    if (value.id === undefined) throw new Error(`demo writer: ${table}.${column} refers to a ${value.table} row not written yet`);
    return value.id;
  }
  if (value instanceof Date) return traits.encodeTimestamp(value);
  switch (typeof value) {
    case 'boolean':
      return traits.encodeBoolean(value);
    case 'string':
    case 'number':
      return value;
    default:
      return traits.encodeJson(value);
  }
}
