// Opens the database named by the configuration and runs migrations.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { SQLiteDatabase, type SqliteConnection, type SqliteStatement } from './sqlite-driver.js';
import {
  Kysely,
  Migrator,
  PostgresDialect,
  sql,
  SqliteDialect,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type MigrationResultSet,
  type MigratorProps,
  type QueryResult,
  type SqliteDatabase,
} from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import { redactUrl, SETTINGS } from '../config.js';
import { traitsFor, type DialectTraits } from './dialect-traits.js';
import { migrationProvider } from './migrations/index.js';
import { ReplicaSet } from './replicas.js';
import { prepareConnections, sessionSetUp } from './postgres-sessions.js';
import { listenForNotifications, type NotificationHandlers, type NotificationListener } from './notifications.js';
import type { Database } from './schema.js';

export interface DatabaseHandle {
  db: Kysely<Database>;
  traits: DialectTraits;
  /** Human-readable location, with any password hidden. */
  description: string;
  /** PostgreSQL only: the schema given to connectDatabase, if any. */
  schema?: string;
  /**
   * Runs a compiled SELECT straight on the driver, without Kysely's per-query work (a connection
   * lease, a query id, result transformation): the hot read path of every request (query-shapes.ts,
   * reusable-query.ts). On SQLite the cached prepared statement runs at once, and undefined is
   * returned while a transaction holds the connection (the caller then waits its turn through
   * Kysely, so a read never sees another request's uncommitted writes). On PostgreSQL it is a
   * named prepared statement (`name`: one per SQL text), parsed and planned once per connection.
   */
  runSelect?: <Row>(name: string, sql: string, parameters: readonly unknown[]) => Promise<Row[]> | undefined;
  /**
   * PostgreSQL with DATABASE_REPLICA_URL: the streaming replicas that may serve the engine's reads
   * of GET requests (src/db/replicas.ts).
   */
  replicas?: ReplicaSet;
  /**
   * PostgreSQL only: hears what other processes signal on `channel` (traits.notify), on a
   * connection of its own. SQLite has no such signal; processes sharing its file poll.
   */
  listen?: (channel: string, handlers: NotificationHandlers) => NotificationListener;
  /** SQLite only: the whole database as an image, for `sqliteImage` of another handle. */
  serialize?: () => Buffer;
  /**
   * Subscribes to every statement run (through Kysely and runSelect) and, on PostgreSQL, to the
   * waits for a pool connection; returns the unsubscribe. Metrics and tracing listen here. A
   * transaction's handle made by spreading this one has it too (the statements are the same
   * handle's); one made without it has none.
   */
  observe?(observer: DatabaseObserver): () => void;
  /** PostgreSQL only: its pools' connections now (the primary's, each replica's). */
  poolStates?: () => PoolState[];
  close(): Promise<void>;
}

/** Which server a statement or a pool is for. */
export type StatementTarget = 'primary' | 'replica';

export interface StatementEvent {
  sql: string;
  parameters: readonly unknown[];
  /** Time from sending to the last row, ms. */
  milliseconds: number;
  target: StatementTarget;
  /** The statement failed (its error is the caller's). */
  failed: boolean;
}

export interface DatabaseObserver {
  statement?(event: StatementEvent): void;
  /** PostgreSQL: a connection was handed out of a pool after waiting this long, ms (0 when one was idle). */
  connectionWait?(milliseconds: number, target: StatementTarget): void;
}

export interface PoolState {
  target: StatementTarget;
  total: number;
  idle: number;
  /** Callers waiting for a connection. */
  waiting: number;
  max: number;
}

/**
 * The observers of one handle. With none, the paths below skip even reading the clock: `statements`
 * and `waits` are checked first.
 */
class Observers {
  private list: DatabaseObserver[] = [];
  statements = false;
  waits = false;

  add(observer: DatabaseObserver): () => void {
    this.list = [...this.list, observer];
    this.refresh();
    return () => {
      this.list = this.list.filter((o) => o !== observer);
      this.refresh();
    };
  }

  private refresh(): void {
    this.statements = this.list.some((o) => o.statement);
    this.waits = this.list.some((o) => o.connectionWait);
  }

  statement(event: StatementEvent): void {
    for (const observer of this.list) observer.statement?.(event);
  }

