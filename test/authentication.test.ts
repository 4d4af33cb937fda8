// Bearer authentication in front of every protected route, key rotation and deletion, and the
// permission check of API keys.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PERMISSION_NAMES } from '../src/auth/permissions.js';
import { createApiKey, deleteApiKey, findApiKey, listApiKeys, listUsers, rotateApiKey, UnknownRecordError } from '../src/domain/accounts.js';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';
import { otherAccount } from './support/writes.js';

type Res = Awaited<ReturnType<TestApp['request']>>;

const REALM = 'Bearer realm="sitebiz"';

/** A JSON:API 401: one error with status "401", and a Bearer challenge. */
function assertUnauthorized(res: Res, label: string): { detail: string; challenge: string } {
  assert.equal(res.statusCode, 401, `${label}: ${res.body}`);
  assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/, label);
  const body = res.json();
  assert.deepEqual(Object.keys(body), ['errors'], label);
  assert.equal(body.errors.length, 1, label);
  assert.equal(body.errors[0].status, '401', label);
  assert.equal(body.errors[0].title, 'Unauthorized', label);
  const challenge = String(res.headers['www-authenticate']);
  // The error code is the RFC 6750 code of the challenge (invalid_request, invalid_token), or
  // `unauthorized` when no credentials were sent at all.
  assert.equal(body.errors[0].code, /error="([a-z_]+)"/.exec(challenge)?.[1] ?? 'unauthorized', label);
  assert.ok(challenge.startsWith(REALM), `${label}: ${challenge}`);
  return { detail: body.errors[0].detail as string, challenge };
}

function assertForbidden(res: Res, label: string): string {
  assert.equal(res.statusCode, 403, `${label}: ${res.body}`);
  assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/, label);
  const body = res.json();
  assert.equal(body.errors.length, 1, label);
  assert.equal(body.errors[0].status, '403', label);
  assert.equal(body.errors[0].code, 'forbidden', label);
  assert.equal(res.headers['www-authenticate'], undefined, label);
  return body.errors[0].detail as string;
}

