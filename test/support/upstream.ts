// The upstream description of the API (OpenAPI 3.0.3, shared/reference/upstream-openapi-v1.1.0.yml)
// as a test oracle: a sitebiz response must validate against the upstream response schema of the
// same operation, status and content type.
//
// The upstream schemas are OpenAPI 3.0 dialect, so they are converted before Ajv sees them:
// every `$ref` is inlined from components.schemas, `nullable: true` becomes a type union with
// "null", and `format: date-time` is checked by ajv-formats. Upstream schemas never close their
// objects, which would make them accept almost anything; so by default the `attributes` of every
// resource object (an object schema with `id`/`type` and `attributes` members) is closed to the
// attribute names upstream lists. A misspelt or invented attribute then fails, as does a wrong
// type. Turn that off per call with `{ strictAttributes: false }` only for a documented reason.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type SchemaObject = { [key: string]: Json };

export const UPSTREAM_FILE_NAME = 'upstream-openapi-v1.1.0.yml';
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export type HttpMethod = Uppercase<(typeof HTTP_METHODS)[number]>;

export interface UpstreamOperation {
  method: HttpMethod;
  /** As written upstream, e.g. `/v1/sites/{id}`. */
  path: string;
  summary: string | undefined;
  tags: string[];
  /** Whether upstream requires the Bearer scheme. */
  secured: boolean;
  /** Documented response statuses, e.g. ['200', '401', '403']. */
  statuses: string[];
}

export interface UpstreamMatchOptions {
  /** Media type of the response; needed only when upstream documents several for the status. */
  contentType?: string;
  /**
   * Close the `attributes` of resource objects to the names upstream lists (default true).
   * Upstream never sets additionalProperties, so without this an invented attribute would pass.
   */
  strictAttributes?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Loading

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** `SITEBIZ_UPSTREAM_OPENAPI=none`: behave as a clone without the document (tests of the skip use it). */
export const UPSTREAM_NONE = 'none';

/** Where the upstream YAML is: $SITEBIZ_UPSTREAM_OPENAPI, else shared/reference beside or inside the repo. */
export function upstreamFilePath(): string {
  if (process.env.SITEBIZ_UPSTREAM_OPENAPI === UPSTREAM_NONE) {
    throw new Error(`The upstream OpenAPI document ${UPSTREAM_FILE_NAME} is turned off (SITEBIZ_UPSTREAM_OPENAPI=${UPSTREAM_NONE}).`);
  }
  const candidates = [
    process.env.SITEBIZ_UPSTREAM_OPENAPI,
    join(repoRoot, '..', 'shared', 'reference', UPSTREAM_FILE_NAME),
    join(repoRoot, 'shared', 'reference', UPSTREAM_FILE_NAME),
  ].filter((p): p is string => typeof p === 'string' && p !== '');
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    throw new Error(
      `The upstream OpenAPI document ${UPSTREAM_FILE_NAME} was not found; looked at ${candidates.join(', ')}. ` +
        'Set SITEBIZ_UPSTREAM_OPENAPI to its path.',
    );
  }
  return found;
}

/**
 * Why upstream checks are skipped, or undefined when they run. The document lives in the
 * project's shared/ folder beside the repo (CI always has it: there a missing document fails).
 * A clone on its own skips the checks and says so, so `npm test` still passes there.
 */
export const UPSTREAM_SKIP_REASON: string | undefined = (() => {
  try {
    upstreamFilePath();
    return undefined;
  } catch (error) {
    if (process.env.CI) return undefined; // fail loudly at first use
    return `upstream conformance checks skipped: ${(error as Error).message}`;
  }
})();

/**
 * A suite of upstream checks. Without the document it is one skipped test rather than a skipped
 * suite: node's summary counts skipped tests, not skipped suites, and a run that checked nothing
 * must say so in its `skipped` figure.
 */
export function describeUpstream(name: string, fn: () => void): void {
  if (UPSTREAM_SKIP_REASON) it(name, { skip: UPSTREAM_SKIP_REASON }, () => {});
  else describe(name, fn);
}

let loaded: SchemaObject | undefined;

/** The parsed upstream document, loaded once per process. Treat it as read-only. */
export function upstreamDocument(): SchemaObject {
  if (!loaded) {
    const doc = parse(readFileSync(upstreamFilePath(), 'utf8')) as unknown;
    if (!isObject(doc) || !isObject(doc.paths) || typeof doc.openapi !== 'string') {
      throw new Error(`${upstreamFilePath()} is not an OpenAPI document`);
    }
    loaded = doc;
  }
  return loaded;
}

function isObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// Operations

/** Every operation upstream describes (method + path), in document order. */
export function upstreamOperations(): UpstreamOperation[] {
  if (UPSTREAM_SKIP_REASON) return [];
  const doc = upstreamDocument();
  const globalSecurity = Array.isArray(doc.security) && doc.security.length > 0;
  const out: UpstreamOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths as SchemaObject)) {
    if (!isObject(item)) continue;
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      const security = op.security;
      out.push({
        method: method.toUpperCase() as HttpMethod,
        path,
        summary: typeof op.summary === 'string' ? op.summary : undefined,
        tags: Array.isArray(op.tags) ? op.tags.map(String) : [],
        secured: Array.isArray(security) ? security.some((s) => isObject(s) && Object.keys(s).length > 0) : globalSecurity,
        statuses: isObject(op.responses) ? Object.keys(op.responses) : [],
      });
    }
  }
  return out;
}

function operation(method: string, path: string): SchemaObject {
  const item = (upstreamDocument().paths as SchemaObject)[path];
  const op = isObject(item) ? item[method.toLowerCase()] : undefined;
  if (!isObject(op)) {
    const near = upstreamOperations()
      .filter((o) => o.path === path || o.path.startsWith(path.split('{')[0] ?? path))
      .map((o) => `${o.method} ${o.path}`);
    throw new Error(`Upstream has no operation ${method.toUpperCase()} ${path}${near.length ? `; it has ${near.join(', ')}` : ''}`);
  }
  return op;
}

/** The response object for a status: exact (`'404'`), else a range (`'4XX'`), else `default`. */
function responseObject(method: string, path: string, status: number | string): SchemaObject {
  const op = operation(method, path);
  const responses = isObject(op.responses) ? op.responses : {};
  const code = String(status);
  const key = [code, `${code.charAt(0)}XX`, `${code.charAt(0)}xx`, 'default'].find((k) => k in responses);
  if (key === undefined) {
    throw new Error(
      `Upstream ${method.toUpperCase()} ${path} documents no ${code} response (it documents ${Object.keys(responses).join(', ') || 'none'})`,
    );
  }
  const response = resolveRef(responses[key]);
  if (!isObject(response)) throw new Error(`Upstream ${method.toUpperCase()} ${path} ${key}: response is not an object`);
  return response;
}

const mediaTypeOf = (contentType: string) => (contentType.split(';')[0] ?? '').trim().toLowerCase();

/** The media types upstream documents for an operation's status (empty: no body). */
export function upstreamContentTypes(method: string, path: string, status: number | string): string[] {
  const content = responseObject(method, path, status).content;
  return isObject(content) ? Object.keys(content) : [];
}

// ---------------------------------------------------------------------------------------------
// Schema conversion: OpenAPI 3.0 schema object → JSON Schema for Ajv

function resolveRef(value: Json | undefined): Json | undefined {
  if (!isObject(value) || typeof value.$ref !== 'string') return value;
  return lookupRef(value.$ref);
}

function lookupRef(ref: string): Json {
  if (!ref.startsWith('#/')) throw new Error(`Only local $refs are supported, got ${ref}`);
  let node: Json | undefined = upstreamDocument();
  for (const raw of ref.slice(2).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    node = isObject(node) ? node[part] : undefined;
  }
  if (node === undefined) throw new Error(`Unresolvable $ref ${ref} in the upstream document`);
  return node;
}

// Keywords whose value is one schema, a list of schemas, or a map of name → schema. Everything
// else is copied as is (enum, default, example, required ... and names inside `properties`
// are never mistaken for keywords).
const ONE_SCHEMA = new Set(['items', 'not', 'additionalProperties', 'contains', 'propertyNames']);
const SCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf']);
const SCHEMA_MAP = new Set(['properties', 'patternProperties']);

interface ConvertOptions {
  strictAttributes: boolean;
}

