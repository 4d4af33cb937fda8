// Names every JavaScript object inherits (toString, __proto__, constructor, ...) given where a
// request names a declared member: an include path, a field, a sort, a filter, a page key, a type,
// an attribute or relationship of a body, an OAuth grant. Each must find only what was declared:
// a 400 naming the parameter (or the usual 409/422 at the member of a body), never a 500, never
// a 200 that quietly accepted it, and nothing stored.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { builders } from './support/builders.js';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';
import { assertError, rowCounts, send } from './support/writes.js';

const INHERITED = ['toString', '__proto__', 'constructor', 'valueOf', 'hasOwnProperty'] as const;

type Res = Awaited<ReturnType<TestApp['request']>>;

function badParameter(res: Res, parameter: string, label: string): void {
  assert.equal(res.statusCode, 400, `${label}: ${res.body}`);
  const errors = res.json().errors as Array<{ code: string; source?: { parameter?: string } }>;
  assert.deepEqual(errors.map((e) => e.source?.parameter), [parameter], `${label}: ${res.body}`);
}

for (const dialect of DIALECTS) {
  describe(`inherited object names in requests [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let contactId: number;
    let customerId: number;
    let site: string;
    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      site = String(t.tenant.siteId);
      const b = builders(t);
      ({ id: customerId, contactId } = await b.customer({ name: 'Ada Lovelace', email: 'ada@example.com' }));
      await b.tagging(contactId, await b.tag('vip'));
    });
    after(() => t.close());

    /** Read routes of several kinds, each with the query string it needs to answer 200. */
    const readRoutes = () => [
      { url: '/v1/contacts', base: `filter[site_id]=${site}`, type: 'contacts', list: true },
      { url: '/v1/sites', base: '', type: 'sites', list: true },
      { url: `/v1/contacts/${contactId}`, base: '', type: 'contacts', list: false },
      { url: `/v1/customers/${customerId}`, base: '', type: 'customers', list: false },
      { url: `/v1/contacts/${contactId}/tags`, base: '', type: 'contact_tags', list: true },
      { url: '/v1/me', base: '', type: 'users', list: false },
    ];

    it('every route answers 200 without the inherited names (the baseline of the cases below)', async () => {
      for (const route of readRoutes()) {
        const res = await t.get(`${route.url}?${route.base}`, token);
        assert.equal(res.statusCode, 200, `${route.url}: ${res.body}`);
      }
    });

    it('include, fields, sort, filter and page: a 400 naming the parameter', async () => {
      for (const route of readRoutes()) {
        for (const name of INHERITED) {
          const cases: Array<[string, string]> = [
            [`include=${name}`, 'include'],
            [`include=site.${name}`, 'include'],
            [`fields[${name}]=id`, `fields[${name}]`],
            [`fields[${route.type}]=${name}`, `fields[${route.type}]`],
            [`filter[${name}]=1`, `filter[${name}]`],
            [`filter[${name}_eq]=1`, `filter[${name}_eq]`],
            [`filter[${name}_search]=x`, `filter[${name}_search]`],
            [`page[${name}]=1`, `page[${name}]`],
            [name, name],
          ];
          if (route.list) cases.push([`sort=${name}`, 'sort'], [`sort=-${name}`, 'sort']);
          for (const [query, parameter] of cases) {
            const url = `${route.url}?${[route.base, query].filter(Boolean).join('&')}`;
            // include=site.<name> on a type without a site relationship names the first segment.
            badParameter(await t.get(url, token), parameter, url);
          }
        }
      }
    });

    it('a relationship endpoint: a 400 naming the parameter', async () => {
      for (const name of INHERITED) {
        for (const [query, parameter] of [[`include=${name}`, 'include'], [`fields[${name}]=x`, `fields[${name}]`], [`filter[${name}]=1`, `filter[${name}]`]]) {
          badParameter(await t.get(`/v1/contacts/${contactId}/relationships/tags?${query}`, token), parameter!, query!);
        }
      }
    });

    it('bodies: an inherited name as type, attribute or relationship is refused at its pointer, and nothing is stored', async () => {
      const tables = ['contacts', 'contact_taggings', 'contact_notes'];
      const before = await rowCounts(t, tables);
      const siteLink = { site: { data: { type: 'sites', id: site } } };
      for (const name of INHERITED) {
        // Computed keys make own members, so `__proto__` is sent as a member like any other.
        const asType = await send(t, 'POST', '/v1/contacts', token, { data: { type: name, attributes: { email: 'x@example.com' }, relationships: siteLink } });
        assertError(asType, 409, 'type_mismatch', '/data/type');
        const asAttribute = await send(t, 'POST', '/v1/contacts', token, {
          data: { type: 'contacts', attributes: { email: 'y@example.com', [name]: 'x' }, relationships: siteLink },
        });
        assertError(asAttribute, 422, 'unknown_attribute', `/data/attributes/${name}`);
        const asRelationship = await send(t, 'POST', '/v1/contacts', token, {
          data: { type: 'contacts', attributes: { email: 'z@example.com' }, relationships: { ...siteLink, [name]: { data: { type: 'sites', id: site } } } },
        });
        assertError(asRelationship, 422, 'unknown_relationship', `/data/relationships/${name}`);
        const update = await send(t, 'PATCH', `/v1/contacts/${contactId}`, token, { data: { type: 'contacts', id: String(contactId), attributes: { [name]: 1 } } });
        assertError(update, 422, 'unknown_attribute', `/data/attributes/${name}`);
        const member = await send(t, 'POST', '/v1/contacts', token, { [name]: 1, data: { type: 'contacts', attributes: { email: 'w@example.com' }, relationships: siteLink } });
        assertError(member, 400, 'invalid_document', `/${name}`);
        const linkage = await send(t, 'POST', `/v1/contacts/${contactId}/relationships/tags`, token, { data: [{ type: name, id: '1' }] });
        assertError(linkage, 409, 'type_mismatch', '/data/0/type');
        const note = await send(t, 'POST', '/v1/contact_notes', token, {
          data: { type: 'contact_notes', attributes: { body: 'b' }, relationships: { [name]: { data: { type: 'contacts', id: String(contactId) } } } },
        });
        assert.ok(note.statusCode >= 400 && note.statusCode < 500, `contact_notes ${name}: ${note.body}`);
      }
      assert.deepEqual(await rowCounts(t, tables), before, 'nothing was stored');
    });

    it('writes take no query parameter: a 400 naming it, before anything is written', async () => {
      const before = await rowCounts(t, ['contacts', 'contact_taggings']);
      const writes: Array<['POST' | 'PATCH' | 'DELETE', string]> = [
        ['POST', '/v1/contacts'],
        ['PATCH', `/v1/contacts/${contactId}`],
        ['DELETE', `/v1/contacts/${contactId}`],
        ['DELETE', `/v1/contacts/${contactId}/relationships/tags`],
      ];
      for (const name of INHERITED) {
        for (const [method, url] of writes) {
          for (const [query, parameter] of [[`include=${name}`, 'include'], [`fields[contacts]=${name}`, 'fields[contacts]'], [name, name]] as const) {
            badParameter(await send(t, method, `${url}?${query}`, token, { data: [] }), parameter, `${method} ${url}?${query}`);
          }
        }
      }
      assert.deepEqual(await rowCounts(t, ['contacts', 'contact_taggings']), before, 'nothing was written');
    });

    it('OAuth: an inherited name as grant_type or parameter is an RFC 6749 400', async () => {
      for (const name of INHERITED) {
        const grant = await t.request({
          method: 'POST',
          url: '/v1/oauth/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: `grant_type=${name}`,
        });
        assert.equal(grant.statusCode, 400, grant.body);
        assert.equal(grant.json().error, 'unsupported_grant_type');
        const json = await t.request({
          method: 'POST',
          url: '/v1/oauth/token',
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify({ [name]: 'x', grant_type: 'client_credentials' }),
        });
        assert.equal(json.statusCode, 400, json.body);
        assert.equal(json.json().error, 'invalid_request');
      }
    });
  });
}
