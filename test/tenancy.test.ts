// Tenancy: an account never sees another account's sites, and a user who is not an owner sees
// only the sites given to them. A record outside the caller's reach is a 404 exactly like a record
// that does not exist.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PERMISSION_NAMES } from '../src/auth/permissions.js';
import { createAccount, createSite, createUser } from '../src/domain/accounts.js';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';

type Res = Awaited<ReturnType<TestApp['request']>>;

const ids = (res: Res): string[] => res.json().data.map((s: { id: string }) => s.id);

/** A 404 body with the id taken out of its detail, to compare "not yours" with "not there". */
function notFoundShape(res: Res, id: string): unknown {
  assert.equal(res.statusCode, 404, res.body);
  assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/);
  const body = res.json();
  assert.equal(body.errors.length, 1);
  assert.equal(body.errors[0].status, '404');
  assert.equal(body.errors[0].code, 'not_found');
  assert.ok(String(body.errors[0].detail).includes(id), body.errors[0].detail);
  body.errors[0].detail = String(body.errors[0].detail).split(id).join('<id>');
  return body;
}

const NONEXISTENT = '987654321';

for (const dialect of DIALECTS) {
  describe(`Tenancy between accounts and users [${dialect}]`, () => {
    let t: TestApp;
    // Account 1 (the harness tenant): its owner, its first site, and a second site.
    let secondSiteId: number;
    // Account 2: an owner with one site.
    let otherAccountId: number;
    let otherOwnerId: number;
    let otherSiteId: number;
    let ownerToken: string;
    let otherToken: string;

    before(async () => {
      t = await createTestApp(dialect);
      secondSiteId = await createSite(t.handle, { accountId: t.tenant.accountId, title: 'Second Site', subdomain: 'second-site' }, t.clock);
      otherAccountId = await createAccount(t.handle, { name: 'Other Account' }, t.clock);
      otherOwnerId = await createUser(
        t.handle,
        { accountId: otherAccountId, name: 'Oscar Other', email: 'oscar@other.example', role: 'owner' },
        t.clock,
      );
      otherSiteId = await createSite(t.handle, { accountId: otherAccountId, title: 'Other Site', subdomain: 'other-site' }, t.clock);
      ownerToken = await t.token();
      otherToken = (await t.keyWith(otherOwnerId, PERMISSION_NAMES)).token;
    });
    after(() => t.close());

    it('lists only the sites of the caller’s own account', async () => {
      const mine = await t.get('/v1/sites', ownerToken);
      assert.equal(mine.statusCode, 200);
      // Default sort is by title: "Second Site" before "Test Site".
      assert.deepEqual(ids(mine), [String(secondSiteId), String(t.tenant.siteId)]);
      assert.equal(mine.json().meta.total_count, 2);

      const theirs = await t.get('/v1/sites', otherToken);
      assert.equal(theirs.statusCode, 200);
      assert.deepEqual(ids(theirs), [String(otherSiteId)]);
      assert.deepEqual(theirs.json().meta, { total_pages: 1, total_count: 1, current_page: 1 });
    });

    it('counts only the caller’s sites when the total needs a COUNT (full first page)', async () => {
      const res = await t.get('/v1/sites?page[size]=1', ownerToken);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(ids(res), [String(secondSiteId)]);
      assert.deepEqual(res.json().meta, { total_pages: 2, total_count: 2, current_page: 1 });
      const page2 = await t.get('/v1/sites?page[size]=1&page[number]=2', ownerToken);
      assert.deepEqual(ids(page2), [String(t.tenant.siteId)]);
      const page3 = await t.get('/v1/sites?page[size]=1&page[number]=3', ownerToken);
      assert.deepEqual(ids(page3), []);
      assert.deepEqual(page3.json().meta, { total_pages: 2, total_count: 2, current_page: 3 });
    });

    it('does not find another account’s site through filters', async () => {
      for (const query of ['filter[subdomain_eq]=other-site', 'filter[title_cont]=Other', 'filter[search]=other']) {
        const res = await t.get(`/v1/sites?${query}`, ownerToken);
        assert.equal(res.statusCode, 200, query);
        assert.deepEqual(ids(res), [], query);
        assert.equal(res.json().meta.total_count, 0, query);
      }
    });

    it('answers 404 for another account’s site, exactly as for a site that does not exist', async () => {
      const foreign = await t.get(`/v1/sites/${otherSiteId}`, ownerToken);
      const missing = await t.get(`/v1/sites/${NONEXISTENT}`, ownerToken);
      assert.deepEqual(notFoundShape(foreign, String(otherSiteId)), notFoundShape(missing, NONEXISTENT));
      assert.equal(foreign.headers['content-type'], missing.headers['content-type']);

      // And the other way round.
      const back = await t.get(`/v1/sites/${t.tenant.siteId}`, otherToken);
      const backMissing = await t.get(`/v1/sites/${NONEXISTENT}`, otherToken);
      assert.deepEqual(notFoundShape(back, String(t.tenant.siteId)), notFoundShape(backMissing, NONEXISTENT));

      // The site is there for its own account.
      const own = await t.get(`/v1/sites/${otherSiteId}`, otherToken);
      assert.equal(own.statusCode, 200);
      assert.equal(own.json().data.attributes.subdomain, 'other-site');
    });

    it('shows each account’s own user on /v1/me', async () => {
      const mine = await t.get('/v1/me', ownerToken);
      assert.equal(mine.json().data.id, String(t.tenant.ownerId));
      const theirs = await t.get('/v1/me', otherToken);
      assert.equal(theirs.json().data.id, String(otherOwnerId));
      assert.equal(theirs.json().data.attributes.email, 'oscar@other.example');
    });

    it('lets an assistant given one of two sites see only that site', async () => {
      const assistantId = await createUser(
        t.handle,
        { accountId: t.tenant.accountId, name: 'Ada Assistant', email: 'ada@example.com', role: 'assistant', siteIds: [secondSiteId] },
        t.clock,
      );
      const { token } = await t.keyWith(assistantId, PERMISSION_NAMES);

      const list = await t.get('/v1/sites', token);
      assert.equal(list.statusCode, 200);
      assert.deepEqual(ids(list), [String(secondSiteId)]);
      assert.deepEqual(list.json().meta, { total_pages: 1, total_count: 1, current_page: 1 });

      const shown = await t.get(`/v1/sites/${secondSiteId}`, token);
      assert.equal(shown.statusCode, 200);
      assert.equal(shown.json().data.id, String(secondSiteId));

      // The account's other site is as absent as a site that does not exist.
      const hidden = await t.get(`/v1/sites/${t.tenant.siteId}`, token);
      const missing = await t.get(`/v1/sites/${NONEXISTENT}`, token);
      assert.deepEqual(notFoundShape(hidden, String(t.tenant.siteId)), notFoundShape(missing, NONEXISTENT));
      const filtered = await t.get('/v1/sites?filter[title_eq]=Test Site', token);
      assert.deepEqual(ids(filtered), []);

      // Another account's site is out of reach too.
      notFoundShape(await t.get(`/v1/sites/${otherSiteId}`, token), String(otherSiteId));
    });

    it('lets a user without any site see an empty list and no site at all', async () => {
      const adminId = await createUser(
        t.handle,
        { accountId: t.tenant.accountId, name: 'Andy Admin', email: 'andy@example.com', role: 'administrator' },
        t.clock,
      );
      const { token } = await t.keyWith(adminId, PERMISSION_NAMES);
      const list = await t.get('/v1/sites', token);
      assert.equal(list.statusCode, 200);
      assert.deepEqual(ids(list), []);
      assert.deepEqual(list.json().meta, { total_pages: 0, total_count: 0, current_page: 1 });
      notFoundShape(await t.get(`/v1/sites/${t.tenant.siteId}`, token), String(t.tenant.siteId));
      notFoundShape(await t.get(`/v1/sites/${secondSiteId}`, token), String(secondSiteId));
      // /v1/me does not depend on sites.
      assert.equal((await t.get('/v1/me', token)).json().data.id, String(adminId));
    });

    it('answers 404 for ids that are not numbers', async () => {
      for (const raw of ['abc', '1.5', '-1', '1e3', '0x1', '%20', `${t.tenant.siteId}abc`, '1234567890123456']) {
        const res = await t.get(`/v1/sites/${raw}`, ownerToken);
        assert.equal(res.statusCode, 404, raw);
        assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/);
        const body = res.json();
        assert.equal(body.errors[0].status, '404', raw);
        assert.equal(body.errors[0].code, 'not_found', raw);
      }
    });

    it('lets an owner see every site of the account, including one created after the token was issued', async () => {
      const before = await t.get('/v1/sites', ownerToken);
      assert.deepEqual(ids(before), [String(secondSiteId), String(t.tenant.siteId)]);
      const laterId = await createSite(t.handle, { accountId: t.tenant.accountId, title: 'Later Site', subdomain: 'later-site' }, t.clock);
      const after = await t.get('/v1/sites', ownerToken);
      // By title: Later Site, Second Site, Test Site.
      assert.deepEqual(ids(after), [String(laterId), String(secondSiteId), String(t.tenant.siteId)]);
      assert.equal((await t.get(`/v1/sites/${laterId}`, ownerToken)).statusCode, 200);
      // The other account still sees only its own.
      assert.deepEqual(ids(await t.get('/v1/sites', otherToken)), [String(otherSiteId)]);
    });
  });
}
