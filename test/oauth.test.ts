// POST /v1/oauth/token and POST /v1/oauth/revoke over HTTP: both body encodings, both ways of
// presenting client credentials, refresh token rotation, revocation, and RFC 6749 error bodies.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PERMISSION_NAMES } from '../src/auth/permissions.js';
import { createApiKey, findApiKey } from '../src/domain/accounts.js';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const JSON_TYPE = { 'content-type': 'application/json' };

const form = (params: Record<string, string>) => new URLSearchParams(params).toString();

/** RFC 6749 §2.3.1: id and secret are form-encoded, joined by a colon, then base64. */
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

interface TokenBody {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
}

type Res = Awaited<ReturnType<TestApp['request']>>;

/** An RFC 6749 §5.2 error: exactly `error` and `error_description`, plain JSON, never cached. */
function assertOAuthError(res: Res, status: number, error: string): { error: string; error_description: string } {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.equal(res.headers['cache-control'], 'no-store');
  const body = res.json<{ error: string; error_description: string }>();
  assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
  assert.equal(body.error, error);
  assert.equal(typeof body.error_description, 'string');
  assert.ok(body.error_description.length > 0);
  assert.equal('errors' in body, false);
  return body;
}

function assertTokenResponse(res: Res, expiresIn: number): TokenBody {
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers['pragma'], 'no-cache');
  const body = res.json<TokenBody>();
  assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'refresh_token', 'token_type']);
  assert.equal(body.token_type, 'Bearer');
  assert.equal(body.expires_in, expiresIn);
  assert.match(body.access_token, /^sbzat_[A-Za-z0-9_-]{43}$/);
  assert.match(body.refresh_token, /^sbzrt_[A-Za-z0-9_-]{43}$/);
  return body;
}

