// Named schemas in the OpenAPI document. The route schemas (route-schemas.ts) are built per route,
// so the same record, list or error document appears under every operation that answers it. A
// schema marked with `named()` is declared once, under `components.schemas.<name>`, and every
// place it appears refers to it with `$ref`: the document shrinks to a fraction, and clients
// generated from it get one named type (`contacts_attributes`) instead of an anonymous literal
// per operation. Names follow the upstream description where it names the same thing.
import type { TSchema } from '@sinclair/typebox';

/** A schema written as a plain object (the routes that do not use TypeBox). */
type JsonSchemaObject = { readonly type: string };

/** The annotation that carries a schema's name until the document is assembled. */
export const SCHEMA_NAME_KEY = 'x-schema-name';

/** `schema`, to be declared once as `components.schemas.<name>`. */
export function named<T extends TSchema | JsonSchemaObject>(name: string, schema: T): T {
  return { ...schema, [SCHEMA_NAME_KEY]: name };
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (value: Json | undefined): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Moves every named schema of `document` to `components.schemas` and puts a `$ref` in its place.
 * A named schema's own top-level `description` says what it is where it is used (a response's
 * description, "Identifier of a sites record"), so it stays there, beside the `$ref`. Two different
 * schemas under one name are a programming error, reported when the document is first built.
 */
export function hoistNamedSchemas<T extends object>(document: T): T {
  const doc = document as unknown as JsonObject;
  const components = (isObject(doc.components) ? doc.components : (doc.components = {})) as JsonObject;
  const schemas = (isObject(components.schemas) ? components.schemas : (components.schemas = {})) as JsonObject;
  const declared = new Map<string, string>();

  const visit = (node: Json): Json => {
    if (Array.isArray(node)) return node.map(visit);
    if (!isObject(node)) return node;
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(node)) out[key] = visit(value);
    const name = out[SCHEMA_NAME_KEY];
    if (typeof name !== 'string') return out;
    const { [SCHEMA_NAME_KEY]: _name, description, ...schema } = out;
    const text = JSON.stringify(schema);
    const earlier = declared.get(name);
    if (earlier === undefined) {
      declared.set(name, text);
      schemas[name] = schema;
    } else if (earlier !== text) {
      throw new Error(`Two different schemas are named ${name} in the OpenAPI document:\n${earlier}\n${text}`);
    }
    const ref: JsonObject = { $ref: `#/components/schemas/${name}` };
    if (description !== undefined) ref.description = description;
    return ref;
  };

  for (const key of Object.keys(doc)) if (key !== 'components') doc[key] = visit(doc[key]!);
  // A response's description is also left in its schema by @fastify/swagger; once is enough.
  forEachResponse(doc, (response) => {
    if (!isObject(response.content)) return;
    for (const media of Object.values(response.content)) {
      if (isObject(media) && isObject(media.schema) && media.schema.description === response.description) delete media.schema.description;
    }
  });
  // Named components, sorted, so that the document reads (and diffs) in a stable order.
  components.schemas = sortedByKey(schemas);
  shareRepeated(doc, components);
  return document;
}

