// UPSTREAM_STRICT (docs/upstream-strict.md): the declarations' upstream flags held against the
// upstream description, over HTTP on a strict app: (a) every upstream operation, with each of its
// upstream parameters and body members, is served and not refused; (b) every sitebiz extension
// of the served OpenAPI document is refused with its status and source; (c) the flags themselves
// agree with the upstream document. Then what strict answers leave out.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Registry } from '../src/jsonapi/registry.js';
import { listUpstream, showUpstream, type QueryVocabulary } from '../src/jsonapi/upstream-surface.js';
import { servedResources } from '../src/engine.js';
import { builders } from './support/builders.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from './support/harness.js';
import { describeUpstream, upstreamDocument, upstreamOperations } from './support/upstream.js';

type Json = any;

const doc = (): Json => upstreamDocument();
/** A node with its $refs followed, in the upstream document or another (the served one). */
const deref = (node: Json, root: Json = doc()): Json => {
  let at = node;
  while (at && typeof at.$ref === 'string') at = at.$ref.slice(2).split('/').reduce((n: Json, p: string) => n[p], root);
  return at;
};

/** The query parameters of an upstream operation, by name, with their descriptions. */
function upstreamParameters(method: string, path: string): Map<string, string> {
  const item = doc().paths[path];
  const op = item?.[method.toLowerCase()];
  const out = new Map<string, string>();
  for (const p of [...(item?.parameters ?? []), ...(op?.parameters ?? [])].map(deref)) {
    if (p.in === 'query') out.set(p.name.replace(/\[\]$/, ''), `${out.get(p.name) ?? ''} ${p.description ?? ''}`);
  }
  return out;
}

/** Sort values the upstream names in a sort parameter's prose ("use: title, subdomain, ..."; "?sort=title"). */
function upstreamSortNames(description: string): string[] {
  const listed = /(?:use|Available):\s*([a-z_,\s]+?)(?:[,.]?\s+(?:for|For)\b|\.|$)/.exec(description)?.[1];
  const names = listed ? listed.split(',').map((s) => s.trim()) : [...description.matchAll(/sort=-?([a-z_]+)/g)].map((m) => m[1]!);
  return [...new Set(names.filter((n) => n !== ''))];
}

/** Include paths in an include parameter's prose ("?include=offers,tags,customer"). */
const upstreamIncludePaths = (description: string) => [...new Set([...description.matchAll(/include=([a-z_.,]+)/g)].flatMap((m) => m[1]!.split(',')))];

/** The record schema of an upstream GET's 200 answer (its data, or a list's item). */
function upstreamRecordSchema(path: string): Json | undefined {
  const content = doc().paths[path]?.get?.responses?.['200']?.content;
  const media = content && (Object.values(content)[0] as Json);
  const data = deref(deref(media?.schema)?.properties?.data);
  const record = deref(data?.type === 'array' ? data.items : data);
  return record?.properties?.attributes ? record : undefined;
}

const memberNames = (schema: Json): string[] => Object.keys(deref(schema)?.properties ?? {});

/** The relationships the upstream's include examples of a record's show name (first segments). */
const includedNames = (listOrShow: string): string[] =>
  upstreamIncludePaths(upstreamParameters('GET', listOrShow.endsWith('{id}') ? listOrShow : `${listOrShow}/{id}`).get('include') ?? '').map((p) => p.split('.')[0]!);

/** The attribute and relationship names of an upstream request body. */
function upstreamBodyMembers(method: string, path: string): { attributes: string[]; relationships: string[] } {
  const content = doc().paths[path]?.[method.toLowerCase()]?.requestBody && deref(doc().paths[path][method.toLowerCase()].requestBody).content;
  const media = content && (Object.values(content)[0] as Json);
  const data = deref(deref(media?.schema)?.properties?.data);
  return { attributes: memberNames(data?.properties?.attributes), relationships: memberNames(data?.properties?.relationships) };
}

