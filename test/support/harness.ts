// Test harness: every behaviour suite runs once per database. SQLite always (in memory);
// PostgreSQL when TEST_DATABASE_URL is set, each app in a schema of its own so that test files
// can run in parallel and leave nothing behind.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type WebhookOptions } from '../../src/app.js';
import { PERMISSION_NAMES } from '../../src/auth/permissions.js';
import { loadConfig, parseDatabaseUrl, type Config, type DatabaseConfig } from '../../src/config.js';
import { connectDatabase, dropSchema, migrateToLatest, type DatabaseHandle } from '../../src/db/connect.js';
import { createAccount, createApiKey, createSite, createUser } from '../../src/domain/accounts.js';
import type { ResourceDefinition } from '../../src/jsonapi/resource.js';
import { freePort } from './free-port.js';

export type DialectName = 'sqlite' | 'postgres';

export const DIALECTS: DialectName[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

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

export async function createTestApp(dialect: DialectName, options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.databaseUrl ? parseDatabaseUrl(options.databaseUrl, 'test database', [])! : databaseConfig(dialect);
  const schema = dialect === 'postgres' ? `test_${randomBytes(6).toString('hex')}` : undefined;
  const queries = new QueryRecorder();
  const handle = await connectDatabase(database, { ...(schema ? { schema, poolSize: 4 } : {}), onQuery: queries.record });
  await migrateToLatest(handle);
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
      if (schema) await dropSchema(database, schema);
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