const sortedByKey = (members: JsonObject): JsonObject =>
  Object.fromEntries(Object.entries(members).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/**
 * Parameters and responses that several operations repeat word for word (`page[size]`,
 * `fields[contacts]`, the 401 of every protected route) are declared once, under
 * `components.parameters` and `components.responses`, and referred to. A response is keyed by its
 * status and description.
 */
function shareRepeated(doc: JsonObject, components: JsonObject): void {
  const operations: Array<[path: string, operation: JsonObject]> = [];
  if (isObject(doc.paths)) {
    for (const [path, item] of Object.entries(doc.paths)) {
      if (isObject(item)) for (const operation of Object.values(item)) if (isObject(operation)) operations.push([path, operation]);
    }
  }

  // Each way a parameter is described, with the operations that describe it so: a description
  // used by several operations is shared. The only description of a name is keyed by the name
  // (`fields.contacts`); when a name is described several ways (`sort`, per list) each shared one
  // also names the resource of its first operation (`sort.contacts`).
  const variants = new Map<string, Map<string, { parameter: JsonObject; uses: number; firstPath: string }>>();
  for (const [path, operation] of operations) {
    for (const parameter of Array.isArray(operation.parameters) ? operation.parameters : []) {
      // `required: false` is what a missing `required` means; @fastify/swagger writes it on every one.
      if (isObject(parameter) && parameter.required === false) delete parameter.required;
      if (!isObject(parameter) || typeof parameter.name !== 'string' || parameter.in === 'path') continue;
      const byText = variants.get(parameter.name) ?? variants.set(parameter.name, new Map()).get(parameter.name)!;
      const text = JSON.stringify(parameter);
      const variant = byText.get(text) ?? byText.set(text, { parameter, uses: 0, firstPath: path }).get(text)!;
      variant.uses++;
    }
  }
  const parameters: JsonObject = {};
  for (const [, operation] of operations) {
    if (!Array.isArray(operation.parameters)) continue;
    operation.parameters = operation.parameters.map((parameter) => {
      if (!isObject(parameter) || typeof parameter.name !== 'string' || parameter.in === 'path') return parameter;
      const byText = variants.get(parameter.name)!;
      const variant = byText.get(JSON.stringify(parameter))!;
      if (variant.uses < 2) return parameter;
      const resource = variant.firstPath.split('/').filter((part) => part !== '' && part !== 'v1' && !part.startsWith('{')).join('.');
      const name = componentKey(byText.size === 1 ? parameter.name : `${parameter.name}.${resource}`);
      parameters[name] = parameter;
      return { $ref: `#/components/parameters/${name}` };
    });
  }

  const responseUses = new Map<string, number>();
  for (const [, operation] of operations) {
    if (!isObject(operation.responses)) continue;
    for (const [status, response] of Object.entries(operation.responses)) {
      const text = `${status} ${JSON.stringify(response)}`;
      responseUses.set(text, (responseUses.get(text) ?? 0) + 1);
    }
  }
  const responses: JsonObject = {};
  for (const [, operation] of operations) {
    if (!isObject(operation.responses)) continue;
    for (const [status, response] of Object.entries(operation.responses)) {
      if (!isObject(response) || responseUses.get(`${status} ${JSON.stringify(response)}`)! < 2) continue;
      const name = responseKey(status, response, responses);
      responses[name] = response;
      operation.responses[status] = { $ref: `#/components/responses/${name}` };
    }
  }
  if (Object.keys(parameters).length > 0) components.parameters = sortedByKey(parameters);
  if (Object.keys(responses).length > 0) components.responses = sortedByKey(responses);
}

/**
 * A shared response's key: its status and the first words of its description
 * (`401_missing_malformed_expired_or_revoked_access_token`): a name that changes only when the
 * description does. Two different responses with one description are told apart by their
 * schema's name, then by a number.
 */
function responseKey(status: string, response: JsonObject, taken: JsonObject): string {
  const words = (typeof response.description === 'string' ? response.description : '').toLowerCase().match(/[a-z0-9]+/g) ?? [];
  const base = componentKey([status, ...words.slice(0, 6)].join('_'));
  // The same words over another body (an OAuth error rather than a JSON:API one) take its schema's name.
  const schemaRef = JSON.stringify(response).match(/"#\/components\/schemas\/([^"]+)"/)?.[1];
  const text = JSON.stringify(response);
  const candidates = [base, ...(schemaRef ? [`${base}_${schemaRef}`] : [])];
  for (let n = 2; ; n++) {
    const key = candidates.shift() ?? `${base}_${n}`;
    const earlier = taken[key];
    if (earlier === undefined || JSON.stringify(earlier) === text) return key;
  }
}

/** A component key (OpenAPI allows letters, digits, `.`, `-` and `_`): `fields[contacts]` → `fields.contacts`. */
const componentKey = (text: string) =>
  text
    .replace(/\[([^\]]*)\]/g, '.$1')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^_+/, '');

function forEachResponse(doc: JsonObject, visit: (response: JsonObject) => void): void {
  if (!isObject(doc.paths)) return;
  for (const item of Object.values(doc.paths)) {
    if (!isObject(item)) continue;
    for (const operation of Object.values(item)) {
      if (!isObject(operation) || !isObject(operation.responses)) continue;
      for (const response of Object.values(operation.responses)) if (isObject(response)) visit(response);
    }
  }
}