function convert(schema: Json, options: ConvertOptions, refStack: string[] = []): Json {
  if (!isObject(schema)) return schema;
  if (typeof schema.$ref === 'string') {
    const ref = schema.$ref;
    if (refStack.includes(ref)) throw new Error(`Recursive $ref ${[...refStack, ref].join(' → ')} is not supported`);
    // OpenAPI 3.0 ignores siblings of $ref except in practice `nullable`; keep that one.
    const target = convert(lookupRef(ref), options, [...refStack, ref]);
    return schema.nullable === true ? makeNullable(target) : target;
  }

  const out: SchemaObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'nullable') continue;
    if (ONE_SCHEMA.has(key) && isObject(value)) out[key] = convert(value, options, refStack);
    else if (SCHEMA_LIST.has(key) && Array.isArray(value)) out[key] = value.map((s) => convert(s, options, refStack));
    else if (SCHEMA_MAP.has(key) && isObject(value)) {
      const map: SchemaObject = {};
      for (const [name, sub] of Object.entries(value)) map[name] = convert(sub, options, refStack);
      out[key] = map;
    } else out[key] = value;
  }

  if (options.strictAttributes && isResourceObjectSchema(out)) {
    const properties = out.properties as SchemaObject;
    properties.attributes = closeAttributes(properties.attributes as Json);
  }
  return schema.nullable === true ? makeNullable(out) : out;
}

function makeNullable(schema: Json): Json {
  if (!isObject(schema)) return schema;
  const out: SchemaObject = { ...schema };
  if (typeof out.type === 'string') out.type = [out.type, 'null'];
  else if (Array.isArray(out.type)) out.type = out.type.includes('null') ? out.type : [...out.type, 'null'];
  else return { anyOf: [out, { type: 'null' }] };
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  return out;
}

/** A JSON:API resource object: an object schema with `attributes` beside `id` or `type`. */
function isResourceObjectSchema(schema: SchemaObject): boolean {
  const properties = schema.properties;
  return isObject(properties) && 'attributes' in properties && ('id' in properties || 'type' in properties);
}

/** additionalProperties: false on an attributes schema that lists its properties (each branch of anyOf/oneOf too). */
function closeAttributes(schema: Json): Json {
  if (!isObject(schema)) return schema;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) return { ...schema, [key]: branches.map(closeAttributes) };
  }
  const listed = isObject(schema.properties) && Object.keys(schema.properties).length > 0;
  if (!listed || 'additionalProperties' in schema) return schema;
  return { ...schema, additionalProperties: false };
}

// ---------------------------------------------------------------------------------------------
// Public schema access and assertions

/**
 * The JSON Schema (converted as described above) of an upstream operation's response body,
 * or null when upstream documents that response with no body. Throws when upstream has no such
 * operation or status, or several media types and no `contentType` to choose one.
 */
export function upstreamResponseSchema(
  method: string,
  path: string,
  status: number | string,
  options: UpstreamMatchOptions = {},
): SchemaObject | null {
  const response = responseObject(method, path, status);
  const content = isObject(response.content) ? response.content : undefined;
  if (!content || Object.keys(content).length === 0) return null;
  const where = `Upstream ${method.toUpperCase()} ${path} ${status}`;
  let media: Json | undefined;
  if (options.contentType !== undefined) {
    const wanted = mediaTypeOf(options.contentType);
    const key = Object.keys(content).find((k) => mediaTypeOf(k) === wanted);
    if (key === undefined) {
      throw new Error(`${where} is not documented as ${wanted}; upstream documents ${Object.keys(content).join(', ')}`);
    }
    media = content[key];
  } else {
    const keys = Object.keys(content);
    if (keys.length > 1) throw new Error(`${where} documents several media types (${keys.join(', ')}); pass contentType`);
    media = content[keys[0] as string];
  }
  const schema = isObject(media) ? media.schema : undefined;
  if (schema === undefined) return null;
  const converted = convert(schema, { strictAttributes: options.strictAttributes ?? true });
  if (!isObject(converted)) throw new Error(`${where}: the schema is not an object`);
  return converted;
}

/** A components.schemas entry, converted; for statuses an operation does not document. */
export function upstreamComponentSchema(name: string, options: Pick<UpstreamMatchOptions, 'strictAttributes'> = {}): SchemaObject {
  const converted = convert({ $ref: `#/components/schemas/${name}` }, { strictAttributes: options.strictAttributes ?? true });
  if (!isObject(converted)) throw new Error(`components.schemas.${name} is not an object schema`);
  return converted;
}

// One Ajv for every schema: allErrors so a failure lists every problem, strict false because
// upstream schemas carry OpenAPI-only keywords (readOnly, example ...).
const ajv = new Ajv({ allErrors: true, strict: false });
// ajv-formats is CommonJS with exports.default; depending on the loader the default import is
// the plugin or the module object.
type FormatsPlugin = (instance: Ajv) => Ajv;
const formatsExport = addFormatsModule as unknown as FormatsPlugin & { default?: FormatsPlugin };
const addFormats: FormatsPlugin = formatsExport.default ?? formatsExport;
addFormats(ajv);

