// Media types as JSON:API 1.1 negotiates them: answers are `application/vnd.api+json` with no
// parameter; a body in the JSON:API media type with an extension sitebiz does not support, or a
// parameter other than ext and profile, is a 415, and so is a body in a charset other than UTF-8;
// an Accept header whose every JSON:API media type asks for such a thing is a 406. Nothing is
// stored by a refused request.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { acceptProblem, parseAccept, parseMediaType } from '../src/jsonapi/media-types.js';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';
import { assertError, rowCounts } from './support/writes.js';

describe('media type parsing', () => {
  it('reads parameters, quoted values with ; and , included, case-insensitively', () => {
    assert.deepEqual(parseMediaType('Application/VND.API+JSON; EXT="https://a.example/x;y, z"; profile=p'), {
      essence: 'application/vnd.api+json',
      params: [
        ['ext', 'https://a.example/x;y, z'],
        ['profile', 'p'],
      ],
    });
    assert.deepEqual(
      parseAccept('text/html;q=0.9, application/vnd.api+json; ext="a, b";q=0.5;x=1, */*').map((m) => [m.essence, m.params]),
      [
        ['text/html', []],
        ['application/vnd.api+json', [['ext', 'a, b']]],
        ['*/*', []],
      ],
    );
  });

  it('406 only when every JSON:API instance in Accept asks for what cannot be served', () => {
    const refused = [
      'application/vnd.api+json; ext="https://example.com/ext"',
      'application/vnd.api+json; charset=utf-8',
      'application/vnd.api+json; foo=bar, application/vnd.api+json; ext=https://e.example/x, */*',
    ];
    for (const header of refused) assert.ok(acceptProblem(header), header);
    const served = [
      undefined,
      '',
      '*/*',
      'text/html',
      'application/json',
      'application/vnd.api+json',
      'application/vnd.api+json; profile="https://example.com/p"',
      'application/vnd.api+json; ext=""',
      'application/vnd.api+json; ext="https://example.com/ext", application/vnd.api+json',
      'application/vnd.api+json;q=0.5',
    ];
    for (const header of served) assert.equal(acceptProblem(header), undefined, String(header));
  });
});

for (const dialect of DIALECTS) {
  describe(`media types [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
    });
    after(() => t.close());

    const contact = (email: string) =>
      JSON.stringify({ data: { type: 'contacts', attributes: { email }, relationships: { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } } } });

    it('answers JSON:API documents as application/vnd.api+json with no media type parameter', async () => {
      const cases = [
        t.get('/v1/sites', token),
        t.get(`/v1/sites/${t.tenant.siteId}`, token),
        t.get('/v1/me', token),
        t.get('/v1/version'),
        t.get('/v1/sites'), // 401
        t.get('/v1/sites?sort=nope', token), // 400
        t.get('/v1/nope', token), // 404
        t.request({ method: 'DELETE', url: '/v1/sites', token }), // 405
        t.request({ method: 'POST', url: '/v1/contacts', token, headers: { 'content-type': 'application/vnd.api+json' }, payload: contact('media@example.com') }),
      ];
      for (const res of await Promise.all(cases)) assert.equal(res.headers['content-type'], 'application/vnd.api+json', res.body);
      // The OAuth endpoints answer in RFC 6749's application/json.
      const oauth = await t.request({ method: 'POST', url: '/v1/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=x' });
      assert.match(String(oauth.headers['content-type']), /^application\/json/);
    });

    it('415 for a JSON:API body with an unsupported extension or another parameter; profile is fine; nothing stored', async () => {
      const before = await rowCounts(t, ['contacts']);
      const refused = [
        'application/vnd.api+json; ext="https://example.com/ext"',
        'application/vnd.api+json; ext=https://example.com/ext',
        'application/vnd.api+json; ext="https://jsonapi.org/ext/atomic"',
        'application/vnd.api+json; charset=utf-8',
        'application/vnd.api+json; charset=utf-16',
        'application/vnd.api+json; foo=bar',
        'application/json; charset=utf-16',
        'application/json; charset=iso-8859-1',
      ];
      for (const [i, type] of refused.entries()) {
        const res = await t.request({ method: 'POST', url: '/v1/contacts', token, headers: { 'content-type': type }, payload: contact(`refused-${i}@example.com`) });
        assertError(res, 415, 'unsupported_media_type');
        assert.deepEqual(res.json().errors[0].source, { header: 'Content-Type' }, type);
      }
      assert.deepEqual(await rowCounts(t, ['contacts']), before, 'nothing was stored');
      const accepted = [
        'application/vnd.api+json',
        'application/vnd.api+json; profile="https://example.com/profile"',
        'application/vnd.api+json; ext=""',
        'application/json',
        'application/json; charset=UTF-8',
      ];
      for (const [i, type] of accepted.entries()) {
        const res = await t.request({ method: 'POST', url: '/v1/contacts', token, headers: { 'content-type': type }, payload: contact(`accepted-${i}@example.com`) });
        assert.equal(res.statusCode, 201, `${type}: ${res.body}`);
      }
    });

    it('415 for a form body in a charset other than UTF-8 on the OAuth endpoint', async () => {
      const res = await t.request({
        method: 'POST',
        url: '/v1/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-16' },
        payload: 'grant_type=client_credentials',
      });
      assert.equal(res.statusCode, 415, res.body);
      assert.equal(res.json().error, 'invalid_request');
    });

    it('406 when Accept allows the JSON:API media type only with an unsupported extension or parameter', async () => {
      for (const accept of ['application/vnd.api+json; ext="https://example.com/ext"', 'application/vnd.api+json; charset=utf-8']) {
        for (const url of ['/v1/sites', '/v1/me', '/v1/version', `/v1/sites/${t.tenant.siteId}`]) {
          const res = await t.request({ method: 'GET', url, token, headers: { accept } });
          assertError(res, 406, 'not_acceptable');
          assert.deepEqual(res.json().errors[0].source, { header: 'Accept' });
        }
      }
      for (const accept of ['*/*', 'application/json', 'application/vnd.api+json', 'application/vnd.api+json; ext="https://example.com/ext", application/vnd.api+json']) {
        const res = await t.request({ method: 'GET', url: '/v1/sites', token, headers: { accept } });
        assert.equal(res.statusCode, 200, `${accept}: ${res.body}`);
      }
      // A refused Accept is refused before anything is written.
      const before = await rowCounts(t, ['contacts']);
      const write = await t.request({
        method: 'POST',
        url: '/v1/contacts',
        token,
        headers: { 'content-type': 'application/vnd.api+json', accept: 'application/vnd.api+json; ext="https://example.com/ext"' },
        payload: contact('accept@example.com'),
      });
      assertError(write, 406, 'not_acceptable');
      assert.deepEqual(await rowCounts(t, ['contacts']), before);
    });
  });
}
