// Faults on demand (POST/GET/DELETE /v1/test_helpers/faults): matching requests of the account's
// keys get the fault's error or delay; times counts down exactly, also under concurrent requests;
// rate roughly holds; Retry-After with 429 and 503; the test helpers and other accounts are never
// touched; another process sees a change from its next request on; an account without faults
// costs no query; bad input is a 422 with a pointer; production mode answers 404.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PERMISSION_NAMES } from '../../src/auth/permissions.js';
import { createApiKey } from '../../src/domain/accounts.js';
import { buildApp } from '../../src/app.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from '../support/harness.js';
import { assertError, otherAccount, send } from '../support/writes.js';

for (const dialect of DIALECTS) {
  describe(`sandbox faults [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let theirToken: string;

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      const other = await otherAccount(t);
      const key = await createApiKey(t.handle, { userId: other.ownerId, name: 'other', permissions: PERMISSION_NAMES }, t.clock);
      theirToken = await t.tokenFor(key.clientId, key.clientSecret);
    });
    after(() => t.close());

    const create = (attributes: Record<string, unknown>, as = token) => send(t, 'POST', '/v1/test_helpers/faults', as, { data: { type: 'faults', attributes } });
    const createOk = async (attributes: Record<string, unknown>): Promise<string> => {
      const res = await create(attributes);
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data.id;
    };
    const newContact = (email: string) =>
      send(t, 'POST', '/v1/contacts', token, {
        data: { type: 'contacts', attributes: { email }, relationships: { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } } },
      });
    const remove = async (id: string) => assert.equal((await send(t, 'DELETE', `/v1/test_helpers/faults/${id}`, token)).statusCode, 200);

    it('answers matching requests with the fault\'s error, times times, then stops; Retry-After with 503', async () => {
      const res = await create({ method: 'GET', path: '/v1/contacts*', status: 503, times: 3 });
      assert.equal(res.statusCode, 201, res.body);
      const fault = res.json().data;
      assert.equal(res.headers.location, `${PUBLIC_URL}/v1/test_helpers/faults/${fault.id}`);
      assert.deepEqual(
        { ...fault.attributes, created_at: undefined },
        { method: 'GET', path: '/v1/contacts*', status: 503, latency_ms: null, times: 3, remaining: 3, rate: null, hits: 0, site_ids: null, created_at: undefined },
      );
      // Not matched: another method, another path, another account.
      assert.equal((await t.get('/v1/contact_tags', token)).statusCode, 200);
      const created = await newContact('x@example.com');
      assert.equal(created.statusCode, 201, created.body);
      assert.equal((await t.get('/v1/contacts', theirToken)).statusCode, 200, 'another account\'s requests are never faulted');
      for (let i = 0; i < 3; i++) {
        const faulted = await t.get(i === 1 ? '/v1/contacts/1?include=tags' : '/v1/contacts', token);
        assertError(faulted, 503, 'fault_injected');
        assert.equal(faulted.headers['retry-after'], '1');
      }
      assert.equal((await t.get('/v1/contacts', token)).statusCode, 200, 'spent after 3');
      const shown = (await t.get(`/v1/test_helpers/faults/${fault.id}`, token)).json().data.attributes;
      assert.equal(shown.remaining, 0);
      assert.equal(shown.hits, 3);
    });

    it('counts times down exactly under concurrent requests', async () => {
      await createOk({ path: '/v1/contact_tags', status: 500, times: 4 });
      const answers = await Promise.all(Array.from({ length: 12 }, () => t.get('/v1/contact_tags', token)));
      const statuses = answers.map((r) => r.statusCode);
      assert.equal(statuses.filter((s) => s === 500).length, 4, statuses.join(','));
      assert.equal(statuses.filter((s) => s === 200).length, 8);
      assert.equal(answers.find((r) => r.statusCode === 500)!.headers['retry-after'], undefined, 'no Retry-After with 500');
    });

    it('faults about rate of the matching requests, and every one of them without times or rate', async () => {
      const half = await createOk({ path: '/v1/forms', status: 429, rate: 0.5 });
      let faulted = 0;
      for (let i = 0; i < 200; i++) {
        const res = await t.get('/v1/forms', token);
        if (res.statusCode === 429) {
          faulted++;
          assert.equal(res.headers['retry-after'], '1');
        } else assert.equal(res.statusCode, 200);
      }
      assert.ok(faulted > 60 && faulted < 140, `about half of 200: ${faulted}`);
      await remove(half);
      assert.equal((await t.get('/v1/forms', token)).statusCode, 200, 'deleted: no more faults');
      const always = await createOk({ method: 'POST', path: '/v1/*', status: 502 });
      for (let i = 0; i < 3; i++) assertError(await newContact(`a${i}@example.com`), 502);
      await remove(always);
    });

    it('delays requests by latency_ms, with or without a status', async () => {
      const delay = await createOk({ path: '/v1/me', latency_ms: 150, times: 1 });
      let started = performance.now();
      assert.equal((await t.get('/v1/me', token)).statusCode, 200);
      assert.ok(performance.now() - started >= 140, 'delayed');
      started = performance.now();
      await t.get('/v1/me', token);
      assert.ok(performance.now() - started < 140, 'once only');
      await remove(delay);
      await createOk({ path: '/v1/me', latency_ms: 100, status: 504, times: 1 });
      started = performance.now();
      assertError(await t.get('/v1/me', token), 504, 'fault_injected');
      assert.ok(performance.now() - started >= 90);
    });

    it('never faults the test helpers', async () => {
      const all = await createOk({ path: '/v1/*', status: 500 });
      assert.equal((await t.get('/v1/test_helpers/faults', token)).statusCode, 200);
      assert.equal((await t.get('/v1/test_helpers/messages', token)).statusCode, 200);
      assertError(await t.get('/v1/contacts', token), 500);
      await remove(all);
      assert.equal((await t.get('/v1/contacts', token)).statusCode, 200, 'a delete takes effect at once in the process that served it');
    });

    it('lists the account\'s faults only, and deletes only its own', async () => {
      const theirs = await create({ path: '/v1/contacts', status: 500 }, theirToken);
      assert.equal(theirs.statusCode, 201);
      const mine = (await t.get('/v1/test_helpers/faults?page[size]=100', token)).json().data as Array<{ id: string }>;
      assert.ok(!mine.some((f) => f.id === theirs.json().data.id));
      assertError(await send(t, 'DELETE', `/v1/test_helpers/faults/${theirs.json().data.id}`, token), 404);
      assertError(await t.get(`/v1/test_helpers/faults/${theirs.json().data.id}`, token), 404);
      assert.equal((await t.get('/v1/contacts', token)).statusCode, 200, 'their fault does not touch this account');
      assertError(await t.get('/v1/contacts', theirToken), 500);
      assert.equal((await send(t, 'DELETE', `/v1/test_helpers/faults/${theirs.json().data.id}`, theirToken)).statusCode, 200);
      assertError(await send(t, 'DELETE', '/v1/test_helpers/faults/abc', token), 404);
    });

    it('costs no query for an account that never had faults, and one read per change for one that has', async () => {
      const fresh = await otherAccount(t);
      const key = await createApiKey(t.handle, { userId: fresh.ownerId, name: 'fresh', permissions: PERMISSION_NAMES }, t.clock);
      const freshToken = await t.tokenFor(key.clientId, key.clientSecret);
      const faultQueries = async (as: string) => {
        const { statements } = await t.queries.during(async () => {
          for (let i = 0; i < 5; i++) assert.equal((await t.get('/v1/contact_tags', as)).statusCode, 200);
        });
        return statements.filter((q) => q.includes('sandbox_faults')).length;
      };
      assert.equal(await faultQueries(freshToken), 0);
      // This account had faults (the tests above): its copy is read once, then kept.
      await t.get('/v1/contact_tags', token);
      assert.equal(await faultQueries(token), 0);
    });

    it('applies faults created in another process from its next request on, and spends times between processes', async () => {
      // A second app on the same database, as a second process would be (its close leaves the database open).
      const second = await buildApp({ config: t.config, database: { ...t.handle, close: async () => {} }, now: t.clock.now, webhooks: { autoStart: false } });
      try {
        const get = (url: string) => second.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
        assert.equal((await get('/v1/offers')).statusCode, 200, 'caches: no faults');
        const id = await createOk({ path: '/v1/offers', status: 502, times: 6 });
        const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? get('/v1/offers') : t.get('/v1/offers', token))));
        const statuses = answers.map((r) => r.statusCode);
        assert.equal(statuses.filter((s) => s === 502).length, 6, statuses.join(','));
        assert.ok(answers.some((r, i) => i % 2 === 0 && r.statusCode === 502), 'the other process applies it');
        await remove(id);
        assert.equal((await get('/v1/offers')).statusCode, 200, 'a delete in one process applies in the other at once');
      } finally {
        await second.close();
      }
    });

    it('refuses bad faults with 422 and a pointer, and writes nothing', async () => {
      const count = async () => (await t.handle.db.selectFrom('sandbox_faults').select('id').execute()).length;
      const before = await count();
      const cases: Array<[Record<string, unknown>, number, string]> = [
        [{ path: '/v1/contacts', status: 404 }, 422, '/data/attributes/status'],
        [{ path: '/v1/contacts', status: 503, times: 2, rate: 0.5 }, 422, '/data/attributes/rate'],
        [{ path: '/v1/contacts', status: 503, rate: 1.5 }, 422, '/data/attributes/rate'],
        [{ path: '/v1/contacts', status: 503, rate: 0 }, 422, '/data/attributes/rate'],
        [{ path: '/v1/contacts', status: 503, times: 0 }, 422, '/data/attributes/times'],
        [{ path: '/v1/contacts', latency_ms: 60_001 }, 422, '/data/attributes/latency_ms'],
        [{ path: '/v1/contacts' }, 422, '/data/attributes/status'],
        [{ path: 'contacts', status: 500 }, 422, '/data/attributes/path'],
        [{ path: '/v1/test_helpers/*', status: 500 }, 422, '/data/attributes/path'],
        [{ path: '/v1/contacts', status: 500, method: 'FETCH' }, 422, '/data/attributes/method'],
        [{ status: 500 }, 422, '/data/attributes/path'],
        [{ path: '/v1/contacts', status: '500' }, 422, '/data/attributes/status'],
        [{ path: '/v1/contacts', status: 500, color: 'red' }, 422, '/data/attributes/color'],
      ];
      for (const [attributes, status, pointer] of cases) {
        const res = await create(attributes);
        assert.equal(res.statusCode, status, `${JSON.stringify(attributes)}: ${res.body}`);
        assert.equal(res.json().errors[0].source.pointer, pointer, `${JSON.stringify(attributes)}: ${res.body}`);
      }
      assertError(await send(t, 'POST', '/v1/test_helpers/faults', token, { data: { type: 'contacts', attributes: { path: '/v1/x', status: 500 } } }), 409);
      assert.equal(await count(), before);
    });
  });

  describe(`sandbox faults in production mode [${dialect}]`, () => {
    it('answers 404', async () => {
      const t = await createTestApp(dialect, { env: { MODE: 'production' } });
      try {
        const token = await t.token();
        assert.equal((await send(t, 'POST', '/v1/test_helpers/faults', token, { data: { type: 'faults', attributes: { path: '/v1/contacts', status: 500 } } })).statusCode, 404);
        assert.equal((await t.get('/v1/test_helpers/faults', token)).statusCode, 404);
        assert.equal((await send(t, 'DELETE', '/v1/test_helpers/faults/1', token)).statusCode, 404);
      } finally {
        await t.close();
      }
    });
  });
}
