// Configuration: read once from environment variables and CLI flags (flags win), validated as a
// whole so that a bad start names every wrong value at once.
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';

export type DatabaseConfig =
  | {
      dialect: 'sqlite';
      url: string;
      filename: string; // ':memory:' for an in-memory db
      /** Page cache of each connection, in MiB (connect.ts has the default when absent). */
      cacheMb?: number;
      /** Bytes of the file read through mmap, in MiB; 0 turns mmap off. */
      mmapMb?: number;
    }
  | {
      dialect: 'postgres';
      url: string;
      connectionString: string;
      /** Connections in each process's pool (connect.ts has the default when absent). */
      poolSize?: number;
      /**
       * The pooler between sitebiz and PostgreSQL, by its pool mode. `transaction`: a server
       * connection lasts one transaction, so nothing of a session is kept (no named prepared
       * statements, no LISTEN). Absent: `none` (a session pooler behaves as none).
       */
      pooler?: DatabasePooler;
      /** Streaming replicas that serve reads (src/db/replicas.ts); absent: every read goes to the primary. */
      replicas?: ReplicaConfig;
    };

export interface ReplicaConfig {
  /** One PostgreSQL URL per replica. */
  connectionStrings: string[];
  /** A replica further behind the primary than this, in ms, serves no reads until it catches up. */
  maxLagMs: number;
}

export const DATABASE_POOLERS = ['none', 'session', 'transaction'] as const;
export type DatabasePooler = (typeof DATABASE_POOLERS)[number];

export interface Config {
  database: DatabaseConfig;
  port: number;
  host: string;
  /** Base for every link in responses, without a trailing slash. */
  publicUrl: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  logLevel: string;
  /** Largest request body accepted, in bytes (larger ones get a 413). */
  bodyLimitBytes: number;
  /** Upstream compatibility: ignore unknown `filter[...]` parameters instead of answering 400. */
  ignoreUnknownFilters: boolean;
  /** Refuse on /v1 what the upstream API does not define, and answer only what it defines (docs/upstream-strict.md). */
  upstreamStrict: boolean;
  /** MiB of whole list and show answers each process keeps until their sites' data changes; 0: none. */
  answerCacheMb: number;
  /** `serve`: processes that answer requests (1: the serving process itself, no cluster). */
  workers: number;
  /** Requests a minute per API key (per source address before authentication) on /v1; 0: off. */
  rateLimitPerMinute: number;
  /** Failed client authentications a minute per client_id and per address at /v1/oauth/token; 0: off. */
  authFailuresPerMinute: number;
  /** Where processes share their rate-limit counts; undefined: each process counts alone. */
  redisUrl: string | undefined;
  /**
   * The load balancers in front (addresses, CIDR ranges, or proxy-addr's names loopback,
   * linklocal, uniquelocal): a request arriving from one of them has its client's address taken
   * from X-Forwarded-For. Empty: none, every request's address is its connection's.
   */
  trustProxy: string[];
  /** Deadline for receiving a whole request (headers and body), in ms; then 408. */
  requestTimeoutMs: number;
  /** A connection with a request open and no byte moving either way for this long is closed, in ms. */
  idleTimeoutMs: number;
  /** `serve`: how long SIGTERM/SIGINT waits for requests in flight before exiting anyway, in ms. */
  shutdownTimeoutMs: number;
  /** `serve`: after SIGTERM/SIGINT, how long GET /readyz answers 503 while everything is still served, in ms. */
  shutdownDrainMs: number;
  /**
   * `sandbox` (the default): a newcomer's installation, with the demo account made on an empty
   * database (and, later, local webhook receivers and the sandbox tools); `production`: none of that.
   */
  mode: Mode;
  /** Longest wait for a webhook receiver's answer, per attempt, in ms (a claim's lease is longer). */
  webhookTimeoutMs: number;
  /** Webhook attempts in flight at once in each process. */
  webhookConcurrency: number;
  /** How often each process looks for due deliveries it was not woken for, in ms. */
  webhookPollMs: number;
  /**
   * Whether this process delivers webhooks. Off: it serves the API only and leaves the queue to
   * other processes on the database (API processes apart from delivery processes).
   */
  webhookWorker: boolean;
  /** Sandbox mode: requests kept in the request journal per account (the newest); 0 turns it off. */
  requestJournalSize: number;
  /** Days the audit log keeps its rows (src/audit/retention.ts); 0 keeps them forever. */
  auditRetentionDays: number;
  /**
   * Whether answers of 1 KB or more go gzip or brotli compressed to clients that ask
   * (src/compression.ts). Off where a proxy in front compresses instead.
   */
  compression: boolean;
  /** GET /metrics (src/observability/metrics.ts): not served, served to anyone, or to METRICS_TOKEN's bearer. */
  metrics: MetricsAccess;
  /** The Bearer token GET /metrics asks for when `metrics` is `token`. */
  metricsToken: string | undefined;
  /**
   * Whether `serve` (and the other commands) apply pending migrations at start. Off: the operator
   * runs `sitebiz migrate`; until then `serve` waits, listening on nothing, for a current schema.
   */
  migrateOnStart: boolean;
  /** OpenTelemetry traces (src/observability/tracing.ts); undefined: off, nothing of it is loaded. */
  tracing: TracingConfig | undefined;
}

