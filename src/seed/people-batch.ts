// One batch of generated people, from the demo generator's rows to what the bulk loader writes.
//
// The generator (in a worker thread) cannot know the ids: the loader reserves them when it
// writes. So the rows of a batch get placeholder ids, -1, -2, ... per table, in the order they
// were made; every reference to a row of the same batch is encoded as that placeholder and noted
// per column. The writer (main thread) turns placeholders into ids once the blocks are reserved:
// id = first id of the referenced table's block + (-placeholder - 1). References to rows written
// earlier (the site's catalogue) already hold their real ids.
import type { BulkBatch, BulkTableRows } from '../db/bulk-insert.js';
import type { DialectTraits } from '../db/dialect-traits.js';
import { Row, TABLES_WITHOUT_ID, type AnyRow, type RowSet, type TableName, type Value } from '../demo/rows.js';
import { encodeValue } from '../demo/writer.js';

/** A table's rows of a batch, encoded, with placeholders where ids are not known yet. */
export interface EncodedTable {
  table: TableName;
  columns: string[];
  /** Row-major values; the `id` column (if any) and `refs` columns may hold placeholders. */
  values: unknown[];
  /** Rows that get an id from the table's reserved block. */
  needsIds: boolean;
  /** Columns (indexes into `columns`) whose negative values are placeholders for rows of `table`. */
  refs: Array<[column: number, table: TableName]>;
}

export interface EncodedBatch {
  tables: EncodedTable[];
  /** Rows per table, for progress and the final report. */
  rowCounts: Record<string, number>;
}

/** Generator side: placeholders, then encoding. */
export function encodeBatch(set: RowSet, order: readonly TableName[], traits: DialectTraits): EncodedBatch {
  const unknown = set.tables().filter((t) => !order.includes(t));
  if (unknown.length > 0) throw new Error(`seed: no place in the write order for ${unknown.join(', ')}`);
  for (const table of order) {
    if (TABLES_WITHOUT_ID.has(table)) continue;
    set.rows(table).forEach((row, i) => {
      row.id = -(i + 1);
    });
  }
  const tables: EncodedTable[] = [];
  const rowCounts: Record<string, number> = {};
  for (const table of order) {
    const rows = set.rows(table);
    if (rows.length === 0) continue;
    rowCounts[table] = rows.length;
    tables.push(encodeTable(traits, table, rows));
  }
  return { tables, rowCounts };
}

function encodeTable(traits: DialectTraits, table: TableName, rows: readonly AnyRow[]): EncodedTable {
  const needsIds = !TABLES_WITHOUT_ID.has(table);
  const dataColumns = columnsOf(rows);
  const columns = needsIds ? ['id', ...dataColumns] : dataColumns;
  const offset = needsIds ? 1 : 0;
  const refTables: Array<TableName | undefined> = new Array(columns.length);
  if (needsIds) refTables[0] = table;
  const values: unknown[] = new Array(rows.length * columns.length);
  let k = 0;
  for (const row of rows) {
    if (needsIds) values[k++] = row.id;
    const record = row.values as Record<string, Value | undefined>;
    for (let c = 0; c < dataColumns.length; c++) {
      const column = dataColumns[c]!;
      const value = record[column];
      if (value instanceof Row && value.id !== undefined && value.id < 0) {
        const seen = refTables[c + offset];
        if (seen !== undefined && seen !== value.table) throw new Error(`seed: ${table}.${column} refers to both ${seen} and ${value.table}`);
        refTables[c + offset] = value.table;
      }
      values[k++] = encodeValue(traits, value, table, column);
    }
  }
  const refs: Array<[number, TableName]> = [];
  refTables.forEach((ref, c) => {
    if (ref !== undefined) refs.push([c, ref]);
  });
  return { table, columns, values, needsIds, refs };
}

/** Every column any row sets, in first-seen order (rows built at different places may omit some). */
function columnsOf(rows: readonly AnyRow[]): string[] {
  const seen = new Set<string>();
  let lastKeyCount = -1;
  let lastFirstKey: string | undefined;
  for (const row of rows) {
    const keys = Object.keys(row.values);
    // Rows built by the same code have the same keys; look closer only when the shape changes.
    if (keys.length === lastKeyCount && keys[0] === lastFirstKey && keys.every((k) => seen.has(k))) continue;
    lastKeyCount = keys.length;
    lastFirstKey = keys[0];
    for (const column of keys) seen.add(column);
  }
  return [...seen];
}

/** Writer side: the batch as the loader takes it, placeholders replaced once ids are reserved. */
export function bulkBatchOf(encoded: EncodedBatch): BulkBatch {
  const idCounts = new Map<string, number>();
  for (const part of encoded.tables) if (part.needsIds) idCounts.set(part.table, part.values.length / part.columns.length);
  return {
    idCounts,
    rows(firstIds) {
      const parts: BulkTableRows[] = [];
      for (const part of encoded.tables) {
        const width = part.columns.length;
        const { values } = part;
        for (const [column, table] of part.refs) {
          const first = firstIds.get(table);
          if (first === undefined) throw new Error(`seed: no ids reserved for ${table}`);
          for (let i = column; i < values.length; i += width) {
            const v = values[i];
            if (typeof v === 'number' && v < 0) values[i] = first - v - 1;
          }
        }
        parts.push({ table: part.table, columns: part.columns, values });
      }
      return parts;
    },
  };
}
