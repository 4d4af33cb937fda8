// The OpenAPI document (GET /v1/openapi.json, built by @fastify/swagger from the route schemas)
// and the docs page: the document is OpenAPI 3.1, lists exactly the operations sitebiz serves,
// documents every query parameter the engine accepts, says which operations need a Bearer token,
// describes the bodies and media types actually sent, and matches the committed snapshot
// docs/openapi.json (`npm run openapi:write` regenerates it).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { HOOK_EVENT_NAMES } from '../src/domain/hooks.js';
import { filterNames } from '../src/jsonapi/planner.js';
import type { ResourceDefinition } from '../src/jsonapi/resource.js';
import { API_TITLE, API_VERSION } from '../src/routes/version.js';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';
import { resourcePath } from '../src/jsonapi/document.js';
import { withSharedPartsInline } from './support/openapi-document.js';
import { parse as parseYaml } from 'yaml';

const SNAPSHOT_FILE = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));
/** The snapshot is generated with this public URL (the `servers` entry), whatever the test harness uses. */
const SNAPSHOT_PUBLIC_URL = 'http://localhost:3000';
const WRITE_SNAPSHOT = process.env.OPENAPI_WRITE === '1';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
/** The methods the generated 405 routes answer for (see trackRoutesForMethodNotAllowed). */
const GENERATED_405_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** The operations that need no token; every other one needs Bearer (as upstream). */
const UNPROTECTED = new Set(['GET /v1/version', 'POST /v1/oauth/token', 'GET /v1/test_helpers/confirm/{token}']);
/** Revoke also takes the client's own credentials (RFC 7009 §2.1), as OAuth libraries send them. */
const SCHEMES: Record<string, string[]> = { 'POST /v1/oauth/revoke': ['Bearer', 'ClientBasic'] };

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: unknown;
}
interface Operation {
  parameters?: Parameter[];
  security?: Record<string, string[]>[];
  responses: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
  operationId?: string;
}
interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Partial<Record<(typeof METHODS)[number], Operation>>>;
  components?: { securitySchemes?: Record<string, { type: string; scheme?: string }>; schemas?: Record<string, unknown> };
  security?: Record<string, string[]>[];
}

function operationsOf(doc: OpenApiDocument): { method: string; path: string; op: Operation }[] {
  const out: { method: string; path: string; op: Operation }[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (op) out.push({ method: method.toUpperCase(), path, op });
    }
  }
  return out;
}

/** Every path and method sitebiz routes: the fixed routes, then list, show and the declared writes of each resource. */
function servedOperations(resources: readonly ResourceDefinition[]): string[] {
  const served = ['GET /v1/version', 'POST /v1/oauth/token', 'POST /v1/oauth/revoke', 'GET /v1/me'];
  for (const r of resources) {
    if (r.routes.list) served.push(`GET /v1/${resourcePath(r)}`);
    if (r.routes.show) served.push(`GET /v1/${resourcePath(r)}/{id}`);
    if (r.write?.create) served.push(`POST /v1/${resourcePath(r)}`);
    if (r.write?.update) served.push(`PATCH /v1/${resourcePath(r)}/{id}`);
    if (r.write?.delete) served.push(`DELETE /v1/${resourcePath(r)}/{id}`);
    for (const [name, relationship] of Object.entries(r.relationships)) {
      if (relationship.links) served.push(`GET /v1/${resourcePath(r)}/{id}/relationships/${name}`);
      if (relationship.links && (relationship.kind === 'to-many' || relationship.kind === 'to-many-through')) {
        served.push(`GET /v1/${resourcePath(r)}/{id}/${name}`);
      }
      if (relationship.write?.add) served.push(`POST /v1/${resourcePath(r)}/{id}/relationships/${name}`);
      if (relationship.write?.replace) served.push(`PATCH /v1/${resourcePath(r)}/{id}/relationships/${name}`);
      if (relationship.write?.remove) served.push(`DELETE /v1/${resourcePath(r)}/{id}/relationships/${name}`);
    }
    for (const name of Object.keys(r.actions)) served.push(`POST /v1/${resourcePath(r)}/{id}/${name}`);
  }
  // src/webhooks/sample-routes.ts
  for (const event of HOOK_EVENT_NAMES) served.push(`GET /v1/hooks/${event}_sample`);
  // src/sandbox/*: the test helpers written by hand (the declared ones are above).
  served.push('POST /v1/test_helpers/contacts/{id}/email_activity');
  served.push('POST /v1/test_helpers/checkouts', 'POST /v1/test_helpers/transactions/{id}/refund');
  // src/sandbox (sandbox mode): the account clock.
  served.push('GET /v1/test_helpers/clock', 'POST /v1/test_helpers/clock/advance');
  served.push('POST /v1/test_helpers/purchases/{id}/fail_next_payment');
  // src/sandbox: the mailbox, the request journal and faults (sandbox mode).
  served.push(
    'GET /v1/test_helpers/confirm/{token}',
    'GET /v1/test_helpers/requests',
    'GET /v1/test_helpers/requests/{id}',
    'POST /v1/test_helpers/faults',
    'DELETE /v1/test_helpers/faults/{id}',
  );
  // src/sandbox/snapshot-routes.ts
  served.push('POST /v1/test_helpers/reset', 'GET /v1/test_helpers/snapshots', 'POST /v1/test_helpers/snapshots', 'POST /v1/test_helpers/snapshots/{name}/restore', 'DELETE /v1/test_helpers/snapshots/{name}');
  return served;
}

