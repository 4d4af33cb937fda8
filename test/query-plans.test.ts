// Every list, in every order it declares on a plain column, reads a page as an index range of its
// site: no sort of the whole site, no scan. The test reads SQLite's plan for the page query the
// API actually ran (EXPLAIN QUERY PLAN); it fails when an index that a common shape depends on is
// dropped or stops matching the query. Nullable sort keys are left out on SQLite (nulls last
// ascending does not match SQLite's index order; see docs/scaling.md), as are sorts computed in SQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CompiledQuery } from 'kysely';
import { RESOURCES } from '../src/resources/index.js';
import { createTestApp, type TestApp } from './support/harness.js';

describe('query plans of list pages [sqlite]', () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await createTestApp('sqlite');
    token = await t.token();
  });
  after(() => t.close());

  const listed = RESOURCES.filter((r) => r.routes.list && r.tenancy.kind === 'site');
  for (const resource of listed) {
    const sorts = Object.entries(resource.attributes)
      .filter(([name, a]) => a.sortable && !a.sql && !a.nullable && !resource.sorts[name])
      .map(([name]) => name);
    for (const sort of sorts.flatMap((s) => [s, `-${s}`])) {
      it(`GET /v1/${resource.type}?sort=${sort} reads an index range`, async () => {
        const { result, statements } = await t.queries.during(() => t.get(`/v1/${resource.type}?filter[site_id]=${t.tenant.siteId}&sort=${sort}&page[size]=10`, token));
        assert.equal(result.statusCode, 200, result.body);
        const page = statements.find((s) => s.startsWith(`select "${resource.table}"."id"`) && s.includes(' order by '));
        assert.ok(page, `no page query among:\n${statements.join('\n')}`);
        // The page query binds the site id, then the limit and offset: the site id fits them all.
        const parameters = (page.match(/\?/g) ?? []).map(() => t.tenant.siteId);
        const plan = await t.handle.db.executeQuery(CompiledQuery.raw(`explain query plan ${page}`, parameters));
        const text = (plan.rows as Array<{ detail: string }>).map((r) => r.detail).join('\n');
        assert.doesNotMatch(text, /TEMP B-TREE FOR ORDER BY/, `${page}\n${text}`);
        assert.match(text, new RegExp(`SEARCH ${resource.table} USING (COVERING )?INDEX`), `${page}\n${text}`);
      });
    }
  }
});