  connectionWait(milliseconds: number, target: StatementTarget): void {
    for (const observer of this.list) observer.connectionWait?.(milliseconds, target);
  }
}

/** DatabaseHandle.runSelect on PostgreSQL, where it always runs. */
export type RunSelect = <Row>(name: string, sql: string, parameters: readonly unknown[]) => Promise<Row[]>;

export interface ConnectOptions {
  /** PostgreSQL only: use (and create) this schema instead of `public`. Tests use one per app. */
  schema?: string;
  /** PostgreSQL pool size; wins over the configuration's (tests keep their pools small). */
  poolSize?: number;
  /**
   * SQLite in memory only: start from this image (what `serialize()` of another handle gave)
   * instead of an empty database. Tests open every app from one migrated image.
   */
  sqliteImage?: Buffer;
  /** Called with the SQL of every statement that succeeded, its time and its parameters (the handle's first observer); tests count queries with it. */
  onQuery?: (sql: string, milliseconds: number, parameters: readonly unknown[]) => void;
}

/** The observers of a new handle, with ConnectOptions.onQuery as the first (successful statements only). */
function observersFor(options: ConnectOptions): Observers {
  const observers = new Observers();
  const onQuery = options.onQuery;
  if (onQuery) observers.add({ statement: (e) => !e.failed && onQuery(e.sql, e.milliseconds, e.parameters) });
  return observers;
}

/**
 * The dialect, with its statements told to `observers`. Kysely's own `log` would do it, but it is
 * fixed when the instance is made and, given, costs every query an async wrapper (measured: about
 * a fifth of a small SQLite select) even with no observer. Here, while no observer listens to
 * statements, nothing is wrapped: acquiring a connection costs a flag check, and a connection is
 * given its observing executeQuery only once an observer is there when it is acquired (and then
 * checks the flag again on each statement).
 */
function observedDialect(dialect: Dialect, observers: Observers): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => {
      const driver = dialect.createDriver();
      const acquire = driver.acquireConnection.bind(driver);
      const observed = new WeakSet<DatabaseConnection>();
      driver.acquireConnection = () => {
        if (!observers.statements) return acquire();
        return acquire().then((connection) => {
          if (!observed.has(connection)) {
            observed.add(connection);
            observeConnection(connection, observers);
          }
          return connection;
        });
      };
      return driver;
    },
  };
}

function observeConnection(connection: DatabaseConnection, observers: Observers): void {
  const execute = connection.executeQuery.bind(connection);
  connection.executeQuery = <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
    if (!observers.statements) return execute<R>(query);
    const started = performance.now();
    // Told once the statement has ended, with its time, in the caller's async context.
    const told = (failed: boolean) => observers.statement({ sql: query.sql, parameters: query.parameters, milliseconds: performance.now() - started, target: 'primary', failed });
    return execute<R>(query).then(
      (result) => {
        told(false);
        return result;
      },
      (error: unknown) => {
        told(true);
        throw error;
      },
    );
  };
}

/**
 * Reports how long each pg pool checkout waited (pool.query and Kysely both check out through
 * pool.connect), only while someone listens.
 */