const compiled = new Map<string, ValidateFunction>();

function validatorFor(cacheKey: string, schema: SchemaObject): ValidateFunction {
  let validate = compiled.get(cacheKey);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(cacheKey, validate);
  }
  return validate;
}

function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map((e) => {
      const extra =
        e.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})` : '';
      return `  ${e.instancePath || '/'} ${e.message ?? e.keyword}${extra}`;
    })
    .join('\n');
}

function excerpt(body: unknown): string {
  const text = JSON.stringify(body);
  return text === undefined ? String(body) : text.length > 1500 ? `${text.slice(0, 1500)}…` : text;
}

/** Problems of a body against an upstream response schema; empty when it conforms. */
export function upstreamMismatches(
  method: string,
  path: string,
  status: number | string,
  body: unknown,
  options: UpstreamMatchOptions = {},
): string[] {
  if (UPSTREAM_SKIP_REASON) return [];
  const schema = upstreamResponseSchema(method, path, status, options);
  if (schema === null) {
    const empty = body === undefined || body === null || body === '';
    return empty ? [] : [`upstream documents no body for ${method.toUpperCase()} ${path} ${status}, but one was given`];
  }
  const key = JSON.stringify([method.toLowerCase(), path, String(status), options.contentType ? mediaTypeOf(options.contentType) : '', options.strictAttributes ?? true]);
  const validate = validatorFor(key, schema);
  if (validate(body)) return [];
  return describeErrors(validate.errors).split('\n');
}

/** Fails with every Ajv error when `body` does not match the upstream response schema. */
export function assertMatchesUpstream(
  method: string,
  path: string,
  status: number | string,
  body: unknown,
  options: UpstreamMatchOptions = {},
): void {
  if (UPSTREAM_SKIP_REASON) return;
  const problems = upstreamMismatches(method, path, status, body, options);
  if (problems.length > 0) {
    assert.fail(
      `Body does not match upstream ${method.toUpperCase()} ${path} ${status}` +
        `${options.contentType ? ` (${mediaTypeOf(options.contentType)})` : ''}:\n${problems.join('\n')}\nbody: ${excerpt(body)}`,
    );
  }
}

/** Fails when `body` does not match components.schemas[name] (e.g. errors_not_found). */
export function assertMatchesUpstreamComponent(name: string, body: unknown, options: Pick<UpstreamMatchOptions, 'strictAttributes'> = {}): void {
  if (UPSTREAM_SKIP_REASON) return;
  const validate = validatorFor(JSON.stringify(['component', name, options.strictAttributes ?? true]), upstreamComponentSchema(name, options));
  if (!validate(body)) {
    assert.fail(`Body does not match upstream components.schemas.${name}:\n${describeErrors(validate.errors)}\nbody: ${excerpt(body)}`);
  }
}

export interface InjectedResponse {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/**
 * Checks a whole response against upstream: the status is documented for the operation, the
 * Content-Type is one upstream documents for it, and the body validates against that schema.
 */
export function assertResponseMatchesUpstream(
  method: string,
  path: string,
  response: InjectedResponse,
  options: Omit<UpstreamMatchOptions, 'contentType'> = {},
): void {
  if (UPSTREAM_SKIP_REASON) return;
  const status = response.statusCode;
  const documented = upstreamContentTypes(method, path, status);
  const header = response.headers['content-type'];
  const contentType = typeof header === 'string' ? mediaTypeOf(header) : undefined;
  if (documented.length === 0) {
    assert.equal(response.body, '', `upstream documents no body for ${method.toUpperCase()} ${path} ${status}`);
    return;
  }
  assert.ok(
    contentType !== undefined && documented.some((d) => mediaTypeOf(d) === contentType),
    `${method.toUpperCase()} ${path} ${status} answered Content-Type ${String(header)}; upstream documents ${documented.join(', ')}`,
  );
  let body: unknown;
  try {
    body = JSON.parse(response.body);
  } catch {
    assert.fail(`${method.toUpperCase()} ${path} ${status}: the body is not JSON: ${response.body.slice(0, 200)}`);
  }
  assertMatchesUpstream(method, path, status, body, { ...options, contentType });
}
