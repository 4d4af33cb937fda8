// The whole demo data set (src/demo) read back through every list and show operation upstream
// describes, each answer validated against the upstream response schema and against sitebiz's own
// served OpenAPI document. Every page of every list, every record's show and every relationship
// list of every record: a value the demo writes that either description does not allow (an enum
// value, a type) fails here. The known divergences (test/support/upstream-divergences.ts,
// docs/upstream-divergences.md) are the only relaxations.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Kysely } from 'kysely';
import { seedDemoData } from '../src/demo/seed.js';
import { MADE_BY_API_WRITES } from './support/demo-scope.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from './support/harness.js';
import { withoutDivergences } from './support/upstream-divergences.js';
import { upstreamMismatches, upstreamOperations, upstreamResponseSchema, UPSTREAM_SKIP_REASON } from './support/upstream.js';
import { withSharedPartsInline } from './support/openapi-document.js';

const JSONAPI = 'application/vnd.api+json';
const LIST = /^\/v1\/([a-z_]+)$/;
const SHOW = /^\/v1\/([a-z_]+)\/\{[a-z_]+\}$/;
const RELATIONSHIP = /^\/v1\/([a-z_]+)\/\{[a-z_]+\}\/relationships\/([a-z_]+)$/;

/** Upstream GET operations that are neither a list nor a show over the data: their own tests cover them. */
const NOT_OVER_DATA = /^\/v1\/hooks\/[a-z_]+_sample$/;

// ajv-formats is CommonJS: depending on the loader the default import is the plugin or the module.
type FormatsPlugin = (instance: Ajv2020) => Ajv2020;
const formatsExport = addFormatsModule as unknown as FormatsPlugin & { default?: FormatsPlugin };
const addFormats: FormatsPlugin = formatsExport.default ?? formatsExport;

const pointerSegment = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