function observeWaits(pool: pg.Pool, observers: Observers, target: StatementTarget): void {
  const connect = pool.connect.bind(pool) as (callback?: (error: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void) => unknown;
  (pool as { connect: unknown }).connect = (callback?: (error: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void) => {
    if (!observers.waits) return connect(callback);
    const started = performance.now();
    if (callback) {
      return connect((error, client, done) => {
        if (!error) observers.connectionWait(performance.now() - started, target);
        callback(error, client, done);
      });
    }
    return (connect() as Promise<pg.PoolClient>).then((client) => {
      observers.connectionWait(performance.now() - started, target);
      return client;
    });
  };
}

export async function connectDatabase(config: DatabaseConfig, options: ConnectOptions = {}): Promise<DatabaseHandle> {
  if (config.dialect === 'sqlite') {
    if (options.sqliteImage && config.filename !== ':memory:') throw new Error('sqliteImage is for in-memory databases');
    if (config.filename !== ':memory:') mkdirSync(dirname(config.filename), { recursive: true });
    const sqlite = new SQLiteDatabase(options.sqliteImage ?? config.filename);
    applySqliteSettings(sqlite, config);
    const statements = withStatementCache(sqlite);
    const observers = observersFor(options);
    const db = new Kysely<Database>({
      dialect: observedDialect(new SqliteDialect({ database: statements }), observers),
    });
    return {
      db,
      traits: traitsFor('sqlite'),
      description: `SQLite ${config.filename}`,
      runSelect: <Row>(_name: string, text: string, parameters: readonly unknown[]) => {
        if (sqlite.inTransaction) return undefined;
        if (!observers.statements) return Promise.resolve((statements.prepare(text) as unknown as SqliteStatement).all(parameters as unknown[]) as Row[]);
        const started = performance.now();
        let failed = true;
        try {
          const rows = (statements.prepare(text) as unknown as SqliteStatement).all(parameters as unknown[]) as Row[];
          failed = false;
          return Promise.resolve(rows);
        } finally {
          observers.statement({ sql: text, parameters, milliseconds: performance.now() - started, target: 'primary', failed });
        }
      },
      serialize: () => sqlite.serialize(),
      observe: (observer) => observers.add(observer),
      close: () => db.destroy(),
    };
  }

  const schema = options.schema;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
  if (schema !== undefined) {
    const admin = new pg.Client({ connectionString: config.connectionString });
    await admin.connect();
    try {
      await admin.query(`create schema if not exists ${schema}`);
    } finally {
      await admin.end();
    }
  }
  const poolOptions: pg.PoolConfig = {
    max: options.poolSize ?? config.poolSize ?? POSTGRES_DEFAULT_POOL_SIZE,
    // While PostgreSQL is down or unreachable a request waits at most this long for a connection,
    // then answers 503 (traits.isUnavailable); without it, it would wait as long as the outage.
    connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
    // Notice a connection whose server went away without a word (a machine lost, a network cut).
    keepAlive: true,
    ...sessionSetUp(config.pooler !== 'transaction'),
    ...(schema !== undefined ? { options: `-c search_path=${schema}` } : {}),
  };
  const pool = new pg.Pool({ ...poolOptions, connectionString: config.connectionString });
  const observers = observersFor(options);
  const db = new Kysely<Database>({ dialect: observedDialect(new PostgresDialect({ pool }), observers) });
  const traits = traitsFor('postgres');
  const pools: Array<{ pool: pg.Pool; target: StatementTarget }> = [];
  // Every pool (the primary's, each replica's) gets its connections set up, then its runSelect.
  const makeRunSelect = (target: pg.Pool) => {
    const role: StatementTarget = target === pool ? 'primary' : 'replica';
    pools.push({ pool: target, target: role });
    prepareConnections(target);
    observeWaits(target, observers, role);
    return directSelects(target, config, observers, role);
  };
  const runSelect = makeRunSelect(pool);
  let replicas: ReplicaSet | undefined;
  if (config.replicas) {
    replicas = new ReplicaSet(config.replicas, { pool, runSelect, traits }, poolOptions, makeRunSelect);
    await replicas.start();
  }
  return {
    db,
    traits,
    description: `PostgreSQL ${redactUrl(config.url)}${schema ? ` (schema ${schema})` : ''}${replicas ? `, ${config.replicas!.connectionStrings.length} read replica(s)` : ''}`,
    ...(schema !== undefined ? { schema } : {}),
    runSelect,
    ...(replicas ? { replicas } : {}),
    // LISTEN is a session's: through a transaction pooler the notifications would reach whichever
    // client holds that server connection next. Without it, webhook workers poll (WEBHOOK_POLL_MS).
    ...(config.pooler === 'transaction' ? {} : { listen: (channel: string, handlers: NotificationHandlers) => listenForNotifications(config.connectionString, channel, handlers) }),
    observe: (observer) => observers.add(observer),
    poolStates: () =>
      pools.map(({ pool: p, target }) => ({ target, total: p.totalCount, idle: p.idleCount, waiting: p.waitingCount, max: p.options.max ?? 10 })),
    close: async () => {
      await replicas?.close();
      await db.destroy();
    },
  };
}

/**
 * runSelect over a pg pool (the primary's, or a replica's). Named prepared statements live on a
 * server connection. Behind a transaction pooler (PgBouncer's pool_mode = transaction) each
 * transaction may get another one, where a name is unknown or already taken:
 * DATABASE_POOLER=transaction says so up front, and without it the first such error says so, and
 * this pool then uses unnamed statements (parsed per execution) for good, after running the failed
 * read again. Reads of runSelect are never inside a transaction.
 */
function directSelects(
  pool: pg.Pool,
  config: Extract<DatabaseConfig, { dialect: 'postgres' }>,
  observers: Observers,
  target: StatementTarget,
): RunSelect {
  let namedStatements = config.pooler !== 'transaction';
  const observed = async <Row>(name: string, text: string, parameters: readonly unknown[]): Promise<Row[]> => {
    if (!observers.statements) return run<Row>(name, text, parameters);
    const started = performance.now();
    let failed = true;
    try {
      const rows = await run<Row>(name, text, parameters);
      failed = false;
      return rows;
    } finally {
      observers.statement({ sql: text, parameters, milliseconds: performance.now() - started, target, failed });
    }
  };
  const run = async <Row>(name: string, text: string, parameters: readonly unknown[]): Promise<Row[]> => {
    let result: pg.QueryResult | undefined;
    if (namedStatements) {
      try {
        result = await pool.query({ name, text, values: parameters as unknown[] });
      } catch (error) {
        if (!isPoolerStatementError(error)) throw error;
        // Reads in flight when the first refusal came fail the same way: each runs again unnamed,
        // and the warning is given once.
        if (namedStatements) {
          namedStatements = false;
          process.emitWarning(
            `PostgreSQL answered "${(error as Error).message}": a transaction pooler is between sitebiz and the database. ` +
              'From now on this process prepares no named statements; set DATABASE_POOLER=transaction to start that way (it also turns LISTEN off).',
            { code: 'SITEBIZ_TRANSACTION_POOLER' },
          );
        }
      }
    }
    result ??= await pool.query({ text, values: parameters as unknown[] });
    return result.rows as Row[];
  };
  return observed;
}

/**
 * A named prepared statement that the server connection does not have (26000) or already has
 * under that name (42P05): what a transaction pooler does to them.
 */
function isPoolerStatementError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '26000' || code === '42P05';
}

// For handles made from a bare DatabaseConfig (tests, bench): the settings' own defaults.
const POSTGRES_DEFAULT_POOL_SIZE = Number(SETTINGS.databasePoolSize.default);
/** Longest wait for a new PostgreSQL connection (or a free one of the pool); docs/operations.md. */
const POSTGRES_CONNECT_TIMEOUT_MS = 5_000;
const SQLITE_DEFAULT_CACHE_MB = Number(SETTINGS.sqliteCacheMb.default);
const SQLITE_DEFAULT_MMAP_MB = Number(SETTINGS.sqliteMmapMb.default);
/** Once a checkpoint has emptied the WAL, cut its file back to this size (it is reused, not regrown). */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * The settings every SQLite connection gets. What each costs in memory and what survives a crash
 * is in docs/scaling.md ("SQLite on one machine").
 */
function applySqliteSettings(sqlite: SqliteConnection, config: Extract<DatabaseConfig, { dialect: 'sqlite' }>): void {
  // WAL lets readers run beside the writer; the busy timeout makes a second process wait for a
  // lock instead of failing at once; SQLite leaves foreign keys off unless asked.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  // In WAL mode NORMAL syncs at checkpoints, not at every commit: a process crash loses nothing
  // committed, a power loss may lose the last commits but never corrupts the file.
  sqlite.pragma('synchronous = NORMAL');
  // The page cache is private to this connection (so to each worker); a negative size is in KiB.
  const cacheMb = config.cacheMb ?? SQLITE_DEFAULT_CACHE_MB;
  sqlite.pragma(`cache_size = ${-Math.trunc(cacheMb * 1024)}`);
  // Reads through mmap come straight from the OS page cache, shared by every process that maps
  // the file, instead of being copied into the private cache. SQLite caps it at its build's
  // SQLITE_MAX_MMAP_SIZE (2 GiB in better-sqlite3); pages past that are read the ordinary way.
  const mmapMb = config.mmapMb ?? SQLITE_DEFAULT_MMAP_MB;
  sqlite.pragma(`mmap_size = ${Math.trunc(mmapMb * 1024 * 1024)}`);
  // Sorts and DISTINCTs without an index, and temporary b-trees, stay in memory instead of temp
  // files: their size is bounded by one query's result, and the indexes keep common ones away.
  sqlite.pragma('temp_store = MEMORY');
  sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every statement anew on each query; preparing costs about as much as running a
 * small query. The engine issues the same SQL shapes again and again, so keep prepared statements
 * by their SQL text (least recently used out first).
 */
function withStatementCache(sqlite: SqliteConnection): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      // Kysely opens transactions with a plain (deferred) `begin`. A deferred transaction that reads
      // and then writes cannot wait for another process's write lock (SQLite answers busy at once
      // to avoid a deadlock); `begin immediate` takes the write lock first and waits for it
      // within the busy timeout, so several processes can share one database file.
      const sql = text === 'begin' ? 'begin immediate' : text;
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql);
      } else {
        statement = sqlite.prepare(sql);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

/**
 * Brings the schema up to date. Safe to run from several processes at once: on PostgreSQL each
 * run is one transaction that holds a lock (below); on SQLite a process that loses the race (its
 * transaction saw the schema before the winner committed) fails, waits, and finds the
 * migrations applied.
 */
export async function migrateToLatest(handle: DatabaseHandle): Promise<string[]> {
  return migrate(handle, (migrator) => migrator.migrateToLatest());
}

/**
 * Applies the migrations up to and including `target` (none after it): what `sitebiz restore`
 * does before loading a backup taken at that version, and what tests use to make an old schema.
 */
export async function migrateTo(handle: DatabaseHandle, target: string): Promise<string[]> {
  return migrate(handle, (migrator) => migrator.migrateTo(target));
}

/** The options every Migrator of this handle takes (the migration table's schema, the list). */
export function migratorOptions(handle: DatabaseHandle): Omit<MigratorProps, 'db'> {
  // Kysely looks for its migration tables in every schema unless told which one: without this, a
  // schema made while another schema of the database has them would never get its own.
  return {
    provider: migrationProvider(handle.traits),
    ...(handle.schema !== undefined ? { migrationTableSchema: handle.schema } : {}),
  };
}

async function migrate(handle: DatabaseHandle, run: (migrator: Migrator) => Promise<MigrationResultSet>): Promise<string[]> {
  const options = migratorOptions(handle);
  for (let attempt = 1; ; attempt++) {
    const { error, results } =
      handle.traits.name === 'postgres' ? await migrateInOneTransaction(handle.db, options, run) : await run(new Migrator({ db: handle.db, ...options }));
    if (!error) return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    if (attempt >= 5) throw error instanceof Error ? error : new Error(String(error));
    await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
  }
}

/**
 * PostgreSQL: the whole run inside one transaction of ours, which first takes a transaction-level
 * advisory lock (held until the commit, so a second process reads the migration table only once
 * the first has committed). Kysely's own migration lock is a session-level one, taken and released
 * by separate statements around its transaction: through a transaction pooler (PgBouncer's
 * transaction mode) those statements can land on different server connections, and a lock left
 * held on one of them stopped every later migration (each command's start) for its 1-hour
 * timeout. Inside our transaction every statement has the same server connection.
 */
async function migrateInOneTransaction(
  db: Kysely<Database>,
  options: Omit<MigratorProps, 'db'>,
  run: (migrator: Migrator) => Promise<MigrationResultSet>,
): Promise<MigrationResultSet> {
  return db.connection().execute(async (connection) => {
    await sql`begin`.execute(connection);
    let committed = false;
    try {
      await sql`select pg_advisory_xact_lock(hashtext('sitebiz: migrations'))`.execute(connection);
      const result = await run(new Migrator({ db: connection, ...options, disableTransactions: true }));
      if (result.error === undefined) {
        await sql`commit`.execute(connection);
        committed = true;
      }
      return result;
    } finally {
      if (!committed) await sql`rollback`.execute(connection).catch(() => {});
    }
  });
}

/** Drops a PostgreSQL schema made for a test run. */
export async function dropSchema(config: DatabaseConfig, schema: string): Promise<void> {
  if (config.dialect !== 'postgres') return;
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
  const admin = new pg.Client({ connectionString: config.connectionString });
  await admin.connect();
  try {
    await admin.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await admin.end();
  }
}
