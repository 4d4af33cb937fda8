// A property-based fuzzer built from the served OpenAPI document (/v1/openapi.json): for every
// documented operation, fast-check arbitraries make requests out of the operation's own path,
// parameters and request body schema, mixing valid values (ids of real records, names the
// document uses) with junk, inherited object names, bad encodings and wrong media types. Every
// answer must be documented: no 5xx, a status the operation lists, the media type it lists for
// that status, and a body its schema accepts. Used by test/fuzz.test.ts (CI) and scripts/fuzz.ts
// (long runs).
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { seedDemoData } from '../../src/demo/seed.js';
import { builders } from './builders.js';
import type { TestApp } from './harness.js';
import { otherAccount } from './writes.js';

const METHODS = ['get', 'post', 'patch', 'put', 'delete'] as const;

type Schema = Record<string, unknown>;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: Schema;
}

interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
  security?: unknown[];
}

export interface OpenApiDocument {
  paths: Record<string, Partial<Record<(typeof METHODS)[number], Operation>>>;
}

export interface FuzzOperation {
  /** `GET /v1/contacts/{id}`, as documented. */
  key: string;
  method: string;
  path: string;
  operation: Operation;
}

/** What the requests are made of besides the document: real ids and credentials. */
export interface FuzzWorld {
  /** Ids of records the key reaches, by type (the first path segment and `type` of identifiers). */
  ids: ReadonlyMap<string, readonly string[]>;
  /** Ids the key does not reach (another account's records, missing ones). */
  foreignIds: readonly string[];
  siteId: string;
  /** A token with every permission, one with none, and the client credentials behind the first. */
  tokens: { full: string; none: string };
  client: { id: string; secret: string };
}

export interface FuzzRequest {
  operation: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
  /** What the request was made to probe, for reports. */
  label: string;
}

export const INHERITED_NAMES = ['toString', '__proto__', 'constructor', 'valueOf', 'hasOwnProperty'] as const;

export function documentedOperations(doc: OpenApiDocument): FuzzOperation[] {
  const out: FuzzOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) out.push({ key: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, operation });
    }
  }
  return out;
}

/** Every name the document uses (parameter members, property names, enum values): the fuzzer's vocabulary. */
function vocabularyOf(doc: OpenApiDocument): string[] {
  const words = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    const record = node as Record<string, unknown>;
    if (record.properties && typeof record.properties === 'object') for (const name of Object.keys(record.properties)) words.add(name);
    if (Array.isArray(record.enum)) for (const value of record.enum) if (typeof value === 'string') words.add(value);
    for (const value of Object.values(record)) visit(value);
  };
  visit(doc);
  for (const operation of documentedOperations(doc)) {
    for (const p of operation.operation.parameters ?? []) for (const m of p.name.matchAll(/\[([^\]]+)\]/g)) words.add(m[1]!);
    for (const segment of operation.path.split('/')) if (segment !== '' && !segment.startsWith('{')) words.add(segment);
  }
  return [...words].sort();
}

const ENCODE_SAFE = /^[\x20-\x7e]*$/;

/** encodeURIComponent, except that a lone surrogate becomes the bytes of an encoded surrogate (invalid UTF-8). */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return [...text].map((c) => (/[\ud800-\udfff]/.test(c) ? '%ED%A0%80' : encodeURIComponent(c))).join('');
  }
}

/** Junk that breaks parsers: numbers out of range, encodings, inherited names, separators. */
function junk(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom('', ' ', '0', '-1', '1.5', '1e3', '2147483648', '-2147483649', '9007199254740993', '99999999999999999999', 'null', 'true', ',', ',,', '.', '-', '--id', 'a.b.c.d', '%', '\u0000', '\u00e9', '\ud800', '\u{1F600}', '[]', '{}', '2026-02-31', '0000-01-01', '9999-12-31T23:59:59Z'),
    fc.constantFrom(...INHERITED_NAMES),
    fc.string({ maxLength: 12 }),
    fc.string({ unit: 'binary', maxLength: 6 }),
  );
}

/**
 * The values a parameter's description lists ("One of id, title; ..." or "...: a, b, c"), so that
 * sorts, fields and includes are often right; empty when it lists none.
 */
function choicesIn(description: string | undefined): string[] {
  const listed = /One of ([^;]+)/.exec(description ?? '')?.[1] ?? /:\s*([\w.]+(?:,\s*[\w.]+)+|[\w.]+)\s*$/.exec(description ?? '')?.[1];
  return listed ? listed.split(',').map((c) => c.trim()).filter((c) => /^[\w.]+$/.test(c)) : [];
}

