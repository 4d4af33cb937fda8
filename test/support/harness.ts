// Test harness: every behaviour suite runs once per database. SQLite always (in memory);
// PostgreSQL when TEST_DATABASE_URL is set, each app in a database of its own so that test files
// can run in parallel and leave nothing behind. No app runs the migrations itself: a SQLite app
// opens a copy of one migrated in-memory image (per test process), a PostgreSQL app a copy of a
// migrated template database (CREATE DATABASE ... TEMPLATE, about 50 ms where migrating takes
// 1-2 s), made once per version of src/db/ and shared by every run that has the same.
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type WebhookOptions } from '../../src/app.js';
import { PERMISSION_NAMES } from '../../src/auth/permissions.js';
import { loadConfig, parseDatabaseUrl, type Config, type DatabaseConfig } from '../../src/config.js';
import { connectDatabase, migrateToLatest, type DatabaseHandle } from '../../src/db/connect.js';
import { createAccount, createApiKey, createSite, createUser } from '../../src/domain/accounts.js';
import type { ResourceDefinition } from '../../src/jsonapi/resource.js';
import { freePort } from './free-port.js';

export type DialectName = 'sqlite' | 'postgres';

export const DIALECTS: DialectName[] = (process.env.TEST_DATABASE_URL ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const)).filter(
  // TEST_DIALECTS=postgres narrows a run to one database (the pooler tests run suites so).
  (d) => !process.env.TEST_DIALECTS || process.env.TEST_DIALECTS.split(',').includes(d),
);

/**
 * TEST_DATABASE_POOLER_URL: a pooler (PgBouncer) in front of TEST_DATABASE_URL's server. The apps
 * and the `sitebiz` processes of the tests then reach their databases through it; creating and
 * dropping databases still goes straight to the server (a pooler keeps server connections open,
 * and a database with connections cannot be copied).
 */
export function throughPooler(url: string): string {
  const pooler = process.env.TEST_DATABASE_POOLER_URL;
  if (!pooler) return url;
  const target = new URL(url);
  const via = new URL(pooler);
  target.hostname = via.hostname;
  target.port = via.port;
  return target.href;
}

/**
 * The `skip` option of a test that needs PostgreSQL. Given to each test, not to its describe:
 * node's runner counts a skipped describe as no test at all, and `npm test` without
 * TEST_DATABASE_URL must count these in "skipped".
 */
export const POSTGRES_ONLY: { skip: string | false } = { skip: DIALECTS.includes('postgres') ? false : 'PostgreSQL only: set TEST_DATABASE_URL' };

export const PUBLIC_URL = 'http://sitebiz.test';

/** BEGIN, COMMIT, ROLLBACK and savepoints: statements of no table. */
const TRANSACTION_CONTROL = /^\s*(begin|commit|rollback|savepoint|release)\b/i;

/** A clock the tests move by hand. */
export class TestClock {
  constructor(public current = new Date('2026-06-01T12:00:00.000Z')) {}
  now = (): Date => new Date(this.current.getTime());
  advance(seconds: number): void {
    this.current = new Date(this.current.getTime() + seconds * 1000);
  }
}

export interface Tenant {
  accountId: number;
  ownerId: number;
  siteId: number;
  clientId: string;
  clientSecret: string;
}