for (const dialect of DIALECTS) {
  describe(`POST /v1/oauth/token [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect);
    });
    after(() => t.close());

    const tokenRequest = (payload: string | Record<string, unknown>, headers: Record<string, string> = FORM) =>
      t.request({ method: 'POST', url: '/v1/oauth/token', headers, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });

    const clientCredentials = () =>
      tokenRequest(form({ grant_type: 'client_credentials', client_id: t.tenant.clientId, client_secret: t.tenant.clientSecret }));

    const meStatus = async (token: string) => (await t.get('/v1/me', token)).statusCode;

    it('grants tokens for client credentials sent form-encoded', async () => {
      const body = assertTokenResponse(await clientCredentials(), 7200);
      assert.notEqual(body.access_token, body.refresh_token);
      const me = await t.get('/v1/me', body.access_token);
      assert.equal(me.statusCode, 200);
      assert.equal(me.json().data.id, String(t.tenant.ownerId));
    });

    it('grants tokens for client credentials sent as JSON', async () => {
      const res = await tokenRequest(
        { grant_type: 'client_credentials', client_id: t.tenant.clientId, client_secret: t.tenant.clientSecret },
        JSON_TYPE,
      );
      const body = assertTokenResponse(res, 7200);
      assert.equal(await meStatus(body.access_token), 200);
    });

    it('grants tokens for client credentials sent as application/vnd.api+json', async () => {
      const res = await tokenRequest(
        { grant_type: 'client_credentials', client_id: t.tenant.clientId, client_secret: t.tenant.clientSecret },
        { 'content-type': 'application/vnd.api+json' },
      );
      assert.equal(await meStatus(assertTokenResponse(res, 7200).access_token), 200);
    });

    it('issues a different pair of tokens on every grant', async () => {
      const a = assertTokenResponse(await clientCredentials(), 7200);
      const b = assertTokenResponse(await clientCredentials(), 7200);
      assert.notEqual(a.access_token, b.access_token);
      assert.notEqual(a.refresh_token, b.refresh_token);
      assert.equal(await meStatus(a.access_token), 200);
      assert.equal(await meStatus(b.access_token), 200);
    });

    it('grants tokens for client credentials sent with HTTP Basic', async () => {
      const res = await tokenRequest(form({ grant_type: 'client_credentials' }), {
        ...FORM,
        authorization: basic(t.tenant.clientId, t.tenant.clientSecret),
      });
      const body = assertTokenResponse(res, 7200);
      assert.equal(await meStatus(body.access_token), 200);
    });

    it('accepts the Basic scheme name in any case', async () => {
      const header = basic(t.tenant.clientId, t.tenant.clientSecret).replace('Basic', 'bAsIc');
      const res = await tokenRequest(form({ grant_type: 'client_credentials' }), { ...FORM, authorization: header });
      assertTokenResponse(res, 7200);
    });

    it('refuses credentials sent both with HTTP Basic and in the body (400 invalid_request)', async () => {
      const authorization = basic(t.tenant.clientId, t.tenant.clientSecret);
      const both = await tokenRequest(
        form({ grant_type: 'client_credentials', client_id: t.tenant.clientId, client_secret: t.tenant.clientSecret }),
        { ...FORM, authorization },
      );
      assertOAuthError(both, 400, 'invalid_request');
      const secretInBody = await tokenRequest(form({ grant_type: 'client_credentials', client_secret: t.tenant.clientSecret }), {
        ...FORM,
        authorization,
      });
      assertOAuthError(secretInBody, 400, 'invalid_request');
      const idInJson = await tokenRequest({ grant_type: 'client_credentials', client_id: t.tenant.clientId }, { ...JSON_TYPE, authorization });
      assertOAuthError(idInJson, 400, 'invalid_request');
    });

    it('answers 400 invalid_request for a malformed Basic header', async () => {
      const noColon = await tokenRequest(form({ grant_type: 'client_credentials' }), {
        ...FORM,
        authorization: `Basic ${Buffer.from('no-colon-here').toString('base64')}`,
      });
      const body = assertOAuthError(noColon, 400, 'invalid_request');
      assert.match(body.error_description, /Basic/);
      const badEscape = await tokenRequest(form({ grant_type: 'client_credentials' }), {
        ...FORM,
        authorization: `Basic ${Buffer.from('%zz:secret').toString('base64')}`,
      });
      assertOAuthError(badEscape, 400, 'invalid_request');
    });

    it('answers 400 invalid_request when grant_type, client_id or client_secret is missing', async () => {
      const { clientId, clientSecret } = t.tenant;
      const cases: Array<[string, string]> = [
        ['no grant_type', form({ client_id: clientId, client_secret: clientSecret })],
        ['empty grant_type', form({ grant_type: '', client_id: clientId, client_secret: clientSecret })],
        ['no client_id', form({ grant_type: 'client_credentials', client_secret: clientSecret })],
        ['no client_secret', form({ grant_type: 'client_credentials', client_id: clientId })],
        ['empty client_secret', form({ grant_type: 'client_credentials', client_id: clientId, client_secret: '' })],
        ['empty body', ''],
      ];
      for (const [label, payload] of cases) {
        const res = await tokenRequest(payload);
        const body = assertOAuthError(res, 400, 'invalid_request');
        assert.ok(body.error_description.length > 0, label);
      }
      const noBodyAtAll = await t.request({ method: 'POST', url: '/v1/oauth/token' });
      assert.equal(assertOAuthError(noBodyAtAll, 400, 'invalid_request').error_description, 'grant_type is required');
      const jsonNull = await tokenRequest('null', JSON_TYPE);
      assertOAuthError(jsonNull, 400, 'invalid_request');
    });

    it('answers 400 invalid_request for a JSON body that is not an object of strings', async () => {
      assertOAuthError(await tokenRequest('["client_credentials"]', JSON_TYPE), 400, 'invalid_request');
      assertOAuthError(await tokenRequest('"client_credentials"', JSON_TYPE), 400, 'invalid_request');
      const numeric = await tokenRequest({ grant_type: 'client_credentials', client_id: t.tenant.clientId, client_secret: 12345 }, JSON_TYPE);
      assert.match(assertOAuthError(numeric, 400, 'invalid_request').error_description, /client_secret/);
    });

    it('answers 401 invalid_client for a wrong secret or an unknown client, without a challenge for body credentials', async () => {
      const wrongSecret = await tokenRequest(
        form({ grant_type: 'client_credentials', client_id: t.tenant.clientId, client_secret: `${t.tenant.clientSecret}x` }),
      );
      assertOAuthError(wrongSecret, 401, 'invalid_client');
      assert.equal(wrongSecret.headers['www-authenticate'], undefined);

      const unknownClient = await tokenRequest(
        { grant_type: 'client_credentials', client_id: 'sbz_000000000000000000000000', client_secret: t.tenant.clientSecret },
        JSON_TYPE,
      );
      const body = assertOAuthError(unknownClient, 401, 'invalid_client');
      // The same answer for both, so a caller cannot probe which client ids exist.
      assert.equal(body.error_description, wrongSecret.json().error_description);
      assert.equal(unknownClient.headers['www-authenticate'], undefined);

      // Another key's secret does not open this key.
      const other = await t.keyWith(t.tenant.ownerId, ['view:sites']);
      const crossed = await tokenRequest(
        form({ grant_type: 'client_credentials', client_id: t.tenant.clientId, client_secret: other.clientSecret }),
      );
      assertOAuthError(crossed, 401, 'invalid_client');
    });

    it('answers 401 invalid_client with WWW-Authenticate: Basic when Basic credentials are wrong', async () => {
      const wrong = await tokenRequest(form({ grant_type: 'client_credentials' }), {
        ...FORM,
        authorization: basic(t.tenant.clientId, 'sbzsec_wrong'),
      });
      assertOAuthError(wrong, 401, 'invalid_client');
      assert.equal(wrong.headers['www-authenticate'], 'Basic realm="sitebiz"');
      const unknown = await tokenRequest(form({ grant_type: 'client_credentials' }), {
        ...FORM,
        authorization: basic('sbz_nobody', t.tenant.clientSecret),
      });
      assertOAuthError(unknown, 401, 'invalid_client');
      assert.equal(unknown.headers['www-authenticate'], 'Basic realm="sitebiz"');
    });

    it('refuses a NUL character in a form field (400), and treats one in Basic credentials as an unknown client (401), on every database', async () => {
      // Every form field is checked before any route reads it (src/jsonapi/control-characters.ts).
      const inBody = await tokenRequest(
        `grant_type=client_credentials&client_id=${encodeURIComponent(t.tenant.clientId)}%00&client_secret=${encodeURIComponent(t.tenant.clientSecret)}`,
      );
      assert.equal(assertOAuthError(inBody, 400, 'invalid_request').error_description, 'The form field client_id holds the control character U+0000');
      // Tab, LF and CR are text in a form value: a secret holding one is just a wrong secret.
      const tab = await tokenRequest(form({ grant_type: 'client_credentials', client_id: t.tenant.clientId, client_secret: `${t.tenant.clientSecret}\t` }));
      assertOAuthError(tab, 401, 'invalid_client');
      const inBasic = await tokenRequest(form({ grant_type: 'client_credentials' }), {
        ...FORM,
        authorization: `Basic ${Buffer.from(`a%00b:${t.tenant.clientSecret}`).toString('base64')}`,
      });
      assertOAuthError(inBasic, 401, 'invalid_client');
    });

    it('answers 400 unsupported_grant_type for password, foo and other grant types', async () => {
      for (const grantType of ['password', 'foo', 'authorization_code', 'CLIENT_CREDENTIALS']) {
        const res = await tokenRequest(
          form({ grant_type: grantType, client_id: t.tenant.clientId, client_secret: t.tenant.clientSecret, username: 'u', password: 'p' }),
        );
        const body = assertOAuthError(res, 400, 'unsupported_grant_type');
        assert.ok(body.error_description.includes(JSON.stringify(grantType)), body.error_description);
      }
    });

    it('answers 400 invalid_request when a form parameter is given twice', async () => {
      const { clientId, clientSecret } = t.tenant;
      const id = encodeURIComponent(clientId);
      const secret = encodeURIComponent(clientSecret);
      const twiceGrant = await tokenRequest(`grant_type=client_credentials&grant_type=client_credentials&client_id=${id}&client_secret=${secret}`);
      assert.match(assertOAuthError(twiceGrant, 400, 'invalid_request').error_description, /grant_type/);
      const twiceId = await tokenRequest(`grant_type=client_credentials&client_id=${id}&client_id=${id}&client_secret=${secret}`);
      assert.match(assertOAuthError(twiceId, 400, 'invalid_request').error_description, /client_id/);
    });

    it('ignores parameters it does not know, whatever their names (RFC 6749 §3.2)', async () => {
      for (const extra of ['scope', 'toString', 'constructor', 'hasOwnProperty']) {
        const res = await tokenRequest(
          form({ grant_type: 'client_credentials', client_id: t.tenant.clientId, client_secret: t.tenant.clientSecret, [extra]: 'x' }),
        );
        assertTokenResponse(res, 7200);
      }
    });

    it('refresh_token rotates the grant: the refresh token works once and the old access token is revoked', async () => {
      const first = assertTokenResponse(await clientCredentials(), 7200);
      assert.equal(await meStatus(first.access_token), 200);

      const refreshed = await tokenRequest(form({ grant_type: 'refresh_token', refresh_token: first.refresh_token }));
      const second = assertTokenResponse(refreshed, 7200);
      assert.notEqual(second.access_token, first.access_token);
      assert.notEqual(second.refresh_token, first.refresh_token);
      assert.equal(await meStatus(second.access_token), 200);

      const oldAccess = await t.get('/v1/me', first.access_token);
      assert.equal(oldAccess.statusCode, 401);
      assert.match(String(oldAccess.headers['www-authenticate']), /error="invalid_token"/);

      const third = assertTokenResponse(
        await tokenRequest({ grant_type: 'refresh_token', refresh_token: second.refresh_token }, JSON_TYPE),
        7200,
      );
      assert.equal(await meStatus(third.access_token), 200);
      assert.equal(await meStatus(second.access_token), 401);
    });

    it('a replayed refresh token answers 400 and revokes every token of its family (RFC 9700 4.14.2)', async () => {
      const first = assertTokenResponse(await clientCredentials(), 7200);
      const bystander = assertTokenResponse(await clientCredentials(), 7200);
      const second = assertTokenResponse(await tokenRequest(form({ grant_type: 'refresh_token', refresh_token: first.refresh_token })), 7200);
      const third = assertTokenResponse(await tokenRequest(form({ grant_type: 'refresh_token', refresh_token: second.refresh_token })), 7200);
      assert.equal(await meStatus(third.access_token), 200);

      // The first refresh token was exchanged already: one copy of it is in other hands.
      assertOAuthError(await tokenRequest(form({ grant_type: 'refresh_token', refresh_token: first.refresh_token })), 400, 'invalid_grant');
      const revoked = await t.get('/v1/me', third.access_token);
      assert.equal(revoked.statusCode, 401);
      assert.match(String(revoked.headers['www-authenticate']), /error="invalid_token"/);
      assertOAuthError(await tokenRequest(form({ grant_type: 'refresh_token', refresh_token: third.refresh_token })), 400, 'invalid_grant');
      // Other grants of the same key are other families, and keep working.
      assert.equal(await meStatus(bystander.access_token), 200);
      assertTokenResponse(await tokenRequest(form({ grant_type: 'refresh_token', refresh_token: bystander.refresh_token })), 7200);
      // So does a new grant of the key.
      assert.equal(await meStatus(assertTokenResponse(await clientCredentials(), 7200).access_token), 200);
    });

    it('a replay revokes the family also after the replayed refresh token expired', async () => {
      const first = assertTokenResponse(await clientCredentials(), 7200);
      t.clock.advance(t.config.refreshTokenTtlSeconds - 60);
      const second = assertTokenResponse(await tokenRequest(form({ grant_type: 'refresh_token', refresh_token: first.refresh_token })), 7200);
      t.clock.advance(120);
      assertOAuthError(await tokenRequest(form({ grant_type: 'refresh_token', refresh_token: first.refresh_token })), 400, 'invalid_grant');
      assert.equal(await meStatus(second.access_token), 401);
    });

    it('lets exactly one of two simultaneous refreshes with the same token win, and the loser (a replay) revokes the winner grant', async () => {
      const grant = assertTokenResponse(await clientCredentials(), 7200);
      const payload = form({ grant_type: 'refresh_token', refresh_token: grant.refresh_token });
      const results = await Promise.all([tokenRequest(payload), tokenRequest(payload)]);
      const statuses = results.map((r) => r.statusCode).sort();
      assert.deepEqual(statuses, [200, 400]);
      const loser = results.find((r) => r.statusCode === 400)!;
      assertOAuthError(loser, 400, 'invalid_grant');
      const winner = results.find((r) => r.statusCode === 200)!.json<TokenBody>();
      // The server cannot tell a client refreshing twice from a thief: the token was presented
      // twice, so its family is revoked, the winner's new grant included.
      assert.equal(await meStatus(winner.access_token), 401);
      assertOAuthError(await tokenRequest(form({ grant_type: 'refresh_token', refresh_token: winner.refresh_token })), 400, 'invalid_grant');
    });

    it('sets the key\'s last_used_at when it gets tokens, with client credentials and with a refresh token', async () => {
      const key = await createApiKey(t.handle, { userId: t.tenant.ownerId, name: 'last used', permissions: ['view:sites'] }, t.clock);
      const lastUsed = async () => (await findApiKey(t.handle, String(key.id)))!.last_used_at;
      assert.equal(await lastUsed(), null, 'a new key was never used');
      const granted = assertTokenResponse(
        await tokenRequest(form({ grant_type: 'client_credentials', client_id: key.clientId, client_secret: key.clientSecret })),
        7200,
      );
      assert.equal(await lastUsed(), t.clock.now().toISOString());
      // Within the minute too: getting a token always writes it.
      t.clock.advance(5);
      assertTokenResponse(await tokenRequest(form({ grant_type: 'refresh_token', refresh_token: granted.refresh_token })), 7200);
      assert.equal(await lastUsed(), t.clock.now().toISOString());
      // A refused grant is no use of the key.
      t.clock.advance(5);
      const before = await lastUsed();
      assertOAuthError(await tokenRequest(form({ grant_type: 'client_credentials', client_id: key.clientId, client_secret: 'wrong' })), 401, 'invalid_client');
      assert.equal(await lastUsed(), before);
    });

    it('answers 400 invalid_grant for an unknown refresh token and invalid_request for a missing one', async () => {
      assertOAuthError(await tokenRequest(form({ grant_type: 'refresh_token', refresh_token: 'sbzrt_unknown' })), 400, 'invalid_grant');
      // An access token is not a refresh token.
      const grant = assertTokenResponse(await clientCredentials(), 7200);
      assertOAuthError(await tokenRequest(form({ grant_type: 'refresh_token', refresh_token: grant.access_token })), 400, 'invalid_grant');
      assertOAuthError(await tokenRequest(form({ grant_type: 'refresh_token' })), 400, 'invalid_request');
      assertOAuthError(await tokenRequest(form({ grant_type: 'refresh_token', refresh_token: '' })), 400, 'invalid_request');
    });

    it('refreshes after the access token expired, until the refresh token itself expires', async () => {
      const refreshTtl = t.config.refreshTokenTtlSeconds;
      assert.equal(refreshTtl, 30 * 24 * 3600);
      const early = assertTokenResponse(await clientCredentials(), 7200);
      const late = assertTokenResponse(await clientCredentials(), 7200);

      t.clock.advance(7200);
      assert.equal(await meStatus(early.access_token), 401);

      t.clock.advance(refreshTtl - 7200 - 1);
      // One second before the refresh token expires it still works.
      const renewed = assertTokenResponse(await tokenRequest(form({ grant_type: 'refresh_token', refresh_token: early.refresh_token })), 7200);
      assert.equal(await meStatus(renewed.access_token), 200);

      t.clock.advance(1);
      const expired = await tokenRequest(form({ grant_type: 'refresh_token', refresh_token: late.refresh_token }));
      assertOAuthError(expired, 400, 'invalid_grant');
    });
  });

  describe(`POST /v1/oauth/revoke [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect);
    });
    after(() => t.close());

    const grant = async (clientId = t.tenant.clientId, clientSecret = t.tenant.clientSecret): Promise<TokenBody> => {
      const res = await t.request({
        method: 'POST',
        url: '/v1/oauth/token',
        headers: FORM,
        payload: form({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json<TokenBody>();
    };

    const revoke = (bearer: string | undefined, payload: string, headers: Record<string, string> = FORM) =>
      t.request({ method: 'POST', url: '/v1/oauth/revoke', headers, payload, ...(bearer ? { token: bearer } : {}) });

    const refresh = (refreshToken: string) =>
      t.request({ method: 'POST', url: '/v1/oauth/token', headers: FORM, payload: form({ grant_type: 'refresh_token', refresh_token: refreshToken }) });

    const meStatus = async (token: string) => (await t.get('/v1/me', token)).statusCode;

    it('needs a Bearer token: 401 in RFC 6749 form otherwise', async () => {
      const target = await grant();
      const none = await revoke(undefined, form({ token: target.access_token }));
      assertOAuthError(none, 401, 'invalid_token');
      assert.match(String(none.headers['www-authenticate']), /^Bearer realm="sitebiz"/);

      const unknown = await revoke('sbzat_not-a-token', form({ token: target.access_token }));
      assertOAuthError(unknown, 401, 'invalid_token');
      assert.match(String(unknown.headers['www-authenticate']), /error="invalid_token"/);

      const malformed = await revoke('not a token', form({ token: target.access_token }));
      assertOAuthError(malformed, 401, 'invalid_request'); // RFC 6750: a malformed Bearer header is invalid_request

      // None of those revoked anything.
      assert.equal(await meStatus(target.access_token), 200);
    });

    it('revokes both tokens of a grant given its access token: 200 with an empty JSON object', async () => {
      const caller = await grant();
      const target = await grant();
      const res = await revoke(caller.access_token, form({ token: target.access_token }));
      assert.equal(res.statusCode, 200);
      assert.equal(res.body, '{}');

      const me = await t.get('/v1/me', target.access_token);
      assert.equal(me.statusCode, 401);
      assert.match(me.json().errors[0].detail, /revoked/);
      assertOAuthError(await refresh(target.refresh_token), 400, 'invalid_grant');
      // The caller's own grant is untouched.
      assert.equal(await meStatus(caller.access_token), 200);
    });

    it('revokes both tokens of a grant given its refresh token, sent as JSON', async () => {
      const caller = await grant();
      const target = await grant();
      const res = await revoke(caller.access_token, JSON.stringify({ token: target.refresh_token }), JSON_TYPE);
      assert.equal(res.statusCode, 200);
      assert.equal(res.body, '{}');
      assert.equal(await meStatus(target.access_token), 401);
      assertOAuthError(await refresh(target.refresh_token), 400, 'invalid_grant');
      assert.equal(await meStatus(caller.access_token), 200);
    });

    it('lets a grant revoke itself ("log out")', async () => {
      const own = await grant();
      const res = await revoke(own.access_token, form({ token: own.access_token }));
      assert.equal(res.statusCode, 200);
      assert.equal(res.body, '{}');
      assert.equal(await meStatus(own.access_token), 401);
      assertOAuthError(await refresh(own.refresh_token), 400, 'invalid_grant');
      // A revoked token cannot call revoke again.
      assertOAuthError(await revoke(own.access_token, form({ token: own.refresh_token })), 401, 'invalid_token');
    });

    it('answers 200 with an empty JSON object for an unknown or already revoked token', async () => {
      const caller = await grant();
      const unknown = await revoke(caller.access_token, form({ token: 'sbzat_never-issued' }));
      assert.equal(unknown.statusCode, 200);
      assert.equal(unknown.body, '{}');

      const target = await grant();
      assert.equal((await revoke(caller.access_token, form({ token: target.access_token }))).statusCode, 200);
      const twice = await revoke(caller.access_token, form({ token: target.access_token }));
      assert.equal(twice.statusCode, 200);
      assert.equal(twice.body, '{}');
      assert.equal(await meStatus(caller.access_token), 200);
    });

    it('answers 400 invalid_request when token is missing or empty', async () => {
      const caller = await grant();
      assert.equal(assertOAuthError(await revoke(caller.access_token, ''), 400, 'invalid_request').error_description, 'token is required');
      assertOAuthError(await revoke(caller.access_token, form({ token: '' })), 400, 'invalid_request');
      assertOAuthError(await revoke(caller.access_token, JSON.stringify({ tokens: 'x' }), JSON_TYPE), 400, 'invalid_request');
      assertOAuthError(await revoke(caller.access_token, JSON.stringify({ token: 42 }), JSON_TYPE), 400, 'invalid_request');
      const id = encodeURIComponent(caller.access_token);
      assertOAuthError(await revoke(caller.access_token, `token=${id}&token=${id}`), 400, 'invalid_request');
      // Still a working token: nothing was revoked by the bad requests.
      assert.equal(await meStatus(caller.access_token), 200);
    });

    // What OAuth client libraries send (RFC 7009 §2.1): the client authenticates itself instead of
    // presenting a Bearer token. simple-oauth2's revoke() uses HTTP Basic by default (its
    // authorizationMethod 'body' moves the credentials into the form), openid-client's
    // tokenRevocation() uses Basic (client_secret_basic) or the body (client_secret_post).
    const asClient = (payload: Record<string, string>, authorization?: string, headers: Record<string, string> = FORM) =>
      t.request({
        method: 'POST',
        url: '/v1/oauth/revoke',
        headers: { ...headers, accept: 'application/json', ...(authorization ? { authorization } : {}) },
        payload: headers === FORM ? form(payload) : JSON.stringify(payload),
      });
    /** simple-oauth2 and openid-client form-encode id and secret before base64 (spaces as +). */
    const libraryBasic = (id: string, secret: string) => {
      const encode = (v: string) => encodeURIComponent(v).replace(/%20/g, '+');
      return `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64')}`;
    };

    it('revokes for a client authenticated with HTTP Basic, as simple-oauth2 and openid-client send it', async () => {
      for (const [token, hint] of [['access_token', 'access_token'], ['refresh_token', 'refresh_token']] as const) {
        const target = await grant();
        const res = await asClient({ token: target[token], token_type_hint: hint }, libraryBasic(t.tenant.clientId, t.tenant.clientSecret));
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.body, '{}');
        // simple-oauth2 reads answers in strict JSON mode: a success must be labelled JSON.
        assert.match(String(res.headers['content-type']), /^application\/json/);
        assert.equal(await meStatus(target.access_token), 401);
        assertOAuthError(await refresh(target.refresh_token), 400, 'invalid_grant');
      }
    });

    it('revokes for a client with client_id and client_secret in the body, form-encoded or JSON', async () => {
      const credentials = { client_id: t.tenant.clientId, client_secret: t.tenant.clientSecret };
      for (const headers of [FORM, JSON_TYPE]) {
        const target = await grant();
        const res = await asClient({ token: target.access_token, token_type_hint: 'access_token', ...credentials }, undefined, headers);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.body, '{}');
        assert.equal(await meStatus(target.access_token), 401);
      }
    });

    it('answers 401 invalid_client to wrong client credentials, and revokes nothing', async () => {
      const target = await grant();
      const wrongBasic = await asClient({ token: target.access_token }, libraryBasic(t.tenant.clientId, 'wrong-secret'));
      assertOAuthError(wrongBasic, 401, 'invalid_client');
      assert.equal(wrongBasic.headers['www-authenticate'], 'Basic realm="sitebiz"');
      const unknownBasic = await asClient({ token: target.access_token }, libraryBasic('sbz_unknown', t.tenant.clientSecret));
      assertOAuthError(unknownBasic, 401, 'invalid_client');
      const wrongBody = await asClient({ token: target.access_token, client_id: t.tenant.clientId, client_secret: 'wrong-secret' });
      assertOAuthError(wrongBody, 401, 'invalid_client');
      assert.equal(wrongBody.headers['www-authenticate'], undefined);
      assert.equal(await meStatus(target.access_token), 200);
    });

    it('answers 400 invalid_request to credentials given two ways or half given', async () => {
      const target = await grant();
      const caller = await grant();
      const credentials = { client_id: t.tenant.clientId, client_secret: t.tenant.clientSecret };
      const cases = [
        await asClient({ token: target.access_token, ...credentials }, libraryBasic(t.tenant.clientId, t.tenant.clientSecret)),
        await asClient({ token: target.access_token, ...credentials }, `Bearer ${caller.access_token}`),
        await asClient({ token: target.access_token, client_id: t.tenant.clientId }),
        await asClient({ token: target.access_token, client_secret: t.tenant.clientSecret }),
      ];
      for (const res of cases) assertOAuthError(res, 400, 'invalid_request');
      const noToken = await asClient({}, libraryBasic(t.tenant.clientId, t.tenant.clientSecret));
      assert.equal(assertOAuthError(noToken, 400, 'invalid_request').error_description, 'token is required');
      assert.equal(await meStatus(target.access_token), 200);
    });

    it('does not revoke a token of another API key for a client either (200, as RFC 7009 asks)', async () => {
      const otherKey = await t.keyWith(t.tenant.ownerId, PERMISSION_NAMES);
      const other = await grant(otherKey.clientId, otherKey.clientSecret);
      for (const token of [other.access_token, other.refresh_token]) {
        const res = await asClient({ token }, libraryBasic(t.tenant.clientId, t.tenant.clientSecret));
        assert.equal(res.statusCode, 200, res.body);
      }
      assert.equal(await meStatus(other.access_token), 200);
    });

    it('does not revoke a token of a different API key', async () => {
      const otherKey = await t.keyWith(t.tenant.ownerId, PERMISSION_NAMES);
      const other = await grant(otherKey.clientId, otherKey.clientSecret);
      const caller = await grant();

      for (const token of [other.access_token, other.refresh_token]) {
        const res = await revoke(caller.access_token, form({ token }));
        assert.equal(res.statusCode, 200);
        assert.equal(res.body, '{}');
      }
      assert.equal(await meStatus(other.access_token), 200);
      const refreshed = await refresh(other.refresh_token);
      assert.equal(refreshed.statusCode, 200, refreshed.body);
    });
  });
}
