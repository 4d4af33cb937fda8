// The console's Keys page (/console/keys) as an owner uses it in a browser, over app.inject with a
// real session: the list (never a secret), creating a key (its secret shown once, then used
// against the API), rotating and deleting with confirmation pages, forms without the CSRF token
// refused, bad input shown as problems with nothing made, another account's keys and users
// unknown (404), and no Keys page for a user who is not an owner.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { PERMISSION_NAMES, PERMISSIONS } from '../../src/auth/permissions.js';
import { createApiKey, createUser, findApiKey, listApiKeys } from '../../src/domain/accounts.js';
import { signInToConsole, type ConsoleBrowser } from '../support/console.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from '../support/harness.js';
import { otherAccount } from '../support/writes.js';

/** The text of the element with this id (an id the page gives a code element). */
function textOf(body: string, id: string): string {
  const found = new RegExp(`id="${id}">([^<]*)<`).exec(body)?.[1];
  assert.ok(found, `no #${id} on the page`);
  return found.replace(/&amp;/g, '&');
}

/** The rows of the keys table (each starts with the key's name as a row header). */
const keyRows = (body: string) => body.match(/<tr>\s*<th scope="row">/g)?.length ?? 0;

const problemsOf = (body: string) => /<div class="problems" role="alert">([\s\S]*?)<\/div>/.exec(body)?.[1] ?? '';