export interface TracingConfig {
  /** Where spans are POSTed (OTLP/HTTP, JSON): the whole URL, e.g. http://collector:4318/v1/traces. */
  tracesUrl: string;
  /** service.name of the spans' resource. */
  serviceName: string;
}

export const METRICS_ACCESS = ['off', 'public', 'token'] as const;
export type MetricsAccess = (typeof METRICS_ACCESS)[number];

export const MODES = ['sandbox', 'production'] as const;
export type Mode = (typeof MODES)[number];

/** One setting: its environment variable, its CLI flag, its default and its documentation. */
interface SettingSpec {
  env: string;
  flag: string;
  description: string;
  default: string | undefined;
}

export const SETTINGS = {
  databaseUrl: {
    env: 'DATABASE_URL',
    flag: 'database-url',
    description: 'sqlite:<path>, sqlite::memory: or postgres://user@host:port/db',
    default: 'sqlite:data/sitebiz.db',
  },
  port: { env: 'PORT', flag: 'port', description: 'TCP port to listen on', default: '3000' },
  host: { env: 'HOST', flag: 'host', description: 'interface to listen on', default: '127.0.0.1' },
  publicUrl: {
    env: 'PUBLIC_URL',
    flag: 'public-url',
    description: 'base URL of every link in responses (default http://HOST:PORT)',
    default: undefined,
  },
  accessTokenTtl: {
    env: 'ACCESS_TOKEN_TTL',
    flag: 'access-token-ttl',
    description: 'access token lifetime in seconds',
    default: '7200',
  },
  refreshTokenTtl: {
    env: 'REFRESH_TOKEN_TTL',
    flag: 'refresh-token-ttl',
    description: 'refresh token lifetime in seconds',
    default: String(30 * 24 * 3600),
  },
  logLevel: {
    env: 'LOG_LEVEL',
    flag: 'log-level',
    description: 'fatal, error, warn, info, debug, trace or silent',
    default: 'info',
  },
  bodyLimit: {
    env: 'BODY_LIMIT',
    flag: 'body-limit',
    description: 'largest request body in bytes',
    default: String(1024 * 1024),
  },
  ignoreUnknownFilters: {
    env: 'IGNORE_UNKNOWN_FILTERS',
    flag: 'ignore-unknown-filters',
    description: 'true: ignore unknown filter[...] parameters as upstream does; false: answer 400',
    default: 'false',
  },
  upstreamStrict: {
    env: 'UPSTREAM_STRICT',
    flag: 'upstream-strict',
    description: 'on: /v1 refuses what the upstream API does not define (sitebiz extensions) and answers only upstream members; off: extensions served',
    default: 'off',
  },
  workers: {
    env: 'WORKERS',
    flag: 'workers',
    description: 'serve: processes answering requests on the port; auto: one per core',
    default: '1',
  },
  databasePoolSize: {
    env: 'DATABASE_POOL_SIZE',
    flag: 'database-pool-size',
    description: 'PostgreSQL connections per process (each worker has its own pool)',
    default: '10',
  },
  databasePooler: {
    env: 'DATABASE_POOLER',
    flag: 'database-pooler',
    description: 'PostgreSQL behind a pooler: none, session or transaction (its pool mode; transaction: no named statements, no LISTEN)',
    default: 'none',
  },
  databaseReplicaUrl: {
    env: 'DATABASE_REPLICA_URL',
    flag: 'database-replica-url',
    description: 'PostgreSQL streaming replicas for reads, comma-separated postgres:// URLs (a client still reads its own writes)',
    default: undefined,
  },
  databaseReplicaMaxLag: {
    env: 'DATABASE_REPLICA_MAX_LAG_MS',
    flag: 'database-replica-max-lag-ms',
    description: 'a replica further behind the primary than this, ms, serves no reads until it catches up',
    default: '2000',
  },
  answerCacheMb: {
    env: 'ANSWER_CACHE_MB',
    flag: 'answer-cache-mb',
    description: 'whole answers of lists and shows kept per process until their sites change, MiB of JSON (0: off)',
    default: '32',
  },
  sqliteCacheMb: {
    env: 'SQLITE_CACHE_MB',
    flag: 'sqlite-cache-mb',
    description: 'SQLite page cache per connection, MiB',
    default: '64',
  },
  sqliteMmapMb: {
    env: 'SQLITE_MMAP_MB',
    flag: 'sqlite-mmap-mb',
    description: 'SQLite file bytes read through mmap, MiB (0: off)',
    // Off by default: mapped pages count in every process's RSS once touched, and the common lists
    // gained nothing measurable from it (docs/scaling.md).
    default: '0',
  },
  rateLimit: {
    env: 'RATE_LIMIT',
    flag: 'rate-limit',
    description: 'requests a minute per API key (per address before authentication) on /v1; 0: off',
    // 100 times the upstream's guessed 100 a minute: a local test suite does not reach it by
    // accident, and one key still cannot take more than a fraction of a process (docs/operations.md).
    default: '10000',
  },
  authFailureLimit: {
    env: 'AUTH_FAILURE_LIMIT',
    flag: 'auth-failure-limit',
    description: 'failed client authentications a minute per client_id and per address at /v1/oauth/token, then 429; 0: off',
    default: '20',
  },
  redisUrl: {
    env: 'REDIS_URL',
    flag: 'redis-url',
    description: 'redis://host:port/db: every process shares the rate-limit counts there (default: each process counts alone)',
    default: undefined,
  },
  trustProxy: {
    env: 'TRUST_PROXY',
    flag: 'trust-proxy',
    description: 'load balancers in front, comma-separated addresses or CIDR ranges: their X-Forwarded-For gives the client address that per-address limits count',
    default: undefined,
  },
  requestTimeout: {
    env: 'REQUEST_TIMEOUT_MS',
    flag: 'request-timeout-ms',
    description: 'deadline for receiving a whole request (headers and body), ms; then 408',
    default: '30000',
  },
  idleTimeout: {
    env: 'IDLE_TIMEOUT_MS',
    flag: 'idle-timeout-ms',
    description: 'a connection with a request open and no byte moving for this long is closed, ms',
    default: '15000',
  },
  shutdownTimeout: {
    env: 'SHUTDOWN_TIMEOUT_MS',
    flag: 'shutdown-timeout-ms',
    description: 'serve: how long SIGTERM/SIGINT waits for requests in flight before exiting anyway, ms',
    default: '10000',
  },
  shutdownDrain: {
    env: 'SHUTDOWN_DRAIN_MS',
    flag: 'shutdown-drain-ms',
    description: 'serve: after SIGTERM/SIGINT, keep serving this long while GET /readyz answers 503, so a load balancer takes the process out first; ms',
    default: '0',
  },
  mode: {
    env: 'MODE',
    flag: 'mode',
    description: 'sandbox: demo account on an empty database, local webhook receivers allowed; production: neither',
    default: 'sandbox',
  },
  webhookTimeout: {
    env: 'WEBHOOK_TIMEOUT_MS',
    flag: 'webhook-timeout-ms',
    description: 'how long a webhook attempt waits for the receiver to answer, ms; then it failed and is retried',
    default: '10000',
  },
  webhookConcurrency: {
    env: 'WEBHOOK_CONCURRENCY',
    flag: 'webhook-concurrency',
    description: 'webhook attempts in flight at once in each process',
    default: '32',
  },
  webhookPoll: {
    env: 'WEBHOOK_POLL_MS',
    flag: 'webhook-poll-ms',
    description: 'how often each process looks for due webhook deliveries it was not told about, ms',
    default: '1000',
  },
  webhookWorker: {
    env: 'WEBHOOK_WORKER',
    flag: 'webhook-worker',
    description: 'on: this process delivers webhooks; off: it serves the API only and leaves deliveries to other processes on the database',
    default: 'on',
  },
  requestJournalSize: {
    env: 'REQUEST_JOURNAL_SIZE',
    flag: 'request-journal-size',
    description: 'sandbox mode: requests kept per account in the request journal (GET /v1/test_helpers/requests), the newest; 0: off',
    default: '1000',
  },
  auditRetentionDays: {
    env: 'AUDIT_RETENTION_DAYS',
    flag: 'audit-retention-days',
    description: 'days the audit log (GET /v1/audit_events) keeps its rows; older ones are removed hourly; 0: kept forever',
    default: '365',
  },
  compression: {
    env: 'COMPRESSION',
    flag: 'compression',
    description: 'on: answers of 1 KB or more go gzip or brotli compressed to clients whose Accept-Encoding asks; off: never (a proxy in front compresses)',
    default: 'on',
  },
  metrics: {
    env: 'METRICS',
    flag: 'metrics',
    description: 'GET /metrics in the Prometheus text format: off; public (no token); token (Bearer METRICS_TOKEN)',
    // Off: nothing is recorded, so a server nobody scrapes pays nothing, and a port opened to the
    // world (HOST=0.0.0.0) does not show its traffic to it unasked (docs/operations.md "Metrics").
    default: 'off',
  },
  metricsToken: {
    env: 'METRICS_TOKEN',
    flag: 'metrics-token',
    description: 'METRICS=token: the Bearer token GET /metrics requires (16 characters or more)',
    default: undefined,
  },
  migrateOnStart: {
    env: 'MIGRATE_ON_START',
    flag: 'migrate-on-start',
    description: 'on: serve and every command apply pending migrations first; off: `sitebiz migrate` does, and serve waits for a current schema before it listens',
    default: 'on',
  },
  // OpenTelemetry's own names (the SDKs' environment variables), so a collector's usual setup applies.
  otelEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    flag: 'otel-exporter-otlp-endpoint',
    description: 'http(s) base URL of an OTLP/HTTP collector (spans go to <url>/v1/traces): turns traces on; unset: off',
    default: undefined,
  },
  otelTracesEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    flag: 'otel-exporter-otlp-traces-endpoint',
    description: 'the whole OTLP/HTTP URL spans are sent to (wins over OTEL_EXPORTER_OTLP_ENDPOINT; also turns traces on)',
    default: undefined,
  },
  otelServiceName: {
    env: 'OTEL_SERVICE_NAME',
    flag: 'otel-service-name',
    description: 'service.name of the spans',
    default: 'sitebiz',
  },
} satisfies Record<string, SettingSpec>;

