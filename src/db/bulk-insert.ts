// The bulk load path of `sitebiz seed`: millions of rows, batch by batch, as fast as each
// database takes them. This is the one module of the seed that knows which database it writes:
//
// - SQLite: the rows of a batch go in one `begin immediate` transaction, as multi-row INSERTs of
//   a fixed shape per table, so each shape is prepared once (the statement cache of connect.ts)
//   and reused for every batch. During the load this connection skips the fsync of each commit
//   (synchronous=OFF) and keeps a larger page cache; both are restored afterwards. Other
//   connections (a server on the same file) keep their own settings.
// - PostgreSQL: `COPY ... FROM STDIN` in text format on a connection of its own (pg-copy-streams),
//   one transaction per batch, with synchronous_commit off for that session only, and without the
//   per-row foreign-key checks where the database lets this session skip them (see open()). A
//   table the load will more than double has its plain indexes dropped at its first batch and
//   built again at the end (DeferredIndexes).
//
// Ids are chosen here rather than returned by the database, so that the rows of a batch can refer
// to each other before any of them is written: each batch reserves a block of ids per table in a
// way that concurrent writers (a server running against the same database) respect.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CompiledQuery, sql } from 'kysely';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { DatabaseConfig } from '../config.js';
import type { DatabaseHandle } from './connect.js';

/** One table's rows of a batch: values already encoded for the driver (DialectTraits codecs). */
export interface BulkTableRows {
  table: string;
  columns: readonly string[];
  /** Row-major: rows.length is a multiple of columns.length. */
  values: unknown[];
}

/**
 * A batch's rows may refer only to rows of the same batch or to rows that existed before it and
 * that nobody deletes during the load (the seed: its new sites' catalogue). PostgreSQL may not
 * check it (see PostgresBulkLoader.open); the seed's tests do.
 */
export interface BulkBatch {
  /** Tables whose new rows need ids, and how many. */
  idCounts: ReadonlyMap<string, number>;
  /**
   * Given the first reserved id of each table in idCounts (the block is consecutive), returns the
   * encoded rows to insert, each table after the tables it refers to.
   */
  rows(firstIds: ReadonlyMap<string, number>): BulkTableRows[];
}

export interface BulkLoadOptions {
  /**
   * About how many batches the load writes: with a table's rows in the first batch, what the load
   * will add to it (PostgreSQL's choice of indexes to defer).
   */
  batches: number;
}

export interface BulkLoader {
  writeBatch(batch: BulkBatch): Promise<void>;
  /** Restores the settings the load changed and closes what it opened. */
  close(): Promise<void>;
}

/**
 * Opens the bulk path for the handle's database. `database` is the configuration the handle was
 * opened with: PostgreSQL's COPY needs a client of its own.
 */
export async function openBulkLoader(handle: DatabaseHandle, database: DatabaseConfig, options: BulkLoadOptions): Promise<BulkLoader> {
  if (database.dialect === 'sqlite') return SqliteBulkLoader.open(handle);
  return PostgresBulkLoader.open(handle, database.connectionString, options);
}

const quote = (identifier: string): string => `"${identifier.replace(/"/g, '""')}"`;

// --- SQLite -------------------------------------------------------------------------------------

/**
 * Bound parameters per statement: SQLite allows 32766 (SQLITE_MAX_VARIABLE_NUMBER since 3.32).
 * Rows per statement: beyond a few hundred a larger statement gains nothing measurable.
 */
const SQLITE_MAX_PARAMETERS = 30_000;
const SQLITE_MAX_ROWS_PER_STATEMENT = 500;
/** Page cache of the loading connection, in KiB (negative: KiB rather than pages, as SQLite says). */
const SQLITE_LOAD_CACHE_KIB = 128 * 1024;

class SqliteBulkLoader implements BulkLoader {
  private readonly statements = new Map<string, string>();

  private constructor(
    private readonly handle: DatabaseHandle,
    private readonly restore: { synchronous: number; cacheSize: number },
  ) {}

