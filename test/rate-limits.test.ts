// Rate limits over HTTP: requests a minute per API key on every /v1 route (per address before
// authentication), the RateLimit-* headers on every answer, JSON:API 429s with Retry-After, the
// throttle of failed client authentication at /v1/oauth/token (per client_id and per address, RFC
// 6749 429s, over when the minute is; taken before the secret is checked, so that it holds for
// concurrent guesses), and one limit shared by two apps through Redis.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it, mock } from 'node:test';
import { Redis } from 'ioredis';
import { buildApp } from '../src/app.js';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';

type Res = Awaited<ReturnType<TestApp['request']>>;

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The three RateLimit-* headers (IETF draft names), as numbers. */
function rateLimitHeaders(res: Res): { limit: number; remaining: number; reset: number } {
  for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
    assert.match(String(res.headers[name]), /^\d+$/, `${res.statusCode} ${name}: ${String(res.headers[name])}`);
  }
  const reset = Number(res.headers['ratelimit-reset']);
  assert.ok(reset >= 1 && reset <= 60, `reset within the minute: ${reset}`);
  return { limit: Number(res.headers['ratelimit-limit']), remaining: Number(res.headers['ratelimit-remaining']), reset };
}

function assertJsonApi429(res: Res): void {
  assert.equal(res.statusCode, 429, res.body);
  assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/);
  const retryAfter = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${String(res.headers['retry-after'])}`);
  assert.equal(rateLimitHeaders(res).remaining, 0);
  const [error] = res.json<{ errors: Array<{ status: string; code: string; detail: string }> }>().errors;
  assert.equal(error?.status, '429');
  assert.equal(error?.code, 'rate_limited');
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function tokenRequest(t: TestApp, clientId: string, clientSecret: string, remoteAddress: string, forwardedFor?: string): Promise<Res> {
  return t.request({
    method: 'POST',
    url: '/v1/oauth/token',
    headers: { ...FORM, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
    remoteAddress,
    payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }).toString(),
  });
}

function assertOAuth429(res: Res): void {
  assert.equal(res.statusCode, 429, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const retryAfter = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${String(res.headers['retry-after'])}`);
  const body = res.json<{ error: string; error_description: string }>();
  assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
  assert.equal(body.error, 'slow_down');
}

