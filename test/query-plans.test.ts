// Every list, in every order it declares on a plain column, reads a page as an index range of its
// site: no sort of the whole site, no scan. The test explains the page query the API actually ran
// and fails when an index that a shape depends on is dropped or stops matching the query.
// - SQLite: EXPLAIN QUERY PLAN must search an index and use no temporary b-tree for the order.
//   Nullable sort keys are left out there (nulls last ascending does not match SQLite's index
//   order; see docs/scaling.md).
// - PostgreSQL: with sequential scans and sorts priced out (the test tables are tiny, so the
//   planner would rightly prefer them), the plan must still need neither: an index must serve the
//   filter and the order (an incremental sort over a unique index's one-row groups is allowed).
// Sorts computed in SQL (declared sorts, sql attributes) are left out on both.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { RESOURCES } from '../src/resources/index.js';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';

for (const dialect of DIALECTS) {
  describe(`query plans of list pages [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
    });
    after(() => t.close());

    /** The plan of `query` (parameters: the site id fits the tenancy, limit and offset alike), as text. */
    const explain = async (query: string): Promise<string> => {
      const parameters = (query.match(/\?|\$\d+/g) ?? []).map(() => t.tenant.siteId);
      if (dialect === 'sqlite') {
        const plan = await t.handle.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query}`, parameters));
        return plan.rows.map((r) => r.detail).join('\n');
      }
      return t.handle.db.transaction().execute(async (trx) => {
        await sql`set local enable_seqscan = off`.execute(trx);
        await sql`set local enable_sort = off`.execute(trx);
        const plan = await trx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${query}`, parameters));
        return plan.rows.map((r) => r['QUERY PLAN']).join('\n');
      });
    };

    const listed = RESOURCES.filter((r) => r.routes.list && r.tenancy.kind === 'site');
    for (const resource of listed) {
      const sorts = Object.entries(resource.attributes)
        .filter(([name, a]) => a.sortable && !a.sql && !resource.sorts[name] && (dialect === 'postgres' || !a.nullable))
        .map(([name]) => name);
      for (const sort of sorts.flatMap((s) => [s, `-${s}`])) {
        it(`GET /v1/${resource.type}?sort=${sort} reads an index range`, async () => {
          const path = `/v1/${resource.type}?filter[site_id]=${t.tenant.siteId}&sort=${sort}&page[size]=10`;
          const { result, statements } = await t.queries.during(() => t.get(path, token));
          assert.equal(result.statusCode, 200, result.body);
          const page = statements.find((s) => s.startsWith(`select "${resource.table}"."id"`) && s.includes(' order by '));
          assert.ok(page, `no page query among:\n${statements.join('\n')}`);
          const plan = await explain(page);
          if (dialect === 'sqlite') {
            assert.doesNotMatch(plan, /TEMP B-TREE FOR ORDER BY/, `${page}\n${plan}`);
            assert.match(plan, new RegExp(`SEARCH ${resource.table} USING (COVERING )?INDEX`), `${page}\n${plan}`);
          } else {
            // A full Sort node or a sequential scan means no index serves the page. (An incremental
            // sort over a unique index's groups of one row, such as (site_id, email), is fine.)
            assert.doesNotMatch(plan, /Seq Scan|^\s*(->\s+)?Sort\s+\(/m, `${page}\n${plan}`);
            assert.match(plan, /Index (Only )?Scan/, `${page}\n${plan}`);
          }
        });
      }
    }
  });
}