  static async open(handle: DatabaseHandle): Promise<SqliteBulkLoader> {
    const { db } = handle;
    const synchronous = Number((await sql<{ synchronous: number }>`pragma synchronous`.execute(db)).rows[0]?.synchronous ?? 1);
    const cacheSize = Number((await sql<{ cache_size: number }>`pragma cache_size`.execute(db)).rows[0]?.cache_size ?? -2000);
    // A crash of this process loses nothing committed; a power loss during the load may lose
    // the last batches (the load is rerun, not repaired). Set back in close().
    await sql`pragma synchronous = OFF`.execute(db);
    await sql.raw(`pragma cache_size = -${SQLITE_LOAD_CACHE_KIB}`).execute(db);
    return new SqliteBulkLoader(handle, { synchronous, cacheSize });
  }

  async writeBatch(batch: BulkBatch): Promise<void> {
    await this.handle.db.transaction().execute(async (trx) => {
      // Inside `begin immediate` this connection holds the write lock: nobody else can take ids
      // until the commit. AUTOINCREMENT never reuses an id, so start after sqlite_sequence too.
      const firstIds = new Map<string, number>();
      for (const table of batch.idCounts.keys()) {
        const row = await trx.executeQuery<{ last: number | null }>(
          CompiledQuery.raw(
            `select max(coalesce((select seq from sqlite_sequence where name = ?), 0), coalesce((select max(id) from ${quote(table)}), 0)) as last`,
            [table],
          ),
        );
        firstIds.set(table, Number(row.rows[0]?.last ?? 0) + 1);
      }
      for (const part of batch.rows(firstIds)) {
        const width = part.columns.length;
        const perStatement = Math.max(1, Math.min(SQLITE_MAX_ROWS_PER_STATEMENT, Math.floor(SQLITE_MAX_PARAMETERS / width)));
        const rowCount = part.values.length / width;
        for (let start = 0; start < rowCount; start += perStatement) {
          const count = Math.min(perStatement, rowCount - start);
          const parameters = part.values.slice(start * width, (start + count) * width);
          await trx.executeQuery(CompiledQuery.raw(this.insertText(part.table, part.columns, count), parameters));
        }
      }
    });
  }

  /** The INSERT text of one shape; the same text is prepared once by the statement cache. */
  private insertText(table: string, columns: readonly string[], rowCount: number): string {
    const key = `${table}|${columns.join(',')}|${rowCount}`;
    let text = this.statements.get(key);
    if (text === undefined) {
      const tuple = `(${columns.map(() => '?').join(',')})`;
      text = `insert into ${quote(table)} (${columns.map(quote).join(',')}) values ${Array.from({ length: rowCount }, () => tuple).join(',')}`;
      this.statements.set(key, text);
    }
    return text;
  }

  async close(): Promise<void> {
    const { db } = this.handle;
    await sql.raw(`pragma synchronous = ${this.restore.synchronous}`).execute(db);
    await sql.raw(`pragma cache_size = ${this.restore.cacheSize}`).execute(db);
  }
}

// --- PostgreSQL ---------------------------------------------------------------------------------

const INSUFFICIENT_PRIVILEGE = '42501';

class PostgresBulkLoader implements BulkLoader {
  private readonly sequences = new Map<string, string>();

  private constructor(
    private readonly client: pg.Client,
    private readonly indexes: DeferredIndexes,
  ) {}

  static async open(handle: DatabaseHandle, connectionString: string, options: BulkLoadOptions): Promise<PostgresBulkLoader> {
    const client = new pg.Client({
      connectionString,
      ...(handle.schema !== undefined ? { options: `-c search_path=${handle.schema}` } : {}),
    });
    await client.connect();
    // Commits of this session do not wait for the WAL flush: a crash of the database server may
    // lose the last batches, never corrupt anything. Other sessions are not affected.
    await client.query('set synchronous_commit = off');
    // Every foreign key is a trigger that runs a query per row and reference: about half of the
    // database's time in a 1,000,000-contact seed (13.7 million rows, 35 million checks). The
    // batches refer only to rows that exist (BulkBatch), so this session turns those triggers off
    // (replica mode: for this session only; every other session keeps checking). Only a superuser
    // (or, PostgreSQL 15 on, a role granted SET on the parameter) may; others keep the checks.
    await client.query('set session_replication_role = replica').catch((error: unknown) => {
      if ((error as { code?: unknown }).code !== INSUFFICIENT_PRIVILEGE) throw error;
    });
    const indexes = new DeferredIndexes(client, options.batches);
    await indexes.restoreLeftovers();
    return new PostgresBulkLoader(client, indexes);
  }