async function redisReachable(): Promise<boolean> {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 1_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

for (const dialect of DIALECTS) {
  describe(`rate limits [${dialect}]`, () => {
    it('counts each API key on its own on every /v1 route, and answers 429 with Retry-After past the limit', async () => {
      const t = await createTestApp(dialect, { env: { RATE_LIMIT: '6' } });
      try {
        const a = await t.token();
        const b = (await t.keyWith(t.tenant.ownerId, ['view:contacts'])).token;
        const seen: number[] = [];
        for (const url of ['/v1/me', '/v1/sites', '/v1/contacts?page[size]=1', '/v1/sites/999999', '/v1/me', '/v1/me']) {
          const res = await t.get(url, a);
          assert.equal(res.statusCode, url === '/v1/sites/999999' ? 404 : 200, res.body);
          const headers = rateLimitHeaders(res);
          assert.equal(headers.limit, 6);
          seen.push(headers.remaining);
        }
        assert.deepEqual(seen, [5, 4, 3, 2, 1, 0]);
        assertJsonApi429(await t.get('/v1/me', a));
        assertJsonApi429(await t.get('/v1/contacts', a));
        // Another key of the same user has a count of its own.
        const other = await t.get('/v1/contacts?page[size]=1', b);
        assert.equal(other.statusCode, 200, other.body);
        assert.equal(rateLimitHeaders(other).remaining, 5);
      } finally {
        await t.close();
      }
    });

    it('counts requests without a valid token by address, 401s, 404s and 405s included, and carries the headers on each', async () => {
      const t = await createTestApp(dialect, { env: { RATE_LIMIT: '6' } });
      try {
        // The token request is the address's first.
        const token = await t.token();
        const answers = [
          await t.get('/v1/me'),
          await t.get('/v1/me', 'sbzat_not-a-token'),
          await t.get('/v1/no-such-thing'),
          await t.get('/v1/version'),
          await t.request({ method: 'DELETE', url: '/v1/version' }),
        ];
        assert.deepEqual(answers.map((r) => r.statusCode), [401, 401, 404, 200, 405]);
        assert.deepEqual(answers.map((r) => rateLimitHeaders(r).remaining), [4, 3, 2, 1, 0]);
        const limited = await t.get('/v1/me', 'sbzat_not-a-token');
        assertJsonApi429(limited);
        assertJsonApi429(await t.get('/v1/version'));
        // The address's count is not the key's.
        const me = await t.get('/v1/me', token);
        assert.equal(me.statusCode, 200);
        assert.equal(rateLimitHeaders(me).remaining, 5);
        // Outside /v1 nothing is counted.
        const docs = await t.get('/docs/json');
        assert.equal(docs.headers['ratelimit-limit'], undefined);
      } finally {
        await t.close();
      }
    });

    it('RATE_LIMIT=0 turns request limits off: no headers, no 429', async () => {
      const t = await createTestApp(dialect, { env: { RATE_LIMIT: '0' } });
      try {
        const token = await t.token();
        for (let i = 0; i < 5; i++) {
          const res = await t.get('/v1/me', token);
          assert.equal(res.statusCode, 200);
          assert.equal(res.headers['ratelimit-limit'], undefined);
        }
      } finally {
        await t.close();
      }
    });
  });

  describe(`failed client authentication [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect, { env: { AUTH_FAILURE_LIMIT: '3' } });
    });
    after(() => t.close());

    it('answers 429 to a client id after 3 wrong secrets a minute, whatever the secret and the address, until the minute is over', async () => {
      mock.timers.enable({ apis: ['Date'], now: Date.now() });
      try {
        const { clientId, clientSecret } = t.tenant;
        // Successes are not failures.
        const issued: string[] = [];
        for (let i = 0; i < 4; i++) {
          const res = await tokenRequest(t, clientId, clientSecret, '10.0.0.1');
          assert.equal(res.statusCode, 200);
          issued.push(res.json<{ access_token: string }>().access_token);
        }
        for (let i = 0; i < 3; i++) assert.equal((await tokenRequest(t, clientId, `wrong-${i}`, `10.0.1.${i}`)).statusCode, 401);
        // The right secret too: otherwise the answer would tell a guess that hit.
        assertOAuth429(await tokenRequest(t, clientId, clientSecret, '10.0.2.1'));
        assertOAuth429(await tokenRequest(t, clientId, 'wrong-again', '10.0.2.2'));
        // Tokens already issued keep working.
        assert.equal((await t.get('/v1/me', issued[0])).statusCode, 200);
        mock.timers.tick(61_000);
        assert.equal((await tokenRequest(t, clientId, clientSecret, '10.0.2.1')).statusCode, 200, 'the minute is over');
      } finally {
        mock.timers.reset();
      }
    });

    it('answers 429 to an address after 3 wrong secrets a minute, for any client id', async () => {
      mock.timers.enable({ apis: ['Date'], now: Date.now() });
      try {
        const other = await t.keyWith(t.tenant.ownerId, ['view:contacts']);
        for (let i = 0; i < 3; i++) assert.equal((await tokenRequest(t, `sbz_unknown_${i}`, 'x', '10.9.9.9')).statusCode, 401);
        assertOAuth429(await tokenRequest(t, other.clientId, other.clientSecret, '10.9.9.9'));
        assert.equal((await tokenRequest(t, other.clientId, other.clientSecret, '10.9.9.10')).statusCode, 200, 'another address is served');
        mock.timers.tick(61_000);
        assert.equal((await tokenRequest(t, other.clientId, other.clientSecret, '10.9.9.9')).statusCode, 200, 'the minute is over');
      } finally {
        mock.timers.reset();
      }
    });
  });

  // Issue 21: the failures were peeked at before the check and counted after it, so concurrent
  // guesses all passed a limit none of them had counted yet.
  describe(`failed client authentication under concurrency [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect, { env: { AUTH_FAILURE_LIMIT: '5' } });
    });
    after(() => t.close());

    it('checks at most the limit of 40 simultaneous wrong secrets for one client id; the rest answer 429 with Retry-After', async () => {
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => tokenRequest(t, t.tenant.clientId, `wrong-${i}`, '10.3.0.1')));
      const statuses = answers.map((res) => res.statusCode);
      assert.equal(statuses.filter((s) => s === 401).length, 5, `checked: ${statuses.join(' ')}`);
      const refused = answers.filter((res) => res.statusCode === 429);
      assert.equal(refused.length, 35, statuses.join(' '));
      for (const res of refused) assertOAuth429(res);
    });

    it('answers 429 to the right secret sent among wrong ones from 16 addresses once the limit is taken, and gives a right secret\'s attempt back', async () => {
      const other = await t.keyWith(t.tenant.ownerId, ['view:contacts']);
      // Right secrets are not failures: more of them than the limit, one after another, all get tokens.
      for (let i = 0; i < 8; i++) assert.equal((await tokenRequest(t, other.clientId, other.clientSecret, '10.4.0.1')).statusCode, 200);
      const attempts = Array.from({ length: 16 }, (_, i) => tokenRequest(t, other.clientId, i === 15 ? other.clientSecret : `wrong-${i}`, `10.4.1.${i}`));
      const statuses = (await Promise.all(attempts)).map((res) => res.statusCode);
      assert.equal(statuses.filter((s) => s === 401).length, 5, `checked: ${statuses.join(' ')}`);
      assert.equal(statuses[15], 429, `the right secret, sent last: ${statuses.join(' ')}`);
    });
  });

  describe(`client addresses behind a load balancer (TRUST_PROXY) [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect, { env: { AUTH_FAILURE_LIMIT: '3', TRUST_PROXY: '10.1.0.0/16' } });
    });
    after(() => t.close());

    it("counts a trusted balancer's clients by their X-Forwarded-For address, and ignores the header from anyone else", async () => {
      mock.timers.enable({ apis: ['Date'], now: Date.now() });
      try {
        const { clientId, clientSecret } = t.tenant;
        // Through the balancer (10.1.0.5): the first client's failures lock out that client only.
        for (let i = 0; i < 3; i++) assert.equal((await tokenRequest(t, `sbz_unknown_a${i}`, 'x', '10.1.0.5', '198.51.100.7')).statusCode, 401);
        assertOAuth429(await tokenRequest(t, clientId, clientSecret, '10.1.0.5', '198.51.100.7'));
        assert.equal((await tokenRequest(t, clientId, clientSecret, '10.1.0.5', '198.51.100.8')).statusCode, 200, 'another client behind the same balancer');
        // Straight from an untrusted address, X-Forwarded-For is not believed: a client cannot
        // escape its own count by naming another address.
        for (let i = 0; i < 3; i++) assert.equal((await tokenRequest(t, `sbz_unknown_b${i}`, 'x', '192.0.2.9', `203.0.113.${i}`)).statusCode, 401);
        assertOAuth429(await tokenRequest(t, clientId, clientSecret, '192.0.2.9', '203.0.113.99'));
      } finally {
        mock.timers.reset();
      }
    });
  });
}

describe('rate limits shared through Redis', async () => {
  const reachable = await redisReachable();
  /** Removes what a test's apps counted in Redis under their namespace. */
  const dropRedisNamespace = async (namespace: string) => {
    const cleanup = new Redis(REDIS_URL);
    const keys = await cleanup.keys(`${namespace}*`);
    if (keys.length > 0) await cleanup.del(...keys);
    cleanup.disconnect();
  };
  const skip = reachable ? false : `Redis is not reachable at ${REDIS_URL} (set TEST_REDIS_URL)`;

  it('two apps on one database count one limit per API key', { skip }, async () => {
    const namespace = `sitebiz-test-${randomBytes(6).toString('hex')}:`;
    const t = await createTestApp('sqlite', { env: { RATE_LIMIT: '4', REDIS_URL }, redisNamespace: namespace });
    // A second process, as --workers or a second machine would run: its own app, the same data.
    const second = await buildApp({ config: t.config, database: { ...t.handle, close: async () => {} }, now: t.clock.now, redisNamespace: namespace });
    try {
      const token = await t.token();
      const statuses: number[] = [];
      const remaining: string[] = [];
      for (const app of [t.app, second, t.app, second, t.app, second]) {
        const res = await app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${token}` } });
        statuses.push(res.statusCode);
        remaining.push(String(res.headers['ratelimit-remaining']));
      }
      assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
      assert.deepEqual(remaining, ['3', '2', '1', '0', '0', '0']);
    } finally {
      await second.close();
      await t.close();
      await dropRedisNamespace(namespace);
    }
  });

  it('two apps take failed client authentications from one allowance: of 40 simultaneous wrong secrets the limit are checked, and the right one after them answers 429', { skip }, async () => {
    const namespace = `sitebiz-test-${randomBytes(6).toString('hex')}:`;
    const t = await createTestApp('sqlite', { env: { AUTH_FAILURE_LIMIT: '5', REDIS_URL }, redisNamespace: namespace });
    const second = await buildApp({ config: t.config, database: { ...t.handle, close: async () => {} }, now: t.clock.now, redisNamespace: namespace });
    try {
      const attempt = (app: typeof second, clientId: string, secret: string, remoteAddress: string) =>
        app.inject({
          method: 'POST',
          url: '/v1/oauth/token',
          headers: FORM,
          remoteAddress,
          payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }).toString(),
        });
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => attempt(i % 2 ? second : t.app, t.tenant.clientId, `wrong-${i}`, '10.5.0.1')));
      const statuses = answers.map((res) => res.statusCode);
      assert.equal(statuses.filter((s) => s === 401).length, 5, `checked: ${statuses.join(' ')}`);
      for (const res of answers.filter((r) => r.statusCode === 429)) assertOAuth429(res);
      assert.equal(statuses.length, 40);

      const other = await t.keyWith(t.tenant.ownerId, ['view:contacts']);
      // Right secrets give their attempt back, on either app.
      for (let i = 0; i < 8; i++) assert.equal((await attempt(i % 2 ? second : t.app, other.clientId, other.clientSecret, '10.5.1.1')).statusCode, 200);
      const sixteen = await Promise.all(
        Array.from({ length: 16 }, (_, i) => attempt(i % 2 ? second : t.app, other.clientId, i === 15 ? other.clientSecret : `wrong-${i}`, `10.5.2.${i}`)),
      );
      const sixteenStatuses = sixteen.map((res) => res.statusCode);
      assert.equal(sixteenStatuses.filter((s) => s === 401).length, 5, `checked: ${sixteenStatuses.join(' ')}`);
      assert.equal(sixteenStatuses[15], 429, `the right secret, sent last: ${sixteenStatuses.join(' ')}`);
    } finally {
      await second.close();
      await t.close();
      await dropRedisNamespace(namespace);
    }
  });

  it('serves every request uncounted while Redis cannot be reached (fail open)', async () => {
    // Nothing listens on port 1.
    const t = await createTestApp('sqlite', { env: { RATE_LIMIT: '2', REDIS_URL: 'redis://127.0.0.1:1' } });
    try {
      const token = await t.token();
      for (let i = 0; i < 4; i++) assert.equal((await t.get('/v1/me', token)).statusCode, 200);
    } finally {
      await t.close();
    }
  });
});