export class FuzzArbitraries {
  private readonly vocabulary: string[];

  constructor(
    private readonly doc: OpenApiDocument,
    private readonly world: FuzzWorld,
  ) {
    this.vocabulary = vocabularyOf(doc);
  }

  /** Requests for every documented operation, each equally likely. */
  request(): fc.Arbitrary<FuzzRequest> {
    return fc.oneof(...documentedOperations(this.doc).map((op) => this.requestFor(op)));
  }

  private word(): fc.Arbitrary<string> {
    return fc.constantFrom(...this.vocabulary);
  }

  private idOf(type: string | undefined): fc.Arbitrary<string> {
    const own = (type && this.world.ids.get(type)) || [];
    const all = [...this.world.ids.values()].flat();
    return fc.oneof(
      { weight: 6, arbitrary: own.length > 0 ? fc.constantFrom(...own) : fc.constantFrom(...all) },
      { weight: 1, arbitrary: fc.constantFrom(...all) },
      { weight: 1, arbitrary: fc.constantFrom(...this.world.foreignIds) },
      { weight: 1, arbitrary: fc.oneof(junk(), fc.constant('9'.repeat(120))) },
    );
  }

  /** A plausible value of a query parameter, from its name and the values its description lists; or junk. */
  private queryValue(name: string, description?: string): fc.Arbitrary<string> {
    const listed = choicesIn(description);
    const choice = listed.length > 0 ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...listed) }, { weight: 1, arbitrary: this.word() }) : this.word();
    const words = fc.array(fc.oneof({ weight: 8, arbitrary: choice }, { weight: 1, arbitrary: fc.constantFrom(...INHERITED_NAMES) }), { minLength: 1, maxLength: 3 });
    let plausible: fc.Arbitrary<string>;
    if (name === 'filter[site_id]') plausible = fc.oneof({ weight: 8, arbitrary: fc.constant(this.world.siteId) }, { weight: 1, arbitrary: this.idOf('sites') });
    else if (name.startsWith('page[')) plausible = fc.oneof(fc.integer({ min: -1, max: 120 }).map(String), fc.constant(''));
    else if (name === 'sort') plausible = fc.tuple(fc.boolean(), choice).map(([desc, w]) => `${desc ? '-' : ''}${w}`);
    else if (name === 'include') plausible = fc.array(fc.array(choice, { minLength: 1, maxLength: 2 }).map((p) => p.join('.')), { minLength: 1, maxLength: 3 }).map((l) => l.join(','));
    else if (name.startsWith('fields[')) plausible = words.map((w) => w.join(','));
    else if (/_id\]$|_ids\]$/.test(name)) plausible = fc.array(this.idOf(undefined), { minLength: 1, maxLength: 3 }).map((l) => l.join(','));
    else {
      plausible = fc.oneof(
        this.word(),
        fc.integer({ min: -5, max: 5000 }).map(String),
        fc.constantFrom('true', 'false', '2026-01-01', '2026-05-31T10:00:00Z', '30', '25.50', 'a', 'example', 'ada'),
      );
    }
    return fc.oneof({ weight: 6, arbitrary: plausible }, { weight: 1, arbitrary: junk() });
  }

  private query(operation: Operation): fc.Arbitrary<Array<[string, string]>> {
    const parameters = (operation.parameters ?? []).filter((p) => p.in === 'query');
    const documented = parameters.map((p) => p.name);
    const descriptions = new Map(parameters.map((p) => [p.name, (p as { description?: string }).description]));
    const unknown = fc.oneof(
      fc.constantFrom(...INHERITED_NAMES),
      fc.constantFrom(...INHERITED_NAMES).map((n) => `filter[${n}]`),
      fc.constantFrom(...INHERITED_NAMES).map((n) => `fields[${n}]`),
      fc.constantFrom(...INHERITED_NAMES).map((n) => `page[${n}]`),
      fc.constantFrom('foo', 'filter[]', 'page[offset]', 'filter[x][y]', 'Sort', 'include[]'),
    );
    if (documented.length === 0) {
      // Operations that take no query parameter (writes): now and then one all the same.
      const stray = unknown.chain((name) => this.queryValue(name).map((v): [string, string] => [name, v]));
      return fc.oneof({ weight: 9, arbitrary: fc.constant<Array<[string, string]>>([]) }, { weight: 1, arbitrary: fc.array(stray, { minLength: 1, maxLength: 2 }) });
    }
    const pair = fc
      .oneof({ weight: 14, arbitrary: fc.constantFrom(...documented) }, { weight: 1, arbitrary: unknown })
      .chain((name) => this.queryValue(name, descriptions.get(name)).map((v): [string, string] => [name, v]));
    const needsSite = documented.includes('filter[site_id]');
    return fc.tuple(fc.array(pair, { maxLength: 3 }), fc.integer({ min: 0, max: 9 })).map(([pairs, dice]) => {
      // Most requests name the site, as a client must when it reaches several.
      if (needsSite && dice > 0 && !pairs.some(([n]) => n === 'filter[site_id]')) pairs.unshift(['filter[site_id]', this.world.siteId]);
      return pairs;
    });
  }

  private resolve(schema: Schema): Schema {
    const ref = schema.$ref;
    if (typeof ref !== 'string' || !ref.startsWith('#/')) return schema;
    let node: unknown = this.doc;
    for (const part of ref.slice(2).split('/')) node = (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    return this.resolve(node as Schema);
  }

  /** A value a schema describes, most of the time; sometimes one of another shape. */
  private value(raw: Schema, key: string, type: string | undefined, depth: number): fc.Arbitrary<unknown> {
    const schema = this.resolve(raw);
    const wrong = fc.oneof(fc.constant(null), fc.integer(), fc.constant([]), fc.constant({}), junk());
    const variants = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
    let right: fc.Arbitrary<unknown>;
    if (variants) right = fc.oneof(...variants.map((v) => this.value(v, key, type, depth + 1)));
    else if (Array.isArray(schema.enum)) right = fc.constantFrom(...(schema.enum as unknown[]));
    else if (schema.type === 'object' || schema.properties) right = this.object(schema, type, depth);
    else if (schema.type === 'array') right = fc.array(this.value((schema.items ?? {}) as Schema, key, type, depth + 1), { maxLength: 3 });
    else if (schema.type === 'string') right = this.stringFor(schema, key, type);
    else if (schema.type === 'integer') right = fc.oneof(fc.integer({ min: -3, max: 1000 }), fc.integer());
    else if (schema.type === 'number') right = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 0, max: 1000 }));
    else if (schema.type === 'boolean') right = fc.boolean();
    else if (schema.type === 'null') right = fc.constant(null);
    else right = fc.jsonValue({ maxDepth: 2 });
    return fc.oneof({ weight: depth <= 1 ? 9 : 30, arbitrary: right }, { weight: 1, arbitrary: wrong });
  }

  private stringFor(schema: Schema, key: string, type: string | undefined): fc.Arbitrary<string> {
    if (key === 'id') return this.idOf(type);
    if (schema.format === 'date-time') return fc.date({ min: new Date('2000-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
    if (key === 'email') return fc.oneof(fc.nat(100_000).map((n) => `fuzz-${n}@example.com`), fc.constantFrom('ada@example.com', 'not-an-email'));
    return fc.oneof(fc.string({ maxLength: 20 }), fc.string({ unit: 'grapheme', maxLength: 8 }), this.word());
  }

  private object(schema: Schema, parentType: string | undefined, depth: number): fc.Arbitrary<unknown> {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    // The identifier's type names the ids its id takes.
    const typeEnum = (this.resolve(properties.type ?? {}) as Schema).enum as string[] | undefined;
    const type = typeEnum?.[0] ?? parentType;
    const members: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, member] of Object.entries(properties)) members[name] = depth > 6 ? fc.constant(null) : this.value(member, name, type, depth + 1);
    const required = (schema.required ?? []) as string[];
    return fc.record(members, { requiredKeys: required.filter((r) => r in members) });
  }

  /** The body of an operation: from its schema, then maybe broken in one way. */
  private body(operation: Operation, key: string): fc.Arbitrary<{ payload?: string | Buffer; contentType?: string; label: string }> {
    const content = operation.requestBody?.content;
    const types = content ? Object.keys(content) : [];
    let base: fc.Arbitrary<{ value: unknown; contentType: string }>;
    if (content && types.length > 0) {
      base = fc.constantFrom(...types).chain((contentType) => this.value(content[contentType]!.schema ?? {}, '', undefined, 0).map((value) => ({ value, contentType })));
    } else if (key.startsWith('POST /v1/oauth/')) {
      base = this.oauthBody();
    } else {
      // No documented body (deletes, actions without one): usually none.
      base = fc.oneof(
        { weight: 4, arbitrary: fc.constant({ value: undefined, contentType: 'application/vnd.api+json' }) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => ({ value, contentType: 'application/vnd.api+json' })) },
      );
    }
    const broken = fc.oneof(
      fc.constantFrom(...INHERITED_NAMES).map((name) => ({ kind: 'inherited-member', name })),
      fc.constantFrom('text/plain', 'application/vnd.api+json; ext="https://example.com/ext"', 'application/json; charset=utf-16', 'application/vnd.api+json; charset=utf-8', 'application/x-www-form-urlencoded').map((type) => ({ kind: 'content-type', name: type })),
      fc.constantFrom('invalid-utf8', 'lone-surrogate', 'truncated', 'empty', 'null', 'array').map((kind) => ({ kind, name: '' })),
    );
    return fc.tuple(base, fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: broken }), fc.nat()).map(([{ value, contentType }, mutation, n]) => mutate(value, contentType, mutation, n));
  }

  private oauthBody(): fc.Arbitrary<{ value: unknown; contentType: string }> {
    const { id, secret } = this.world.client;
    const params = fc.record(
      {
        grant_type: fc.oneof(fc.constantFrom('client_credentials', 'refresh_token', 'password'), junk()),
        client_id: fc.oneof(fc.constant(id), junk()),
        client_secret: fc.oneof(fc.constant(secret), junk()),
        refresh_token: junk(),
        // Never a real token: revoking the fuzzer's own would only turn the rest into 401s.
        token: junk(),
      },
      { requiredKeys: [] },
    );
    return fc.tuple(params, fc.boolean()).map(([value, form]) =>
      form
        ? { value: new URLSearchParams(Object.entries(value).map(([k, v]): [string, string] => [k, String(v)])).toString(), contentType: 'application/x-www-form-urlencoded' }
        : { value, contentType: 'application/json' },
    );
  }

  private requestFor(op: FuzzOperation): fc.Arbitrary<FuzzRequest> {
    const type = op.path.split('/')[2];
    const pathParams = (op.operation.parameters ?? []).filter((p) => p.in === 'path');
    // An empty or dot segment is another path (`/v1/contacts/` and `/v1/contacts/.` are the list
    // once URL resolution is done), not this operation.
    const segment = this.idOf(type).filter((v) => v !== '' && v !== '.' && v !== '..');
    const path = fc.tuple(...pathParams.map(() => segment)).map((values) => {
      let url = op.path;
      pathParams.forEach((p, i) => (url = url.replace(`{${p.name}}`, encode(String(values[i])))));
      return url;
    });
    const token = fc.oneof(
      { weight: 16, arbitrary: fc.constant(this.world.tokens.full) },
      { weight: 1, arbitrary: fc.constant(this.world.tokens.none) },
      { weight: 1, arbitrary: fc.constantFrom('', 'junk', this.world.tokens.full.slice(0, -2)) },
    );
    const accept = fc.oneof(
      { weight: 12, arbitrary: fc.constant(undefined) },
      { weight: 2, arbitrary: fc.constantFrom('application/vnd.api+json', '*/*', 'application/json', 'text/html') },
      { weight: 1, arbitrary: fc.constantFrom('application/vnd.api+json; ext="https://example.com/ext"', 'application/vnd.api+json; charset=utf-8') },
    );
    const hasBody = op.method !== 'GET';
    return fc
      .tuple(path, this.query(op.operation), token, accept, hasBody ? this.body(op.operation, op.key) : fc.constant(undefined))
      .map(([url, query, bearer, acceptHeader, body]) => {
        const headers: Record<string, string> = {};
        if (bearer !== '') headers.authorization = `Bearer ${bearer}`;
        if (acceptHeader) headers.accept = acceptHeader;
        if (body?.contentType && body.payload !== undefined) headers['content-type'] = body.contentType;
        const queryString = query.map(([k, v]) => `${ENCODE_SAFE.test(k) ? k : encode(k)}=${encode(v)}`).join('&');
        const request: FuzzRequest = {
          operation: op.key,
          method: op.method,
          url: queryString === '' ? url : `${url}?${queryString}`,
          headers,
          label: body?.label ?? 'no body',
        };
        if (body?.payload !== undefined) request.payload = body.payload;
        return request;
      });
  }
}