export interface TestApp {
  dialect: DialectName;
  app: FastifyInstance;
  handle: DatabaseHandle;
  config: Config;
  clock: TestClock;
  /** SQL issued while recording (see QueryRecorder.during). */
  queries: QueryRecorder;
  /** An account with an owner, one site and a key holding every permission. */
  tenant: Tenant;
  /** A fresh access token for the tenant's all-permission key. */
  token(): Promise<string>;
  /** Client credentials → access token (fails the test if the grant fails). */
  tokenFor(clientId: string, clientSecret: string): Promise<string>;
  /** A new key for a user, and an access token for it. */
  keyWith(userId: number, permissions: readonly string[]): Promise<{ clientId: string; clientSecret: string; token: string }>;
  /** app.inject with an optional Bearer token; parses JSON bodies. */
  request(options: InjectOptions & { token?: string }): Promise<LightMyRequestResponse & { json<T = any>(): T }>;
  get(url: string, token?: string): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

function databaseConfig(dialect: DialectName): DatabaseConfig {
  const problems: string[] = [];
  const url = dialect === 'sqlite' ? 'sqlite::memory:' : process.env.TEST_DATABASE_URL!;
  const config = parseDatabaseUrl(url, 'test database', problems);
  if (!config) throw new Error(problems.join('; '));
  return config;
}

export interface TestAppOptions {
  /** Extra environment for loadConfig (e.g. IGNORE_UNKNOWN_FILTERS). */
  env?: Record<string, string>;
  /** Serve these resources instead of the API's (engine tests use fixtures). */
  resources?: readonly ResourceDefinition[];
  /** Runs after migrations and before the app is built: create fixture tables here. */
  prepare?: (handle: DatabaseHandle) => Promise<void>;
  /** Prefix of the app's rate-limit keys in Redis (with REDIS_URL in env). */
  redisNamespace?: string;
  /** Another database URL than the dialect's (the outage tests go through a proxy). */
  databaseUrl?: string;
  /**
   * The app's webhook delivery worker. Unlike `serve`, test apps do not start it by default: its
   * background queries would land in the query counts some suites assert, and its attempts
   * would change deliveries that suites inspect. Delivery tests start it, or drive it with
   * `app.webhooks.runDue()` while moving the clock.
   */
  webhooks?: WebhookOptions;
}

/** Records the SQL of every query, so tests can assert how many a request costs. */
export class QueryRecorder {
  readonly statements: string[] = [];
  private recording = false;
  record = (sql: string): void => {
    // The sandbox's request journal writes its batches in the background (src/sandbox/request-journal.ts):
    // whenever its timer fires, not as part of the request being measured. Its transaction's
    // BEGIN and COMMIT name no table: transaction control is left out too (the recorded requests
    // are reads, which open no transaction).
    if (!this.recording || sql.includes('request_journal') || TRANSACTION_CONTROL.test(sql)) return;
    this.statements.push(sql);
  };
  /** Runs `fn` and returns the SQL statements it issued. */
  async during<T>(fn: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
    this.statements.length = 0;
    this.recording = true;
    try {
      const result = await fn();
      return { result, statements: [...this.statements] };
    } finally {
      this.recording = false;
    }
  }
}

/**
 * The migrated SQLite database of this test process, as an image that each app opens a copy of
 * (a few ms, where running the migrations takes 150 ms or more).
 */
let sqliteImage: Promise<Buffer> | undefined;
function migratedSqliteImage(): Promise<Buffer> {
  sqliteImage ??= (async () => {
    const handle = await connectDatabase(databaseConfig('sqlite'));
    try {
      await migrateToLatest(handle);
      return handle.serialize!();
    } finally {
      await handle.close();
    }
  })();
  return sqliteImage;
}

const DB_SOURCES = fileURLToPath(new URL('../../src/db/', import.meta.url));
const TEMPLATE_PREFIX = 'sitebiz_test_template_';
const TEMPLATE_MADE_AT = 'sitebiz test template made at ';
/** Each test app's PostgreSQL database is named so; scripts/ or a person can drop leftovers by it. */
export const TEST_DATABASE_PREFIX = 'sitebiz_test_app_';

/** A hash of every file of src/db/: the migrations and the modules they use. */
function migrationsVersion(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else hash.update(entry.name).update(readFileSync(path));
    }
  };
  walk(DB_SOURCES);
  return hash.digest('hex').slice(0, 16);
}

/** An administrative connection to TEST_DATABASE_URL's server, shared by the process's apps. */
let adminPool: pg.Pool | undefined;
function admin(): pg.Pool {
  // allowExitOnIdle: an idle pool must not keep a finished test process alive.
  adminPool ??= new pg.Pool({ connectionString: process.env.TEST_DATABASE_URL, max: 2, idleTimeoutMillis: 1000, allowExitOnIdle: true });
  return adminPool;
}

