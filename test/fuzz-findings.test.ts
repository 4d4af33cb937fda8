// What the fuzzer (test/fuzz.test.ts) found beyond the list, each kept as a regression:
// - a whole number out of the 32-bit range in an integer filter (filter[product_type_id_eq]=
//   3000000000) was a 500 on PostgreSQL, which refuses such a parameter for an integer column;
//   now a 400 naming the parameter on both databases, and a 422 in a body;
// - the demo podcast Shutter Talk had the status "processing", outside the enum the document
//   declares for podcasts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { seedDemoData } from '../src/demo/seed.js';
import { ApiError } from '../src/jsonapi/errors.js';
import { attr, defineResource } from '../src/jsonapi/resource.js';
import { readResourceDocument } from '../src/jsonapi/write-document.js';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';
import { resourcePath } from '../src/jsonapi/document.js';

describe('integer attributes in bodies', () => {
  const counters = defineResource({
    type: 'counters',
    table: 'counters',
    description: 'fixture',
    readPermission: null,
    tenancy: { kind: 'site', column: 'site_id' },
    attributes: { count: attr.integer() },
  });
  it('a 422 for a whole number outside the 32-bit range an integer column holds', () => {
    for (const count of [2_147_483_648, -2_147_483_649, 9_007_199_254_740_991]) {
      assert.throws(
        () => readResourceDocument(counters, { data: { type: 'counters', attributes: { count } } }, { writable: ['count'] }, { create: true }),
        (e: unknown) => e instanceof ApiError && e.status === 422 && /from -2147483648 to 2147483647/.test(e.errors[0]!.detail),
      );
    }
    const ok = readResourceDocument(counters, { data: { type: 'counters', attributes: { count: 2_147_483_647 } } }, { writable: ['count'] }, { create: true });
    assert.equal(ok.attributes.count, 2_147_483_647);
  });
});

for (const dialect of DIALECTS) {
  describe(`fuzzer findings [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    before(async () => {
      t = await createTestApp(dialect);
      await seedDemoData(t.handle, { accountId: t.tenant.accountId, siteId: t.tenant.siteId }, t.clock);
      token = await t.token();
    });
    after(() => t.close());

    it('every integer filter of every list: a 400 naming it for a number out of range, never a 500', async () => {
      let checked = 0;
      for (const resource of t.app.engine.registry.all().filter((r) => r.routes.list)) {
        const site = resource.tenancy.kind === 'site' ? `filter[site_id]=${t.tenant.siteId}&` : '';
        for (const [name, attribute] of Object.entries(resource.attributes)) {
          if (attribute.type !== 'integer') continue;
          for (const suffix of attribute.predicates) {
            const parameter = `filter[${name}_${suffix}]`;
            for (const value of ['3000000000', '-3000000000', '99999999999999999999', '1,3000000000']) {
              if (value.includes(',') !== (suffix === 'in' || suffix === 'not_in')) continue;
              const res = await t.get(`/v1/${resourcePath(resource)}?${site}${parameter}=${value}`, token);
              assert.equal(res.statusCode, 400, `${resource.type} ${parameter}=${value}: ${res.body}`);
              assert.deepEqual(res.json().errors[0].source, { parameter });
            }
            if (suffix !== 'null') {
              const edge = await t.get(`/v1/${resourcePath(resource)}?${site}${parameter}=2147483647`, token);
              assert.equal(edge.statusCode, 200, `${resource.type} ${parameter}=2147483647: ${edge.body}`);
            }
            checked++;
          }
        }
      }
      assert.ok(checked >= 10, `${checked} integer filters`);
    });

    it('every enum attribute of the demo data holds a declared value', async () => {
      for (const resource of t.app.engine.registry.all().filter((r) => r.routes.list)) {
        const enums = Object.entries(resource.attributes).filter(([, a]) => a.enumValues !== undefined);
        if (enums.length === 0) continue;
        const site = resource.tenancy.kind === 'site' ? `filter[site_id]=${t.tenant.siteId}&` : '';
        const res = await t.get(`/v1/${resourcePath(resource)}?${site}page[size]=100`, token);
        assert.equal(res.statusCode, 200, res.body);
        for (const record of res.json().data as Array<{ id: string; attributes: Record<string, unknown> }>) {
          for (const [name, a] of enums) {
            const value = record.attributes[name];
            if (value === null && a.nullable) continue;
            assert.ok(a.enumValues!.includes(value as string), `${resource.type} ${record.id}: ${name} ${JSON.stringify(value)} is not one of ${a.enumValues!.join(', ')}`);
          }
        }
      }
    });
  });
}