/** Serializes a body, broken as `mutation` says. */
function mutate(
  value: unknown,
  contentType: string,
  mutation: { kind: string; name: string } | null,
  n: number,
): { payload?: string | Buffer; contentType?: string; label: string } {
  const serialize = (v: unknown) => (typeof v === 'string' && contentType === 'application/x-www-form-urlencoded' ? v : JSON.stringify(v));
  if (value === undefined && mutation === null) return { label: 'no body' };
  if (mutation === null) return { payload: serialize(value), contentType, label: 'schema-shaped' };
  const text = serialize(value ?? {}) ?? 'null';
  switch (mutation.kind) {
    case 'inherited-member': {
      // The name goes into an object of the body, chosen by n: own members, as JSON.parse makes them.
      const objects: Record<string, unknown>[] = [];
      const collect = (node: unknown) => {
        if (Array.isArray(node)) node.forEach(collect);
        else if (typeof node === 'object' && node !== null) {
          objects.push(node as Record<string, unknown>);
          Object.values(node).forEach(collect);
        }
      };
      if (typeof value === 'string') return { payload: `${value}&${mutation.name}=x`, contentType, label: `inherited parameter ${mutation.name}` };
      const copy = JSON.parse(text) as unknown;
      collect(copy);
      const target = objects[n % Math.max(objects.length, 1)];
      if (!target) return { payload: text, contentType, label: 'schema-shaped' };
      Object.defineProperty(target, mutation.name, { value: n % 2 === 0 ? 'x' : { data: null }, enumerable: true, configurable: true, writable: true });
      return { payload: JSON.stringify(copy), contentType, label: `inherited member ${mutation.name}` };
    }
    case 'content-type':
      return { payload: text, contentType: mutation.name, label: `content-type ${mutation.name}` };
    case 'invalid-utf8': {
      const at = text.indexOf('"', n % Math.max(text.length, 1));
      const cut = at < 0 ? text.length : at + 1;
      return {
        payload: Buffer.concat([Buffer.from(text.slice(0, cut)), Buffer.from([0xc0, 0x80, 0xed, 0xa0, 0x80]), Buffer.from(text.slice(cut))]),
        contentType,
        label: 'invalid UTF-8',
      };
    }
    case 'lone-surrogate': {
      const replaced = text.replace(/"([^"\\]*)"(?=\s*[,}\]])/, '"$1\\ud800"');
      return { payload: replaced, contentType, label: 'lone surrogate' };
    }
    case 'truncated':
      return { payload: text.slice(0, Math.max(1, n % Math.max(text.length, 1))), contentType, label: 'truncated' };
    case 'empty':
      return { payload: '', contentType, label: 'empty' };
    case 'null':
      return { payload: 'null', contentType, label: 'null' };
    default:
      return { payload: '[]', contentType, label: 'array' };
  }
}

