// Every real difference between SQLite and PostgreSQL lives here, as data and small hooks.
// Nothing else in the code base asks which database it runs on.
import {
  sql,
  type ColumnDefinitionBuilder,
  type Kysely,
  type CreateTableBuilder,
  type Expression,
  type ExpressionBuilder,
  type RawBuilder,
  type SelectQueryBuilder,
  type SqlBool,
} from 'kysely';

export type DialectName = 'sqlite' | 'postgres';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/** What a foreign key column becomes (alterForeignKeys); it always refers to `references.id`. */
export interface ForeignKeyColumn {
  column: string;
  references: string;
  onDelete: 'cascade' | 'set null' | 'no action';
  nullable: boolean;
}

export interface DialectTraits {
  readonly name: DialectName;

  // Schema building (used by migrations only).
  /** Adds an auto-incrementing integer primary key column `id`. */
  addIdColumn<T extends string, C extends string>(table: CreateTableBuilder<T, C>): CreateTableBuilder<T, C>;
  /** Column type of a foreign key that refers to an `id` column. */
  readonly foreignKeyType: 'integer' | 'bigint';
  /** Column type of a timestamp (millisecond precision, UTC). */
  readonly timestampType: RawBuilder<unknown> | 'text';
  readonly booleanType: 'integer' | 'boolean';
  readonly jsonType: 'text' | 'jsonb';
  /**
   * Runs schema changes that replace tables other tables refer to, as one transaction. SQLite:
   * with foreign key enforcement off (dropping the old copy of a rebuilt table would otherwise run
   * its children's ON DELETE actions), and foreign_key_check must find nothing before the commit.
   * PostgreSQL: as it is (its migrations run in a transaction, and ALTER TABLE keeps the rows).
   */
  withTablesReplaceable(db: AnyDb, changes: (db: AnyDb) => Promise<void>): Promise<void>;
  /**
   * Gives foreign key columns of a table a new ON DELETE action and nullability, keeping every
   * row, id, index and trigger of the table. SQLite cannot alter a constraint and rebuilds the
   * table (only inside withTablesReplaceable); PostgreSQL replaces the constraints.
   */
  alterForeignKeys(db: AnyDb, table: string, columns: readonly ForeignKeyColumn[]): Promise<void>;

  /** The columns of a table of the connection's schema, in their order (empty: no such table). */
  tableColumns(db: AnyDb, table: string): Promise<string[]>;

  // Runtime codecs: what the driver wants as a parameter and what it gives back.
  encodeBoolean(value: boolean): number | boolean;
  decodeBoolean(value: unknown): boolean | null;
  /** Timestamps go in as ISO 8601 UTC strings with milliseconds on both databases. */
  encodeTimestamp(value: Date): string;
  decodeTimestamp(value: unknown): string | null;
  encodeJson(value: unknown): string;
  decodeJson(value: unknown): unknown;

  /** A timestamp column as its ISO 8601 UTC text (`2026-01-31T09:30:00.000Z`), for text matching. */
  timestampText(expr: Expression<unknown>): Expression<string>;

  /** A timestamp column moved by `ms` milliseconds (negative: earlier), as a value to store. */
  shiftTimestamp(expr: Expression<unknown>, ms: number): RawBuilder<unknown>;

  /** Whether a driver error is a unique-constraint violation. */
  isUniqueViolation(error: unknown): boolean;

  /**
   * The select, also locking the rows it reads until the transaction ends (PostgreSQL: FOR UPDATE).
   * SQLite has no row locks and needs none: its write transactions begin immediate, holding the
   * database's one write lock from their start, so no other writer can change what they read.
   * `'no key update'` (PostgreSQL: FOR NO KEY UPDATE) lets rows that reference the locked ones be
   * inserted meanwhile (a foreign key check takes only a key share lock).
   */
  lockingRows<QB extends AnySelect>(query: QB, strength?: 'update' | 'no key update'): QB;

  /**
   * Bounds the lock waits of the transaction's next statements to `ms`, or with null puts the
   * server's bound back (PostgreSQL: SET LOCAL lock_timeout; a wait past it fails with
   * isLockTimeout). SQLite: nothing; its busy timeout bounds the wait for another process's write
   * lock.
   */
  boundLockWaits(db: AnyDb, ms: number | null): Promise<void>;