export type SettingName = keyof typeof SETTINGS;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Where a setting's value came from; `default` also when its environment variable is set empty. */
export type SettingSource = 'flag' | 'environment' | 'default';

/** The rule of loadConfig: a flag wins over its environment variable, and an empty variable counts as unset. */
export function settingSource(
  name: SettingName,
  env: Record<string, string | undefined> = process.env,
  flags: Partial<Record<SettingName, string>> = {},
): SettingSource {
  if (flags[name] !== undefined) return 'flag';
  const fromEnv = env[SETTINGS[name].env];
  return fromEnv !== undefined && fromEnv !== '' ? 'environment' : 'default';
}

const LOG_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** More workers than this is a typo, not a machine: each one holds a database pool and caches. */
export const MAX_WORKERS = 256;

/**
 * Builds the configuration from environment variables and flags (flags override the
 * environment). Throws a ConfigError listing every invalid value.
 */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  flags: Partial<Record<SettingName, string>> = {},
): Config {
  const problems: string[] = [];
  const raw = (name: SettingName): { value: string | undefined; origin: string } => {
    const spec: SettingSpec = SETTINGS[name];
    const source = settingSource(name, env, flags);
    if (source === 'flag') return { value: flags[name], origin: `--${spec.flag}` };
    if (source === 'environment') return { value: env[spec.env], origin: spec.env };
    return { value: spec.default, origin: `${spec.env} (default)` };
  };

  const integer = (name: SettingName, min: number, max: number): number => {
    const { value, origin } = raw(name);
    const n = Number(value);
    if (value === undefined || !/^\d+$/.test(value.trim()) || n < min || n > max) {
      problems.push(`${origin} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
      return min;
    }
    return n;
  };

  const onOff = (name: SettingName): boolean => {
    const { value, origin } = raw(name);
    const word = (value ?? '').trim().toLowerCase();
    const on = ['on', 'true', '1', 'yes'].includes(word);
    if (!on && !['off', 'false', '0', 'no'].includes(word)) problems.push(`${origin} must be on or off, got ${JSON.stringify(value)}`);
    return on;
  };

  const parsedDatabase = parseDatabaseUrl(raw('databaseUrl').value ?? '', raw('databaseUrl').origin, problems);
  const port = integer('port', 0, 65535);
  const host = (raw('host').value ?? '').trim();
  if (host === '') problems.push(`${raw('host').origin} must not be empty`);

  let publicUrl = raw('publicUrl').value;
  if (publicUrl === undefined) {
    const shownHost = host.includes(':') ? `[${host}]` : host;
    publicUrl = `http://${shownHost}:${port}`;
  } else {
    try {
      const url = new URL(publicUrl);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('protocol');
      if (url.search || url.hash) throw new Error('query');
    } catch {
      problems.push(
        `${raw('publicUrl').origin} must be an http(s) URL without query or fragment, got ${JSON.stringify(publicUrl)}`,
      );
    }
  }
  publicUrl = publicUrl.replace(/\/+$/, '');

  const accessTokenTtlSeconds = integer('accessTokenTtl', 60, 31 * 24 * 3600);
  const refreshTokenTtlSeconds = integer('refreshTokenTtl', 60, 366 * 24 * 3600);
  if (refreshTokenTtlSeconds < accessTokenTtlSeconds) {
    problems.push(`${SETTINGS.refreshTokenTtl.env} must not be shorter than ${SETTINGS.accessTokenTtl.env}`);
  }

  const logLevel = (raw('logLevel').value ?? '').trim().toLowerCase();
  if (!LOG_LEVELS.has(logLevel)) {
    problems.push(`${raw('logLevel').origin} must be one of ${[...LOG_LEVELS].join(', ')}, got ${JSON.stringify(logLevel)}`);
  }
  const bodyLimitBytes = integer('bodyLimit', 1024, 100 * 1024 * 1024);

  const ignoreRaw = (raw('ignoreUnknownFilters').value ?? '').trim().toLowerCase();
  const ignoreUnknownFilters = ['true', '1', 'yes'].includes(ignoreRaw);
  if (!ignoreUnknownFilters && !['false', '0', 'no'].includes(ignoreRaw)) {
    problems.push(`${raw('ignoreUnknownFilters').origin} must be true or false, got ${JSON.stringify(ignoreRaw)}`);
  }

  const upstreamStrict = onOff('upstreamStrict');
  const workers = parseWorkers(raw('workers'), problems);
  const poolSize = integer('databasePoolSize', 1, 1000);
  const poolerRaw = (raw('databasePooler').value ?? '').trim().toLowerCase();
  const pooler = DATABASE_POOLERS.find((p) => p === poolerRaw);
  if (pooler === undefined) {
    problems.push(`${raw('databasePooler').origin} must be one of ${DATABASE_POOLERS.join(', ')}, got ${JSON.stringify(raw('databasePooler').value)}`);
  }
  const cacheMb = integer('sqliteCacheMb', 0, 1024 * 1024);
  const mmapMb = integer('sqliteMmapMb', 0, 1024 * 1024);
  const replicas = parseReplicas(raw('databaseReplicaUrl'), integer('databaseReplicaMaxLag', 0, 3_600_000), parsedDatabase, problems);
  const database: DatabaseConfig | undefined =
    parsedDatabase?.dialect === 'sqlite'
      ? { ...parsedDatabase, cacheMb, mmapMb }
      : parsedDatabase?.dialect === 'postgres'
        ? { ...parsedDatabase, poolSize, ...(pooler && pooler !== 'none' ? { pooler } : {}), ...(replicas ? { replicas } : {}) }
        : undefined;

  const rateLimitPerMinute = integer('rateLimit', 0, 100_000_000);
  const authFailuresPerMinute = integer('authFailureLimit', 0, 1_000_000);
  const redisUrl = raw('redisUrl').value?.trim();
  if (redisUrl !== undefined && !/^rediss?:\/\/[^\s]+$/.test(redisUrl)) {
    problems.push(`${raw('redisUrl').origin} must be a redis:// or rediss:// URL, got ${JSON.stringify(redactUrl(redisUrl))}`);
  }
  const trustProxy = parseTrustedProxies(raw('trustProxy'), problems);
  const requestTimeoutMs = integer('requestTimeout', 100, 3_600_000);
  const idleTimeoutMs = integer('idleTimeout', 100, 3_600_000);
  const shutdownTimeoutMs = integer('shutdownTimeout', 100, 3_600_000);
  const shutdownDrainMs = integer('shutdownDrain', 0, 600_000);

  const modeRaw = (raw('mode').value ?? '').trim().toLowerCase();
  const mode = MODES.find((m) => m === modeRaw);
  if (mode === undefined) problems.push(`${raw('mode').origin} must be sandbox or production, got ${JSON.stringify(raw('mode').value)}`);

  const webhookTimeoutMs = integer('webhookTimeout', 50, 600_000);
  const webhookConcurrency = integer('webhookConcurrency', 1, 10_000);
  const webhookPollMs = integer('webhookPoll', 10, 3_600_000);
  const webhookWorker = onOff('webhookWorker');

  const requestJournalSize = integer('requestJournalSize', 0, 1_000_000);
  const auditRetentionDays = integer('auditRetentionDays', 0, 36_500);
  const compression = onOff('compression');
  const migrateOnStart = onOff('migrateOnStart');
  const answerCacheMb = integer('answerCacheMb', 0, 1024 * 1024);
  const { metrics, metricsToken } = parseMetrics(raw('metrics'), raw('metricsToken'), problems);
  const tracing = parseTracing(raw('otelEndpoint'), raw('otelTracesEndpoint'), raw('otelServiceName'), problems);

  if (problems.length > 0 || database === undefined || mode === undefined) throw new ConfigError(problems);
  return {
    database,
    port,
    host,
    publicUrl,
    accessTokenTtlSeconds,
    refreshTokenTtlSeconds,
    logLevel,
    bodyLimitBytes,
    ignoreUnknownFilters,
    upstreamStrict,
    answerCacheMb,
    workers,
    rateLimitPerMinute,
    authFailuresPerMinute,
    redisUrl,
    trustProxy,
    requestTimeoutMs,
    idleTimeoutMs,
    shutdownTimeoutMs,
    shutdownDrainMs,
    mode,
    webhookTimeoutMs,
    webhookConcurrency,
    webhookPollMs,
    webhookWorker,
    requestJournalSize,
    auditRetentionDays,
    compression,
    metrics,
    metricsToken,
    migrateOnStart,
    tracing,
  };
}

/** The shortest METRICS_TOKEN accepted: a guessable token would leave /metrics as good as public. */
export const METRICS_TOKEN_MIN_LENGTH = 16;

/** METRICS and METRICS_TOKEN: token mode needs a token, and a token without token mode is a mistake worth naming. */
function parseMetrics(
  access: { value: string | undefined; origin: string },
  token: { value: string | undefined; origin: string },
  problems: string[],
): { metrics: MetricsAccess; metricsToken: string | undefined } {
  const word = (access.value ?? '').trim().toLowerCase();
  const metrics = METRICS_ACCESS.find((m) => m === word);
  if (metrics === undefined) {
    problems.push(`${access.origin} must be one of ${METRICS_ACCESS.join(', ')}, got ${JSON.stringify(access.value)}`);
    return { metrics: 'off', metricsToken: undefined };
  }
  const metricsToken = token.value?.trim() || undefined;
  if (metrics === 'token') {
    if (metricsToken === undefined) problems.push(`${access.origin} is token but ${SETTINGS.metricsToken.env} is not set: set the Bearer token Prometheus will send`);
    else if (metricsToken.length < METRICS_TOKEN_MIN_LENGTH || /\s/.test(metricsToken)) {
      problems.push(`${token.origin} must be ${METRICS_TOKEN_MIN_LENGTH} or more characters without spaces (e.g. openssl rand -hex 32)`);
    }
  } else if (metricsToken !== undefined) {
    problems.push(`${token.origin} is set but ${SETTINGS.metrics.env} is ${metrics}: set ${SETTINGS.metrics.env}=token to require it`);
  }
  return { metrics, metricsToken };
}

type RawSetting = { value: string | undefined; origin: string };

/**
 * Traces are on when either endpoint is set. As the OpenTelemetry SDKs do, the signal-specific
 * URL is used as it is, and the general one gets /v1/traces appended.
 */
function parseTracing(endpoint: RawSetting, tracesEndpoint: RawSetting, serviceName: RawSetting, problems: string[]): TracingConfig | undefined {
  const given = tracesEndpoint.value?.trim() ? tracesEndpoint : endpoint.value?.trim() ? endpoint : undefined;
  if (!given) return undefined;
  const text = given.value!.trim();
  let url: URL;
  try {
    url = new URL(text);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('protocol');
  } catch {
    problems.push(`${given.origin} must be an http(s) URL, got ${JSON.stringify(redactUrl(text))}`);
    return undefined;
  }
  const tracesUrl = given === tracesEndpoint ? url.href : `${text.replace(/\/+$/, '')}/v1/traces`;
  const name = (serviceName.value ?? '').trim();
  if (name === '') problems.push(`${serviceName.origin} must not be empty`);
  return { tracesUrl, serviceName: name };
}

/** `auto` (every core this process may use) or a whole number of workers. */
function parseWorkers(setting: { value: string | undefined; origin: string }, problems: string[]): number {
  const value = (setting.value ?? '').trim().toLowerCase();
  if (value === 'auto') return availableParallelism();
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > MAX_WORKERS) {
    problems.push(
      `${setting.origin} must be auto (one per core) or a whole number from 1 to ${MAX_WORKERS}, got ${JSON.stringify(setting.value)}`,
    );
    return 1;
  }
  return n;
}

/** proxy-addr's names for ranges (what Fastify's trustProxy accepts besides addresses and CIDRs). */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** TRUST_PROXY: IPv4 or IPv6 addresses, CIDR ranges of them, or PROXY_RANGE_NAMES, comma-separated. */
function parseTrustedProxies(setting: { value: string | undefined; origin: string }, problems: string[]): string[] {
  const entries = (setting.value ?? '').split(',').map((e) => e.trim()).filter((e) => e !== '');
  for (const entry of entries) {
    if (PROXY_RANGE_NAMES.has(entry)) continue;
    const [address = '', prefix, extra] = entry.split('/');
    const version = isIP(address);
    const maxPrefix = version === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= maxPrefix);
    if (version === 0 || !prefixOk || extra !== undefined) {
      problems.push(`${setting.origin} must list addresses or CIDR ranges (or loopback, linklocal, uniquelocal), got ${JSON.stringify(entry)}`);
    }
  }
  return entries;
}