/**
 * The migrated template database for this version of src/db/: made by the first test process
 * that needs it (under an advisory lock, so two processes never make it at once, and renamed
 * into place only once whole), then reused by every app of every later run until src/db/
 * changes. Templates of other versions are dropped when a new one is made, once they are a day
 * old: another checkout (a branch with other migrations) on the same server may be using its own
 * right now, between the copies its test processes make.
 */
let postgresTemplate: Promise<string> | undefined;
/** The name of a database migrated to this version of src/db/, to copy (CREATE DATABASE ... TEMPLATE). */
export function migratedPostgresTemplate(): Promise<string> {
  postgresTemplate ??= (async () => {
    const version = migrationsVersion();
    const name = `${TEMPLATE_PREFIX}${version}`;
    const client = await admin().connect();
    try {
      await client.query('select pg_advisory_lock($1)', [parseInt(version.slice(0, 12), 16)]);
      const exists = await client.query('select 1 from pg_database where datname = $1', [name]);
      if (exists.rowCount === 0) {
        const building = `${name}_building`;
        await client.query(`drop database if exists ${building} with (force)`);
        await client.query(`create database ${building}`);
        const handle = await connectDatabase(databaseConfigAt(building), { poolSize: 1 });
        try {
          await migrateToLatest(handle);
        } finally {
          await handle.close();
        }
        await client.query(`alter database ${building} rename to ${name}`);
        // When it was made, for the rule above (a database has no creation time of its own).
        await client.query(`comment on database ${name} is '${TEMPLATE_MADE_AT}${new Date().toISOString()}'`);
        const stale = await client.query(
          `select datname, shobj_description(oid, 'pg_database') as made from pg_database where datname like '${TEMPLATE_PREFIX}%' and datname <> $1`,
          [name],
        );
        const dayAgo = Date.now() - 86_400_000;
        for (const row of stale.rows as Array<{ datname: string; made: string | null }>) {
          const made = row.made?.startsWith(TEMPLATE_MADE_AT) ? Date.parse(row.made.slice(TEMPLATE_MADE_AT.length)) : 0;
          if (made > dayAgo) continue;
          // Another checkout's run may be copying it right now: then it stays, for a later run.
          await client.query(`drop database if exists ${row.datname}`).catch(() => {});
        }
      }
      await client.query('select pg_advisory_unlock($1)', [parseInt(version.slice(0, 12), 16)]);
      return name;
    } finally {
      client.release();
    }
  })();
  return postgresTemplate;
}

/** TEST_DATABASE_URL (or `base`) with another database name. */
function urlWithDatabase(name: string, base = process.env.TEST_DATABASE_URL!): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.href;
}

function databaseConfigAt(name: string, base?: string): DatabaseConfig {
  const problems: string[] = [];
  const config = parseDatabaseUrl(urlWithDatabase(name, base), 'test database', problems);
  if (!config) throw new Error(problems.join('; '));
  return config;
}

/** A database of the app's own, copied from the migrated template; dropped by `drop`. */
async function newPostgresDatabase(): Promise<{ name: string; drop: () => Promise<void> }> {
  const template = await migratedPostgresTemplate();
  const name = `${TEST_DATABASE_PREFIX}${randomBytes(6).toString('hex')}`;
  await admin().query(`create database ${name} template ${template}`);
  return { name, drop: async () => void (await admin().query(`drop database if exists ${name} with (force)`)) };
}

/**
 * The app's own PostgreSQL database, reached directly at TEST_DATABASE_URL's server (not through
 * a proxy the app was given): a second process's connection to the same data.
 */
export function directDatabaseConfig(t: TestApp): DatabaseConfig {
  if (t.dialect !== 'postgres') throw new Error('directDatabaseConfig is for PostgreSQL apps');
  return databaseConfigAt(new URL(t.config.database.url).pathname.slice(1));
}