/** Checks an answer against what the document says the operation answers. */
export class ResponseChecker {
  private readonly ajv: Ajv2020;

  constructor(private readonly doc: OpenApiDocument) {
    this.ajv = new Ajv2020({ strict: false, validateSchema: false, allErrors: false });
    addFormats.default(this.ajv);
    this.ajv.addSchema(doc as object, 'served-openapi.json');
  }

  /** Undefined when the answer is documented; otherwise why it is not. */
  problem(op: FuzzOperation, response: { statusCode: number; headers: Record<string, unknown>; body: string }): string | undefined {
    const status = String(response.statusCode);
    if (response.statusCode >= 500) return `a ${status}`;
    const documented = op.operation.responses[status];
    if (!documented) return `undocumented status ${status} (documented: ${Object.keys(op.operation.responses).join(', ')})`;
    const content = documented.content;
    if (!content || Object.keys(content).length === 0) return response.body === '' ? undefined : `status ${status} is documented without a body, but one was sent`;
    const mediaType = String(response.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (!(mediaType in content)) return `${status} sent as ${mediaType}, documented as ${Object.keys(content).join(', ')}`;
    const pointer = ['paths', op.path, op.method.toLowerCase(), 'responses', status, 'content', mediaType, 'schema']
      .map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1'))
      .join('/');
    const validate = this.ajv.getSchema(`served-openapi.json#/${pointer}`);
    if (!validate) return `no schema at ${pointer}`;
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      return `${status} body is not JSON`;
    }
    return validate(body) ? undefined : `${status} body does not match its schema: ${this.ajv.errorsText(validate.errors)}`;
  }
}

