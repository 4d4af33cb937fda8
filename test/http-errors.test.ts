// The HTTP edge: unknown routes, wrong methods, media types, bad bodies, body size, and query
// parameters the API does not take. Every error is a clean 4xx document: never a 500, never a
// stack trace.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';

type Res = Awaited<ReturnType<TestApp['request']>>;

const JSONAPI = /^application\/vnd\.api\+json/;

/** A JSON:API error document with one error; returns that error. */
function jsonApiError(res: Res, status: number, label = ''): { status: string; code: string; title: string; detail: string; source?: Record<string, string> } {
  assert.equal(res.statusCode, status, `${label} ${res.body}`);
  // Exactly the media type: JSON:API forbids parameters such as the charset Fastify would add.
  assert.equal(res.headers['content-type'], 'application/vnd.api+json', label);
  const body = res.json();
  assert.deepEqual(Object.keys(body), ['errors'], label);
  assert.equal(body.errors.length, 1, label);
  const error = body.errors[0];
  assert.equal(error.status, String(status), label);
  assert.equal(typeof error.code, 'string', label);
  assert.equal(typeof error.title, 'string', label);
  assert.equal(typeof error.detail, 'string', label);
  return error;
}

/** An RFC 6749 error body, as the OAuth endpoints write every error. */
function oauthError(res: Res, status: number, label = ''): { error: string; error_description: string } {
  assert.equal(res.statusCode, status, `${label} ${res.body}`);
  assert.match(String(res.headers['content-type']), /^application\/json/, label);
  const body = res.json();
  assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description'], label);
  return body;
}

/** A 400 naming the offending query parameter. */
function badParameter(res: Res, parameter: string, label = parameter): string {
  const error = jsonApiError(res, 400, label);
  assert.equal(error.code, 'invalid_parameter', label);
  assert.deepEqual(error.source, { parameter }, label);
  return error.detail;
}

