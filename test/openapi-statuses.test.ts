// The served OpenAPI document lists every status an operation can answer: the lists that take
// filter[site_id] answer 404 for a site the key cannot reach (20 of them did not document it),
// and every operation documents what the HTTP edge may answer (406, 413, 414, 415, 429, 503).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';
import { otherAccount } from './support/writes.js';
import { resourcePath } from '../src/jsonapi/document.js';
import { withSharedPartsInline } from './support/openapi-document.js';

type Responses = Record<string, { content?: Record<string, { schema: unknown }> }>;
type Doc = {
  paths: Record<string, Record<string, { responses: Responses; requestBody?: unknown; security?: unknown[] }>>;
  components?: Record<string, unknown>;
};

for (const dialect of DIALECTS) {
  describe(`documented statuses [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let doc: Doc;
    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      doc = withSharedPartsInline((await t.get('/v1/openapi.json')).json());
    });
    after(() => t.close());

    it('every list of site records documents the 404 it answers for a site the key cannot reach, with the error schema', async () => {
      const other = await otherAccount(t);
      const ajv = new Ajv2020({ strict: false, validateSchema: false });
      const lists = t.app.engine.registry.all().filter((r) => r.routes.list && r.tenancy.kind === 'site');
      assert.ok(lists.length >= 20, `${lists.length} lists of site records`);
      for (const resource of lists) {
        const path = `/v1/${resourcePath(resource)}`;
        for (const site of [String(other.siteId), '999999999']) {
          const res = await t.get(`${path}?filter[site_id]=${site}`, token);
          assert.equal(res.statusCode, 404, `${path}: ${res.body}`);
          const documented = doc.paths[path]?.get?.responses['404']?.content?.['application/vnd.api+json']?.schema;
          assert.ok(documented, `GET ${path} does not document 404`);
          // The schema refers to the document's named schemas: compile it with them beside it.
          const validate = ajv.compile({ ...(documented as object), components: doc.components });
          assert.ok(validate(res.json()), `GET ${path} 404: ${ajv.errorsText(validate.errors)}`);
        }
      }
    });

    it('every operation documents the answers of the HTTP edge', () => {
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(item)) {
          const statuses = Object.keys(op.responses);
          const where = `${method.toUpperCase()} ${path}: ${statuses.join(', ')}`;
          for (const status of ['429', '503']) assert.ok(statuses.includes(status), where);
          if (path !== '/v1/oauth/token' && path !== '/v1/oauth/revoke') assert.ok(statuses.includes('406'), where);
          if (method !== 'get') for (const status of ['400', '413', '415']) assert.ok(statuses.includes(status), where);
          if (path.includes('{')) assert.ok(statuses.includes('414'), where);
          if (op.security?.length) assert.ok(statuses.includes('401'), where);
          assert.ok(!statuses.includes('500'), `${where}: a 500 is never an answer to document`);
        }
      }
    });
  });
}