export interface FuzzFinding {
  request: FuzzRequest;
  status: number;
  problem: string;
  body: string;
}

export interface FuzzReport {
  requests: number;
  statuses: Map<number, number>;
  /** Answers that were 5xx or undocumented. */
  failures: number;
  /** The first of them (at most 500), for reports. */
  findings: FuzzFinding[];
  /** Distinct problems (by operation and first words), with how often each was seen. */
  distinct: Map<string, { count: number; first: FuzzFinding }>;
}

/**
 * Generates `runs` requests with `seed` (in chunks, so long runs stay small in memory), sends
 * them one by one and checks every answer.
 */
export async function fuzz(
  app: FastifyInstance,
  doc: OpenApiDocument,
  world: FuzzWorld,
  options: { runs: number; seed: number; chunk?: number; onChunk?: (done: number) => void },
): Promise<FuzzReport> {
  const operations = new Map(documentedOperations(doc).map((op) => [op.key, op]));
  const arbitrary = new FuzzArbitraries(doc, world).request();
  const checker = new ResponseChecker(doc);
  const report: FuzzReport = { requests: 0, statuses: new Map(), failures: 0, findings: [], distinct: new Map() };
  const chunk = options.chunk ?? 2_000;
  for (let start = 0, round = 0; start < options.runs; start += chunk, round++) {
    const requests = fc.sample(arbitrary, { numRuns: Math.min(chunk, options.runs - start), seed: options.seed + round });
    for (const request of requests) {
      const res = await app.inject({
        method: request.method as 'GET',
        url: request.url,
        headers: request.headers,
        ...(request.payload !== undefined ? { payload: request.payload } : {}),
      });
      report.requests++;
      report.statuses.set(res.statusCode, (report.statuses.get(res.statusCode) ?? 0) + 1);
      const problem = checker.problem(operations.get(request.operation)!, res);
      if (problem === undefined) continue;
      const finding = { request, status: res.statusCode, problem, body: res.body.slice(0, 500) };
      report.failures++;
      if (report.findings.length < 500) report.findings.push(finding);
      const key = `${request.operation}: ${problem.slice(0, 80)}`;
      const seen = report.distinct.get(key);
      if (seen) seen.count++;
      else report.distinct.set(key, { count: 1, first: finding });
    }
    options.onChunk?.(report.requests);
  }
  return report;
}