/** No 5xx and nothing that looks like a stack frame. */
function assertClean(res: Res, label: string): void {
  assert.ok(res.statusCode < 500, `${label}: ${res.statusCode} ${res.body}`);
  assert.doesNotMatch(res.body, /\bat [^\s]+ \(|\n\s+at |node_modules|\.ts:\d+/, label);
}

for (const dialect of DIALECTS) {
  describe(`HTTP errors [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
    });
    after(() => t.close());

    it('answers 404 with a JSON:API error for an unknown route', async () => {
      for (const url of ['/v1/nope', '/', '/v2/sites', '/v1/sites/1/nope', '/v1/oauth', '/v1/site']) {
        const error = jsonApiError(await t.request({ method: 'GET', url, token }), 404, url);
        assert.equal(error.code, 'not_found');
        assert.equal(error.title, 'Not Found');
        assert.equal(error.detail, `No route GET ${url}`);
      }
      // Also without a token, and for other methods.
      const post = jsonApiError(await t.request({ method: 'POST', url: '/v1/nope' }), 404);
      assert.equal(post.detail, 'No route POST /v1/nope');
      // The query string is not echoed into the detail.
      const withQuery = jsonApiError(await t.get('/v1/nope?secret=1', token), 404);
      assert.equal(withQuery.detail, 'No route GET /v1/nope');
    });

    it('answers 405 with an Allow header for a known path and a wrong method', async () => {
      const cases: Array<[InjectOptions['method'], string, string]> = [
        ['DELETE', '/v1/sites', 'GET, HEAD'],
        ['POST', '/v1/sites', 'GET, HEAD'],
        ['PATCH', `/v1/sites/${1}`, 'GET, HEAD'],
        ['PUT', '/v1/sites/1', 'GET, HEAD'],
        ['DELETE', '/v1/me', 'GET, HEAD'],
        ['POST', '/v1/version', 'GET, HEAD'],
      ];
      for (const [method, url, allow] of cases) {
        const res = await t.request({ method, url, token });
        const error = jsonApiError(res, 405, `${method} ${url}`);
        assert.equal(error.code, 'method_not_allowed');
        assert.equal(res.headers['allow'], allow, `${method} ${url}`);
        assert.match(error.detail, new RegExp(`^${method} is not allowed`));
      }
      // Wrong method, no token: still a 405 (the method is wrong whoever asks).
      const anonymous = await t.request({ method: 'DELETE', url: '/v1/sites' });
      assert.equal(anonymous.statusCode, 405);
      assert.equal(anonymous.headers['allow'], 'GET, HEAD');
    });

    it('answers 405 in RFC 6749 form with Allow: POST for GET on the OAuth endpoints', async () => {
      for (const url of ['/v1/oauth/token', '/v1/oauth/revoke']) {
        for (const method of ['GET', 'PUT', 'DELETE'] as const) {
          const res = await t.request({ method, url });
          const body = oauthError(res, 405, `${method} ${url}`);
          assert.equal(res.headers['allow'], 'POST');
          assert.equal(body.error, 'invalid_request');
          assert.match(body.error_description, new RegExp(`^${method} is not allowed on ${url}`));
        }
      }
    });

    it('answers 415 for POST /v1/oauth/token with a media type it does not read', async () => {
      const cases: Array<[string, string]> = [
        ['text/plain', 'grant_type=client_credentials'],
        ['application/xml', '<grant_type/>'],
        ['multipart/form-data; boundary=x', '--x--'],
        ['application/vnd.api+json; charset=utf-8; foo=bar', '{}'],
      ];
      for (const [type, payload] of cases) {
        const res = await t.request({ method: 'POST', url: '/v1/oauth/token', headers: { 'content-type': type }, payload });
        const body = oauthError(res, 415, type);
        assert.equal(body.error, 'invalid_request');
        assert.equal(res.headers['cache-control'], 'no-store');
      }
      const plain = await t.request({ method: 'POST', url: '/v1/oauth/token', headers: { 'content-type': 'text/plain' }, payload: 'x' });
      // The detail names the type that was refused and what the endpoint does take.
      const { error_description: detail } = plain.json();
      assert.match(detail, /"text\/plain"/);
      assert.match(detail, /application\/x-www-form-urlencoded/);
    });

    it('answers 415 in JSON:API form for a refused media type on a JSON:API path', async () => {
      const res = await t.request({ method: 'DELETE', url: '/v1/sites', headers: { 'content-type': 'text/plain' }, payload: 'x', token });
      const error = jsonApiError(res, 415);
      assert.equal(error.code, 'unsupported_media_type');
      assert.deepEqual(error.source, { header: 'Content-Type' });
      assert.match(error.detail, /"text\/plain"/);
      assert.match(error.detail, /application\/vnd\.api\+json/);
    });

    it('answers 400 for a malformed JSON body', async () => {
      for (const payload of ['{', '{"grant_type":', 'nope', '{"a":1}}', "{'grant_type':'client_credentials'}"]) {
        const res = await t.request({ method: 'POST', url: '/v1/oauth/token', headers: { 'content-type': 'application/json' }, payload });
        const body = oauthError(res, 400, payload);
        assert.equal(body.error, 'invalid_request');
        assert.equal(body.error_description, 'The request body is not valid JSON');
      }
    });

    it('answers 400 when the body is shorter than its Content-Length', async () => {
      const res = await t.request({
        method: 'POST',
        url: '/v1/oauth/token',
        headers: { 'content-type': 'application/json', 'content-length': '100' },
        payload: '{}',
      });
      assertClean(res, 'content-length');
      const body = oauthError(res, 400);
      assert.equal(body.error, 'invalid_request');
      assert.doesNotMatch(body.error_description, /Content-Type/);
    });

    it('answers 400 with a JSON:API error for a path that is not valid percent-encoding', async () => {
      for (const url of ['/v1/sites/%', '/v1/sites/%E0%A4%A', '/v1/%zz']) {
        const res = await t.request({ method: 'GET', url, token });
        assertClean(res, url);
        const error = jsonApiError(res, 400, url);
        assert.equal(error.code, 'bad_request', url);
      }
    });

    it('answers with a JSON:API error for an id longer than a route parameter may be', async () => {
      const res = await t.get(`/v1/sites/${'1'.repeat(150)}`, token);
      assertClean(res, 'long id');
      const error = jsonApiError(res, 414);
      assert.equal(error.title, 'URI Too Long');
      // The probe's case: 3,000 × é. The router answers it before any route, hence before the
      // hooks that set the media type of every other answer.
      jsonApiError(await t.get(`/v1/orders/${'%C3%A9'.repeat(3000)}`, token), 414, '3,000 × é');
      jsonApiError(await t.get(`/v1/orders/${'%C3%A9'.repeat(3000)}`), 414, '3,000 × é without a token');
    });

    it('answers 400 naming an unknown query parameter', async () => {
      for (const url of ['/v1/sites?foo=1', `/v1/sites/${1}?foo=1`, '/v1/me?foo=1']) {
        const detail = badParameter(await t.get(url, token), 'foo', url);
        assert.match(detail, /Unknown query parameter foo/);
      }
      badParameter(await t.get('/v1/sites?page[offset]=1', token), 'page[offset]');
      badParameter(await t.get('/v1/sites?fields[]=title', token), 'fields[]');
      badParameter(await t.get('/v1/sites?Sort=title', token), 'Sort');
    });

    it('answers 400 naming a parameter given more than once', async () => {
      badParameter(await t.get('/v1/sites?sort=title&sort=title', token), 'sort');
      badParameter(await t.get('/v1/sites?page[size]=1&page[size]=2', token), 'page[size]');
      badParameter(await t.get('/v1/sites?filter[title_cont]=a&filter[title_cont]=b', token), 'filter[title_cont]');
      badParameter(await t.get('/v1/sites?fields[sites]=title&fields[sites]=title', token), 'fields[sites]');
    });

    it('answers 400 naming page[size] or page[number] when out of range or not a number', async () => {
      const cases: Array<[string, string]> = [
        ['page[size]=0', 'page[size]'],
        ['page[size]=abc', 'page[size]'],
        ['page[size]=-1', 'page[size]'],
        ['page[size]=1.5', 'page[size]'],
        ['page[size]=', 'page[size]'],
        ['page[number]=0', 'page[number]'],
        ['page[number]=abc', 'page[number]'],
        ['page[number]=-2', 'page[number]'],
        ['page[number]=1e2', 'page[number]'],
      ];
      for (const [query, parameter] of cases) {
        const detail = badParameter(await t.get(`/v1/sites?${query}`, token), parameter, query);
        assert.ok(detail.includes(parameter), detail);
      }
      // The bounds themselves are fine.
      assert.equal((await t.get('/v1/sites?page[size]=100', token)).statusCode, 200);
      // Above the maximum is served as the maximum (docs/paging.md).
      assert.equal((await t.get('/v1/sites?page[size]=101', token)).statusCode, 200);
      assert.equal((await t.get('/v1/sites?page[size]=1&page[number]=1', token)).statusCode, 200);
    });

    it('answers 400 for an unknown sort, listing the sorts there are', async () => {
      for (const sort of ['unknown', '-unknown', '', '-', 'Title', 'account_id']) {
        const detail = badParameter(await t.get(`/v1/sites?sort=${sort}`, token), 'sort', sort);
        assert.ok(detail.includes('title, subdomain, created_at, updated_at'), detail);
      }
    });

    it('answers 400 for more than one sort field', async () => {
      for (const sort of ['title,subdomain', '-title,created_at', 'title,']) {
        const detail = badParameter(await t.get(`/v1/sites?sort=${sort}`, token), 'sort', sort);
        assert.match(detail, /one field/);
      }
    });

    it('answers 400 naming fields[...] for an unknown field or type', async () => {
      const nope = badParameter(await t.get('/v1/sites?fields[sites]=nope', token), 'fields[sites]');
      assert.match(nope, /Unknown field "nope" of sites/);
      badParameter(await t.get('/v1/sites?fields[sites]=title,nope', token), 'fields[sites]');
      badParameter(await t.get(`/v1/sites/${1}?fields[sites]=nope`, token), 'fields[sites]');
      const unknownType = badParameter(await t.get('/v1/sites?fields[unknowntype]=x', token), 'fields[unknowntype]');
      assert.match(unknownType, /types here: sites/);
      // A real type that is not in this response.
      badParameter(await t.get('/v1/sites?fields[users]=name', token), 'fields[users]');
    });

    it('answers 400 naming include for an unknown include path', async () => {
      for (const include of ['nope', 'users', 'nope.deeper']) {
        const detail = badParameter(await t.get(`/v1/sites?include=${include}`, token), 'include', include);
        assert.match(detail, /Unknown include path/);
      }
      badParameter(await t.get(`/v1/sites/${1}?include=nope`, token), 'include');
    });

    it('answers 400 naming an unknown filter, listing the filters there are', async () => {
      const detail = badParameter(await t.get('/v1/sites?filter[nope]=1', token), 'filter[nope]');
      for (const name of ['search', 'title_eq', 'title_cont', 'subdomain_cont', 'created_at_gt']) assert.ok(detail.includes(name), detail);
      // A predicate that exists for other types but not for this attribute.
      badParameter(await t.get('/v1/sites?filter[title_gt]=a', token), 'filter[title_gt]');
      badParameter(await t.get('/v1/sites?filter[created_at_cont]=2026', token), 'filter[created_at_cont]');
    });

    it('answers 400 for filter[site_id] on sites, which are scoped by account and take no site filter', async () => {
      const detail = badParameter(await t.get(`/v1/sites?filter[site_id]=${t.tenant.siteId}`, token), 'filter[site_id]');
      assert.match(detail, /Unknown filter filter\[site_id\]/);
    });

    it('answers 400 naming a filter whose value cannot be read', async () => {
      const cases: Array<[string, string]> = [
        ['filter[created_at_gt]=yesterday', 'filter[created_at_gt]'],
        ['filter[created_at_gt]=2026-13-01', 'filter[created_at_gt]'],
        ['filter[created_at_lt]=', 'filter[created_at_lt]'],
        ['filter[title_cont]=', 'filter[title_cont]'],
        ['filter[search]=', 'filter[search]'],
        ['filter[search]=%20%20', 'filter[search]'],
      ];
      for (const [query, parameter] of cases) badParameter(await t.get(`/v1/sites?${query}`, token), parameter, query);
    });

    it('answers 400 (not 500) for dates outside what the databases store', async () => {
      for (const value of ['0000-01-01', '0001-01-01T00:00:00%2B01:00', '9999-12-31T23:59:59-01:00']) {
        const res = await t.get(`/v1/sites?filter[created_at_gt]=${value}`, token);
        assertClean(res, value);
        badParameter(res, 'filter[created_at_gt]', value);
      }
      // The edges of the range that both store are fine.
      for (const value of ['0001-01-01', '9999-12-31T23:59:59.999Z']) {
        assert.equal((await t.get(`/v1/sites?filter[created_at_gt]=${value}`, token)).statusCode, 200, value);
      }
    });

    it('answers 400 (not 500) for a NUL character in a query parameter', async () => {
      for (const query of ['filter[title_eq]=a%00b', 'filter[title_cont]=%00', 'filter[search]=x%00', 'sort=title%00', 'fields[sites]=title%00']) {
        const res = await t.get(`/v1/sites?${query}`, token);
        assertClean(res, query);
        jsonApiError(res, 400, query);
      }
    });

    it('answers 400 for a control character in any path segment, before any route reads it (a 500 on PostgreSQL before)', async () => {
      const cases: Array<[InjectOptions['method'], string, string]> = [
        // The probe's findings: the snapshot's name reached PostgreSQL, which cannot hold a NUL.
        ['DELETE', '/v1/test_helpers/snapshots/%00', 'U+0000'],
        ['POST', '/v1/test_helpers/snapshots/%00/restore', 'U+0000'],
        ['GET', '/v1/contacts/%00', 'U+0000'],
        ['PATCH', '/v1/contacts/1%0A', 'U+000A'],
        ['GET', '/v1/sites/%1F', 'U+001F'],
        ['GET', '/v1/sites/%7F', 'U+007F'],
        ['GET', '/v1/sites/%C2%85', 'U+0085'],
        // No route there: still the 400, not a 404 that echoes the character.
        ['GET', '/v1/no%00such', 'U+0000'],
      ];
      for (const [method, url, character] of cases) {
        for (const withToken of [token, undefined]) {
          const res = await t.request({ method, url, ...(withToken ? { token: withToken } : {}) });
          assertClean(res, url);
          const error = jsonApiError(res, 400, `${method} ${url}`);
          assert.equal(error.code, 'control_character', url);
          assert.equal(error.detail, `The path holds the control character ${character}`, url);
        }
      }
      // What is not a control character still reaches the route: a tab is, a percent-encoded "%00" is not.
      assert.equal((await t.request({ method: 'DELETE', url: '/v1/test_helpers/snapshots/%2500', token })).statusCode, 404);
      assert.equal((await t.request({ method: 'DELETE', url: '/v1/test_helpers/snapshots/%C3%A9', token })).statusCode, 404);
    });

    it('answers 400 naming the parameter for a control character in a query parameter\'s name or value', async () => {
      const cases: Array<[string, string, string]> = [
        ['filter[title_eq]=a%01b', 'filter[title_eq]', 'U+0001'],
        ['filter[title_cont]=%7F', 'filter[title_cont]', 'U+007F'],
        ['filter[title_cont]=%C2%9F', 'filter[title_cont]', 'U+009F'],
        ['sort=title%09', 'sort', 'U+0009'],
        ['filter[ti%00tle_eq]=x', 'filter[title_eq]', 'U+0000'],
      ];
      for (const [query, parameter, character] of cases) {
        const detail = badParameter(await t.get(`/v1/sites?${query}`, token), parameter, query);
        assert.equal(detail, `The parameter ${parameter} holds the control character ${character}`, query);
      }
      // On the OAuth endpoints, in their own form.
      const oauth = await t.request({ method: 'POST', url: '/v1/oauth/token?x=%00', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=client_credentials' });
      assert.equal(oauthError(oauth, 400).error, 'invalid_request');
    });

    it('answers 4xx for a NUL in a JSON attribute value, on every database (JSON may carry it; PostgreSQL text cannot)', async () => {
      const res = await t.request({
        method: 'POST',
        url: '/v1/contacts',
        token,
        headers: { 'content-type': 'application/vnd.api+json' },
        payload: JSON.stringify({ data: { type: 'contacts', attributes: { email: 'nul@example.com', name: 'a\u0000b' }, relationships: { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } } } }),
      });
      assertClean(res, 'NUL in a JSON attribute');
      const error = jsonApiError(res, 422);
      assert.deepEqual(error.source, { pointer: '/data/attributes/name' });
      // The other controls are text in JSON: a tab in a name is kept as given.
      const tab = await t.request({
        method: 'POST',
        url: '/v1/contacts',
        token,
        headers: { 'content-type': 'application/vnd.api+json' },
        payload: JSON.stringify({ data: { type: 'contacts', attributes: { email: 'tab@example.com', name: 'a\tb' }, relationships: { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } } } }),
      });
      assert.equal(tab.statusCode, 201, tab.body);
      assert.equal(tab.json().data.attributes.name, 'a\tb');
    });

    it('never answers 500 nor shows a stack trace, whatever the bad input', async () => {
      const requests: Array<InjectOptions & { token?: string }> = [
        { method: 'GET', url: '/v1/sites?filter[title_eq]=a%00b', token },
        { method: 'GET', url: '/v1/sites?filter[created_at_gt]=0000-01-01', token },
        { method: 'GET', url: '/v1/sites?filter[created_at_gt]=2026-02-31', token },
        { method: 'GET', url: '/v1/sites?page[number]=1000000&page[size]=100', token },
        { method: 'GET', url: '/v1/sites?page[number]=99999999999999999999', token },
        { method: 'GET', url: '/v1/sites/99999999999999999999', token },
        { method: 'GET', url: '/v1/sites/999999999999999', token },
        { method: 'GET', url: '/v1/sites/0', token },
        { method: 'GET', url: '/v1/sites?%', token },
        { method: 'GET', url: '/v1/sites?filter[%ZZ]=1', token },
        { method: 'GET', url: '/v1/sites?=', token },
        { method: 'GET', url: '/v1/sites?&&&', token },
        { method: 'GET', url: `/v1/sites?filter[search]=${'x'.repeat(5000)}`, token },
        { method: 'GET', url: `/v1/sites?include=${'a.'.repeat(50)}a`, token },
        { method: 'GET', url: '/v1/sites/%', token },
        { method: 'GET', url: `/v1/sites/${'9'.repeat(500)}`, token },
        { method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${'x'.repeat(10000)}` } },
        { method: 'GET', url: '/v1/me', headers: { authorization: 'Bearer \u00e9' } },
        { method: 'POST', url: '/v1/oauth/token', headers: { 'content-type': 'application/json' }, payload: '{"grant_type":"client_credentials","client_id":"a\\u0000b","client_secret":"x"}' },
        { method: 'POST', url: '/v1/oauth/token', headers: { 'content-type': 'application/json' }, payload: '{"grant_type":{"$ne":null}}' },
        { method: 'POST', url: '/v1/oauth/token', headers: { 'content-type': 'application/json' }, payload: '{"__proto__":{"grant_type":"client_credentials"}}' },
        { method: 'POST', url: '/v1/oauth/token', headers: { 'content-type': 'application/json' }, payload: `${'['.repeat(5000)}${']'.repeat(5000)}` },
        { method: 'POST', url: '/v1/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '%%%&&&===' },
        { method: 'POST', url: '/v1/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=refresh_token&refresh_token=%00' },
        { method: 'POST', url: '/v1/oauth/token', headers: { authorization: 'Basic !!!' }, payload: 'grant_type=client_credentials' },
        { method: 'POST', url: '/v1/oauth/token', headers: { authorization: `Basic ${Buffer.from('\u0000:\u0000').toString('base64')}` } },
        { method: 'POST', url: '/v1/oauth/revoke', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'token=%00', token },
        { method: 'POST', url: '/v1/oauth/revoke', headers: { 'content-type': 'application/json' }, payload: '[]', token },
        { method: 'POST', url: '/v1/oauth/revoke', headers: { 'content-type': 'text/plain' }, payload: 'token=x', token },
        { method: 'PATCH', url: '/v1/sites/1', headers: { 'content-type': 'application/json' }, payload: '{', token },
        { method: 'OPTIONS', url: '/v1/sites', token },
        { method: 'HEAD', url: '/v1/sites?foo=1', token },
      ];
      for (const request of requests) {
        const res = await t.request(request);
        assertClean(res, `${request.method} ${request.url}`);
        assert.ok(res.statusCode >= 200, `${request.method} ${request.url}`);
        if (res.statusCode >= 400 && request.method !== 'HEAD') {
          const type = String(res.headers['content-type']);
          assert.ok(JSONAPI.test(type) || /^application\/json/.test(type), `${request.url}: ${type}`);
          const body = res.json();
          assert.ok(Array.isArray(body.errors) || typeof body.error === 'string', `${request.url}: ${res.body}`);
        }
      }
    });

    it('puts the request id on error responses too', async () => {
      const res = await t.request({ method: 'GET', url: '/v1/nope', headers: { 'x-request-id': 'req-42' } });
      assert.equal(res.statusCode, 404);
      assert.equal(res.headers['x-request-id'], 'req-42');
      const unauthorized = await t.request({ method: 'GET', url: '/v1/sites', headers: { 'x-request-id': 'req-43' } });
      assert.equal(unauthorized.statusCode, 401);
      assert.equal(unauthorized.headers['x-request-id'], 'req-43');
    });
  });

  describe(`HTTP errors with BODY_LIMIT=2048 [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect, { env: { BODY_LIMIT: '2048' } });
    });
    after(() => t.close());

    it('answers 413 naming the limit for a body larger than BODY_LIMIT', async () => {
      const json = JSON.stringify({ grant_type: 'client_credentials', padding: 'x'.repeat(3000) });
      const form = `grant_type=client_credentials&padding=${'x'.repeat(3000)}`;
      const cases: Array<[string, string]> = [
        ['application/json', json],
        ['application/x-www-form-urlencoded', form],
      ];
      for (const [type, payload] of cases) {
        const res = await t.request({ method: 'POST', url: '/v1/oauth/token', headers: { 'content-type': type }, payload });
        assertClean(res, type);
        const body = oauthError(res, 413, type);
        assert.equal(body.error, 'invalid_request');
        assert.match(body.error_description, /2048 bytes/);
      }
      const jsonApi = await t.request({ method: 'POST', url: '/v1/nope', headers: { 'content-type': 'application/json' }, payload: json });
      const error = jsonApiError(jsonApi, 413);
      assert.equal(error.code, 'payload_too_large');
      assert.match(error.detail, /2048 bytes/);
    });

    it('accepts a body just under the limit', async () => {
      const payload = new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: t.tenant.clientId,
        client_secret: t.tenant.clientSecret,
      }).toString();
      const padded = `${payload}&padding=${'x'.repeat(2000 - payload.length)}`;
      assert.ok(padded.length <= 2048);
      const res = await t.request({
        method: 'POST',
        url: '/v1/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: padded,
      });
      assert.equal(res.statusCode, 200, res.body);
    });
  });

  describe(`Unknown filters with IGNORE_UNKNOWN_FILTERS=true [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    before(async () => {
      t = await createTestApp(dialect, { env: { IGNORE_UNKNOWN_FILTERS: 'true' } });
      token = await t.token();
    });
    after(() => t.close());

    it('ignores an unknown filter, as upstream does', async () => {
      const res = await t.get('/v1/sites?filter[nope]=1', token);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(
        res.json().data.map((s: { id: string }) => s.id),
        [String(t.tenant.siteId)],
      );
      // The ignored filter stays in the links, as given.
      assert.equal(res.json().links.self, 'http://sitebiz.test/v1/sites?page[number]=1&page[size]=25&filter[nope]=1');
    });

    it('still applies the known filters beside an unknown one', async () => {
      const res = await t.get('/v1/sites?filter[nope]=1&filter[title_eq]=No%20Such%20Site', token);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json().data, []);
    });

    it('still answers 400 for a bad value of a known filter and for other unknown parameters', async () => {
      badParameter(await t.get('/v1/sites?filter[created_at_gt]=garbage', token), 'filter[created_at_gt]');
      badParameter(await t.get('/v1/sites?foo=1', token), 'foo');
      badParameter(await t.get('/v1/sites?sort=nope', token), 'sort');
    });
  });
}
