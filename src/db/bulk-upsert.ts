// The bulk write path of `sitebiz import` (src/import/): records that come with their ids, a page
// at a time, inside the caller's transaction (the one that checks the page off), written so that
// writing a page twice leaves what writing it once does. Rows are upserted by id (multi-row
// INSERT ... ON CONFLICT (id) DO UPDATE, the same statement on both databases); join rows, which
// the source gives as linkage of their parent, are replaced per parent.
//
// Unlike the seed's loader (bulk-insert.ts), ids are not reserved here: they are the source's (or
// the source's moved by an offset), so afterwards PostgreSQL's sequences are moved past them
// (syncIdSequences). SQLite's AUTOINCREMENT moves on by itself when a larger id is inserted.
import { sql, type Kysely } from 'kysely';
import type { DatabaseHandle } from './connect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/** Bound parameters per statement (SQLite allows 32766) and rows per statement. */
const MAX_PARAMETERS = 30_000;
const MAX_ROWS_PER_STATEMENT = 500;

/** Rows of one table that share their columns (the first row's keys). */
function chunks(rows: readonly Record<string, unknown>[]): Array<{ columns: string[]; rows: Record<string, unknown>[] }> {
  const byShape = new Map<string, { columns: string[]; rows: Record<string, unknown>[] }>();
  for (const row of rows) {
    const columns = Object.keys(row).sort();
    const key = columns.join(',');
    let group = byShape.get(key);
    if (!group) byShape.set(key, (group = { columns, rows: [] }));
    group.rows.push(row);
  }
  const out: Array<{ columns: string[]; rows: Record<string, unknown>[] }> = [];
  for (const group of byShape.values()) {
    const per = Math.max(1, Math.min(MAX_ROWS_PER_STATEMENT, Math.floor(MAX_PARAMETERS / group.columns.length)));
    for (let i = 0; i < group.rows.length; i += per) out.push({ columns: group.columns, rows: group.rows.slice(i, i + per) });
  }
  return out;
}

/**
 * Inserts the rows, or updates the row of the same id. `keepExisting`: a row that exists stays as
 * it is (placeholders such as a blog only known by its id).
 */
export async function upsertRows(db: AnyDb, table: string, rows: readonly Record<string, unknown>[], options: { keepExisting?: boolean } = {}): Promise<void> {
  for (const chunk of chunks(rows)) {
    const updated = chunk.columns.filter((c) => c !== 'id');
    await db
      .insertInto(table)
      .values(chunk.rows)
      .onConflict((oc) =>
        options.keepExisting || updated.length === 0
          ? oc.column('id').doNothing()
          : oc.column('id').doUpdateSet(Object.fromEntries(updated.map((c) => [c, sql.ref(`excluded.${c}`)]))),
      )
      .execute();
  }
}

/**
 * Makes the join rows of these parents exactly `rows`: the parents' rows in `table` (matched on
 * `parentKey`) are deleted, then `rows` inserted.
 */
export async function replaceJoinRows(db: AnyDb, table: string, parentKey: string, parents: readonly unknown[], rows: readonly Record<string, unknown>[]): Promise<void> {
  const distinct = [...new Set(parents)];
  for (let i = 0; i < distinct.length; i += MAX_ROWS_PER_STATEMENT) {
    await db.deleteFrom(table).where(parentKey, 'in', distinct.slice(i, i + MAX_ROWS_PER_STATEMENT)).execute();
  }
  for (const chunk of chunks(rows)) await db.insertInto(table).values(chunk.rows).execute();
}

/**
 * Fresh statistics for tables a load is filling. Needed during the load, not only after it: a
 * session plans its foreign-key checks once, and a plan made while the referenced table was empty
 * scans it whole, so without this each page of contacts' tags scanned every contact written so
 * far (an import of 100,000 contacts went quadratic on PostgreSQL). ANALYZE invalidates those
 * plans. The caller runs it as a table doubles (pages 1, 2, 4, 8, ...), a few times in all.
 */
export async function analyzeGrowingTables(db: AnyDb, tables: readonly string[]): Promise<void> {
  for (const table of tables) await sql.raw(`analyze "${table.replace(/"/g, '""')}"`).execute(db);
}

/**
 * PostgreSQL: moves each table's id sequence past its largest id, so rows created later (through
 * the API) do not collide with the ones written with explicit ids. Never moves one back.
 */
export async function syncIdSequences(handle: DatabaseHandle, tables: readonly string[]): Promise<void> {
  if (handle.traits.name !== 'postgres') return;
  for (const table of tables) {
    const quoted = `"${table.replace(/"/g, '""')}"`;
    const found = await sql<{ seq: string | null }>`select pg_get_serial_sequence(${quoted}, 'id') as seq`.execute(handle.db);
    const sequence = found.rows[0]?.seq;
    if (!sequence) continue;
    // A sequence name from pg_get_serial_sequence is already quoted where it needs to be.
    await sql
      .raw(`select setval('${sequence.replace(/'/g, "''")}', greatest((select coalesce(max(id), 0) from ${quoted}), (select last_value from ${sequence}), 1), true)`)
      .execute(handle.db);
  }
}