  /** Whether a driver error is a lock wait that ran past boundLockWaits' bound. */
  isLockTimeout(error: unknown): boolean;

  /**
   * The select, locking the rows it reads and skipping rows another transaction has locked, so
   * that concurrent claimers (webhook workers) each take different rows (PostgreSQL: FOR UPDATE
   * SKIP LOCKED). SQLite: as it is; its write transactions already run one at a time.
   */
  claimingRows<QB extends AnySelect>(query: QB): QB;

  /**
   * Signals `channel` to the other processes on the database when the transaction commits
   * (PostgreSQL: pg_notify, delivered at commit, dropped on rollback). SQLite has no such signal:
   * nothing is sent, and other processes sharing the file poll.
   */
  notify(db: AnyDb, channel: string): Promise<void>;

  /**
   * Whether a write transaction holds the whole database's write lock from its start (SQLite's
   * BEGIN IMMEDIATE): then no row lock is needed, and nothing a write read can change under it.
   */
  writeTransactionsSerialized: boolean;

  /**
   * Whether a driver error means the database cannot serve now but may soon (a restart, a lost
   * connection, no free connection): the request answers 503 with Retry-After instead of 500.
   */
  isUnavailable(error: unknown): boolean;

  /** `expr LIKE pattern` ignoring ASCII case, with `\` as the escape character. */
  likeInsensitive<DB, TB extends keyof DB>(
    eb: ExpressionBuilder<DB, TB>,
    expr: Expression<unknown>,
    pattern: string,
  ): Expression<SqlBool>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnySelect = SelectQueryBuilder<any, any, any>;

const isoMillis = (d: Date): string => d.toISOString();

const errorCode = (error: unknown): unknown => (typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined);

/** Socket errors of a connection to a database server that is down, restarting or unreachable. */
const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * PostgreSQL server codes: class 08 (connection exception), 57P01 admin_shutdown, 57P02
 * crash_shutdown, 57P03 cannot_connect_now (starting up or shutting down), 53300
 * too_many_connections.
 */
const isPostgresUnavailableCode = (code: string) => code.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(code);

/**
 * node-postgres reports a lost connection and its pool's connect timeout as plain Errors without a
 * code; these are their messages (pg 8, pg-pool 3).
 */
const PG_CONNECTION_MESSAGES = [
  'Connection terminated unexpectedly',
  'Connection terminated due to connection timeout',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Connection terminated',
];

/**
 * PostgreSQL: `column` with ASCII letters lowered and every other character kept, as SQL text.
 * ILIKE and lower() fold all of Unicode (by the database's locale), which is not what "ignoring
 * case" means here: likeInsensitive compares this text, and the trigram indexes of
 * src/db/text-search.ts are built on exactly this text so that the planner matches the two.
 */
export function postgresAsciiLower(column: string): string {
  return `translate(${column}, ${ASCII_LOWERING})`;
}

/** translate()'s arguments that lower ASCII letters and keep every other character. */
const ASCII_LOWERING = `'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'`;

const asciiLower = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** Escapes LIKE wildcards so user text matches literally (escape character `\`). */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * SQLite's procedure for changing a table's constraints (sqlite.org/lang_altertable.html, "Making
 * Other Kinds Of Table Schema Changes"): create the new form under another name, copy every row,
 * drop the old table, rename, recreate its indexes and triggers. The new form is the stored CREATE
 * TABLE with each named column's definition (as Kysely wrote it) replaced; the AUTOINCREMENT
 * sequence is carried over, so ids of deleted rows are never given out again.
 */
async function rebuildSqliteTable(db: AnyDb, table: string, columns: readonly ForeignKeyColumn[]): Promise<void> {
  const objects = (await sql<{ type: string; name: string; sql: string }>`select type, name, sql from sqlite_master
      where tbl_name = ${table} and sql is not null`.execute(db)).rows;
  const original = objects.find((o) => o.type === 'table' && o.name === table);
  if (!original) throw new Error(`no table ${table} to rebuild`);
  const rebuilt = `${table}_rebuilt`;
  let definition = original.sql.replace(/^CREATE TABLE "[^"]+"/i, `CREATE TABLE "${rebuilt}"`);
  for (const c of columns) {
    const pattern = new RegExp(`"${c.column}" (\\w+)(?: not null)? references "\\w+" \\("id"\\)(?: on delete (?:cascade|set null|no action|restrict))?`, 'gi');
    const found = definition.match(pattern) ?? [];
    if (found.length !== 1) throw new Error(`cannot find the foreign key column ${table}.${c.column} in ${original.sql}`);
    definition = definition.replace(
      pattern,
      (_all, type: string) => `"${c.column}" ${type}${c.nullable ? '' : ' not null'} references "${c.references}" ("id") on delete ${c.onDelete}`,
    );
  }
  const sequence = (await sql<{ seq: number }>`select seq from sqlite_sequence where name = ${table}`.execute(db)).rows[0]?.seq;
  await sql.raw(definition).execute(db);
  await sql.raw(`insert into "${rebuilt}" select * from "${table}"`).execute(db);
  await sql.raw(`drop table "${table}"`).execute(db);
  await sql.raw(`alter table "${rebuilt}" rename to "${table}"`).execute(db);
  for (const o of objects) if (o.type === 'index' || o.type === 'trigger') await sql.raw(o.sql).execute(db);
  if (sequence !== undefined) {
    await sql`delete from sqlite_sequence where name = ${table}`.execute(db);
    await sql`insert into sqlite_sequence (name, seq) values (${table}, ${sequence})`.execute(db);
  }
}

export const sqliteTraits: DialectTraits = {
  name: 'sqlite',
  addIdColumn: (table) => table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement()),
  foreignKeyType: 'integer',
  timestampType: 'text',
  booleanType: 'integer',
  jsonType: 'text',
  // PRAGMA foreign_keys cannot change inside a transaction: SQLite migrations run outside one.
  async withTablesReplaceable(db, changes) {
    await sql`pragma foreign_keys = off`.execute(db);
    try {
      await db.transaction().execute(async (trx) => {
        await changes(trx);
        const broken = (await sql`pragma foreign_key_check`.execute(trx)).rows;
        if (broken.length > 0) throw new Error(`foreign keys broken by a table rebuild: ${JSON.stringify(broken.slice(0, 5))}`);
      });
    } finally {
      await sql`pragma foreign_keys = on`.execute(db);
    }
  },
  alterForeignKeys: rebuildSqliteTable,
  tableColumns: async (db, table) =>
    (await sql<{ name: string }>`select name from pragma_table_info(${table}) order by cid`.execute(db)).rows.map((r) => r.name),
  encodeBoolean: (value) => (value ? 1 : 0),
  decodeBoolean: (value) => (value === null || value === undefined ? null : value === 1 || value === true),
  encodeTimestamp: isoMillis,
  decodeTimestamp: (value) => (value === null || value === undefined ? null : String(value)),
  encodeJson: (value) => JSON.stringify(value),
  decodeJson: (value) => (typeof value === 'string' ? JSON.parse(value) : (value ?? null)),
  // Stored as that text already.
  timestampText: (expr) => expr as Expression<string>,
  // SQLite's date functions keep milliseconds (%f) and read the stored text, Z included.
  shiftTimestamp: (expr, ms) => sql`strftime('%Y-%m-%dT%H:%M:%fZ', ${expr}, ${`${(ms / 1000).toFixed(3)} seconds`})`,
  isUniqueViolation: (error) =>
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE',
  lockingRows: (query) => query,
  boundLockWaits: async () => {},
  isLockTimeout: () => false,
  claimingRows: (query) => query,
  notify: async () => {},
  writeTransactionsSerialized: true,
  // The file is local: the one passing condition is another process holding the write lock past
  // the busy timeout.
  isUnavailable: (error) => {
    const code = errorCode(error);
    return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
  },
  // SQLite's LIKE already ignores ASCII case.
  likeInsensitive: (_eb, expr, pattern) => sql<SqlBool>`${expr} like ${pattern} escape '\\'`,
};

export const postgresTraits: DialectTraits = {
  name: 'postgres',
  addIdColumn: (table) =>
    table.addColumn('id', 'bigint', (c: ColumnDefinitionBuilder) => c.primaryKey().generatedByDefaultAsIdentity()),
  foreignKeyType: 'bigint',
  timestampType: sql`timestamp(3) with time zone`,
  booleanType: 'boolean',
  jsonType: 'jsonb',
  withTablesReplaceable: (db, changes) => changes(db),
  tableColumns: async (db, table) =>
    (
      // pg_attribute, not information_schema (many times slower on a database of many schemas);
      // to_regclass finds the table through the search path, as the queries do.
      await sql<{ name: string }>`select attname as name from pg_attribute
        where attrelid = to_regclass(${table}) and attnum > 0 and not attisdropped order by attnum`.execute(db)
    ).rows.map((r) => r.name),
  async alterForeignKeys(db, table, columns) {
    for (const c of columns) {
      const existing = await sql<{ conname: string }>`select con.conname from pg_constraint con
          join pg_attribute att on att.attrelid = con.conrelid and att.attnum = any(con.conkey)
          where con.conrelid = ${table}::regclass and con.contype = 'f' and att.attname = ${c.column}`.execute(db);
      for (const { conname } of existing.rows) await sql`alter table ${sql.table(table)} drop constraint ${sql.id(conname)}`.execute(db);
      await sql`alter table ${sql.table(table)} alter column ${sql.id(c.column)} ${c.nullable ? sql`drop not null` : sql`set not null`}`.execute(db);
      await sql`alter table ${sql.table(table)} add constraint ${sql.id(`${table}_${c.column}_fkey`)}
          foreign key (${sql.id(c.column)}) references ${sql.table(c.references)} (id) on delete ${sql.raw(c.onDelete)}`.execute(db);
    }
  },
  encodeBoolean: (value) => value,
  decodeBoolean: (value) => (value === null || value === undefined ? null : Boolean(value)),
  encodeTimestamp: isoMillis,
  decodeTimestamp: (value) => {
    if (value === null || value === undefined) return null;
    return value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString();
  },
  encodeJson: (value) => JSON.stringify(value),
  // pg has already parsed jsonb: a string here is a JSON string value, not JSON text to parse.
  decodeJson: (value) => value ?? null,
  timestampText: (expr) => sql<string>`to_char(${expr} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
  shiftTimestamp: (expr, ms) => sql`${expr} + cast(${Math.round(ms)} as double precision) * interval '1 millisecond'`,
  isUniqueViolation: (error) =>
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505',
  lockingRows: (query, strength = 'update') => (strength === 'update' ? query.forUpdate() : query.forNoKeyUpdate()) as typeof query,
  boundLockWaits: async (db, ms) => {
    // SET takes no bound parameter; the value is an integer made here.
    await sql.raw(`set local lock_timeout = ${ms === null ? 'default' : Math.max(1, Math.trunc(ms))}`).execute(db);
  },
  // 55P03 lock_not_available.
  isLockTimeout: (error) => errorCode(error) === '55P03',
  claimingRows: (query) => query.forUpdate().skipLocked() as typeof query,
  notify: async (db, channel) => {
    await sql`select pg_notify(${channel}, '')`.execute(db);
  },
  writeTransactionsSerialized: false,
  isUnavailable: (error) => {
    const code = errorCode(error);
    if (typeof code === 'string' && (NETWORK_ERRORS.has(code) || isPostgresUnavailableCode(code))) return true;
    const message = error instanceof Error ? error.message : '';
    return PG_CONNECTION_MESSAGES.some((m) => message.startsWith(m));
  },
  // The column side is the text the trigram indexes hold (postgresAsciiLower), written inline,
  // not bound, so that the planner matches it to them.
  likeInsensitive: (_eb, expr, pattern) =>
    sql<SqlBool>`translate(${expr}, ${sql.raw(ASCII_LOWERING)}) like ${asciiLower(pattern)} escape '\\'`,
};

export function traitsFor(name: DialectName): DialectTraits {
  return name === 'sqlite' ? sqliteTraits : postgresTraits;
}