/** DATABASE_REPLICA_URL: postgres:// URLs, comma-separated, beside a PostgreSQL DATABASE_URL only. */
function parseReplicas(
  setting: { value: string | undefined; origin: string },
  maxLagMs: number,
  primary: DatabaseConfig | undefined,
  problems: string[],
): ReplicaConfig | undefined {
  const urls = (setting.value ?? '').split(',').map((u) => u.trim()).filter((u) => u !== '');
  if (urls.length === 0) return undefined;
  if (primary && primary.dialect !== 'postgres') {
    problems.push(`${setting.origin} needs a PostgreSQL ${SETTINGS.databaseUrl.env} (replicas are PostgreSQL streaming replicas)`);
    return undefined;
  }
  for (const url of urls) {
    const parsed = parseDatabaseUrl(url, setting.origin, problems);
    if (parsed && parsed.dialect !== 'postgres') problems.push(`${setting.origin} must hold postgres:// URLs, got ${JSON.stringify(redactUrl(url))}`);
  }
  return { connectionStrings: urls, maxLagMs };
}

export function parseDatabaseUrl(url: string, origin: string, problems: string[]): DatabaseConfig | undefined {
  const trimmed = url.trim();
  if (trimmed.startsWith('sqlite:')) {
    const filename = trimmed.slice('sqlite:'.length);
    if (filename === '') {
      problems.push(`${origin}: sqlite: needs a path, as in sqlite:data/sitebiz.db or sqlite::memory:`);
      return undefined;
    }
    return { dialect: 'sqlite', url: trimmed, filename };
  }
  if (/^postgres(ql)?:\/\//.test(trimmed)) {
    try {
      new URL(trimmed);
    } catch {
      problems.push(`${origin} is not a valid PostgreSQL URL`);
      return undefined;
    }
    return { dialect: 'postgres', url: trimmed, connectionString: trimmed };
  }
  problems.push(
    `${origin} must start with sqlite: or postgres:// (or postgresql://), got ${JSON.stringify(redactUrl(trimmed))}`,
  );
  return undefined;
}

/** Hides a password in a database or Redis URL before it is printed or logged. */
export function redactUrl(url: string): string {
  // The user may be empty (redis://:password@host).
  return url.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@');
}
