// Configuration, pure: defaults, environment, flags over environment, and every bad value
// reported at once.
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, parseDatabaseUrl, redactUrl, settingSource, type Config } from '../../src/config.js';

const DEFAULTS: Config = {
  database: { dialect: 'sqlite', url: 'sqlite:data/sitebiz.db', filename: 'data/sitebiz.db', cacheMb: 64, mmapMb: 0 },
  port: 3000,
  host: '127.0.0.1',
  publicUrl: 'http://127.0.0.1:3000',
  accessTokenTtlSeconds: 7200,
  refreshTokenTtlSeconds: 30 * 24 * 3600,
  logLevel: 'info',
  bodyLimitBytes: 1024 * 1024,
  ignoreUnknownFilters: false,
  upstreamStrict: false,
  answerCacheMb: 32,
  workers: 1,
  rateLimitPerMinute: 10_000,
  authFailuresPerMinute: 20,
  redisUrl: undefined,
  trustProxy: [],
  requestTimeoutMs: 30_000,
  idleTimeoutMs: 15_000,
  shutdownTimeoutMs: 10_000,
  shutdownDrainMs: 0,
  mode: 'sandbox',
  webhookTimeoutMs: 10_000,
  webhookConcurrency: 32,
  webhookPollMs: 1_000,
  webhookWorker: true,
  requestJournalSize: 1000,
  auditRetentionDays: 365,
  compression: true,
  metrics: 'off',
  metricsToken: undefined,
  migrateOnStart: true,
  tracing: undefined,
};

/** The problems of a configuration that must fail. */
function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.problems;
  }
  assert.fail('expected a ConfigError');
}