  private async sequenceOf(table: string): Promise<string> {
    let name = this.sequences.get(table);
    if (name === undefined) {
      const result = await this.client.query<{ seq: string | null }>('select pg_get_serial_sequence($1, $2) as seq', [quote(table), 'id']);
      name = result.rows[0]?.seq ?? undefined;
      if (!name) throw new Error(`bulk load: ${table}.id has no sequence`);
      this.sequences.set(table, name);
    }
    return name;
  }

  /**
   * Reserves a block of consecutive ids per table in one short transaction. ALTER SEQUENCE holds
   * a lock until the commit that makes a concurrent nextval() wait, so no other writer can take
   * an id inside the block between our nextval() and setval().
   */
  private async reserveIds(idCounts: ReadonlyMap<string, number>): Promise<Map<string, number>> {
    const firstIds = new Map<string, number>();
    const tables = [...idCounts].filter(([, count]) => count > 0);
    if (tables.length === 0) return firstIds;
    const statements: string[] = ['begin'];
    for (const [table, count] of tables) {
      const seq = (await this.sequenceOf(table)).replace(/'/g, "''");
      statements.push(`alter sequence ${seq} increment by 1`);
      statements.push(`select setval('${seq}', nextval('${seq}') + ${count - 1}) - ${count - 1} as first`);
    }
    statements.push('commit');
    const results = (await this.client.query(statements.join(';\n'))) as unknown as pg.QueryResult<{ first: string }>[];
    let k = 0;
    for (const result of results) {
      if (result.command !== 'SELECT') continue;
      const [table] = tables[k++]!;
      firstIds.set(table, Number(result.rows[0]!.first));
    }
    return firstIds;
  }

  async writeBatch(batch: BulkBatch): Promise<void> {
    const firstIds = await this.reserveIds(batch.idCounts);
    const parts = batch.rows(firstIds);
    for (const part of parts) await this.indexes.consider(part.table, part.values.length / part.columns.length);
    await this.client.query('begin');
    try {
      for (const part of parts) {
        if (part.values.length === 0) continue;
        const stream = this.client.query(copyFrom(`copy ${quote(part.table)} (${part.columns.map(quote).join(',')}) from stdin`));
        await pipeline(Readable.from(copyText(part)), stream);
      }
      await this.client.query('commit');
    } catch (error) {
      await this.client.query('rollback').catch(() => {});
      throw error;
    }
  }

  async close(): Promise<void> {
    try {
      await this.indexes.restore();
    } finally {
      await this.client.end();
    }
  }
}

/** instance_settings names of the indexes a load has dropped: `<prefix><index>`, value its CREATE INDEX. */
const DEFERRED_INDEX_SETTING = 'bulk_load_deferred_index:';
/** Memory of each index build (sorting in memory rather than in runs on disk); this session only. */
const INDEX_BUILD_MEMORY = '256MB';

/**
 * Plain indexes (not unique, not a constraint's) of the tables a load fills, dropped at a table's
 * first batch and built again when the load ends: a B-tree built once from sorted rows costs a
 * fraction of the random inserts that keep it row by row, which were a third of the database's
 * time in a 1,000,000-contact seed and most of its writes (the indexes outgrow shared_buffers).
 *
 * Only where the load will more than double the table (its first batch times the batches to come,
 * against the rows the table holds): building an index reads the whole table, other sites' rows
 * included. Unique indexes and primary keys stay: other sessions rely on them (ON CONFLICT, other
 * writers' constraints) and they never fail to build again. Meanwhile other sessions read and
 * write the table as usual, without those indexes' help; the build at the end holds off their
 * writes to that table (CREATE INDEX takes a SHARE lock) for its few seconds.
 *
 * Each dropped index's definition is saved in instance_settings in the transaction that drops it,
 * and deleted in the one that builds it again: a load that dies between the two leaves it there,
 * and the next load (restoreLeftovers) builds it first.
 */
class DeferredIndexes {
  private readonly seen = new Set<string>();
  private readonly dropped: Array<{ name: string; definition: string }> = [];