for (const dialect of DIALECTS) {
  describe(`Bearer authentication [${dialect}]`, () => {
    let t: TestApp;
    let protectedPaths: string[];
    before(async () => {
      t = await createTestApp(dialect);
      protectedPaths = ['/v1/me', '/v1/sites', `/v1/sites/${t.tenant.siteId}`, '/v1/sites/999999'];
    });
    after(() => t.close());

    const tokenRequest = (clientId: string, clientSecret: string) =>
      t.request({
        method: 'POST',
        url: '/v1/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }).toString(),
      });

    it('answers 401 with a bare Bearer challenge on every protected route without Authorization', async () => {
      for (const path of protectedPaths) {
        const res = await t.get(path);
        const { challenge, detail } = assertUnauthorized(res, path);
        assert.equal(challenge, REALM);
        assert.match(detail, /Authorization: Bearer/);
      }
      // An empty header counts as none.
      const empty = await t.request({ method: 'GET', url: '/v1/sites', headers: { authorization: '' } });
      assert.equal(assertUnauthorized(empty, 'empty').challenge, REALM);
    });

    it('answers 401 invalid_request for a malformed Authorization header', async () => {
      const malformed = ['Basic x', 'Bearer', 'Bearer ', 'Token abc', 'Bearer a b', 'Bearerabc', `Basic ${Buffer.from('a:b').toString('base64')}`];
      for (const path of protectedPaths) {
        for (const header of malformed) {
          const res = await t.request({ method: 'GET', url: path, headers: { authorization: header } });
          const { challenge } = assertUnauthorized(res, `${path} ${JSON.stringify(header)}`);
          assert.match(challenge, /error="invalid_request"/);
        }
      }
    });

    it('answers 401 invalid_token for an unknown token', async () => {
      for (const path of protectedPaths) {
        for (const token of ['sbzat_unknown', 'x', t.tenant.clientSecret]) {
          const res = await t.get(path, token);
          const { challenge, detail } = assertUnauthorized(res, `${path} ${token}`);
          assert.match(challenge, /error="invalid_token"/);
          assert.equal(detail, 'The access token is not valid');
        }
      }
    });

    it('does not accept a refresh token as an access token', async () => {
      const res = await tokenRequest(t.tenant.clientId, t.tenant.clientSecret);
      const { refresh_token: refreshToken } = res.json();
      const { challenge } = assertUnauthorized(await t.get('/v1/me', refreshToken), 'refresh as access');
      assert.match(challenge, /error="invalid_token"/);
    });

    it('accepts the Bearer scheme name in any case', async () => {
      const token = await t.token();
      for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
        const res = await t.request({ method: 'GET', url: '/v1/me', headers: { authorization: `${scheme} ${token}` } });
        assert.equal(res.statusCode, 200, scheme);
      }
    });

    it('answers 401 once the access token has expired (ACCESS_TOKEN_TTL=7200 s), and not a second before', async () => {
      assert.equal(t.config.accessTokenTtlSeconds, 7200);
      const token = await t.token();
      t.clock.advance(7199);
      for (const path of protectedPaths.slice(0, 3)) assert.equal((await t.get(path, token)).statusCode, 200, path);
      t.clock.advance(1);
      for (const path of protectedPaths) {
        const { challenge, detail } = assertUnauthorized(await t.get(path, token), path);
        assert.match(challenge, /error="invalid_token"/);
        assert.match(detail, /expired/);
      }
      // A new token works at the new time.
      assert.equal((await t.get('/v1/me', await t.token())).statusCode, 200);
    });

    it('answers 401 for a revoked token', async () => {
      const token = await t.token();
      const caller = await t.token();
      const revoked = await t.request({
        method: 'POST',
        url: '/v1/oauth/revoke',
        token: caller,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `token=${encodeURIComponent(token)}`,
      });
      assert.equal(revoked.statusCode, 200);
      for (const path of protectedPaths) {
        const { challenge, detail } = assertUnauthorized(await t.get(path, token), path);
        assert.match(challenge, /error="invalid_token"/);
        assert.equal(detail, 'The access token has been revoked');
      }
      assert.equal((await t.get('/v1/me', caller)).statusCode, 200);
    });

    it('keeps the key\'s last_used_at to the minute: written when older than 60 s, with no statement on other requests', async () => {
      const key = await t.keyWith(t.tenant.ownerId, ['view:sites']);
      const { id } = (await findApiKey(t.handle, key.clientId))!;
      const lastUsed = async () => (await findApiKey(t.handle, String(id)))!.last_used_at;
      const keyWrites = (statements: string[]) => statements.filter((s) => /^update "api_keys"/.test(s));
      const issuedAt = t.clock.now().toISOString();
      assert.equal(await lastUsed(), issuedAt, 'getting the token set it');

      // Within the minute: authentication reads it in its one query and writes nothing.
      t.clock.advance(60);
      const quiet = await t.queries.during(async () => {
        assert.equal((await t.get('/v1/me', key.token)).statusCode, 200);
        await t.app.tokens.settle();
      });
      assert.deepEqual(keyWrites(quiet.statements), []);
      assert.equal(await lastUsed(), issuedAt);

      // Older than a minute: the next request writes it once (in the background), a burst too.
      t.clock.advance(1);
      const usedAt = t.clock.now().toISOString();
      const touched = await t.queries.during(async () => {
        const answers = await Promise.all([1, 2, 3].map(() => t.get('/v1/me', key.token)));
        assert.deepEqual(answers.map((a) => a.statusCode), [200, 200, 200]);
        await t.app.tokens.settle();
      });
      assert.equal(keyWrites(touched.statements).length, 1, touched.statements.join('\n'));
      assert.equal(await lastUsed(), usedAt);

      // A refused token is no use of the key.
      t.clock.advance(120);
      assert.equal((await t.get('/v1/me', 'sbzat_unknown')).statusCode, 401);
      await t.app.tokens.settle();
      assert.equal(await lastUsed(), usedAt);
      assert.equal((await t.get('/v1/me', key.token)).statusCode, 200);
      await t.app.tokens.settle();
      assert.equal(await lastUsed(), t.clock.now().toISOString());
    });

    it('serves /v1/version without authentication, and ignores a bad Authorization header there', async () => {
      assert.equal((await t.get('/v1/version')).statusCode, 200);
      const withGarbage = await t.request({ method: 'GET', url: '/v1/version', headers: { authorization: 'Bearer nonsense' } });
      assert.equal(withGarbage.statusCode, 200);
      assert.equal(withGarbage.json().meta.version, '1.1.0');
    });
  });

  describe(`API key rotation and deletion [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect);
    });
    after(() => t.close());

    const tokenRequest = (clientId: string, clientSecret: string) =>
      t.request({
        method: 'POST',
        url: '/v1/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }).toString(),
      });

    const refresh = (refreshToken: string) =>
      t.request({
        method: 'POST',
        url: '/v1/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
      });

    it('rotating a key makes its tokens 401 at once; the old secret no longer gets a token, the new one does', async () => {
      const key = await t.keyWith(t.tenant.ownerId, PERMISSION_NAMES);
      const second = (await tokenRequest(key.clientId, key.clientSecret)).json();
      const untouched = await t.token();
      assert.equal((await t.get('/v1/sites', key.token)).statusCode, 200);

      const rotated = await rotateApiKey(t.handle, key.clientId, t.clock);
      assert.equal(rotated.clientId, key.clientId);
      assert.notEqual(rotated.clientSecret, key.clientSecret);

      for (const token of [key.token, second.access_token]) {
        const { challenge, detail } = assertUnauthorized(await t.get('/v1/sites', token), 'rotated');
        assert.match(challenge, /error="invalid_token"/);
        assert.equal(detail, 'The access token has been revoked');
      }
      const refreshed = await refresh(second.refresh_token);
      assert.equal(refreshed.statusCode, 400);
      assert.equal(refreshed.json().error, 'invalid_grant');

      const oldSecret = await tokenRequest(key.clientId, key.clientSecret);
      assert.equal(oldSecret.statusCode, 401);
      assert.equal(oldSecret.json().error, 'invalid_client');

      const newSecret = await tokenRequest(key.clientId, rotated.clientSecret);
      assert.equal(newSecret.statusCode, 200, newSecret.body);
      const me = await t.get('/v1/me', newSecret.json().access_token);
      assert.equal(me.statusCode, 200);
      assert.equal(me.json().data.id, String(t.tenant.ownerId));

      // Other keys of the same user are not affected.
      assert.equal((await t.get('/v1/sites', untouched)).statusCode, 200);
    });

    it('limited to an account, creating, finding, rotating and deleting treat another account\'s key or user as unknown and touch nothing', async () => {
      const other = await otherAccount(t);
      const theirs = await createApiKey(t.handle, { userId: other.ownerId, name: 'theirs', permissions: ['view:sites'] }, t.clock);
      const ours = { accountId: t.tenant.accountId };
      const keysBefore = (await listApiKeys(t.handle)).length;

      await assert.rejects(createApiKey(t.handle, { userId: other.ownerId, name: 'sneaky', permissions: ['view:sites'], ...ours }, t.clock), UnknownRecordError);
      assert.equal((await listApiKeys(t.handle)).length, keysBefore, 'no key was made');
      assert.equal(await findApiKey(t.handle, String(theirs.id), ours), undefined);
      assert.equal(await findApiKey(t.handle, theirs.clientId, ours), undefined);
      await assert.rejects(rotateApiKey(t.handle, String(theirs.id), t.clock, ours), UnknownRecordError);
      await assert.rejects(deleteApiKey(t.handle, theirs.clientId, ours), UnknownRecordError);
      // Their key still works with its first secret, and is listed only in its own account.
      assert.equal((await t.get('/v1/me', await t.tokenFor(theirs.clientId, theirs.clientSecret))).statusCode, 200);
      assert.ok(!(await listApiKeys(t.handle, ours)).some((k) => k.id === theirs.id));
      assert.equal((await findApiKey(t.handle, String(theirs.id), { accountId: other.accountId }))?.name, 'theirs');

      // Within its own account the same calls work.
      const mine = await createApiKey(t.handle, { userId: t.tenant.ownerId, name: 'mine', permissions: ['view:sites'], ...ours }, t.clock);
      assert.equal(mine.accountId, t.tenant.accountId);
      assert.notEqual((await rotateApiKey(t.handle, String(mine.id), t.clock, ours)).clientSecret, mine.clientSecret);
      assert.deepEqual(await deleteApiKey(t.handle, String(mine.id), ours), { id: mine.id, clientId: mine.clientId });
      assert.equal(await findApiKey(t.handle, String(mine.id)), undefined);
      assert.deepEqual((await listUsers(t.handle, other.accountId)).map((u) => u.id), [other.ownerId]);
    });

    it('rotating by numeric id works the same as by client id', async () => {
      const key = await t.keyWith(t.tenant.ownerId, ['view:sites']);
      const me = await t.get('/v1/me', key.token);
      assert.equal(me.statusCode, 200);
      const byClientId = await rotateApiKey(t.handle, key.clientId, t.clock);
      const byId = await rotateApiKey(t.handle, String(byClientId.id), t.clock);
      assert.equal(byId.clientId, key.clientId);
      assert.equal((await tokenRequest(key.clientId, byClientId.clientSecret)).statusCode, 401);
      assert.equal((await tokenRequest(key.clientId, byId.clientSecret)).statusCode, 200);
    });

    it('deleting a key makes its tokens 401 at once and its credentials unknown', async () => {
      const key = await t.keyWith(t.tenant.ownerId, PERMISSION_NAMES);
      const second = (await tokenRequest(key.clientId, key.clientSecret)).json();
      const untouched = await t.token();
      assert.equal((await t.get('/v1/me', key.token)).statusCode, 200);

      const deleted = await deleteApiKey(t.handle, key.clientId);
      assert.equal(deleted.clientId, key.clientId);

      for (const path of ['/v1/me', '/v1/sites', `/v1/sites/${t.tenant.siteId}`]) {
        for (const token of [key.token, second.access_token]) {
          const { challenge } = assertUnauthorized(await t.get(path, token), path);
          assert.match(challenge, /error="invalid_token"/);
        }
      }
      const refreshed = await refresh(second.refresh_token);
      assert.equal(refreshed.statusCode, 400);
      assert.equal(refreshed.json().error, 'invalid_grant');
      const again = await tokenRequest(key.clientId, key.clientSecret);
      assert.equal(again.statusCode, 401);
      assert.equal(again.json().error, 'invalid_client');

      assert.equal((await t.get('/v1/me', untouched)).statusCode, 200);
    });
  });

  describe(`API key permissions [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect);
    });
    after(() => t.close());

    it('answers 403 on /v1/sites and /v1/sites/:id for a key without view:sites', async () => {
      const key = await t.keyWith(t.tenant.ownerId, ['view:contacts']);
      for (const path of ['/v1/sites', `/v1/sites/${t.tenant.siteId}`, '/v1/sites?sort=-title&page[size]=5']) {
        const detail = assertForbidden(await t.get(path, key.token), path);
        assert.match(detail, /view:sites/);
      }
      // The permission is checked before the record is looked up, so 403 does not tell whether it exists.
      const missing = await t.get('/v1/sites/999999', key.token);
      assertForbidden(missing, 'missing site');
      assert.equal(missing.body, (await t.get(`/v1/sites/${t.tenant.siteId}`, key.token)).body);
    });

    it('serves /v1/me to a key without view:sites', async () => {
      const key = await t.keyWith(t.tenant.ownerId, ['view:contacts']);
      const res = await t.get('/v1/me', key.token);
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().data.id, String(t.tenant.ownerId));
      assert.equal(res.json().data.attributes.role_level, 'OWNER');
    });

    it('serves /v1/sites to a key holding only view:sites', async () => {
      const key = await t.keyWith(t.tenant.ownerId, ['view:sites']);
      const list = await t.get('/v1/sites', key.token);
      assert.equal(list.statusCode, 200);
      assert.deepEqual(
        list.json().data.map((s: { id: string }) => s.id),
        [String(t.tenant.siteId)],
      );
      const show = await t.get(`/v1/sites/${t.tenant.siteId}`, key.token);
      assert.equal(show.statusCode, 200);
      assert.equal(show.json().data.id, String(t.tenant.siteId));
    });

    it('checks authentication before permissions: no token is 401, not 403', async () => {
      const res = await t.get('/v1/sites');
      assertUnauthorized(res, 'no token');
    });
  });
}
