// Every `include=` example of the upstream description works: the examples are read from the
// document itself (operation descriptions, parameter descriptions and examples, wherever a string
// holds `include=...`), and each is requested on its operation for every record of the demo data
// (src/demo). Each answer is a 200 that validates against upstream (known divergences aside,
// test/support/upstream-divergences.ts), every related record its linkage names is in `included`,
// and each include path brings at least one record somewhere in the demo.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { seedDemoData } from '../src/demo/seed.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from './support/harness.js';
import { withoutDivergences } from './support/upstream-divergences.js';
import { upstreamDocument, upstreamMismatches, UPSTREAM_SKIP_REASON } from './support/upstream.js';

interface IncludeExample {
  /** The upstream operation's path, e.g. `/v1/forms/{id}`. */
  path: string;
  /** `include=...` alone, or the whole query of an example URL (with its `fields[...]`). */
  query: string;
  include: string;
  /** Where in the document it was found, for messages. */
  where: string;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);

/** Every `include=<paths>` in any string of the upstream document, with the operation it belongs to. */
function includeExamples(): IncludeExample[] {
  const found: IncludeExample[] = [];
  const walk = (node: unknown, trail: string[]): void => {
    if (typeof node === 'string') {
      const enclosing = trail[0] === 'paths' && METHODS.has(trail[2] ?? '') ? trail[1] : undefined;
      const add = (path: string | undefined, query: string) => {
        const include = new URLSearchParams(query).get('include') ?? '';
        assert.ok(path, `${query} at ${trail.join('/')} belongs to no operation`);
        found.push({ path, query, include, where: trail.join('/') });
      };
      // Whole example URLs (`GET /v1/forms/123?include=fields&fields[forms]=title`), as written.
      for (const [, urlPath, urlId, query] of node.matchAll(/(\/v1\/[a-z_]+)(\/[0-9]+)?\?([^\s`'"]*include=[^\s`'"]*)/g)) {
        const fromUrl = `${urlPath}${urlId ? '/{id}' : ''}`;
        if (enclosing) assert.equal(fromUrl, enclosing.replace(/\{[a-z_]+\}/g, '{id}'), `${trail.join('/')}: an example of another operation`);
        add(enclosing ?? fromUrl, query!);
      }
      // Every include value, also in prose (`for example ?include=site,form`), on its own.
      for (const [, include] of node.matchAll(/\?include=([A-Za-z0-9_.,]+)/g)) add(enclosing, `include=${include}`);
    } else if (Array.isArray(node)) {
      node.forEach((item, i) => walk(item, [...trail, String(i)]));
    } else if (node !== null && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) walk(value, [...trail, key]);
    }
  };
  walk(upstreamDocument(), []);
  return found;
}

type ResourceObject = { id: string; type: string; relationships?: Record<string, { data?: unknown }> };

for (const dialect of DIALECTS) {
  describe(`upstream include examples [${dialect}]`, { skip: UPSTREAM_SKIP_REASON }, () => {
    let t: TestApp;
    let token: string;
    let siteId: number;

    before(async () => {
      t = await createTestApp(dialect);
      siteId = t.tenant.siteId;
      await seedDemoData(t.handle, { accountId: t.tenant.accountId, siteId }, t.clock);
      token = await t.token();
    });
    after(() => t.close());

    /** Ids of every record of a type on the demo site. */
    async function idsOf(type: string): Promise<string[]> {
      const ids: string[] = [];
      let url: string | null = `/v1/${type}?filter[site_id]=${siteId}&page[size]=100`;
      while (url) {
        const res = await t.get(url, token);
        assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
        const body = res.json();
        ids.push(...body.data.map((r: { id: string }) => r.id));
        url = body.links.next ? String(body.links.next).slice(PUBLIC_URL.length) : null;
      }
      return ids;
    }

    it('reads the examples from the upstream document', () => {
      const examples = includeExamples();
      assert.ok(examples.length >= 20, `found ${examples.length}`);
      assert.ok(examples.some((e) => e.path === '/v1/forms/{id}' && e.query === 'include=fields,site,offer,contact_tags'));
      assert.ok(examples.some((e) => e.path === '/v1/forms/{id}' && e.query === 'include=fields&fields[forms]=title,webhook_url&&fields[fields]=title'));
    });

    it('answers every example on every demo record with its related records included', async () => {
      const examples = includeExamples();
      const unique = [...new Map(examples.map((e) => [`${e.path} ${e.query}`, e])).values()];
      const problems: string[] = [];
      let answers = 0;
      for (const example of unique) {
        const show = /^\/v1\/([a-z_]+)\/\{[a-z_]+\}$/.exec(example.path);
        const list = /^\/v1\/([a-z_]+)$/.exec(example.path);
        const type = (show ?? list)?.[1];
        assert.ok(type, `${example.path}: only list and show operations take include (${example.where})`);
        const urls = show
          ? (await idsOf(type)).map((id) => `/v1/${type}/${id}?filter[site_id]=${siteId}&${example.query}`)
          : [`/v1/${type}?filter[site_id]=${siteId}&page[size]=100&${example.query}`];
        assert.ok(urls.length > 0, `the demo has no ${type}`);
        const broughtAny = new Set<string>();
        for (const url of urls) {
          const res = await t.get(url, token);
          answers++;
          if (res.statusCode !== 200) {
            problems.push(`${url}: ${res.statusCode} ${res.body}`);
            continue;
          }
          const body = res.json();
          for (const p of upstreamMismatches('GET', example.path, 200, withoutDivergences(body), { contentType: 'application/vnd.api+json' })) {
            problems.push(`${url} [upstream] ${p}`);
          }
          const included = new Map<string, ResourceObject>(
            (body.included as ResourceObject[]).map((r) => [`${r.type}:${r.id}`, r]),
          );
          const primary: ResourceObject[] = Array.isArray(body.data) ? body.data : [body.data];
          for (const path of example.include.split(',')) {
            // Follow the path through linkage: every record each step names must be included.
            let level = primary;
            let walked = '';
            for (const name of path.split('.')) {
              walked = walked ? `${walked}.${name}` : name;
              const next: ResourceObject[] = [];
              for (const record of level) {
                const relationship = record.relationships?.[name];
                if (!relationship || !('data' in relationship)) {
                  problems.push(`${url}: ${record.type} ${record.id} has no linkage for ${name} (include=${path})`);
                  continue;
                }
                const linked = relationship.data === null ? [] : Array.isArray(relationship.data) ? relationship.data : [relationship.data];
                for (const { type: t2, id } of linked as Array<{ type: string; id: string }>) {
                  const found = included.get(`${t2}:${id}`);
                  if (found) next.push(found);
                  else problems.push(`${url}: ${t2} ${id} (${path}) is linked but not included`);
                }
              }
              if (next.length > 0) broughtAny.add(walked);
              level = next;
            }
          }
        }
        for (const path of example.include.split(',')) {
          if (!broughtAny.has(path)) problems.push(`${example.path}?${example.query}: the demo has no ${path} to include on any ${type}`);
        }
      }
      console.log(`include examples [${dialect}]: ${examples.length} found, ${unique.length} distinct, ${answers} answers`);
      assert.deepEqual(problems, [], problems.slice(0, 40).join('\n'));
    });
  });
}