  constructor(
    private readonly client: pg.Client,
    private readonly batches: number,
  ) {}

  async consider(table: string, rowsInBatch: number): Promise<void> {
    if (this.seen.has(table)) return;
    this.seen.add(table);
    const size = await this.client.query<{ rows: string }>('select greatest(reltuples, 0)::bigint as rows from pg_class where oid = $1::regclass', [quote(table)]);
    if (rowsInBatch * this.batches <= Number(size.rows[0]?.rows ?? 0)) return;
    const plain = await this.client.query<{ name: string; definition: string }>(
      `select c.relname as name, pg_get_indexdef(i.indexrelid) as definition
         from pg_index i join pg_class c on c.oid = i.indexrelid
        where i.indrelid = $1::regclass and not i.indisunique and not i.indisprimary and i.indisvalid
          and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)
        order by c.relname`,
      [quote(table)],
    );
    if (plain.rows.length === 0) return;
    await this.inTransaction(async () => {
      for (const index of plain.rows) {
        await this.client.query('insert into instance_settings (name, value) values ($1, $2) on conflict (name) do update set value = excluded.value', [
          DEFERRED_INDEX_SETTING + index.name,
          index.definition,
        ]);
        await this.client.query(`drop index ${quote(index.name)}`);
      }
    });
    this.dropped.push(...plain.rows);
  }

  /** Builds again every index this load dropped. */
  async restore(): Promise<void> {
    await this.client.query(`set maintenance_work_mem = '${INDEX_BUILD_MEMORY}'`);
    for (const index of this.dropped.splice(0)) await this.build(index.name, index.definition);
  }

  /** Builds the indexes an interrupted load left dropped. */
  async restoreLeftovers(): Promise<void> {
    const left = await this.client.query<{ name: string; value: string }>('select name, value from instance_settings where name like $1 order by name', [
      `${DEFERRED_INDEX_SETTING}%`,
    ]);
    if (left.rows.length === 0) return;
    await this.client.query(`set maintenance_work_mem = '${INDEX_BUILD_MEMORY}'`);
    for (const row of left.rows) await this.build(row.name.slice(DEFERRED_INDEX_SETTING.length), row.value);
  }

  private async build(name: string, definition: string): Promise<void> {
    await this.inTransaction(async () => {
      // pg_get_indexdef's text; IF NOT EXISTS for a leftover whose load died after the build.
      await this.client.query(definition.replace(/^CREATE INDEX /, 'CREATE INDEX IF NOT EXISTS '));
      await this.client.query('delete from instance_settings where name = $1', [DEFERRED_INDEX_SETTING + name]);
    });
  }

  private async inTransaction(fn: () => Promise<void>): Promise<void> {
    await this.client.query('begin');
    try {
      await fn();
      await this.client.query('commit');
    } catch (error) {
      await this.client.query('rollback').catch(() => {});
      throw error;
    }
  }
}

/** Chunks of COPY text (tab-separated, `\N` for null) of about a megabyte each. */
function* copyText(part: BulkTableRows): Generator<string> {
  const width = part.columns.length;
  let chunk = '';
  for (let i = 0; i < part.values.length; i += width) {
    let line = '';
    for (let c = 0; c < width; c++) {
      if (c > 0) line += '\t';
      line += copyField(part.values[i + c]);
    }
    chunk += `${line}\n`;
    if (chunk.length > 1_000_000) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk.length > 0) yield chunk;
}

const COPY_SPECIAL = /[\\\t\n\r]/;

function copyField(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'number') return String(value);
  const text = String(value);
  if (!COPY_SPECIAL.test(text)) return text;
  return text.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}