/** `{id}`, `{contact_id}`: one shape, so served and upstream paths compare. */
const shapeOf = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, '{}')}`;
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, '1');
const EXEMPT = /^\/v1\/(test_helpers|oauth)\//;

interface Refusal {
  status: number;
  code: string;
  detail: string;
  source?: { parameter?: string; pointer?: string };
}
const errorsOf = (body: string): Refusal[] => {
  try {
    return (JSON.parse(body) as { errors?: Refusal[] }).errors ?? [];
  } catch {
    return [];
  }
};
const EXTENSION_CODE = 'sitebiz_extension';

for (const dialect of DIALECTS) {
  describeUpstream(`UPSTREAM_STRICT [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let served: Json;

    before(async () => {
      t = await createTestApp(dialect, { env: { UPSTREAM_STRICT: 'on' } });
      token = await t.token();
      served = t.app.swagger();
    });
    after(() => t.close());

    const send = (method: string, url: string, payload?: unknown) =>
      t.request({ method: method as 'GET', url, token, ...(payload === undefined ? {} : { payload: payload as object }) });

    it('(a) serves every upstream operation, with each of its upstream parameters, sort values, includes and body members, refusing none as an extension', async () => {
      const refused: string[] = [];
      const check = async (method: string, url: string, payload?: unknown) => {
        const res = await send(method, url, payload);
        const extension = errorsOf(res.body).find((e) => e.code === EXTENSION_CODE);
        if (extension || res.statusCode === 405) refused.push(`${method} ${url}: ${res.statusCode} ${extension?.detail ?? res.body.slice(0, 200)}`);
      };
      let operations = 0;
      for (const op of upstreamOperations()) {
        operations++;
        if (op.path.startsWith('/v1/oauth/')) continue; // token endpoints: test/oauth.test.ts
        const url = concrete(op.path);
        const body = upstreamBodyMembers(op.method, op.path);
        const payload = ['POST', 'PATCH'].includes(op.method)
          ? { data: { type: 'x', attributes: Object.fromEntries(body.attributes.map((a) => [a, null])), relationships: Object.fromEntries(body.relationships.map((r) => [r, { data: null }])) } }
          : undefined;
        const parameters = upstreamParameters(op.method, op.path);
        await check(op.method, url, payload);
        if (parameters.size === 0) continue;
        // Every parameter at once, then each value the upstream names for sort, include and fields.
        const all = new URLSearchParams();
        for (const name of parameters.keys()) if (!['sort', 'include'].includes(name) && !name.startsWith('fields[')) all.append(name, '1');
        await check(op.method, `${url}?${all}`);
        for (const [name, description] of parameters) {
          const values =
            name === 'sort' ? upstreamSortNames(description) : name === 'include' ? upstreamIncludePaths(description) : name.startsWith('fields[') ? [...description.matchAll(/fields\[[a-z_]+\]=([a-z_,]+)/g)].flatMap((m) => m[1]!.split(',')) : [];
          for (const value of values) await check(op.method, `${url}?${new URLSearchParams([[name, value]])}`);
        }
      }
      assert.equal(operations, 77, 'the upstream describes 77 operations');
      assert.deepEqual(refused, [], 'upstream requests refused in UPSTREAM_STRICT mode');
    });

    it('(b) refuses every sitebiz extension of its served document: routes with 404, query parameters, sort values, fields and includes with 400 naming the parameter, body members with 422 at their pointer', async () => {
      const upstreamShapes = new Map(upstreamOperations().map((op) => [shapeOf(op.method, op.path), op]));
      const wrong: string[] = [];
      const expect = async (method: string, url: string, status: number, source: { parameter?: string; pointer?: string } | undefined, payload?: unknown) => {
        const res = await send(method, url, payload);
        const error = errorsOf(res.body).find((e) => e.code === EXTENSION_CODE);
        const sourceOk = source === undefined || (source.parameter !== undefined ? error?.source?.parameter === source.parameter : error?.source?.pointer === source.pointer);
        if (res.statusCode !== status || !error || !sourceOk || !/is a sitebiz extension; the upstream API does not define it \(UPSTREAM_STRICT is on\)/.test(error.detail)) {
          wrong.push(`${method} ${url} → ${res.statusCode} ${res.body.slice(0, 240)} (expected ${status} at ${JSON.stringify(source)})`);
        }
      };
      let routes = 0;
      let words = 0;
      for (const [path, item] of Object.entries(served.paths as Record<string, Json>)) {
        if (EXEMPT.test(path)) continue;
        for (const [method, op] of Object.entries(item as Record<string, Json>)) {
          const upstreamOp = upstreamShapes.get(shapeOf(method, path));
          const url = concrete(path);
          if (!upstreamOp) {
            routes++;
            await expect(method.toUpperCase(), url, 404, undefined);
            continue;
          }
          const taken = upstreamParameters(upstreamOp.method, upstreamOp.path);
          const record = upstreamRecordSchema(upstreamOp.path.replace(/\/\{[^}]+\}$/, '/{id}')) ?? upstreamRecordSchema(upstreamOp.path);
          const upstreamAttributes = new Set(record ? memberNames(record.properties.attributes) : []);
          const upstreamRelationships = new Set(record ? [...memberNames(record.properties.relationships), ...includedNames(upstreamOp.path)] : []);
          for (const parameter of (op.parameters ?? []).map((p: Json) => deref(p, served)).filter((p: Json) => p.in === 'query')) {
            const name: string = parameter.name;
            const description: string = parameter.description ?? parameter.schema?.description ?? '';
            if (!taken.has(name)) {
              words++;
              // Fields of included types follow JSON:API (and the upstream's examples) where the upstream takes include.
              if (name.startsWith('fields[') && taken.has('include')) continue;
              const listed = description.split(': ')[1]?.split(/[,;]/)[0]?.trim().replace(/^One of /, '');
              const value = name === 'sort' ? 'id' : name === 'include' || name.startsWith('fields[') ? (listed ?? 'x') : name.startsWith('page[') ? '' : '1';
              await expect(method.toUpperCase(), `${url}?${new URLSearchParams([[name, value]])}`, 400, { parameter: name });
              continue;
            }
            if (name === 'sort') {
              const upstreamSorts = upstreamSortNames(taken.get('sort')!);
              for (const value of /One of ([^;]+);/.exec(description)![1]!.split(', ')) {
                if (upstreamSorts.includes(value)) continue;
                words++;
                await expect('GET', `${url}?sort=-${value}`, 400, { parameter: 'sort' });
              }
            }
            if (name === 'include' && record) {
              for (const value of description.split(': ')[1]!.split(', ')) {
                if (upstreamRelationships.has(value)) continue;
                words++;
                await expect('GET', `${url}?include=${value}`, 400, { parameter: 'include' });
              }
            }
            if (name.startsWith('fields[') && record && name === `fields[${upstreamOp.path.split('/')[2]}]`) {
              for (const value of description.split(': ')[1]!.split(', ')) {
                if (upstreamAttributes.has(value)) continue;
                words++;
                await expect('GET', `${url}?${name}=${value}`, 400, { parameter: name });
              }
            }
          }
          const body = op.requestBody && deref(op.requestBody, served).content?.['application/vnd.api+json']?.schema;
          if (body) {
            const dataSchema = deref(deref(body, served).properties.data, served);
            const upstreamBody = upstreamBodyMembers(upstreamOp.method, upstreamOp.path);
            for (const [member, known] of [['attributes', upstreamBody.attributes], ['relationships', upstreamBody.relationships]] as const) {
              for (const name of Object.keys(deref(dataSchema.properties?.[member], served)?.properties ?? {})) {
                if (known.includes(name)) continue;
                words++;
                await expect(method.toUpperCase(), url, 422, { pointer: `/data/${member}/${name}` }, { data: { type: 'x', [member]: { [name]: null } } });
              }
            }
          }
        }
      }
      assert.ok(routes >= 10 && words >= 100, `the served document's extensions were found (${routes} routes, ${words} words)`);
      assert.deepEqual(wrong, [], 'extensions not refused as such');
    });

    it('(c) the declarations flag as upstream exactly the attributes, relationships, list and show parameters, filters and sorts the upstream document has', () => {
      const registry = new Registry(servedResources({ mode: 'sandbox', publicUrl: PUBLIC_URL }));
      const disagreements: string[] = [];
      const words = (v: QueryVocabulary, type: string): Set<string> =>
        new Set([...v.parameters, ...(v.sorts ? ['sort'] : []), ...(v.includes ? ['include'] : []), ...(v.fields ? [`fields[${type}]`] : [])]);
      for (const resource of registry.all()) {
        for (const [path, surface] of [
          [`/v1/${resource.type}`, resource.routes.list && listUpstream(registry, resource)],
          [`/v1/${resource.type}/{id}`, resource.routes.show && showUpstream(registry, resource)],
        ] as const) {
          if (!surface || resource.pathPrefix) continue;
          const upstreamHas = Boolean(doc().paths[path]?.get);
          if ((surface.kind === 'upstream') !== upstreamHas) disagreements.push(`GET ${path}: flagged ${surface.kind}, the upstream ${upstreamHas ? 'has' : 'lacks'} it`);
          if (surface.kind !== 'upstream' || !upstreamHas) continue;
          const taken = upstreamParameters('GET', path);
          const flagged = words(surface.query!.upstream, resource.type);
          for (const name of words(surface.query!.served, resource.type)) {
            if (flagged.has(name) !== taken.has(name)) disagreements.push(`GET ${path} ${name}: flagged ${flagged.has(name) ? 'upstream' : 'extension'}, the upstream ${taken.has(name) ? 'has' : 'lacks'} it`);
          }
          if (taken.has('sort') && surface.query!.upstream.sorts) {
            const named = upstreamSortNames(taken.get('sort')!);
            for (const sort of surface.query!.served.sorts!) {
              if (surface.query!.upstream.sorts.has(sort) !== named.includes(sort)) disagreements.push(`GET ${path} sort=${sort}: flagged ${surface.query!.upstream.sorts.has(sort) ? 'upstream' : 'extension'}; the upstream names ${named.join(', ')}`);
            }
          }
          // A record's members are its show's (the upstream's lists leave some relationships out).
          const record = upstreamRecordSchema(`/v1/${resource.type}/{id}`) ?? upstreamRecordSchema(path);
          if (!record) continue; // payouts: prose only
          for (const [kind, declared, listed] of [
            ['attribute', Object.entries(resource.attributes).map(([n, a]) => [n, a.upstream.attribute] as const), new Set(memberNames(record.properties.attributes))],
            // The upstream's include examples name relationships its schemas leave out (forms' contact_tags, courses' modules).
            ['relationship', Object.entries(resource.relationships).map(([n, r]) => [n, r.upstream] as const), new Set([...memberNames(record.properties.relationships), ...includedNames(path)])],
          ] as const) {
            for (const [name, upstream] of declared) {
              if (upstream !== listed.has(name)) disagreements.push(`${resource.type} ${kind} ${name}: flagged ${upstream ? 'upstream' : 'extension'}, the upstream ${listed.has(name) ? 'has' : 'lacks'} it`);
            }
          }
        }
      }
      assert.deepEqual([...new Set(disagreements)], []);
    });

    it('answers carry only upstream attributes, relationships, links and meta; test helpers stay available', async () => {
      const b = builders(t);
      const formId = await b.form({ title: 'Waitlist' });
      const res = await send('GET', `/v1/forms/${formId}`);
      assert.equal(res.statusCode, 200, res.body);
      const form = res.json().data;
      assert.ok(!('description' in form.attributes), 'forms.description is a sitebiz extension');
      assert.ok('title' in form.attributes);
      const post = await b.blogPost({ blogId: await b.blog(), title: 'Hello' });
      const shown = (await send('GET', `/v1/blog_posts/${post}`)).json().data;
      assert.ok(!('site' in shown.relationships), 'blog_posts.site is a sitebiz extension');
      assert.ok('blog' in shown.relationships);
      const list = await send('GET', '/v1/forms');
      assert.ok(list.json().data.every((f: Json) => !('description' in f.attributes)));
      assert.deepEqual(Object.keys(list.json().links).sort(), ['first', 'last', 'next', 'prev', 'self']);
      assert.deepEqual(Object.keys(list.json().meta).sort(), ['current_page', 'total_count', 'total_pages']);
      const hook = await send('POST', '/v1/hooks', {
        data: { type: 'hooks', attributes: { event: 'tag_added', target_url: 'http://127.0.0.1:9/in' }, relationships: { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } } },
      });
      assert.equal(hook.statusCode, 201, hook.body);
      assert.deepEqual(Object.keys(hook.json().data.attributes).sort(), ['created_at', 'event', 'resource_id', 'target_url', 'updated_at']);
      assert.equal(hook.json().data.meta, undefined, 'the signing secret (data.meta) is a sitebiz extension');
      assert.ok(!('deliveries' in (hook.json().data.relationships ?? {})));
      // A relationship's links.related is the related-records route, a sitebiz extension.
      const contact = await b.contact();
      const shownContact = (await send('GET', `/v1/contacts/${contact}`)).json().data;
      assert.deepEqual(shownContact.relationships.tags.links, { self: `${PUBLIC_URL}/v1/contacts/${contact}/relationships/tags` });
      const linkage = (await send('GET', `/v1/contacts/${contact}/relationships/tags`)).json();
      assert.deepEqual(linkage.links, { self: `${PUBLIC_URL}/v1/contacts/${contact}/relationships/tags` });
      const helpers = await send('GET', '/v1/test_helpers/requests?page[size]=1');
      assert.equal(helpers.statusCode, 200, helpers.body);
    });

    it('journals strict refusals as not upstream, with the reason', async () => {
      const refused = await send('GET', '/v1/offers?filter[title_eq]=x');
      assert.equal(refused.statusCode, 400);
      const [error] = errorsOf(refused.body);
      assert.deepEqual(error?.source, { parameter: 'filter[title_eq]' });
      assert.equal(error?.detail, 'filter[title_eq] is a sitebiz extension; the upstream API does not define it (UPSTREAM_STRICT is on)');
      const journal = await send('GET', '/v1/test_helpers/requests?filter[upstream]=false&page[size]=1');
      const [entry] = journal.json().data;
      assert.equal(entry.attributes.path, '/v1/offers?filter[title_eq]=x');
      assert.equal(entry.attributes.upstream, false);
      assert.equal(entry.attributes.upstream_reason, 'filter[title_eq] is a sitebiz extension');
    });
  });
}
