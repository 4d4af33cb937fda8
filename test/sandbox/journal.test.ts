// The request journal (GET /v1/test_helpers/requests): what the account's keys sent and got back,
// newest first, with secrets redacted and bodies cut at 4 KB, filtered by path, status, method and
// client id, kept to the newest REQUEST_JOURNAL_SIZE per account; nothing in production mode.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { PERMISSION_NAMES } from '../../src/auth/permissions.js';
import { createApiKey } from '../../src/domain/accounts.js';
import { builders } from '../support/builders.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { assertError, otherAccount, send } from '../support/writes.js';

interface Entry {
  id: string;
  attributes: {
    method: string;
    path: string;
    status: number;
    duration_ms: number;
    client_id: string;
    request_id: string;
    request_body: string | null;
    response_body: string | null;
    created_at: string;
  };
}

const journal = async (t: TestApp, token: string, query = ''): Promise<Entry[]> => {
  const res = await t.get(`/v1/test_helpers/requests${query}`, token);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
};

for (const dialect of DIALECTS) {
  describe(`request journal [${dialect}]`, () => {
    let t: TestApp;
    let token: string;

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
    });
    after(() => t.close());

    it('records a request with its method, path, status, duration, client id and request id, and not its own reads', async () => {
      const res = await t.get('/v1/contacts?page[size]=1', token);
      assert.equal(res.statusCode, 200);
      const [entry] = await journal(t, token);
      assert.ok(entry);
      assert.equal(entry.attributes.method, 'GET');
      assert.equal(entry.attributes.path, '/v1/contacts?page[size]=1');
      assert.equal(entry.attributes.status, 200);
      assert.equal(entry.attributes.client_id, t.tenant.clientId);
      assert.equal(entry.attributes.request_id, res.headers['x-request-id']);
      assert.equal(typeof entry.attributes.duration_ms, 'number');
      assert.equal(entry.attributes.request_body, null);
      assert.deepEqual(JSON.parse(entry.attributes.response_body!), res.json());
      const again = await journal(t, token);
      assert.ok(!again.some((e) => e.attributes.path.startsWith('/v1/test_helpers/requests')), 'journal reads are not journaled');
    });

    it('redacts client secrets and tokens of token requests, in JSON and form bodies', async () => {
      const json = await t.request({
        method: 'POST',
        url: '/v1/oauth/token',
        payload: { grant_type: 'client_credentials', client_id: t.tenant.clientId, client_secret: t.tenant.clientSecret },
      });
      assert.equal(json.statusCode, 200);
      const { access_token: access, refresh_token: refresh } = json.json();
      const form = await t.request({
        method: 'POST',
        url: '/v1/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `grant_type=refresh_token&refresh_token=${encodeURIComponent(refresh)}`,
      });
      assert.equal(form.statusCode, 200);
      const entries = await journal(t, token, '?filter[path]=/v1/oauth/token');
      assert.equal(entries.length, 3, 'the suite\'s own token request, and these two');
      const [refreshed, granted] = entries;
      assert.deepEqual(JSON.parse(granted!.attributes.request_body!), { grant_type: 'client_credentials', client_id: t.tenant.clientId, client_secret: '[redacted]' });
      assert.deepEqual(JSON.parse(granted!.attributes.response_body!), { access_token: '[redacted]', refresh_token: '[redacted]', token_type: 'Bearer', expires_in: 7200 });
      assert.deepEqual(JSON.parse(refreshed!.attributes.request_body!), { grant_type: 'refresh_token', refresh_token: '[redacted]' });
      const stored = JSON.stringify(await t.handle.db.selectFrom('request_journal').selectAll().execute());
      for (const secret of [t.tenant.clientSecret, access, refresh, token]) assert.ok(!stored.includes(secret), 'no secret or token is stored');
      // A wrong secret authenticates no key: not journaled.
      const refused = await t.request({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials', client_id: t.tenant.clientId, client_secret: 'wrong' } });
      assert.equal(refused.statusCode, 401);
      assert.equal((await journal(t, token, '?filter[path]=/v1/oauth/token')).length, 3);
    });

    it('redacts webhook signing secrets in answers and secrets in query strings', async () => {
      const hook = await send(t, 'POST', '/v1/hooks', token, {
        data: { type: 'hooks', attributes: { event: 'tag_added', target_url: 'http://127.0.0.1:9/hooks' }, relationships: { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } } },
      });
      assert.equal(hook.statusCode, 201, hook.body);
      const secret = hook.json().data.meta.signing_secret as string;
      assert.match(secret, /^whsec_/);
      await t.get('/v1/contacts?access_token=abc123&client_secret=s3cr3t&page[size]=1', token);
      const [query, created] = await journal(t, token, '?page[size]=2');
      assert.equal(created!.attributes.path, '/v1/hooks');
      assert.equal(JSON.parse(created!.attributes.response_body!).data.meta.signing_secret, '[redacted]');
      assert.equal(query!.attributes.path, '/v1/contacts?access_token=[redacted]&client_secret=[redacted]&page[size]=1');
      const stored = JSON.stringify(await t.handle.db.selectFrom('request_journal').selectAll().execute());
      assert.ok(!stored.includes(secret) && !stored.includes('abc123') && !stored.includes('s3cr3t'));
    });

    it('cuts bodies at 4 KB, at a whole character', async () => {
      const b = builders(t);
      const contact = await b.contact({ email: 'long@example.com' });
      const note = 'é'.repeat(5000);
      const res = await send(t, 'POST', '/v1/contact_notes', token, {
        data: { type: 'contact_notes', attributes: { body: note }, relationships: { contact: { data: { type: 'contacts', id: String(contact) } } } },
      });
      assert.equal(res.statusCode, 201, res.body);
      const [entry] = await journal(t, token, '?filter[path]=/v1/contact_notes');
      for (const body of [entry!.attributes.request_body!, entry!.attributes.response_body!]) {
        const bytes = Buffer.byteLength(body);
        assert.ok(bytes <= 4096 && bytes >= 4090, `cut at 4 KB: ${bytes}`);
        assert.ok(!body.includes('\uFFFD'), 'no broken character');
      }
      assert.ok(entry!.attributes.request_body!.startsWith('{"data":{"type":"contact_notes"'));
    });

    it('filters by path prefix and pattern, status, method and client id', async () => {
      const other = await t.keyWith(t.tenant.ownerId, PERMISSION_NAMES);
      await t.get('/v1/contacts/999999', token);
      await t.get('/v1/contact_tags', other.token);
      await send(t, 'PATCH', '/v1/contacts/999999', other.token, { data: { type: 'contacts', id: '999999', attributes: { name: 'x' } } });
      const paths = async (query: string) => (await journal(t, token, `${query}&page[size]=100`)).map((e) => `${e.attributes.method} ${e.attributes.path} ${e.attributes.status}`);
      assert.deepEqual(await paths('?filter[path]=/v1/contacts/*'), ['PATCH /v1/contacts/999999 404', 'GET /v1/contacts/999999 404']);
      assert.deepEqual(await paths('?filter[path]=/v1/contact_t'), ['GET /v1/contact_tags 200']);
      assert.deepEqual(await paths('?filter[status]=404'), ['PATCH /v1/contacts/999999 404', 'GET /v1/contacts/999999 404']);
      assert.ok((await paths('?filter[status]=4xx')).length >= 2);
      assert.deepEqual(await paths(`?filter[client_id]=${other.clientId}`), [
        'PATCH /v1/contacts/999999 404',
        'GET /v1/contact_tags 200',
        // The new key's token request.
        'POST /v1/oauth/token 200',
      ]);
      assert.deepEqual(await paths(`?filter[client_id]=${other.clientId}&filter[method_eq]=PATCH`), ['PATCH /v1/contacts/999999 404']);
      assertError(await t.get('/v1/test_helpers/requests?filter[status]=abc', token), 400, 'invalid_parameter');
    });

    it('marks whether the upstream API would accept each request, says why not, and filters on it (UPSTREAM_STRICT off: served all the same)', async () => {
      const since = (await journal(t, token, '?page[size]=1'))[0]?.id ?? '0';
      assert.equal((await t.get('/v1/contact_tags?sort=-name&fields[contact_tags]=name', token)).statusCode, 200);
      assert.equal((await t.get('/v1/contact_tags?filter[name_eq]=x', token)).statusCode, 200);
      assert.equal((await t.get('/v1/events', token)).statusCode, 200);
      assert.equal((await t.get('/v1/contacts?filter[nope]=1', token)).statusCode, 400);
      await send(t, 'POST', '/v1/contact_notes', token, { data: { type: 'contact_notes', attributes: { body: 'x', bogus: 1 } } });
      const marks = async (query: string) =>
        (await journal(t, token, `?filter[after_id]=${since}&sort=created_at&page[size]=100${query}`)).map((e) => {
          const a = e.attributes as Entry['attributes'] & { upstream: boolean; upstream_reason: string | null };
          return `${e.attributes.method} ${e.attributes.path} ${a.upstream} ${a.upstream_reason}`;
        });
      assert.deepEqual(await marks(''), [
        'GET /v1/contact_tags?sort=-name&fields[contact_tags]=name true null',
        'GET /v1/contact_tags?filter[name_eq]=x false filter[name_eq] is a sitebiz extension',
        'GET /v1/events false GET /v1/events is a sitebiz extension',
        'GET /v1/contacts?filter[nope]=1 false filter[nope] is not defined by the upstream API',
        'POST /v1/contact_notes false attribute bogus is not defined by the upstream API',
      ]);
      assert.deepEqual(
        (await marks('&filter[upstream]=false')).map((m) => m.split(' ')[1]),
        ['/v1/contact_tags?filter[name_eq]=x', '/v1/events', '/v1/contacts?filter[nope]=1', '/v1/contact_notes'],
      );
      assert.deepEqual((await marks('&filter[upstream]=true')).length, 1);
    });

    it('follows the journal with filter[after_id]: only entries written after that id, in write order', async () => {
      const [newest] = await journal(t, token, '?sort=-id&page[size]=1');
      assert.ok(newest);
      assert.deepEqual(await journal(t, token, `?filter[after_id]=${newest.id}`), []);
      await t.get('/v1/contacts?page[size]=2', token);
      await t.get('/v1/sites', token);
      const since = await journal(t, token, `?filter[after_id]=${newest.id}&sort=id`);
      assert.deepEqual(since.map((e) => e.attributes.path), ['/v1/contacts?page[size]=2', '/v1/sites']);
      assert.ok(since.every((e) => Number(e.id) > Number(newest.id)));
      assertError(await t.get('/v1/test_helpers/requests?filter[after_id]=x', token), 400, 'invalid_parameter');
    });

    it('keeps another account\'s requests apart, and does not journal requests without a key', async () => {
      const other = await otherAccount(t);
      const key = await createApiKey(t.handle, { userId: other.ownerId, name: 'other', permissions: PERMISSION_NAMES }, t.clock);
      const theirToken = await t.tokenFor(key.clientId, key.clientSecret);
      await t.get('/v1/contacts', theirToken);
      const theirs = await journal(t, theirToken);
      assert.deepEqual(theirs.map((e) => e.attributes.path), ['/v1/contacts', '/v1/oauth/token']);
      assert.ok(!(await journal(t, token, '?page[size]=100')).some((e) => e.attributes.client_id === key.clientId));
      assertError(await t.get(`/v1/test_helpers/requests/${theirs[0]!.id}`, token), 404);
      const before = (await t.handle.db.selectFrom('request_journal').select('id').execute()).length;
      assert.equal((await t.get('/v1/contacts', 'not-a-token')).statusCode, 401);
      assert.equal((await t.get('/v1/version')).statusCode, 200);
      await sleep(150);
      assert.equal((await t.handle.db.selectFrom('request_journal').select('id').execute()).length, before);
    });

    it('writes its buffer in batches without a read', async () => {
      await t.get('/v1/contact_tags?page[size]=3', token);
      // Nothing reads the journal here: the buffer is written on its own timer. Looked for until
      // 10 s (the interval is far shorter; on a loaded machine 200 ms was not always enough).
      const find = () => t.handle.db.selectFrom('request_journal').select('path').where('path', '=', '/v1/contact_tags?page[size]=3').executeTakeFirst();
      let row = await find();
      for (let waited = 0; !row && waited < 10_000; waited += 50) {
        await sleep(50);
        row = await find();
      }
      assert.ok(row, 'written by the batch timer, without a read');
    });
  });

  describe(`request journal size [${dialect}]`, () => {
    it('keeps only the newest REQUEST_JOURNAL_SIZE entries per account', async () => {
      const t = await createTestApp(dialect, { env: { REQUEST_JOURNAL_SIZE: '5' } });
      try {
        const token = await t.token();
        for (let i = 1; i <= 8; i++) await t.get(`/v1/contacts?page[number]=${i}`, token);
        const entries = await journal(t, token);
        assert.deepEqual(entries.map((e) => e.attributes.path), [8, 7, 6, 5, 4].map((i) => `/v1/contacts?page[number]=${i}`));
        const rows = await t.handle.db.selectFrom('request_journal').select('id').where('account_id', '=', t.tenant.accountId).execute();
        assert.equal(rows.length, 5);
      } finally {
        await t.close();
      }
    });

    it('records nothing with REQUEST_JOURNAL_SIZE=0', async () => {
      const t = await createTestApp(dialect, { env: { REQUEST_JOURNAL_SIZE: '0' } });
      try {
        const token = await t.token();
        await t.get('/v1/contacts', token);
        assert.deepEqual(await journal(t, token), []);
        assert.equal((await t.handle.db.selectFrom('request_journal').select('id').execute()).length, 0);
      } finally {
        await t.close();
      }
    });

    it('answers 404 and records nothing in production mode', async () => {
      const t = await createTestApp(dialect, { env: { MODE: 'production' } });
      try {
        const token = await t.token();
        await t.get('/v1/contacts', token);
        assert.equal((await t.get('/v1/test_helpers/requests', token)).statusCode, 404);
        await sleep(150);
        assert.equal((await t.handle.db.selectFrom('request_journal').select('id').execute()).length, 0);
      } finally {
        await t.close();
      }
    });
  });
}