for (const dialect of DIALECTS) {
  describe(`the demo data conforms to the upstream and sitebiz descriptions [${dialect}]`, { skip: UPSTREAM_SKIP_REASON }, () => {
    let t: TestApp;
    let token: string;
    let siteId: number;
    let ajv: Ajv2020;
    let served: { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>> };

    before(async () => {
      t = await createTestApp(dialect);
      siteId = t.tenant.siteId;
      await seedDemoData(t.handle, { accountId: t.tenant.accountId, siteId }, t.clock);
      token = await t.token();
      served = withSharedPartsInline((await t.get('/v1/openapi.json')).json());
      ajv = new Ajv2020({ allErrors: true, strict: false, validateSchema: false });
      addFormats(ajv);
      ajv.addSchema(served as object, 'sitebiz-openapi.json');
    });
    after(() => t.close());

    /** What sitebiz's own document says the 200 of this operation is. */
    function ownSchema(path: string): ValidateFunction {
      const sitebizPath = path.replace(/\{[a-z_]+\}/g, '{id}');
      const pointer = ['paths', sitebizPath, 'get', 'responses', '200', 'content', JSONAPI, 'schema'].map(pointerSegment).join('/');
      const validate = ajv.getSchema(`sitebiz-openapi.json#/${pointer}`);
      assert.ok(validate, `sitebiz documents no 200 schema for GET ${sitebizPath}`);
      return validate;
    }

    /** GETs a URL, expects 200, and returns every problem against both descriptions. */
    async function problemsOf(path: string, url: string): Promise<{ body: any; problems: string[] }> {
      const res = await t.get(url, token);
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      const body = res.json();
      const problems: string[] = [];
      if (upstreamResponseSchema('GET', path, 200, { contentType: JSONAPI }) !== null) {
        for (const p of upstreamMismatches('GET', path, 200, withoutDivergences(body), { contentType: JSONAPI })) problems.push(`upstream:${p}`);
      }
      const own = ownSchema(path);
      if (!own(body)) for (const e of own.errors ?? []) problems.push(`sitebiz:  ${e.instancePath} ${e.message ?? e.keyword}`);
      return { body, problems: problems.map((p) => `${url}${p.replace(/^(upstream|sitebiz):/, ' [$1]')}`) };
    }

    const resourceOf = (type: string) => t.app.engine.registry.find(type);
    const siteFilter = (type: string) => (resourceOf(type)?.tenancy.kind === 'site' ? `filter[site_id]=${siteId}` : '');
    const withQuery = (path: string, ...parts: string[]) => {
      const query = parts.filter((p) => p !== '').join('&');
      return query ? `${path}?${query}` : path;
    };

    it('validates every page, record and relationship list of the demo site', async () => {
      const operations = upstreamOperations().filter((o) => o.method === 'GET' && o.statuses.includes('200') && !NOT_OVER_DATA.test(o.path));
      const problems: string[] = [];
      const idsOf = new Map<string, string[]>();
      let answers = 0;
      let records = 0;
      const lists = operations.filter((o) => LIST.test(o.path));
      // Lists first: they tell the shows and relationship lists which records exist.
      for (const op of lists) {
        const type = LIST.exec(op.path)![1]!;
        if (!resourceOf(type)?.routes.list) {
          // /v1/me and /v1/version: one document each.
          const answer = await problemsOf(op.path, op.path);
          answers++;
          problems.push(...answer.problems);
          continue;
        }
        const ids: string[] = [];
        let url: string | null = withQuery(op.path, siteFilter(type), 'page[size]=100');
        while (url) {
          const answer = await problemsOf(op.path, url);
          answers++;
          problems.push(...answer.problems);
          ids.push(...answer.body.data.map((r: { id: string }) => r.id));
          url = answer.body.links?.next ? String(answer.body.links.next).slice(PUBLIC_URL.length) : null;
        }
        assert.ok(ids.length > 0, `the demo has no ${type}`);
        records += ids.length;
        idsOf.set(type, ids);
      }
      for (const op of operations) {
        const show = SHOW.exec(op.path);
        const relationship = RELATIONSHIP.exec(op.path);
        const type = show?.[1] ?? relationship?.[1];
        if (type === undefined) continue;
        const ids = idsOf.get(type);
        assert.ok(ids, `GET ${op.path}: no list of ${type} gave its records`);
        for (const id of ids) {
          const base = relationship ? `/v1/${type}/${id}/relationships/${relationship[2]}` : `/v1/${type}/${id}`;
          const answer = await problemsOf(op.path, withQuery(base, relationship ? '' : siteFilter(type)));
          answers++;
          problems.push(...answer.problems);
        }
      }
      console.log(`demo conformance [${dialect}]: ${answers} answers over ${records} listed records validated`);
      assert.ok(answers > records, `validated ${answers} answers over ${records} records`);
      assert.deepEqual(problems, [], `${problems.length} problems in ${answers} answers:\n${problems.slice(0, 60).join('\n')}`);
    });

    it('holds only values its declarations allow in every enum attribute, and declares only values upstream allows', async () => {
      // The answers above show what 60 contacts produce; the generators (shared with `sitebiz
      // seed`) are run here for more people, and every stored value of an enum column is checked.
      const big = await createTestApp(dialect);
      try {
        await seedDemoData(big.handle, { accountId: big.tenant.accountId, siteId: big.tenant.siteId }, big.clock, { contacts: 600 });
        const stores = [
          { db: t.handle.db as unknown as Kysely<any>, siteId },
          { db: big.handle.db as unknown as Kysely<any>, siteId: big.tenant.siteId },
        ];
        assert.deepEqual(await enumProblems(stores), []);
      } finally {
        await big.close();
      }
    });

    /** Stored enum values outside the declaration or upstream, and declared values upstream does not allow. */
    async function enumProblems(stores: Array<{ db: Kysely<any>; siteId: number }>): Promise<string[]> {
      const problems: string[] = [];
      let checked = 0;
      for (const resource of t.app.engine.registry.all()) {
        // Webhook events and deliveries come only from API writes (test/demo.test.ts); their enums
        // are checked where those writes make them (test/webhooks/).
        if (MADE_BY_API_WRITES.has(resource.type)) continue;
        const upstreamAttributes = upstreamAttributeSchemas(resource.type);
        for (const [name, attribute] of Object.entries(resource.attributes)) {
          if (!attribute.enumValues || attribute.sql || attribute.compute) continue;
          const allowed = new Set(attribute.enumValues);
          const upstreamAllowed = enumOf(upstreamAttributes?.[name]);
          for (const value of attribute.enumValues) {
            if (upstreamAllowed && !upstreamAllowed.has(value)) problems.push(`${resource.type}.${name}: declares ${value}, upstream allows ${[...upstreamAllowed].join(', ')}`);
          }
          const values: unknown[] = [];
          for (const store of stores) {
            let query = store.db.selectFrom(resource.table).select(`${resource.table}.${attribute.column} as v`).distinct();
            if (resource.tenancy.kind === 'site') query = query.where(`${resource.table}.${resource.tenancy.column}`, '=', store.siteId);
            values.push(...(await query.execute()).map((r) => r.v).filter((v) => v !== null));
          }
          assert.ok(values.length > 0, `the demo stores no ${resource.type}.${name}`);
          for (const v of values) {
            checked++;
            if (!allowed.has(String(v))) problems.push(`${resource.type}.${name}: the demo stores ${JSON.stringify(v)}; declared: ${[...allowed].join(', ')}`);
            if (upstreamAllowed && !upstreamAllowed.has(String(v))) problems.push(`${resource.type}.${name}: the demo stores ${JSON.stringify(v)}; upstream allows ${[...upstreamAllowed].join(', ')}`);
          }
        }
      }
      assert.ok(checked > 10, `checked ${checked} stored values`);
      return problems;
    }
  });
}

/** The upstream schemas of a type's attributes, from its show operation; undefined without one. */
function upstreamAttributeSchemas(type: string): Record<string, unknown> | undefined {
  const path = upstreamOperations().find((o) => o.method === 'GET' && o.path.startsWith(`/v1/${type}/{`) && SHOW.test(o.path))?.path;
  if (!path) return undefined;
  const schema = upstreamResponseSchema('GET', path, 200, { contentType: JSONAPI }) as any;
  return schema?.properties?.data?.properties?.attributes?.properties;
}

/** The values an (converted) upstream schema allows, when it lists them. */
function enumOf(schema: any): Set<string> | undefined {
  if (!schema || typeof schema !== 'object') return undefined;
  if (Array.isArray(schema.enum)) return new Set(schema.enum.filter((v: unknown) => v !== null).map(String));
  for (const key of ['anyOf', 'oneOf']) {
    if (Array.isArray(schema[key])) {
      const sets = schema[key].map(enumOf).filter((e: Set<string> | undefined) => e !== undefined);
      if (sets.length > 0) return new Set(sets.flatMap((e: Set<string>) => [...e]));
    }
  }
  return undefined;
}