describe('loadConfig', () => {
  it('has a default for every setting', () => {
    assert.deepEqual(loadConfig({}), DEFAULTS);
  });

  it('treats an empty variable as unset', () => {
    assert.deepEqual(loadConfig({ PORT: '', LOG_LEVEL: '', DATABASE_URL: '' }), DEFAULTS);
  });

  it('says where a setting came from, by the same rule (what the server hints and the CLI links go by)', () => {
    assert.equal(settingSource('port', {}), 'default');
    assert.equal(settingSource('port', { PORT: '' }), 'default');
    assert.equal(settingSource('port', { PORT: '4000' }), 'environment');
    assert.equal(settingSource('port', { PORT: '4000' }, { port: '5000' }), 'flag');
  });

  it('reads every setting from the environment', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://app:pw@db.internal:5432/sitebiz',
      PORT: '8080',
      HOST: '0.0.0.0',
      PUBLIC_URL: 'https://api.example.com/',
      ACCESS_TOKEN_TTL: '600',
      REFRESH_TOKEN_TTL: '86400',
      LOG_LEVEL: 'WARN',
      BODY_LIMIT: '2048',
      IGNORE_UNKNOWN_FILTERS: 'true',
      UPSTREAM_STRICT: 'on',
      ANSWER_CACHE_MB: '8',
      WORKERS: '3',
      DATABASE_POOL_SIZE: '4',
      DATABASE_POOLER: 'Transaction',
      DATABASE_REPLICA_URL: 'postgres://app:pw@replica-1.internal:5432/sitebiz, postgres://app:pw@replica-2.internal:5432/sitebiz',
      DATABASE_REPLICA_MAX_LAG_MS: '500',
      RATE_LIMIT: '0',
      AUTH_FAILURE_LIMIT: '5',
      REDIS_URL: 'redis://cache.internal:6379/1',
      TRUST_PROXY: '10.0.0.0/8, fd00::1,loopback',
      REQUEST_TIMEOUT_MS: '5000',
      IDLE_TIMEOUT_MS: '2000',
      SHUTDOWN_TIMEOUT_MS: '3000',
      SHUTDOWN_DRAIN_MS: '1500',
      MODE: 'production',
      WEBHOOK_TIMEOUT_MS: '2500',
      WEBHOOK_CONCURRENCY: '8',
      WEBHOOK_POLL_MS: '250',
      WEBHOOK_WORKER: 'off',
      REQUEST_JOURNAL_SIZE: '50',
      AUDIT_RETENTION_DAYS: '30',
      COMPRESSION: 'off',
      METRICS: 'Token',
      METRICS_TOKEN: 'prometheus-token-0123456789',
      MIGRATE_ON_START: 'off',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.internal:4318/',
      OTEL_SERVICE_NAME: 'sitebiz-eu',
    });
    assert.deepEqual(config, {
      database: {
        dialect: 'postgres',
        url: 'postgres://app:pw@db.internal:5432/sitebiz',
        connectionString: 'postgres://app:pw@db.internal:5432/sitebiz',
        poolSize: 4,
        pooler: 'transaction',
        replicas: {
          connectionStrings: ['postgres://app:pw@replica-1.internal:5432/sitebiz', 'postgres://app:pw@replica-2.internal:5432/sitebiz'],
          maxLagMs: 500,
        },
      },
      port: 8080,
      host: '0.0.0.0',
      publicUrl: 'https://api.example.com',
      accessTokenTtlSeconds: 600,
      refreshTokenTtlSeconds: 86400,
      logLevel: 'warn',
      bodyLimitBytes: 2048,
      ignoreUnknownFilters: true,
      upstreamStrict: true,
      answerCacheMb: 8,
      workers: 3,
      rateLimitPerMinute: 0,
      authFailuresPerMinute: 5,
      redisUrl: 'redis://cache.internal:6379/1',
      trustProxy: ['10.0.0.0/8', 'fd00::1', 'loopback'],
      requestTimeoutMs: 5000,
      idleTimeoutMs: 2000,
      shutdownTimeoutMs: 3000,
      shutdownDrainMs: 1500,
      mode: 'production',
      webhookTimeoutMs: 2500,
      webhookConcurrency: 8,
      webhookPollMs: 250,
      webhookWorker: false,
      requestJournalSize: 50,
      auditRetentionDays: 30,
      compression: false,
      metrics: 'token',
      metricsToken: 'prometheus-token-0123456789',
      migrateOnStart: false,
      tracing: { tracesUrl: 'http://collector.internal:4318/v1/traces', serviceName: 'sitebiz-eu' },
    });
  });

  it('reads the SQLite cache and mmap sizes into the SQLite database settings', () => {
    const config = loadConfig({ DATABASE_URL: 'sqlite:big.db', SQLITE_CACHE_MB: '256', SQLITE_MMAP_MB: '512' });
    assert.deepEqual(config.database, { dialect: 'sqlite', url: 'sqlite:big.db', filename: 'big.db', cacheMb: 256, mmapMb: 512 });
  });

  it('takes --workers auto as one worker per core this process may use', () => {
    assert.equal(loadConfig({}, { workers: 'auto' }).workers, availableParallelism());
    assert.equal(loadConfig({ WORKERS: ' AUTO ' }).workers, availableParallelism());
  });

  it('lets flags win over the environment, setting by setting', () => {
    const config = loadConfig(
      { PORT: '4000', LOG_LEVEL: 'warn', DATABASE_URL: 'sqlite:env.db', HOST: '10.0.0.1', IGNORE_UNKNOWN_FILTERS: 'true' },
      { port: '5000', databaseUrl: 'sqlite::memory:', ignoreUnknownFilters: 'false' },
    );
    assert.equal(config.port, 5000);
    assert.deepEqual(config.database, { dialect: 'sqlite', url: 'sqlite::memory:', filename: ':memory:', cacheMb: 64, mmapMb: 0 });
    assert.equal(config.ignoreUnknownFilters, false);
    // Settings without a flag still come from the environment.
    assert.equal(config.logLevel, 'warn');
    assert.equal(config.host, '10.0.0.1');
    assert.equal(config.publicUrl, 'http://10.0.0.1:5000');
  });

  it('derives PUBLIC_URL from HOST and PORT, bracketing IPv6 hosts', () => {
    assert.equal(loadConfig({ HOST: '::1', PORT: '8443' }).publicUrl, 'http://[::1]:8443');
    assert.equal(loadConfig({ HOST: 'localhost' }).publicUrl, 'http://localhost:3000');
  });

  it('keeps a PUBLIC_URL path and drops its trailing slashes', () => {
    assert.equal(loadConfig({ PUBLIC_URL: 'https://example.com/api//' }).publicUrl, 'https://example.com/api');
    assert.equal(loadConfig({ PUBLIC_URL: 'http://sitebiz.test' }).publicUrl, 'http://sitebiz.test');
  });

  // [variable, value, parsed]
  const ACCEPTED: Array<[string, string, Partial<Config>]> = [
    ['PORT', '0', { port: 0 }],
    ['PORT', '65535', { port: 65535 }],
    ['LOG_LEVEL', 'Silent', { logLevel: 'silent' }],
    ['LOG_LEVEL', ' debug ', { logLevel: 'debug' }],
    ['IGNORE_UNKNOWN_FILTERS', '1', { ignoreUnknownFilters: true }],
    ['IGNORE_UNKNOWN_FILTERS', 'YES', { ignoreUnknownFilters: true }],
    ['IGNORE_UNKNOWN_FILTERS', 'no', { ignoreUnknownFilters: false }],
    ['IGNORE_UNKNOWN_FILTERS', '0', { ignoreUnknownFilters: false }],
    ['DATABASE_URL', 'postgresql://localhost/db', { database: { dialect: 'postgres', url: 'postgresql://localhost/db', connectionString: 'postgresql://localhost/db', poolSize: 10 } }],
    ['DATABASE_URL', ' sqlite:/var/lib/sitebiz.db ', { database: { dialect: 'sqlite', url: 'sqlite:/var/lib/sitebiz.db', filename: '/var/lib/sitebiz.db', cacheMb: 64, mmapMb: 0 } }],
    ['WORKERS', '1', { workers: 1 }],
    ['WORKERS', '256', { workers: 256 }],
    ['MODE', 'sandbox', { mode: 'sandbox' }],
    ['MODE', ' Production ', { mode: 'production' }],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'https://otlp.example.com/otlp', { tracing: { tracesUrl: 'https://otlp.example.com/otlp/v1/traces', serviceName: 'sitebiz' } }],
    // The signal's own URL is taken as it is (the SDKs' rule).
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'http://127.0.0.1:4318/custom', { tracing: { tracesUrl: 'http://127.0.0.1:4318/custom', serviceName: 'sitebiz' } }],
    ['OTEL_SERVICE_NAME', 'api', { tracing: undefined }],
  ];
  for (const [variable, value, parsed] of ACCEPTED) {
    it(`accepts ${variable}=${JSON.stringify(value)}`, () => {
      const config = loadConfig({ [variable]: value });
      for (const [key, expected] of Object.entries(parsed)) assert.deepEqual(config[key as keyof Config], expected);
    });
  }

  // [environment, the variable the one problem names]
  const REJECTED: Array<[Record<string, string>, string]> = [
    [{ DATABASE_URL: 'mysql://localhost/db' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'sqlite:' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'data/sitebiz.db' }, 'DATABASE_URL'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: '-1' }, 'PORT'],
    [{ PORT: '80.5' }, 'PORT'],
    [{ PORT: 'http' }, 'PORT'],
    [{ HOST: '   ' }, 'HOST'],
    [{ PUBLIC_URL: 'ftp://x' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'not a url' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'https://example.com/?a=1' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'https://example.com/#top' }, 'PUBLIC_URL'],
    [{ ACCESS_TOKEN_TTL: 'abc' }, 'ACCESS_TOKEN_TTL'],
    [{ ACCESS_TOKEN_TTL: '59' }, 'ACCESS_TOKEN_TTL'],
    [{ REFRESH_TOKEN_TTL: '60' }, 'REFRESH_TOKEN_TTL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ BODY_LIMIT: '1023' }, 'BODY_LIMIT'],
    [{ IGNORE_UNKNOWN_FILTERS: 'maybe' }, 'IGNORE_UNKNOWN_FILTERS'],
    [{ WORKERS: '0' }, 'WORKERS'],
    [{ WORKERS: '257' }, 'WORKERS'],
    [{ WORKERS: 'all' }, 'WORKERS'],
    [{ WORKERS: '1.5' }, 'WORKERS'],
    [{ DATABASE_POOL_SIZE: '0' }, 'DATABASE_POOL_SIZE'],
    [{ DATABASE_POOLER: 'pgbouncer' }, 'DATABASE_POOLER'],
    [{ DATABASE_REPLICA_URL: 'postgres://replica/sitebiz' }, 'DATABASE_REPLICA_URL'], // beside the default SQLite database
    [{ DATABASE_URL: 'postgres://primary/sitebiz', DATABASE_REPLICA_URL: 'postgres://replica/sitebiz,sqlite:copy.db' }, 'DATABASE_REPLICA_URL'],
    [{ DATABASE_URL: 'postgres://primary/sitebiz', DATABASE_REPLICA_URL: 'replica:5432' }, 'DATABASE_REPLICA_URL'],
    [{ DATABASE_REPLICA_MAX_LAG_MS: 'soon' }, 'DATABASE_REPLICA_MAX_LAG_MS'],
    [{ SQLITE_CACHE_MB: '-1' }, 'SQLITE_CACHE_MB'],
    [{ SQLITE_MMAP_MB: 'lots' }, 'SQLITE_MMAP_MB'],
    [{ RATE_LIMIT: '-1' }, 'RATE_LIMIT'],
    [{ AUTH_FAILURE_LIMIT: 'many' }, 'AUTH_FAILURE_LIMIT'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ TRUST_PROXY: 'haproxy.internal' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '127.0.0.1/8/8' }, 'TRUST_PROXY'],
    [{ REQUEST_TIMEOUT_MS: '0' }, 'REQUEST_TIMEOUT_MS'],
    [{ IDLE_TIMEOUT_MS: '1.5' }, 'IDLE_TIMEOUT_MS'],
    [{ SHUTDOWN_TIMEOUT_MS: '99' }, 'SHUTDOWN_TIMEOUT_MS'],
    [{ SHUTDOWN_DRAIN_MS: '-1' }, 'SHUTDOWN_DRAIN_MS'],
    [{ MODE: 'live' }, 'MODE'],
    [{ MODE: 'test' }, 'MODE'],
    [{ WEBHOOK_TIMEOUT_MS: '49' }, 'WEBHOOK_TIMEOUT_MS'],
    [{ WEBHOOK_CONCURRENCY: '0' }, 'WEBHOOK_CONCURRENCY'],
    [{ WEBHOOK_POLL_MS: 'often' }, 'WEBHOOK_POLL_MS'],
    [{ WEBHOOK_WORKER: 'sometimes' }, 'WEBHOOK_WORKER'],
    [{ REQUEST_JOURNAL_SIZE: '-1' }, 'REQUEST_JOURNAL_SIZE'],
    [{ COMPRESSION: 'gzip' }, 'COMPRESSION'],
    [{ MIGRATE_ON_START: 'later' }, 'MIGRATE_ON_START'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://collector:4317' }, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SERVICE_NAME: ' ' }, 'OTEL_SERVICE_NAME'],
  ];
  for (const [env, variable] of REJECTED) {
    it(`rejects ${JSON.stringify(env)} naming ${variable}`, () => {
      const problems = problemsOf(() => loadConfig(env));
      assert.equal(problems.length, 1, problems.join('\n'));
      assert.ok(problems[0]!.includes(variable), problems[0]);
    });
  }

  it('reports every bad value together in one ConfigError', () => {
    const env = {
      DATABASE_URL: 'mysql://admin:s3cret@db/x',
      PORT: '70000',
      PUBLIC_URL: 'ftp://x',
      ACCESS_TOKEN_TTL: 'abc',
      LOG_LEVEL: 'loud',
      IGNORE_UNKNOWN_FILTERS: 'maybe',
    };
    let caught: unknown;
    try {
      loadConfig(env);
    } catch (error) {
      caught = error;
    }
    assert.ok(caught instanceof ConfigError);
    assert.deepEqual(
      caught.problems.map((p) => p.split(' ')[0]),
      ['DATABASE_URL', 'PORT', 'PUBLIC_URL', 'ACCESS_TOKEN_TTL', 'LOG_LEVEL', 'IGNORE_UNKNOWN_FILTERS'],
    );
    assert.match(caught.problems[1]!, /from 0 to 65535, got "70000"/);
    assert.match(caught.problems[2]!, /"ftp:\/\/x"/);
    assert.match(caught.problems[3]!, /got "abc"/);
    assert.match(caught.problems[4]!, /got "loud"/);
    assert.match(caught.problems[5]!, /got "maybe"/);
    // The message lists them all, and never a password.
    for (const p of caught.problems) assert.ok(caught.message.includes(p));
    assert.ok(!caught.message.includes('s3cret'), caught.message);
    assert.ok(caught.message.includes('mysql://admin:***@db/x'), caught.message);
  });

  it('names a bad flag by its flag, not its variable', () => {
    const problems = problemsOf(() => loadConfig({ PORT: '4000' }, { port: 'x', logLevel: 'chatty' }));
    assert.deepEqual(problems.map((p) => p.split(' ')[0]), ['--port', '--log-level']);
  });

  it('requires the refresh token to outlive the access token', () => {
    const problems = problemsOf(() => loadConfig({ ACCESS_TOKEN_TTL: '7200', REFRESH_TOKEN_TTL: '3600' }));
    assert.deepEqual(problems, ['REFRESH_TOKEN_TTL must not be shorter than ACCESS_TOKEN_TTL']);
  });
});