for (const dialect of DIALECTS) {
  describe(`console Keys page [${dialect}]`, () => {
    let t: TestApp;
    let owner: ConsoleBrowser;
    let adminId: number;
    let other: { accountId: number; ownerId: number; siteId: number };
    let theirs: { id: number; clientId: string; clientSecret: string };

    const keyCount = async () => (await listApiKeys(t.handle)).length;

    /** Creates a key through the console's form; returns the answer and the credentials it shows. */
    const createThroughConsole = async (fields: Record<string, string | string[]>) => {
      const res = await owner.post('/console/keys', fields);
      assert.equal(res.statusCode, 200, res.body);
      return { res, clientId: textOf(res.body, 'client-id'), clientSecret: textOf(res.body, 'client-secret') };
    };

    const keyByName = async (name: string) => {
      const key = (await listApiKeys(t.handle, { accountId: t.tenant.accountId })).find((k) => k.name === name);
      assert.ok(key, `no key ${name}`);
      return key;
    };

    before(async () => {
      t = await createTestApp(dialect);
      owner = await signInToConsole(t);
      adminId = await createUser(
        t.handle,
        { accountId: t.tenant.accountId, name: 'Ada Admin', email: `admin-${t.tenant.accountId}@example.com`, role: 'administrator', siteIds: [t.tenant.siteId] },
        t.clock,
      );
      other = await otherAccount(t);
      theirs = await createApiKey(t.handle, { userId: other.ownerId, name: 'their key', permissions: ['view:sites'] }, t.clock);
    });
    after(() => t.close());

    it('lists the account\'s keys with their user, permissions and times, and never a secret', async () => {
      await t.token(); // the tenant's key has been used
      const res = await owner.get('/console/keys');
      assert.equal(res.statusCode, 200, res.body);
      assert.match(res.headers['content-type'] as string, /^text\/html/);
      assert.match(res.body, /<a href="\/console\/keys\?site=\d+" aria-current="page">Keys<\/a>/);
      assert.equal(keyRows(res.body), 1, 'the tenant\'s one key, not another account\'s');
      assert.match(res.body, /<th scope="row">test key<\/th>/);
      assert.match(res.body, new RegExp(`<code>${t.tenant.clientId}</code>`));
      assert.match(res.body, /Olive Owner<br><span class="muted">owner-\d+@example\.com<\/span>/);
      // Every permission, folded into "all 19".
      assert.match(res.body, new RegExp(`<summary>all ${PERMISSION_NAMES.length}</summary>`));
      for (const name of PERMISSION_NAMES) assert.ok(res.body.includes(`<code>${name}</code>`), name);
      // Created and last used at the test clock's time; never rotated.
      const when = t.clock.now().toISOString();
      assert.equal(res.body.split(`<time datetime="${when}">2026-06-01 12:00:00 UTC</time>`).length - 1, 2, 'created and last used');
      assert.match(res.body, /<td><span class="muted">never<\/span><\/td>/);
      assert.ok(!res.body.includes(t.tenant.clientSecret), 'no secret');
      assert.ok(!res.body.includes('their key'), 'no key of another account');
      assert.doesNotMatch(res.body, /sbzsec_|secret_hash/);
    });

    it('offers a create form with the account\'s users and every permission as a checkbox, manage:sandbox marked as sandbox only', async () => {
      const res = await owner.get('/console/keys/new');
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.body.match(/<input type="checkbox"[^>]* name="permissions"/g)?.length, PERMISSIONS.length);
      for (const p of PERMISSIONS) {
        assert.ok(res.body.includes(`value="${p.name}"`), p.name);
        assert.ok(res.body.includes(p.description.replace(/'/g, '&#39;')), `${p.name}'s description`);
      }
      assert.match(res.body, /<code>manage:sandbox<\/code>:[^<]*<strong>This server is in sandbox mode: the key can use the test helpers\.<\/strong>/);
      // The account's users, the signed-in owner chosen; no user of another account.
      assert.match(res.body, new RegExp(`<option value="${t.tenant.ownerId}" selected>Olive Owner`));
      assert.match(res.body, new RegExp(`<option value="${adminId}">Ada Admin`));
      assert.ok(!res.body.includes('Other Owner'));
      assert.match(res.body, /<label for="key-name">Name<\/label>/);
      assert.match(res.body, new RegExp(`<input type="hidden" name="_csrf" value="${owner.csrfToken}">`));
    });

    it('creates a key: the secret is shown once with a curl line, and works against the API with exactly its permissions', async () => {
      const before = await keyCount();
      const { res, clientId, clientSecret } = await createThroughConsole({ name: 'CRM sync', user_id: String(t.tenant.ownerId), permissions: ['view:contacts', 'view:sites'] });
      assert.equal(await keyCount(), before + 1);
      assert.match(clientId, /^sbz_[0-9a-f]{24}$/);
      assert.match(clientSecret, /^sbzsec_/);
      assert.match(res.body, /cannot be shown again/);
      assert.equal(
        textOf(res.body, 'token-command'),
        `curl -s -X POST ${PUBLIC_URL}/v1/oauth/token -d grant_type=client_credentials -d client_id=${clientId} -d client_secret=${clientSecret}`,
      );
      for (const copied of ['client-id', 'client-secret', 'token-command']) assert.match(res.body, new RegExp(`<button type="button"[^>]* data-copy="${copied}"`));
      assert.equal(res.headers['cache-control'], 'no-store');

      // The shown secret gets a token, as the curl line does; the key acts as its user.
      const token = await t.tokenFor(clientId, clientSecret);
      const me = await t.get('/v1/me', token);
      assert.equal(me.statusCode, 200, me.body);
      assert.equal(JSON.parse(me.body).data.id, String(t.tenant.ownerId));
      assert.equal((await t.get(`/v1/contacts?filter[site_id]=${t.tenant.siteId}`, token)).statusCode, 200);
      assert.equal((await t.get(`/v1/hooks?filter[site_id]=${t.tenant.siteId}`, token)).statusCode, 403, 'no view:hooks');

      // The list shows it, with its two permissions, and still no secret.
      const list = await owner.get('/console/keys');
      assert.equal(keyRows(list.body), 2);
      assert.match(list.body, /<th scope="row">CRM sync<\/th>[\s\S]*?<ul class="permission-list"><li><code>view:contacts<\/code><\/li><li><code>view:sites<\/code><\/li><\/ul>/);
      assert.ok(!list.body.includes(clientSecret));
    });

    it('creates a key for another user of the account, who is then the key\'s user in the API', async () => {
      const { clientId, clientSecret } = await createThroughConsole({ name: 'Ada\'s report', user_id: String(adminId), permissions: 'view:sites' });
      const me = await t.get('/v1/me', await t.tokenFor(clientId, clientSecret));
      assert.equal(JSON.parse(me.body).data.id, String(adminId));
      assert.equal(JSON.parse(me.body).data.attributes.role_level, 'ADMINISTRATOR');
      assert.match((await owner.get('/console/keys')).body, /Ada Admin<br><span class="muted">admin-\d+@example\.com<\/span>/);
    });

    it('re-renders the form with the problems of bad input (4xx) and creates nothing', async () => {
      const before = await keyCount();
      const cases: Array<{ fields: Record<string, string | string[]>; status: number; problem: RegExp }> = [
        { fields: { name: '  ', user_id: String(t.tenant.ownerId), permissions: 'view:sites' }, status: 422, problem: /Give the key a name/ },
        { fields: { name: 'No permissions', user_id: String(t.tenant.ownerId) }, status: 422, problem: /Check at least one permission/ },
        { fields: { name: 'Unknown', user_id: String(t.tenant.ownerId), permissions: ['view:sites', 'view:everything'] }, status: 422, problem: /Unknown permission: view:everything\./ },
        { fields: { name: 'Nobody', user_id: '999999', permissions: 'view:sites' }, status: 404, problem: /user 999999 is not one of them/ },
        { fields: { name: 'Nobody', user_id: 'x', permissions: 'view:sites' }, status: 404, problem: /user x is not one of them/ },
        { fields: { name: 'Nobody', permissions: 'view:sites' }, status: 404, problem: /none was chosen/ },
        // A user of another account is no user of this one.
        { fields: { name: 'Sneaky', user_id: String(other.ownerId), permissions: 'view:sites' }, status: 404, problem: new RegExp(`user ${other.ownerId} is not one of them`) },
      ];
      for (const { fields, status, problem } of cases) {
        const res = await owner.post('/console/keys', fields);
        const label = JSON.stringify(fields);
        assert.equal(res.statusCode, status, `${label}: ${res.body}`);
        assert.match(problemsOf(res.body), problem, label);
        assert.match(res.body, /<h1>Create a key<\/h1>/, label);
        assert.doesNotMatch(res.body, /id="client-secret"/, label);
      }
      // Everything wrong at once: every problem is listed, and the form keeps what was typed.
      const all = await owner.post('/console/keys', { name: '', user_id: String(adminId), permissions: 'view:nothing' });
      assert.equal(all.statusCode, 422);
      assert.equal(problemsOf(all.body).match(/<li>/g)?.length, 2);
      assert.match(all.body, new RegExp(`<option value="${adminId}" selected>`));
      const kept = await owner.post('/console/keys', { name: 'Kept <name>', user_id: String(adminId), permissions: 'view:sites' }, {});
      assert.equal(kept.statusCode, 200, 'a good form after the bad ones');
      const keptKey = await keyByName('Kept <name>');
      const retry = await owner.post('/console/keys', { name: 'Half', user_id: String(adminId) });
      assert.match(retry.body, /<input id="key-name" name="name" value="Half"/);
      assert.equal(await keyCount(), before + 1, 'only the good form made a key');
      assert.ok(keptKey);
    });

    it('rotates a key after a confirmation naming what stops working: old secret and tokens refused, the new secret works', async () => {
      const { clientId, clientSecret } = await createThroughConsole({ name: 'To rotate', user_id: String(t.tenant.ownerId), permissions: 'view:sites' });
      const oldToken = await t.tokenFor(clientId, clientSecret);
      const key = await keyByName('To rotate');

      const confirm = await owner.get(`/console/keys/${key.id}/rotate`);
      assert.equal(confirm.statusCode, 200, confirm.body);
      assert.match(confirm.body, /<h1>Rotate the key To rotate\?<\/h1>/);
      assert.ok(confirm.body.includes(`<code>${clientId}</code>`));
      assert.match(confirm.body, /<h2>What stops working<\/h2>/);
      assert.match(confirm.body, /Every access token and refresh token granted with this key stops working at once/);
      assert.match(confirm.body, /Integrations that use the key's current secret cannot get new tokens until they are given the new one/);
      assert.match(confirm.body, new RegExp(`<form method="post" action="/console/keys/${key.id}/rotate\\?site=${t.tenant.siteId}"`));
      // Looking changes nothing.
      assert.equal((await t.get('/v1/me', oldToken)).statusCode, 200);

      const rotated = await owner.post(`/console/keys/${key.id}/rotate`);
      assert.equal(rotated.statusCode, 200, rotated.body);
      assert.equal(textOf(rotated.body, 'client-id'), clientId, 'the client id stays');
      const newSecret = textOf(rotated.body, 'client-secret');
      assert.notEqual(newSecret, clientSecret);
      assert.match(rotated.body, /cannot be shown again/);
      assert.ok(textOf(rotated.body, 'token-command').endsWith(`client_secret=${newSecret}`));

      assert.equal((await t.get('/v1/me', oldToken)).statusCode, 401, 'the old token is revoked');
      const oldGrant = await t.request({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret } });
      assert.equal(oldGrant.statusCode, 401, 'the old secret gets no token');
      assert.equal((await t.get('/v1/me', await t.tokenFor(clientId, newSecret))).statusCode, 200);
      const listed = await owner.get('/console/keys');
      assert.ok((await findApiKey(t.handle, String(key.id)))?.rotated_at, 'rotated_at is set');
      assert.ok(!listed.body.includes(newSecret));
    });

    it('deletes a key after a confirmation: redirected to the list with a notice, its tokens refused', async () => {
      const { clientId, clientSecret } = await createThroughConsole({ name: 'To delete', user_id: String(t.tenant.ownerId), permissions: 'view:sites' });
      const token = await t.tokenFor(clientId, clientSecret);
      const key = await keyByName('To delete');

      const confirm = await owner.get(`/console/keys/${key.id}/delete`);
      assert.equal(confirm.statusCode, 200, confirm.body);
      assert.match(confirm.body, /<h1>Delete the key To delete\?<\/h1>/);
      assert.ok(confirm.body.includes(`<code>${clientId}</code>`));
      assert.match(confirm.body, /Every access token and refresh token granted with this key stops working at once/);
      assert.match(confirm.body, /integrations that use this key stop/);
      assert.match(confirm.body, /<button type="submit" class="danger">Delete the key<\/button>/);

      const deleted = await owner.post(`/console/keys/${key.id}/delete`);
      assert.equal(deleted.statusCode, 303, deleted.body);
      assert.equal(deleted.headers.location, `/console/keys?done=deleted&site=${t.tenant.siteId}`);
      const list = await owner.get(deleted.headers.location as string);
      assert.match(list.body, /<p class="notice" role="status">The key was deleted/);
      assert.ok(!list.body.includes('To delete'));
      assert.equal((await t.get('/v1/me', token)).statusCode, 401, 'its token is refused');
      assert.equal(await findApiKey(t.handle, String(key.id)), undefined);
      // Gone: its pages are 404 now.
      assert.equal((await owner.get(`/console/keys/${key.id}/delete`)).statusCode, 404);
      assert.equal((await owner.post(`/console/keys/${key.id}/delete`)).statusCode, 404);
    });

    it('refuses a form without the CSRF token (403) and changes nothing', async () => {
      const key = await keyByName('CRM sync');
      const before = await keyCount();
      const cases: Array<[string, Record<string, string>]> = [
        ['/console/keys', { name: 'Forged', user_id: String(t.tenant.ownerId), permissions: 'view:sites' }],
        [`/console/keys/${key.id}/rotate`, {}],
        [`/console/keys/${key.id}/delete`, {}],
      ];
      for (const [url, fields] of cases) {
        const res = await owner.post(url, fields, { csrf: false });
        assert.equal(res.statusCode, 403, `${url}: ${res.body}`);
        assert.match(res.body, /CSRF token/);
        const wrong = await owner.post(url, { ...fields, _csrf: 'not-the-token' }, { csrf: false });
        assert.equal(wrong.statusCode, 403, url);
      }
      assert.equal(await keyCount(), before);
      const after = await findApiKey(t.handle, String(key.id));
      assert.equal(after?.rotated_at, key.rotated_at, 'not rotated');
    });

    it('answers 404 for another account\'s key, an unknown key and a malformed id, and leaves their key alone', async () => {
      for (const id of [String(theirs.id), '999999', 'abc', '1e3']) {
        for (const action of ['rotate', 'delete']) {
          const page = await owner.get(`/console/keys/${id}/${action}`);
          assert.equal(page.statusCode, 404, `GET ${id}/${action}`);
          assert.match(page.body, /<h1>Not found<\/h1>/);
          const post = await owner.post(`/console/keys/${id}/${action}`);
          assert.equal(post.statusCode, 404, `POST ${id}/${action}`);
        }
      }
      const still = await findApiKey(t.handle, String(theirs.id));
      assert.equal(still?.rotated_at, null);
      assert.equal((await t.get('/v1/me', await t.tokenFor(theirs.clientId, theirs.clientSecret))).statusCode, 200, 'their secret still works');
    });

    it('is not open to a user who is not an owner: 403 on every Keys route, and no Keys link', async () => {
      const admin = await signInToConsole(t, adminId);
      const home = await admin.get('/console');
      assert.equal(home.statusCode, 200);
      assert.doesNotMatch(home.body, /href="\/console\/keys/);
      const key = await keyByName('CRM sync');
      const attempts: Array<Promise<LightMyRequestResponse>> = [
        admin.get('/console/keys'),
        admin.get('/console/keys/new'),
        admin.get(`/console/keys/${key.id}/rotate`),
        admin.get(`/console/keys/${key.id}/delete`),
        admin.post('/console/keys', { name: 'Mine', user_id: String(adminId), permissions: 'view:sites' }),
        admin.post(`/console/keys/${key.id}/rotate`),
        admin.post(`/console/keys/${key.id}/delete`),
      ];
      const before = await keyCount();
      for (const res of await Promise.all(attempts)) {
        assert.equal(res.statusCode, 403, res.body);
        assert.match(res.body, /not open to your role \(administrator\)/);
      }
      assert.equal(await keyCount(), before);
      assert.equal((await findApiKey(t.handle, String(key.id)))?.rotated_at, null);
      // The owner does see the link.
      assert.match((await owner.get('/console')).body, /<a href="\/console\/keys\?site=\d+">Keys<\/a>/);
    });
  });

  describe(`console Keys page in production mode [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect, { env: { MODE: 'production' } });
    });
    after(() => t.close());

    it('says manage:sandbox gives nothing on a production server', async () => {
      const owner = await signInToConsole(t);
      const res = await owner.get('/console/keys/new');
      assert.equal(res.statusCode, 200, res.body);
      assert.match(res.body, /<code>manage:sandbox<\/code>:[^<]*<strong>This server is in production mode, which has no test helpers: this permission gives nothing here\.<\/strong>/);
    });
  });
}
