// PostgreSQL going away while sitebiz serves. The app reaches PostgreSQL through a TCP proxy in
// this process, which the test cuts (every connection dropped, new ones refused, as during a
// restart), stalls (connections accepted and never answered, as when the network loses the
// server) and restores: requests meanwhile answer 503 with Retry-After, in their route's error
// form, within the connect timeout; once the proxy is back the same app serves again, without a
// restart. (scripts/pg-outage.sh does the same with a real restart of PostgreSQL.)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, POSTGRES_ONLY, type TestApp } from './support/harness.js';
import { PostgresProxy } from './support/postgres-proxy.js';

const base = process.env.TEST_DATABASE_URL;

describe('PostgreSQL going away [postgres]', () => {
  let proxy: PostgresProxy;
  let t: TestApp;
  before(async () => {
    if (!base) return;
    const url = new URL(base);
    proxy = new PostgresProxy({ host: url.hostname, port: Number(url.port || 5432) });
    await proxy.start();
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    t = await createTestApp('postgres', { databaseUrl: url.href });
  });
  after(async () => {
    if (!base) return;
    await proxy.restore();
    await t.close();
    await proxy.close();
  });

  /** A request, timed. */
  const timed = async <T>(fn: () => Promise<T>): Promise<{ result: T; ms: number }> => {
    const started = Date.now();
    const result = await fn();
    return { result, ms: Date.now() - started };
  };

  const assertJsonApi503 = (res: Awaited<ReturnType<TestApp['request']>>) => {
    assert.equal(res.statusCode, 503, res.body);
    assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/);
    assert.equal(res.headers['retry-after'], '5');
    const [error] = res.json<{ errors: Array<{ status: string; code: string }> }>().errors;
    assert.deepEqual([error?.status, error?.code], ['503', 'service_unavailable']);
  };

  it('answers 503 with Retry-After while PostgreSQL is down, and serves again once it is back', POSTGRES_ONLY, async () => {
    const token = await t.token();
    assert.equal((await t.get('/v1/contacts?page[size]=5', token)).statusCode, 200);

    await proxy.cut('refuse');
    for (const url of ['/v1/me', '/v1/contacts?page[size]=5', '/v1/sites']) {
      const { result, ms } = await timed(() => t.get(url, token));
      assertJsonApi503(result);
      assert.ok(ms < 6_000, `${url} answered after ${ms} ms`);
    }
    const write = await t.request({
      method: 'POST',
      url: '/v1/contacts',
      token,
      headers: { 'content-type': 'application/vnd.api+json' },
      payload: JSON.stringify({ data: { type: 'contacts', attributes: { name: 'Down', email: 'down@example.com' }, relationships: { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } } } }),
    });
    assertJsonApi503(write);
    const grant = await t.request({
      method: 'POST',
      url: '/v1/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: t.tenant.clientId, client_secret: t.tenant.clientSecret },
    });
    assert.equal(grant.statusCode, 503, grant.body);
    assert.equal(grant.headers['retry-after'], '5');
    assert.equal(grant.json<{ error: string }>().error, 'temporarily_unavailable');

    await proxy.restore();
    const back = await t.get('/v1/contacts?page[size]=5', token);
    assert.equal(back.statusCode, 200, `the first request after the outage: ${back.body}`);
    assert.equal((await t.get('/v1/me', token)).statusCode, 200);
  });

  it('GET /readyz answers 503 database_unavailable while PostgreSQL is refused or stalled (within its 2 s deadline), /healthz 200 throughout', POSTGRES_ONLY, async () => {
    assert.equal((await t.get('/readyz')).statusCode, 200);
    await proxy.cut('refuse');
    const refused = await t.get('/readyz');
    assert.equal(refused.statusCode, 503);
    assert.equal(refused.json().reason, 'database_unavailable');
    assert.doesNotMatch(refused.body, /127\.0\.0\.1|postgres:/, 'the answer names no host or user');
    assert.equal((await t.get('/healthz')).statusCode, 200);

    await proxy.cut('stall');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const { result, ms } = await timed(() => t.get('/readyz'));
    assert.equal(result.statusCode, 503);
    assert.deepEqual(result.json(), { status: 'not_ready', reason: 'database_unavailable', detail: 'the database did not answer within 2000 ms' });
    assert.ok(ms >= 1_900 && ms < 3_500, `answered after ${ms} ms`);
    assert.equal((await t.get('/healthz')).statusCode, 200);

    await proxy.restore();
    // The stalled check's statement waits out the pool's connect timeout before its connection is dropped.
    for (let i = 0; i < 40 && (await t.get('/readyz')).statusCode !== 200; i++) await new Promise((resolve) => setTimeout(resolve, 250));
    assert.equal((await t.get('/readyz')).statusCode, 200);
  });

  it('answers 503 within the connect timeout when PostgreSQL stops answering (no hang)', POSTGRES_ONLY, async () => {
    const token = await t.token();
    await proxy.cut('stall');
    // Let the pool notice its dropped connections, so that the request needs a new one.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const { result, ms } = await timed(() => t.get('/v1/me', token));
    assertJsonApi503(result);
    assert.ok(ms >= 4_000 && ms < 7_000, `answered after ${ms} ms: the connect timeout is 5 s`);

    await proxy.restore();
    assert.equal((await t.get('/v1/me', token)).statusCode, 200);
  });
});