const queryNames = (op: Operation) => (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);

/** Walks a JSON value, calling `visit` with each object and its JSON pointer. */
function walk(value: unknown, visit: (node: Record<string, unknown>, pointer: string) => void, pointer = ''): void {
  if (Array.isArray(value)) value.forEach((v, i) => walk(v, visit, `${pointer}/${i}`));
  else if (typeof value === 'object' && value !== null) {
    visit(value as Record<string, unknown>, pointer);
    for (const [k, v] of Object.entries(value)) walk(v, visit, `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
  }
}

const pointerSegment = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

const serialize = (doc: unknown) => `${JSON.stringify(doc, null, 2)}\n`;

for (const dialect of DIALECTS) {
  describe(`OpenAPI document and docs page [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    /** The document as served: shared schemas, parameters and responses referred to with $ref. */
    let served: OpenApiDocument;
    /** The same with shared parameters and responses written out where they are used. */
    let doc: OpenApiDocument;
    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      const res = await t.get('/v1/openapi.json');
      assert.equal(res.statusCode, 200, res.body);
      served = res.json();
      doc = withSharedPartsInline(served);
    });
    after(() => t.close());

    it('GET /v1/openapi.json answers without authentication with an OpenAPI 3.1 document', async () => {
      const res = await t.get('/v1/openapi.json');
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.match(doc.openapi, /^3\.1\.\d+$/);
      assert.equal(doc.info.title, API_TITLE);
      assert.equal(doc.info.version, API_VERSION);
      assert.ok(operationsOf(doc).length > 0);
    });

    it('is well formed: path parameters declared, parameters unique, responses present, no OpenAPI 3.0-only keywords, $refs resolve', () => {
      for (const { method, path, op } of operationsOf(doc)) {
        const where = `${method} ${path}`;
        const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
        const pathParams = (op.parameters ?? []).filter((p) => p.in === 'path');
        assert.deepEqual(pathParams.map((p) => p.name).sort(), templated.sort(), `${where}: path parameters`);
        for (const p of pathParams) assert.equal(p.required, true, `${where}: path parameter ${p.name} must be required`);
        const keys = (op.parameters ?? []).map((p) => `${p.in}:${p.name}`);
        assert.equal(new Set(keys).size, keys.length, `${where}: duplicate parameters ${keys.join(', ')}`);
        assert.ok(Object.keys(op.responses).length > 0, `${where}: no responses`);
        for (const [status, response] of Object.entries(op.responses)) {
          assert.match(status, /^([1-5]\d\d|[1-5]XX|default)$/, `${where}: response key ${status}`);
          assert.equal(typeof response.description, 'string', `${where} ${status}: a response needs a description`);
        }
      }
      const ids = operationsOf(doc).flatMap(({ op }) => (op.operationId ? [op.operationId] : []));
      assert.equal(new Set(ids).size, ids.length, 'operationIds must be unique');
      walk(served, (node, pointer) => {
        // OpenAPI 3.1 schemas are JSON Schema 2020-12: nullability is a type union, not `nullable`.
        assert.ok(!('nullable' in node && typeof node.nullable === 'boolean'), `${pointer}: nullable is not OpenAPI 3.1`);
        if (typeof node.$ref === 'string') {
          assert.match(node.$ref, /^#\//, `${pointer}: only local $refs`);
          let target: unknown = served;
          for (const part of node.$ref.slice(2).split('/')) {
            target = (target as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
          }
          assert.notEqual(target, undefined, `${pointer}: unresolvable $ref ${node.$ref}`);
        }
      });
    });

    it('declares its schemas once, by name, and refers to them: under 400 KB, named as the upstream names them', async () => {
      const res = await t.get('/v1/openapi.json');
      assert.ok(res.body.length < 400_000, `the document is ${res.body.length} bytes`);
      const schemas = served.components?.schemas ?? {};
      const refs = res.body.match(/"\$ref":"#\/components\/schemas\//g)?.length ?? 0;
      assert.ok(refs > 400, `${refs} references to named schemas`);
      for (const resource of t.app.engine.registry.all().filter((r) => r.routes.list && r.pathPrefix === undefined)) {
        for (const suffix of ['attributes', 'resource', 'index_response', 'show_response']) {
          assert.ok(`${resource.type}_${suffix}` in schemas, `${resource.type}_${suffix} is declared`);
        }
        const list = doc.paths[`/v1/${resourcePath(resource)}`]!.get!.responses['200']!;
        assert.deepEqual(list.content?.['application/vnd.api+json']?.schema, { $ref: `#/components/schemas/${resource.type}_index_response` });
      }
      for (const name of ['resource_identifier', 'errors', 'errors_attributes', 'list_links', 'list_meta', 'record_links', 'contacts_create_request', 'contacts_update_request', 'oauth_token_response', 'version_response']) {
        assert.ok(name in schemas, `${name} is declared`);
      }
      // A named schema is the object itself, not a wrapper around one reference.
      const contact = schemas.contacts_resource as { properties: Record<string, unknown> };
      assert.deepEqual(contact.properties.attributes, { $ref: '#/components/schemas/contacts_attributes' });
      // Every named part is used somewhere.
      for (const name of Object.keys(schemas)) assert.ok(res.body.includes(`"#/components/schemas/${name}"`), `${name} is referred to`);
    });

    it('GET /v1/openapi.yaml serves the same document in YAML', async () => {
      const res = await t.get('/v1/openapi.yaml');
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^application\/yaml/);
      assert.deepEqual(parseYaml(res.body), served);
    });

    it('documents every route sitebiz serves, with its method, and nothing else', () => {
      const documented = operationsOf(doc).map(({ method, path }) => `${method} ${path}`);
      const served = servedOperations(t.app.engine.registry.all());
      for (const s of served) assert.ok(documented.includes(s), `${s} is served but not documented; documented: ${documented.join(', ')}`);
      assert.deepEqual([...documented].sort(), [...served].sort());
    });

    it('hides the generated 405 routes, HEAD, /v1/openapi.json and the docs pages; documented operations are really served', async () => {
      assert.ok(!('/v1/openapi.json' in doc.paths), '/v1/openapi.json must not document itself');
      for (const path of Object.keys(doc.paths)) assert.ok(!path.startsWith('/docs'), `${path} is a docs page route`);
      for (const [path, item] of Object.entries(doc.paths)) {
        assert.ok(!('head' in item), `HEAD ${path} is Fastify's automatic route`);
        const url = path.replace('{id}', String(t.tenant.siteId));
        for (const method of GENERATED_405_METHODS) {
          const res = await t.request({ method, url });
          if (method.toLowerCase() in item) {
            // A routed path answers 404 only for a record it does not find (an unknown link token).
            if (res.statusCode === 404) assert.doesNotMatch(res.json().errors[0].detail, /^No route /, `${method} ${path} is documented but not routed`);
            assert.notEqual(res.statusCode, 405, `${method} ${path} is documented but answers 405`);
          } else {
            assert.equal(res.statusCode, 405, `${method} ${path} is not documented, so it must be a generated 405`);
          }
        }
      }
    });

    it('list operations document page[number], page[size], sort, fields[...] and every filter[...] the engine accepts', () => {
      const lists = t.app.engine.registry.all().filter((r) => r.routes.list);
      assert.ok(lists.length > 0);
      for (const resource of lists) {
        const path = `/v1/${resourcePath(resource)}`;
        const op = doc.paths[path]?.get;
        assert.ok(op, `GET ${path} is not documented`);
        const names = queryNames(op);
        for (const required of ['page[number]', 'page[size]', 'sort', `fields[${resource.type}]`]) {
          assert.ok(names.includes(required), `GET ${path} does not document ${required}; it documents ${names.join(', ')}`);
        }
        const accepted = filterNames(resource).map((f) => `filter[${f}]`);
        assert.ok(accepted.length > 0, `${resource.type} has no filters to check`);
        const documented = names.filter((n) => n.startsWith('filter['));
        assert.deepEqual([...documented].sort(), [...accepted].sort(), `GET ${path}: documented filters differ from the accepted ones`);
        for (const n of names.filter((n) => /^(page\[|fields\[)/.test(n))) {
          assert.notEqual(
            (op.parameters ?? []).find((p) => p.name === n)?.required,
            true,
            `GET ${path}: ${n} must be optional`,
          );
        }
        for (const name of Object.keys(resource.relationships).length > 0 ? ['include'] : []) {
          assert.ok(names.includes(name), `GET ${path} does not document include`);
        }
      }
      for (const resource of t.app.engine.registry.all().filter((r) => r.routes.show)) {
        const op = doc.paths[`/v1/${resourcePath(resource)}/{id}`]?.get;
        assert.ok(op, `GET /v1/${resourcePath(resource)}/{id} is not documented`);
        assert.ok(queryNames(op).includes(`fields[${resource.type}]`), `GET /v1/${resourcePath(resource)}/{id} does not document fields[${resource.type}]`);
      }
      assert.ok(queryNames(doc.paths['/v1/me']!.get!).includes('fields[users]'), 'GET /v1/me documents fields[users]');
    });

    it('defines the Bearer scheme; protected operations reference it and really answer 401 without a token', async () => {
      assert.deepEqual(doc.components?.securitySchemes?.Bearer, { type: 'http', scheme: 'bearer' });
      assert.equal(doc.security, undefined, 'security is per operation, not global');
      for (const { method, path, op } of operationsOf(doc)) {
        const key = `${method} ${path}`;
        const names = (op.security ?? []).flatMap((s) => Object.keys(s));
        for (const n of names) assert.ok(doc.components?.securitySchemes?.[n], `${key} references undefined scheme ${n}`);
        const url = path.replace('{id}', String(t.tenant.siteId));
        const res = await t.request({ method: method as 'GET' | 'POST', url });
        if (UNPROTECTED.has(key)) {
          assert.deepEqual(names, [], `${key} needs no token`);
          assert.notEqual(res.statusCode, 401, `${key} is documented without security but answers 401`);
        } else {
          assert.deepEqual(names, SCHEMES[key] ?? ['Bearer'], `${key} must reference the Bearer scheme`);
          assert.equal(res.statusCode, 401, `${key} is documented as protected; without a token it answered ${res.statusCode}`);
        }
      }
    });

    describe('documented responses describe what is served (media type and schema)', () => {
      // The document's own schemas (JSON Schema 2020-12 in OpenAPI 3.1), looked up by pointer so
      // that any $ref into components resolves against the document.
      let ajv: Ajv2020;
      before(() => {
        ajv = new Ajv2020({ allErrors: true, strict: false, validateSchema: false });
        ajv.addSchema(doc as object, 'sitebiz-openapi.json');
      });

      async function check(method: string, path: string, url: string, options: { token?: string; headers?: Record<string, string>; payload?: string } = {}) {
        const res = await t.request({ method: method as 'GET', url, ...options });
        const where = `${method} ${url} → ${res.statusCode}`;
        const response = doc.paths[path]?.[method.toLowerCase() as 'get']?.responses[String(res.statusCode)];
        assert.ok(response, `${where}: status ${res.statusCode} is not documented for ${method} ${path}`);
        const mediaType = String(res.headers['content-type'] ?? '').split(';')[0]!.trim();
        const documented = Object.keys(response.content ?? {});
        assert.ok(documented.includes(mediaType), `${where}: served as ${mediaType}, documented as ${documented.join(', ') || 'no body'}`);
        const pointer = ['paths', path, method.toLowerCase(), 'responses', String(res.statusCode), 'content', mediaType, 'schema']
          .map(pointerSegment)
          .join('/');
        const validate = ajv.getSchema(`sitebiz-openapi.json#/${pointer}`);
        assert.ok(validate, `${where}: no schema at ${pointer}`);
        assert.ok(validate(res.json()), `${where}: body does not match the documented schema: ${ajv.errorsText(validate.errors)}\n${res.body}`);
        return res;
      }

      it('GET /v1/me, /v1/sites and /v1/sites/{id}: 200, 400, 401, 403 and 404', async () => {
        const id = String(t.tenant.siteId);
        await check('GET', '/v1/me', '/v1/me', { token });
        await check('GET', '/v1/sites', '/v1/sites', { token });
        await check('GET', '/v1/sites', '/v1/sites?fields[sites]=title&page[size]=1', { token });
        await check('GET', '/v1/sites', '/v1/sites?sort=no_such_field', { token });
        await check('GET', '/v1/sites', '/v1/sites');
        await check('GET', '/v1/sites/{id}', `/v1/sites/${id}`, { token });
        await check('GET', '/v1/sites/{id}', `/v1/sites/${id}?fields[sites]=subdomain`, { token });
        await check('GET', '/v1/sites/{id}', '/v1/sites/999999999', { token });
        const scoped = await t.keyWith(t.tenant.ownerId, ['view:contacts']);
        await check('GET', '/v1/sites/{id}', `/v1/sites/${id}`, { token: scoped.token });
      });

      it('POST /v1/oauth/token 200, 400 and 401; POST /v1/oauth/revoke 401', async () => {
        const formHeaders = { 'content-type': 'application/x-www-form-urlencoded' };
        const fields = (f: Record<string, string>) => new URLSearchParams(f).toString();
        const { clientId, clientSecret } = t.tenant;
        await check('POST', '/v1/oauth/token', '/v1/oauth/token', {
          headers: formHeaders,
          payload: fields({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
        });
        await check('POST', '/v1/oauth/token', '/v1/oauth/token', { headers: formHeaders, payload: fields({ grant_type: 'password' }) });
        await check('POST', '/v1/oauth/token', '/v1/oauth/token', {
          headers: formHeaders,
          payload: fields({ grant_type: 'client_credentials', client_id: clientId, client_secret: 'wrong' }),
        });
        await check('POST', '/v1/oauth/revoke', '/v1/oauth/revoke', { headers: formHeaders, payload: fields({ token: 'x' }) });
      });

      it('writes: POST, PATCH and DELETE /v1/contacts and /v1/contact_notes, their successes and refusals', async () => {
        const headers = { 'content-type': 'application/vnd.api+json' };
        const site = { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } };
        const created = await check('POST', '/v1/contacts', '/v1/contacts', {
          token,
          headers,
          payload: JSON.stringify({ data: { type: 'contacts', attributes: { email: 'openapi@example.com' }, relationships: site } }),
        });
        const id = created.json().data.id as string;
        await check('POST', '/v1/contacts', '/v1/contacts', {
          token,
          headers,
          payload: JSON.stringify({ data: { type: 'contacts', attributes: { email: 'openapi@example.com' }, relationships: site } }),
        });
        await check('POST', '/v1/contacts', '/v1/contacts', { token, headers, payload: '{"data":' });
        await check('POST', '/v1/contacts', '/v1/contacts', { token, headers: { 'content-type': 'text/plain' }, payload: 'x' });
        const url = `/v1/contacts/${id}`;
        await check('PATCH', '/v1/contacts/{id}', url, { token, headers, payload: JSON.stringify({ data: { type: 'contacts', id, attributes: { name: 'O' } } }) });
        await check('PATCH', '/v1/contacts/{id}', url, { token, headers, payload: JSON.stringify({ data: { type: 'contacts', id: '0', attributes: {} } }) });
        const note = await check('POST', '/v1/contact_notes', '/v1/contact_notes', {
          token,
          headers,
          payload: JSON.stringify({ data: { type: 'contact_notes', attributes: { body: 'b' }, relationships: { contact: { data: { type: 'contacts', id } } } } }),
        });
        const noteId = note.json().data.id as string;
        await check('PATCH', '/v1/contact_notes/{id}', `/v1/contact_notes/${noteId}`, {
          token,
          headers,
          payload: JSON.stringify({ data: { type: 'contact_notes', id: noteId, attributes: { body: 'c' } } }),
        });
        await check('DELETE', '/v1/contact_notes/{id}', `/v1/contact_notes/${noteId}`, { token });
        await check('DELETE', '/v1/contacts/{id}', url, { token });
        await check('DELETE', '/v1/contacts/{id}', url, { token });
        const viewer = await t.keyWith(t.tenant.ownerId, ['view:contacts']);
        await check('DELETE', '/v1/contacts/{id}', url, { token: viewer.token });
      });

      it('GET /v1/version 200', async () => {
        await check('GET', '/v1/version', '/v1/version');
      });
    });

    it('GET /docs serves the reference page, and /docs/json the same document', async () => {
      for (const url of ['/docs', '/docs/']) {
        const res = await t.get(url);
        assert.equal(res.statusCode, 200, url);
        assert.match(String(res.headers['content-type']), /^text\/html/, url);
        assert.match(res.body, /<article class="operation"/, url);
      }
      const json = await t.get('/docs/json');
      assert.equal(json.statusCode, 200);
      assert.deepEqual(json.json(), served);
    });

    it('docs/openapi.json is the committed snapshot of the document (regenerate with npm run openapi:write)', async () => {
      const fresh = await createTestApp(dialect, { env: { PUBLIC_URL: SNAPSHOT_PUBLIC_URL } });
      let generated: string;
      try {
        const res = await fresh.get('/v1/openapi.json');
        assert.equal(res.statusCode, 200);
        generated = serialize(res.json());
      } finally {
        await fresh.close();
      }
      if (WRITE_SNAPSHOT) writeFileSync(SNAPSHOT_FILE, generated);
      let committed: string;
      try {
        committed = readFileSync(SNAPSHOT_FILE, 'utf8');
      } catch {
        assert.fail('docs/openapi.json is missing: run `npm run openapi:write` and commit it');
      }
      if (committed !== generated) {
        const a = committed.split('\n');
        const b = generated.split('\n');
        const line = a.findIndex((l, i) => l !== b[i]);
        const at = line < 0 ? Math.min(a.length, b.length) : line;
        assert.fail(
          `docs/openapi.json is out of date with the routes: run \`npm run openapi:write\` and commit the result.\n` +
            `First difference at line ${at + 1}:\n  committed: ${a[at] ?? '(end of file)'}\n  generated: ${b[at] ?? '(end of file)'}`,
        );
      }
    });
  });
}