describe('parseDatabaseUrl', () => {
  const CASES: Array<[string, ReturnType<typeof parseDatabaseUrl>]> = [
    ['sqlite::memory:', { dialect: 'sqlite', url: 'sqlite::memory:', filename: ':memory:' }],
    ['sqlite:data/x.db', { dialect: 'sqlite', url: 'sqlite:data/x.db', filename: 'data/x.db' }],
    ['postgres://u@h:5432/d', { dialect: 'postgres', url: 'postgres://u@h:5432/d', connectionString: 'postgres://u@h:5432/d' }],
    ['sqlite:', undefined],
    ['mysql://h/d', undefined],
    ['', undefined],
  ];
  for (const [url, expected] of CASES) {
    it(`${JSON.stringify(url)}`, () => {
      const problems: string[] = [];
      assert.deepEqual(parseDatabaseUrl(url, 'DATABASE_URL', problems), expected);
      assert.equal(problems.length, expected === undefined ? 1 : 0);
      if (expected === undefined) assert.ok(problems[0]!.startsWith('DATABASE_URL'));
    });
  }
});

describe('redactUrl', () => {
  const CASES: Array<[string, string]> = [
    ['postgres://app:secret@db:5432/x', 'postgres://app:***@db:5432/x'],
    ['postgres://app@db/x', 'postgres://app@db/x'],
    ['postgres://app:p%40ss@db/x', 'postgres://app:***@db/x'],
    ['redis://:secret@cache:6379/2', 'redis://:***@cache:6379/2'],
    ['sqlite:data/x.db', 'sqlite:data/x.db'],
  ];
  for (const [url, shown] of CASES) {
    it(`${url} → ${shown}`, () => assert.equal(redactUrl(url), shown));
  }
});

describe('METRICS and METRICS_TOKEN', () => {
  it('takes off, public and token (with a token), and refuses token mode without one', () => {
    assert.equal(loadConfig({ METRICS: 'public' }).metrics, 'public');
    const token = 'a'.repeat(32);
    const config = loadConfig({ METRICS: 'token', METRICS_TOKEN: token });
    assert.equal(config.metrics, 'token');
    assert.equal(config.metricsToken, token);
    assert.match(problemsOf(() => loadConfig({ METRICS: 'token' })).join('\n'), /METRICS is token but METRICS_TOKEN is not set/);
    assert.match(problemsOf(() => loadConfig({ METRICS: 'token', METRICS_TOKEN: 'short' })).join('\n'), /METRICS_TOKEN must be 16 or more characters/);
    assert.match(problemsOf(() => loadConfig({ METRICS_TOKEN: token })).join('\n'), /METRICS_TOKEN is set but METRICS is off/);
    assert.match(problemsOf(() => loadConfig({ METRICS: 'yes' })).join('\n'), /METRICS must be one of off, public, token/);
  });
});
