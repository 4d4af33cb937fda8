// GET /v1/me: the API key's own user, with initials and role level.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSite, createUser } from '../src/domain/accounts.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from './support/harness.js';

for (const dialect of DIALECTS) {
  describe(`GET /v1/me [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect);
    });
    after(() => t.close());

    it('shows the owner: id, type users, initials, name, email and role_level OWNER', async () => {
      const res = await t.get('/v1/me', await t.token());
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/);
      assert.deepEqual(res.json(), {
        data: {
          id: String(t.tenant.ownerId),
          type: 'users',
          attributes: {
            initials: 'OO',
            name: 'Olive Owner',
            email: `owner-${t.tenant.accountId}@example.com`,
            role_level: 'OWNER',
          },
        },
        links: { self: `${PUBLIC_URL}/v1/me`, current: `${PUBLIC_URL}/v1/me` },
      });
    });

    it('shows an assistant to the assistant’s own key, whatever permissions it has', async () => {
      const siteId = await createSite(t.handle, { accountId: t.tenant.accountId, title: 'Side Site', subdomain: 'side-site' }, t.clock);
      const assistantId = await createUser(
        t.handle,
        { accountId: t.tenant.accountId, name: '  Ada Byron Lovelace ', email: 'Ada@Example.COM', role: 'assistant', siteIds: [siteId] },
        t.clock,
      );
      const { token } = await t.keyWith(assistantId, ['view:contacts']);
      const res = await t.get('/v1/me', token);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json().data, {
        id: String(assistantId),
        type: 'users',
        // Initials take the first and last word; the name is stored trimmed, the email lower-case.
        attributes: { initials: 'AL', name: 'Ada Byron Lovelace', email: 'ada@example.com', role_level: 'ASSISTANT' },
      });
      // The owner's key still shows the owner.
      assert.equal((await t.get('/v1/me', await t.token())).json().data.id, String(t.tenant.ownerId));
    });

    it('shows an administrator with a one-word name', async () => {
      const adminId = await createUser(
        t.handle,
        { accountId: t.tenant.accountId, name: 'cher', email: 'cher@example.com', role: 'administrator' },
        t.clock,
      );
      const { token } = await t.keyWith(adminId, ['view:sites']);
      const res = await t.get('/v1/me', token);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json().data.attributes, { initials: 'C', name: 'cher', email: 'cher@example.com', role_level: 'ADMINISTRATOR' });
    });

    it('applies fields[users] and keeps the query string in links.current', async () => {
      const res = await t.get('/v1/me?fields[users]=name,role_level', await t.token());
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), {
        data: { id: String(t.tenant.ownerId), type: 'users', attributes: { name: 'Olive Owner', role_level: 'OWNER' } },
        links: { self: `${PUBLIC_URL}/v1/me`, current: `${PUBLIC_URL}/v1/me?fields[users]=name,role_level` },
      });
      const initials = await t.get('/v1/me?fields[users]=initials', await t.token());
      assert.deepEqual(initials.json().data.attributes, { initials: 'OO' });
    });

    it('answers 400 naming the parameter for list parameters, unknown fields and unknown parameters', async () => {
      const token = await t.token();
      const cases: Array<[string, string]> = [
        ['sort=name', 'sort'],
        ['page[size]=1', 'page[size]'],
        ['filter[name_eq]=x', 'filter[name_eq]'],
        ['fields[users]=password', 'fields[users]'],
        ['fields[sites]=title', 'fields[sites]'],
        ['include=account', 'include'],
        ['foo=1', 'foo'],
      ];
      for (const [query, parameter] of cases) {
        const res = await t.get(`/v1/me?${query}`, token);
        assert.equal(res.statusCode, 400, `${query}: ${res.body}`);
        assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/);
        const error = res.json().errors[0];
        assert.equal(error.status, '400', query);
        assert.equal(error.code, 'invalid_parameter', query);
        assert.equal(error.source.parameter, parameter, query);
      }
    });
  });
}
