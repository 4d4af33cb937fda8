// Entity tags and the answer cache (src/jsonapi/entity-tags.ts, engine.ts): every list and show
// answers an ETag, If-None-Match that names it is a 304, and a request asked again is answered
// from the cache (the token's statement only) until anything it read changes: a write through
// the API, a write by another process straight into the database, or, for answers that depend on
// the time, the clock moving.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createSite, createUser } from '../src/domain/accounts.js';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';

for (const dialect of DIALECTS) {
  describe(`conditional reads and the answer cache [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let contactId: string;
    const listPath = () => `/v1/contacts?filter[site_id]=${t.tenant.siteId}&include=tags&sort=email`;
    const createContact = async (email: string): Promise<string> => {
      const res = await t.request({
        method: 'POST',
        url: '/v1/contacts',
        token,
        headers: { 'content-type': 'application/vnd.api+json' },
        payload: { data: { type: 'contacts', attributes: { email, name: email }, relationships: { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } } } },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data.id as string;
    };

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      contactId = await createContact('ada@example.com');
      await createContact('grace@example.com');
    });
    after(() => t.close());

    it('answers a list and a show with an ETag, and a 304 without a body to If-None-Match naming it', async () => {
      for (const path of [listPath(), `/v1/contacts/${contactId}?include=tags`, `/v1/sites/${t.tenant.siteId}`, '/v1/me']) {
        const first = await t.get(path, token);
        assert.equal(first.statusCode, 200, first.body);
        const etag = String(first.headers.etag);
        assert.match(etag, /^W\/"[A-Za-z0-9_-]{27}"$/, path);
        for (const ifNoneMatch of [etag, etag.slice(2), `"other", ${etag}`, '*']) {
          const again = await t.request({ method: 'GET', url: path, token, headers: { 'if-none-match': ifNoneMatch } });
          assert.equal(again.statusCode, 304, `${path} with ${ifNoneMatch}`);
          assert.equal(again.body, '');
          assert.equal(again.headers.etag, etag);
          assert.equal(again.headers['content-type'], undefined);
        }
        const other = await t.request({ method: 'GET', url: path, token, headers: { 'if-none-match': '"something-else"' } });
        assert.equal(other.statusCode, 200);
        assert.equal(other.body, first.body);
        assert.equal(other.headers.etag, etag);
      }
    });

    it('answers a request asked again from the cache: one statement, the token', async () => {
      const first = await t.get(listPath(), token);
      const { result, statements } = await t.queries.during(() => t.get(listPath(), token));
      assert.equal(result.body, first.body);
      assert.equal(statements.length, 1, statements.join('\n'));
      assert.match(statements[0]!, /oauth_grants/);
    });

    it('answers anew after a write through the API, with another ETag', async () => {
      const before = await t.get(listPath(), token);
      const res = await t.request({
        method: 'PATCH',
        url: `/v1/contacts/${contactId}`,
        token,
        headers: { 'content-type': 'application/vnd.api+json' },
        payload: { data: { type: 'contacts', id: contactId, attributes: { name: 'Ada Lovelace' } } },
      });
      assert.equal(res.statusCode, 200, res.body);
      const after = await t.request({ method: 'GET', url: listPath(), token, headers: { 'if-none-match': String(before.headers.etag) } });
      assert.equal(after.statusCode, 200);
      assert.notEqual(after.headers.etag, before.headers.etag);
      assert.equal(after.json().data.find((c: { id: string }) => c.id === contactId).attributes.name, 'Ada Lovelace');
    });

    it('answers anew after another writer changes a table the answer only includes (a tag renamed in the database)', async () => {
      const tag = await t.request({
        method: 'POST',
        url: `/v1/contacts/${contactId}/relationships/tags`,
        token,
        headers: { 'content-type': 'application/vnd.api+json' },
        payload: { data: [{ type: 'contact_tags', id: String(await tagId('vip')) }] },
      });
      assert.equal(tag.statusCode, 200, tag.body);
      const before = await t.get(listPath(), token);
      assert.deepEqual(before.json().included.map((r: { attributes: { name: string } }) => r.attributes.name), ['vip']);
      // As another process would: straight into the database, past this process's caches.
      await sql`update contact_tags set name = 'very important' where name = 'vip'`.execute(t.handle.db);
      const after = await t.get(listPath(), token);
      assert.deepEqual(after.json().included.map((r: { attributes: { name: string } }) => r.attributes.name), ['very important']);
      assert.notEqual(after.headers.etag, before.headers.etag);
    });

    it('does not keep an answer that depends on the time: created_in_last as the clock moves', async () => {
      const path = `/v1/contacts?filter[site_id]=${t.tenant.siteId}&filter[created_in_last]=2`;
      const count = async () => (await t.get(path, token)).json().meta.total_count as number;
      const now = await count();
      assert.ok(now >= 2);
      t.clock.advance(3 * 86_400);
      token = await t.token(); // the one in hand expired meanwhile
      assert.equal(await count(), 0);
    });

    it('keeps apart what different keys may see: another user, fewer permissions', async () => {
      const siteId = await createSite(t.handle, { accountId: t.tenant.accountId, title: 'Second', subdomain: `second-${dialect}` }, t.clock);
      const userId = await createUser(t.handle, { accountId: t.tenant.accountId, name: 'Sam Site', email: `sam-${dialect}@example.com`, role: 'assistant', siteIds: [siteId] }, t.clock);
      const { token: limited } = await t.keyWith(userId, ['view:contacts']);
      const { token: sitesOnly } = await t.keyWith(t.tenant.ownerId, ['view:sites']);
      const path = `/v1/contacts?filter[site_id]=${t.tenant.siteId}&sort=email`;
      const owners = await t.get(path, token);
      assert.equal(owners.statusCode, 200, owners.body);
      assert.equal((await t.get(path, token)).body, owners.body); // now from the cache
      // The same request by a user of the other site only, and by a key that may not read contacts.
      assert.equal((await t.get(path, limited)).statusCode, 404);
      assert.equal((await t.get(path, sitesOnly)).statusCode, 403);
      const theirs = await t.get(`/v1/contacts?filter[site_id]=${siteId}`, limited);
      assert.equal(theirs.statusCode, 200, theirs.body);
      assert.equal(theirs.json().meta.total_count, 0);
    });

    it('answers HEAD with the same ETag and honours If-None-Match there too', async () => {
      const get = await t.get(listPath(), token);
      const head = await t.request({ method: 'HEAD', url: listPath(), token });
      assert.equal(head.statusCode, 200);
      assert.equal(head.headers.etag, get.headers.etag);
      const conditional = await t.request({ method: 'HEAD', url: listPath(), token, headers: { 'if-none-match': String(get.headers.etag) } });
      assert.equal(conditional.statusCode, 304);
    });

    it('gives errors no ETag, and a 404 stays a 404 whatever If-None-Match says', async () => {
      const res = await t.request({ method: 'GET', url: '/v1/contacts/999999999', token, headers: { 'if-none-match': '*' } });
      assert.equal(res.statusCode, 404);
      assert.equal(res.headers.etag, undefined);
    });

    /** A tag of the site, made as the CLI or the demo would: straight in the database. */
    async function tagId(name: string): Promise<number> {
      const at = t.handle.traits.encodeTimestamp(t.clock.now());
      const row = await t.handle.db
        .insertInto('contact_tags')
        .values({ site_id: t.tenant.siteId, name, created_at: at, updated_at: at })
        .returning('id')
        .executeTakeFirstOrThrow();
      return Number(row.id);
    }
  });
}