export async function createTestApp(dialect: DialectName, options: TestAppOptions = {}): Promise<TestApp> {
  const queries = new QueryRecorder();
  let database: DatabaseConfig;
  let handle: DatabaseHandle;
  let dropDatabase = async () => {};
  if (dialect === 'postgres') {
    const own = await newPostgresDatabase();
    dropDatabase = own.drop;
    // A databaseUrl (a proxy in front of the server) leads to the same server: the app's own
    // database through it.
    database = databaseConfigAt(own.name, options.databaseUrl ?? throughPooler(process.env.TEST_DATABASE_URL!));
    handle = await connectDatabase(database, { poolSize: 4, onQuery: queries.record });
  } else {
    database = options.databaseUrl ? parseDatabaseUrl(options.databaseUrl, 'test database', [])! : databaseConfig(dialect);
    handle = await connectDatabase(database, { sqliteImage: await migratedSqliteImage(), onQuery: queries.record });
  }
  // No migrateToLatest here: the copy was made from a migrated image or template of this very
  // version of src/db/, and running the migrator again per app (a transaction, a lock and its
  // table reads) only repeated work on every one of them.
  if (options.prepare) await options.prepare(handle);
  const clock = new TestClock();
  const config = loadConfig({ DATABASE_URL: database.url, PUBLIC_URL: PUBLIC_URL, LOG_LEVEL: 'silent', ...options.env });
  const app = await buildApp({
    config,
    database: handle,
    now: clock.now,
    ...(options.resources ? { resources: options.resources } : {}),
    ...(options.redisNamespace ? { redisNamespace: options.redisNamespace } : {}),
    webhooks: { autoStart: false, ...options.webhooks },
  });
  await app.ready();

  const accountId = await createAccount(handle, { name: 'Test Account' }, clock);
  const ownerId = await createUser(handle, { accountId, name: 'Olive Owner', email: `owner-${accountId}@example.com`, role: 'owner' }, clock);
  const siteId = await createSite(handle, { accountId, title: 'Test Site', subdomain: `test-${randomBytes(4).toString('hex')}` }, clock);
  const key = await createApiKey(handle, { userId: ownerId, name: 'test key', permissions: PERMISSION_NAMES }, clock);

  const request: TestApp['request'] = async (opts) => {
    const { token, headers, ...rest } = opts;
    const res = await app.inject({
      ...rest,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    });
    return res as LightMyRequestResponse & { json<T = any>(): T };
  };

  const tokenFor = async (clientId: string, clientSecret: string) => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
    });
    if (res.statusCode !== 200) throw new Error(`token request failed: ${res.statusCode} ${res.body}`);
    return (res.json() as { access_token: string }).access_token;
  };

  return {
    dialect,
    app,
    handle,
    config,
    clock,
    queries,
    tenant: { accountId, ownerId, siteId, clientId: key.clientId, clientSecret: key.clientSecret },
    token: () => tokenFor(key.clientId, key.clientSecret),
    tokenFor,
    async keyWith(userId, permissions) {
      const k = await createApiKey(handle, { userId, name: 'scoped key', permissions }, clock);
      return { clientId: k.clientId, clientSecret: k.clientSecret, token: await tokenFor(k.clientId, k.clientSecret) };
    },
    request,
    get: (url, token) => request({ method: 'GET', url, ...(token ? { token } : {}) }),
    async close() {
      await app.close();
      await dropDatabase();
    },
  };
}

export interface ListeningTestApp extends TestApp {
  /** Where the app listens, e.g. `http://127.0.0.1:41234` (no trailing slash); also its PUBLIC_URL. */
  baseUrl: string;
}

/**
 * A test app listening on 127.0.0.1 for clients that need a real socket (a browser). Its
 * PUBLIC_URL is the address it listens on, so the links it renders (`links.next`, `Location`,
 * printed curl lines) lead back to it. The port is chosen before the app is built, because the
 * configuration is read once; if another process takes it in between, another is tried.
 * `close()` stops listening too.
 */
export async function createListeningTestApp(dialect: DialectName, options: TestAppOptions = {}): Promise<ListeningTestApp> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const t = await createTestApp(dialect, { ...options, env: { ...options.env, PUBLIC_URL: baseUrl } });
    try {
      await t.app.listen({ port, host: '127.0.0.1' });
      return { ...t, baseUrl };
    } catch (error) {
      await t.close();
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt === 3) throw error;
    }
  }
}