/** A readable account of a report's findings, with what reproduces each. */
export function describeFindings(report: FuzzReport, seed: number, limit = 25): string {
  const lines = [`${report.failures} of ${report.requests} answers undocumented or 5xx (seed ${seed}); distinct: ${report.distinct.size}`];
  for (const [key, { count, first }] of [...report.distinct].slice(0, limit)) {
    const payload = first.request.payload === undefined ? '' : ` body=${JSON.stringify(String(first.request.payload).slice(0, 300))}`;
    lines.push(`- ${count}× ${key}\n    ${first.request.method} ${first.request.url} ${JSON.stringify(first.request.headers)}${payload}\n    → ${first.status} ${first.body.slice(0, 300)}`);
  }
  return lines.join('\n');
}

/**
 * The fuzzer's world in a test app: the demo data in the tenant's site, the ids of every
 * readable type there, records of another account, and tokens.
 */
export async function prepareFuzzWorld(t: TestApp): Promise<FuzzWorld> {
  await seedDemoData(t.handle, { accountId: t.tenant.accountId, siteId: t.tenant.siteId }, t.clock);
  const other = await otherAccount(t);
  const elsewhere = builders(t, other.siteId);
  const foreignContact = await elsewhere.contact();
  const foreignTag = await elsewhere.tag('elsewhere');
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const db = t.handle.db as any;
  const ids = new Map<string, string[]>();
  for (const resource of t.app.engine.registry.all()) {
    const tenancy = resource.tenancy;
    const owner = tenancy.kind === 'site' ? t.tenant.siteId : t.tenant.accountId;
    const rows: Array<{ id: unknown }> = await db
      .selectFrom(resource.table)
      .select('id')
      .where(tenancy.column, '=', owner)
      .orderBy('id')
      .limit(40)
      .execute();
    if (rows.length > 0) ids.set(resource.type, rows.map((r) => String(r.id)));
  }
  const full = await t.token();
  const none = await t.keyWith(t.tenant.ownerId, []);
  return {
    ids,
    foreignIds: [String(other.siteId), String(foreignContact), String(foreignTag), '999999999'],
    siteId: String(t.tenant.siteId),
    tokens: { full, none: none.token },
    client: { id: t.tenant.clientId, secret: t.tenant.clientSecret },
  };
}
