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

    // A page deep in a list skips records. Select-list subqueries (sql attributes such as contacts'
    // external_user_id) must run for the records the page returns only, never for the skipped
    // ones: at 1,000,000 contacts that was 41,500 runs for 25 records. PostgreSQL's plan says
    // where each subquery runs (EXPLAIN VERBOSE names it in the Output of the node that evaluates
    // it), so the page statement the API ran must not evaluate one below its Limit node, where
    // the skipped rows pass. SQLite's plan does not say where; its answers are tested with the
    // rest of the lists (test/engine/list.test.ts).
    if (dialect === 'postgres') {
      interface PlanNode {
        'Node Type': string;
        'Parent Relationship'?: string;
        Output?: string[];
        'Actual Loops'?: number;
        Plans?: PlanNode[];
      }
      /** The plan of a recorded page statement, run with `parameters` (ANALYZE: it is run). */
      const planOf = async (statement: string, parameters: unknown[], analyze: boolean): Promise<PlanNode> => {
        const rows = await t.handle.db.executeQuery<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
          CompiledQuery.raw(`explain (verbose, format json${analyze ? ', analyze' : ''}) ${statement}`, parameters),
        );
        return rows.rows[0]!['QUERY PLAN'][0]!.Plan;
      };
      /** Nodes that evaluate a select-list subquery below a Limit, with the subqueries' own plans. */
      const subqueriesBelowLimit = (node: PlanNode, belowLimit = false): PlanNode[] => {
        const found = belowLimit && node.Output?.some((o) => o.includes('SubPlan')) ? [node] : [];
        for (const child of node.Plans ?? []) {
          // A subquery's own plan (its own Limit included) is not the page's.
          if (child['Parent Relationship'] === 'SubPlan') continue;
          found.push(...subqueriesBelowLimit(child, belowLimit || node['Node Type'] === 'Limit'));
        }
        return found;
      };
      const subPlans = (node: PlanNode): PlanNode[] =>
        (node.Plans ?? []).flatMap((child) => (child['Parent Relationship'] === 'SubPlan' ? [child] : subPlans(child)));

      it('every connection runs with JIT off (src/db/postgres-sessions.ts)', async () => {
        // As many at once as the pool holds, so that every one of its connections answers.
        const settings = await Promise.all(
          Array.from({ length: 4 }, () =>
            t.handle.db.executeQuery<{ jit: string }>(
              CompiledQuery.raw("select current_setting('jit') as jit from pg_sleep(0.05)"),
            ),
          ),
        );
        for (const { rows } of settings) assert.deepEqual(rows[0], { jit: 'off' });
      });

      const withSubqueries = listed.filter((r) => Object.values(r.attributes).some((a) => a.sql));
      it('the lists with select-list subqueries are known (contacts, offers)', () => {
        assert.deepEqual(withSubqueries.map((r) => r.type).sort(), ['contacts', 'offers']);
      });
      for (const resource of withSubqueries) {
        it(`GET /v1/${resource.type}?page[number]=4 evaluates its select-list subqueries after skipping`, async () => {
          const path = `/v1/${resource.type}?filter[site_id]=${t.tenant.siteId}&page[size]=2&page[number]=4`;
          const { result, statements } = await t.queries.during(() => t.get(path, token));
          assert.equal(result.statusCode, 200, result.body);
          const page = statements.find((s) => / offset /.test(s));
          assert.ok(page, `no statement skips records among:\n${statements.join('\n')}`);
          const parameters = (page.match(/\$\d+/g) ?? []).map(() => t.tenant.siteId);
          const plan = await planOf(page, parameters, false);
          assert.deepEqual(subqueriesBelowLimit(plan), [], `${page}\n${JSON.stringify(plan, null, 1)}`);
        });
      }

      it('a deep page of contacts runs external_user_id once per record returned (EXPLAIN ANALYZE)', async () => {
        for (let i = 0; i < 12; i++) {
          const res = await t.request({
            method: 'POST',
            url: '/v1/contacts',
            token,
            headers: { 'content-type': 'application/vnd.api+json' },
            payload: { data: { type: 'contacts', attributes: { email: `deep-${i}@example.com` }, relationships: { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } } } },
          });
          assert.equal(res.statusCode, 201, res.body);
        }
        const path = `/v1/contacts?filter[site_id]=${t.tenant.siteId}&page[size]=2&page[number]=5`;
        const { result, statements } = await t.queries.during(() => t.get(path, token));
        assert.equal(result.statusCode, 200, result.body);
        assert.equal((result.json() as { data: unknown[] }).data.length, 2);
        const page = statements.find((s) => / offset /.test(s));
        assert.ok(page, statements.join('\n'));
        // The request skipped 7 records and read 3 (the one before the page, for its boundary).
        const parameters = (page.match(/\$\d+/g) ?? []).map((_, i, all) => (i === all.length - 2 ? 3 : i === all.length - 1 ? 7 : t.tenant.siteId));
        const plan = await planOf(page, parameters, true);
        const loops = subPlans(plan).map((p) => p['Actual Loops'] ?? 0);
        assert.ok(loops.length > 0, JSON.stringify(plan, null, 1));
        assert.ok(loops.every((n) => n <= 3), `select-list subqueries ran ${loops.join(', ')} times for 3 rows:\n${page}\n${JSON.stringify(plan, null, 1)}`);
      });
    }
  });
}
