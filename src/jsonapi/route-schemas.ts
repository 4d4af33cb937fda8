// Route schemas generated from the declarations. They document the API (the OpenAPI document is
// built from them); requests are checked by the planner, which gives better errors than Ajv.
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { JSONAPI_MEDIA_TYPE } from './http.js';
import { nounsOf, tagOf } from './nouns.js';
import { PREDICATE_MEANINGS } from './predicates.js';
import { filterNames, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './planner.js';
import type { Registry } from './registry.js';
import type { ActionDef, AttributeDef, RelationshipDef, ResourceDefinition } from './resource.js';
import {
  actionSummary,
  createSummary,
  deleteSummary,
  listSummary,
  relatedSummary,
  relationshipSummary,
  relationshipWriteSummary,
  showSummary,
  updateSummary,
} from './route-summaries.js';
import type { WriteRules } from './write-document.js';
import { named, SCHEMA_NAME_KEY } from './schema-names.js';

export { named, SCHEMA_NAME_KEY };

const nullable = (schema: TSchema, isNullable: boolean) => (isNullable ? Type.Union([schema, Type.Null()]) : schema);

function attributeSchema(a: AttributeDef): TSchema {
  const description = a.description ? { description: a.description } : {};
  let base: TSchema;
  switch (a.type) {
    case 'string':
      base = a.enumValues ? Type.String({ enum: [...a.enumValues], ...description }) : Type.String(description);
      break;
    case 'integer':
      base = Type.Integer(description);
      break;
    case 'number':
      base = Type.Number(description);
      break;
    case 'boolean':
      base = Type.Boolean(description);
      break;
    case 'datetime':
      base = Type.String({ format: 'date-time', ...description });
      break;
    case 'id':
      base = Type.String(description);
      break;
    case 'json':
      base = Type.Unknown(description);
      break;
  }
  return nullable(base, a.nullable);
}

// Upstream's schemas type a to-one's data as an object only; JSON:API says null (docs/upstream-divergences.md).
const TO_ONE_DESCRIPTION =
  'data is null when there is no related record, as JSON:API requires (the upstream description types it as an object only; see docs/upstream-divergences.md)';

/**
 * A resource identifier, named as the upstream names it. Its type is any string, as the upstream's;
 * where a member always holds one type, the member's description names it.
 */
export const resourceIdentifierSchema = () =>
  named('resource_identifier', Type.Object({ type: Type.String(), id: Type.String() }, { description: 'A resource identifier: the type and id of a record' }));
const identifierOf = (type: string) => ({ ...resourceIdentifierSchema(), description: `Identifier of a ${type} record` });
const identifiersOf = (type: string) => Type.Array(resourceIdentifierSchema(), { description: `Identifiers of ${type} records` });

/** Links of a relationship member and of a relationship document. */
const relationshipLinksSchema = () =>
  named('relationship_links', Type.Object({ self: Type.String(), related: Type.Optional(Type.String()) }));

/** Links of a single-record document. */
export const recordLinksSchema = () => named('record_links', Type.Object({ self: Type.String(), current: Type.String() }));

/**
 * Links of a list document. `prev` and `next` are null when there is no such page, as the seed
 * says of every list (upstream's podcast list alone types them as strings: docs/upstream-divergences.md).
 */
const listLinksSchema = () =>
  named(
    'list_links',
    Type.Object({
      self: Type.String(),
      first: Type.String(),
      prev: Type.Union([Type.String(), Type.Null()]),
      next: Type.Union([Type.String(), Type.Null()]),
      last: Type.String(),
    }),
  );

/** `meta` of a list. Cursor pages (page[after] / page[before]) have no page numbers: only total_count. */
const listMetaSchema = () =>
  named(
    'list_meta',
    Type.Object({ total_pages: Type.Optional(Type.Integer()), total_count: Type.Integer(), current_page: Type.Optional(Type.Integer()) }),
  );

/** A record of any type in `included`; its type says which resource's schema it follows. */
const includedResourceSchema = () =>
  named('included_resource', Type.Object({ id: Type.String(), type: Type.String() }, { additionalProperties: true }));

/** `data.meta` of an answer that carries something once (WriteDef.answerMeta). */
function answerMetaSchema(members: Record<string, string> | undefined): Record<string, TSchema> {
  if (!members) return {};
  const properties: Record<string, TSchema> = {};
  for (const [name, description] of Object.entries(members)) properties[name] = Type.String({ description });
  return { meta: Type.Object(properties) };
}

/** `<type>_attributes`: every attribute of a record, as the upstream names the object. */
export function attributesSchema(resource: ResourceDefinition): TSchema {
  const attributes: Record<string, TSchema> = {};
  for (const [name, a] of Object.entries(resource.attributes)) attributes[name] = Type.Optional(attributeSchema(a));
  return named(`${resource.type}_attributes`, Type.Object(attributes));
}

/** `<type>_relationships`, or undefined for a resource without relationships. */
function relationshipsSchema(resource: ResourceDefinition): TSchema | undefined {
  const relationships: Record<string, TSchema> = {};
  for (const [name, r] of Object.entries(resource.relationships)) {
    const links = Type.Optional(relationshipLinksSchema());
    relationships[name] = Type.Optional(
      r.kind === 'to-one' || r.kind === 'has-one'
        ? Type.Object({ data: Type.Union([identifierOf(r.type), Type.Null()]), links }, { description: TO_ONE_DESCRIPTION })
        : Type.Object({ data: Type.Optional(identifiersOf(r.type)), links }),
    );
  }
  if (Object.keys(relationships).length === 0) return undefined;
  return named(`${resource.type}_relationships`, Type.Object(relationships));
}

/**
 * `<type>_resource`: one record as a resource object. An answer that also carries `data.meta`
 * (an action's or a create's answerMeta) is described inline around the same named parts.
 */
export function resourceObjectSchema(resource: ResourceDefinition, meta?: Record<string, string>): TSchema {
  const relationships = relationshipsSchema(resource);
  const object = Type.Object({
    id: Type.String(),
    type: Type.Literal(resource.type),
    attributes: attributesSchema(resource),
    ...(relationships ? { relationships: Type.Optional(relationships) } : {}),
    links: Type.Optional(Type.Record(Type.String(), Type.String())),
    ...answerMetaSchema(meta),
  });
  return meta ? object : named(`${resource.type}_resource`, object);
}

/** `<type>_show_response`: the document of one record. */
export function showDocumentSchema(resource: ResourceDefinition): TSchema {
  return named(
    `${resource.type}_show_response`,
    Type.Object({ data: resourceObjectSchema(resource), included: Type.Optional(Type.Array(includedResourceSchema())), links: recordLinksSchema() }),
  );
}

/** `<type>_index_response`: a page of records. */
export function listDocumentSchema(resource: ResourceDefinition): TSchema {
  return named(
    `${resource.type}_index_response`,
    Type.Object({
      data: Type.Array(resourceObjectSchema(resource)),
      included: Type.Optional(Type.Array(includedResourceSchema())),
      links: listLinksSchema(),
      meta: listMetaSchema(),
    }),
  );
}

/**
 * The error document every refusal answers with: `errors`, each item an `errors_attributes` (the
 * upstream's name for one error object). Routes spread it with their own `description`, which
 * becomes the response's description (see schema-names.ts).
 */
export const errorDocumentSchema = named(
  'errors',
  Type.Object({
    errors: Type.Array(
      named(
        'errors_attributes',
        Type.Object({
          status: Type.String(),
          code: Type.String(),
          title: Type.String(),
          detail: Type.String(),
          source: Type.Optional(
            Type.Object({ pointer: Type.Optional(Type.String()), parameter: Type.Optional(Type.String()), header: Type.Optional(Type.String()) }),
          ),
        }),
      ),
    ),
  }),
);

/** Reads answer conditional requests (src/jsonapi/entity-tags.ts). */
const notModifiedResponse = {
  304: {
    type: 'null',
    description: "Not Modified: If-None-Match named this answer's ETag (every 200 answer carries one), so the client's copy is current. No body",
  },
};

export const errorResponses = {
  400: { ...errorDocumentSchema, description: 'Invalid query parameter (source.parameter names it)' },
  401: { ...errorDocumentSchema, description: 'Missing, malformed, expired or revoked access token' },
  403: { ...errorDocumentSchema, description: 'The API key lacks the permission for this operation' },
};

/**
 * A list answers 404 when `filter[site_id]`, or an id filter that references a table, names a
 * record the key cannot reach (exactly as for a missing one).
 */
function listNotFoundResponse(resource: ResourceDefinition) {
  const referencing = Object.entries(resource.filters).filter(([, f]) => f.references !== undefined).map(([name]) => `filter[${name}]`);
  const parameters = [...(resource.tenancy.kind === 'site' ? ['filter[site_id]'] : []), ...referencing];
  if (parameters.length === 0) return {};
  return { 404: { ...errorDocumentSchema, description: `${parameters.join(' or ')} names a record this token cannot reach (source.parameter names it)` } };
}

function includable(registry: Registry, resource: ResourceDefinition, depth = 0, seen = new Set<string>()): Set<string> {
  seen.add(resource.type);
  if (depth >= 3) return seen;
  for (const r of Object.values(resource.relationships)) {
    if (!seen.has(r.type)) includable(registry, registry.get(r.type), depth + 1, seen);
  }
  return seen;
}

function readParameters(registry: Registry, resource: ResourceDefinition): Record<string, TSchema> {
  const params: Record<string, TSchema> = {};
  const relationships = Object.keys(resource.relationships);
  if (relationships.length > 0) {
    params.include = Type.Optional(
      Type.String({ description: `Comma list of relationship paths to include (dotted for nested): ${relationships.join(', ')}` }),
    );
  }
  for (const type of includable(registry, resource)) {
    const names = Object.keys(registry.get(type).attributes);
    params[`fields[${type}]`] = Type.Optional(Type.String({ description: `Comma list of ${type} attributes to return: ${names.join(', ')}` }));
  }
  return params;
}

export function listRouteSchema(registry: Registry, resource: ResourceDefinition) {
  const sortable = registry.sortableNames(resource);
  const filters: Record<string, TSchema> = {};
  for (const name of filterNames(resource)) {
    filters[`filter[${name}]`] = Type.Optional(Type.String({ description: describeFilter(resource, name) }));
  }
  return {
    tags: [tagOf(resource)],
    summary: listSummary(resource),
    description: resource.description,
    security: [{ Bearer: [] }],
    // The media type every response of these routes is sent with; @fastify/swagger documents
    // application/json unless told.
    produces: [JSONAPI_MEDIA_TYPE],
    querystring: Type.Object({
      'page[number]': Type.Optional(Type.Integer({ minimum: 1, description: 'Page to return (default 1)' })),
      'page[size]': Type.Optional(
        Type.Integer({
          minimum: 1,
          description: `Records per page (default ${DEFAULT_PAGE_SIZE}, max ${MAX_PAGE_SIZE}); a larger size is served as ${MAX_PAGE_SIZE}, and the links carry the size used`,
        }),
      ),
      'page[after]': Type.Optional(
        Type.String({
          description:
            'Cursor paging (a sitebiz extension, docs/paging.md): the records after this cursor, taken from links.next; empty to start at the beginning. Not with page[number].',
        }),
      ),
      'page[before]': Type.Optional(
        Type.String({
          description: 'Cursor paging: the records before this cursor, taken from links.prev; empty for the last page. Not with page[number].',
        }),
      ),
      sort: Type.Optional(
        Type.String({ description: `One of ${['id', ...sortable].join(', ')}; prefix - for descending. Default ${resource.defaultSort}` }),
      ),
      ...readParameters(registry, resource),
      ...filters,
    }),
    response: {
      200: { ...listDocumentSchema(resource), description: `A page of ${nounsOf(resource).plural}` },
      ...notModifiedResponse,
      ...errorResponses,
      ...listNotFoundResponse(resource),
    },
  };
}

export function showRouteSchema(registry: Registry, resource: ResourceDefinition, withIdParam = true) {
  return {
    tags: [tagOf(resource)],
    summary: showSummary(resource),
    description: resource.description,
    security: [{ Bearer: [] }],
    // The media type every response of these routes is sent with; @fastify/swagger documents
    // application/json unless told.
    produces: [JSONAPI_MEDIA_TYPE],
    ...(withIdParam ? { params: Type.Object({ id: Type.String({ description: 'Record id' }) }) } : {}),
    querystring: Type.Object(readParameters(registry, resource)),
    response: {
      200: { ...showDocumentSchema(resource), description: `The ${nounsOf(resource).singular}` },
      ...notModifiedResponse,
      ...errorResponses,
      404: { ...errorDocumentSchema, description: 'No such record, or one this token may not see' },
    },
  };
}

function describeFilter(resource: ResourceDefinition, name: string): string {
  if (name === 'site_id') return 'Restrict to one site; required when the user can access several sites';
  const named = resource.filters[name];
  if (named) return named.description;
  for (const [attrName, a] of Object.entries(resource.attributes)) {
    for (const suffix of a.predicates) {
      if (`${attrName}_${suffix}` === name) return `${attrName} ${PREDICATE_MEANINGS[suffix]}`;
    }
  }
  return name;
}

export function relationshipRouteSchema(resource: ResourceDefinition, name: string, relationship: RelationshipDef) {
  const toOne = relationship.kind === 'to-one' || relationship.kind === 'has-one';
  return {
    tags: [tagOf(resource)],
    summary: relationshipSummary(resource, name),
    description: `Resource identifiers of the ${relationship.type} related to the record as ${name}.`,
    security: [{ Bearer: [] }],
    produces: [JSONAPI_MEDIA_TYPE],
    params: Type.Object({ id: Type.String({ description: 'Record id' }) }),
    response: {
      200: toOne
        ? named('to_one_relationship_response', Type.Object({ data: Type.Union([resourceIdentifierSchema(), Type.Null()]), links: relationshipLinksSchema() }))
        : named('to_many_relationship_response', Type.Object({ data: Type.Array(resourceIdentifierSchema()), links: relationshipLinksSchema() })),
      ...errorResponses,
      404: { ...errorDocumentSchema, description: 'No such record, or one this token may not see' },
    },
  };
}

/** `GET /v1/<type>/<id>/<name>`: the related records, as a list of the target type. */
export function relatedRouteSchema(registry: Registry, resource: ResourceDefinition, name: string, target: ResourceDefinition) {
  const list = listRouteSchema(registry, target);
  return {
    ...list,
    tags: [tagOf(resource)],
    summary: relatedSummary(resource, name),
    description: `The ${target.type} related to the record as ${name}, with the list parameters of ${target.type}.`,
    params: Type.Object({ id: Type.String({ description: 'Record id' }) }),
    response: { ...list.response, 404: { ...errorDocumentSchema, description: 'No such record, or one this token may not see' } },
  };
}

// --- Writes (resources that declare `write`) -----------------------------------------------------

const writeErrors = {
  400: { ...errorDocumentSchema, description: 'Malformed document: bad JSON, no data, a missing type or id (source.pointer names the member)' },
  401: errorResponses[401],
  403: { ...errorDocumentSchema, description: 'The API key lacks the permission, or the document carries a client-generated id' },
  404: { ...errorDocumentSchema, description: 'No such record, or a related record this token may not see (source.pointer names it)' },
  409: { ...errorDocumentSchema, description: 'data.type or data.id does not match the endpoint' },
  415: { ...errorDocumentSchema, description: 'The body is not application/vnd.api+json or application/json' },
  422: { ...errorDocumentSchema, description: 'An attribute or relationship breaks a rule (source.pointer names it)' },
};

/**
 * A write document, named `name` (`<type>_create_request`, `<type>_update_request`, or an
 * action's `<type>_<action>_request`): the attributes and relationships `rules` allow.
 */
function writeBodySchema(name: string, resource: ResourceDefinition, rules: WriteRules, create: boolean): TSchema {
  const attributes: Record<string, TSchema> = {};
  for (const name of rules.writable) {
    const a = resource.attributes[name];
    if (!a) continue;
    const required = create && (rules.required ?? []).includes(name);
    attributes[name] = required ? attributeSchema(a) : Type.Optional(attributeSchema(a));
  }
  const relationships: Record<string, TSchema> = {};
  for (const [name, rule] of Object.entries(rules.relationships ?? {})) {
    const r = resource.relationships[name]!;
    const member = Type.Object({ data: identifierOf(r.type) });
    relationships[name] = create && rule.required ? member : Type.Optional(member);
  }
  return named(
    name,
    Type.Object({
      data: Type.Object({
        type: Type.Literal(resource.type),
        ...(create ? {} : { id: Type.String({ description: 'The id in the path' }) }),
        attributes: Type.Optional(Type.Object(attributes)),
        ...(Object.keys(relationships).length > 0 ? { relationships: Type.Optional(Type.Object(relationships)) } : {}),
      }),
    }),
  );
}

/** The answer of a write: the record, with `data.meta` when the write declares some. */
function writeAnswerSchema(resource: ResourceDefinition, meta?: Record<string, string>): TSchema {
  return meta ? Type.Object({ data: resourceObjectSchema(resource, meta), links: recordLinksSchema() }) : showDocumentSchema(resource);
}

function writeRouteSchema(registry: Registry, resource: ResourceDefinition, summary: string, withId: boolean, meta?: Record<string, string>) {
  return {
    tags: [tagOf(resource)],
    summary,
    description: resource.description,
    security: [{ Bearer: [] }],
    produces: [JSONAPI_MEDIA_TYPE],
    consumes: [JSONAPI_MEDIA_TYPE, 'application/json'],
    ...(withId ? { params: Type.Object({ id: Type.String({ description: 'Record id' }) }) } : {}),
    showResponse: writeAnswerSchema(resource, meta),
  };
}

export function createRouteSchema(registry: Registry, resource: ResourceDefinition, rules: WriteRules) {
  const { showResponse, ...schema } = writeRouteSchema(registry, resource, createSummary(resource), false, resource.write?.answerMeta);
  return {
    ...schema,
    body: writeBodySchema(`${resource.type}_create_request`, resource, rules, true),
    response: { 201: { ...showResponse, description: 'Created; the Location header is links.self' }, ...writeErrors },
  };
}

export function updateRouteSchema(registry: Registry, resource: ResourceDefinition, rules: WriteRules) {
  const { showResponse, ...schema } = writeRouteSchema(registry, resource, updateSummary(resource), true);
  return { ...schema, body: writeBodySchema(`${resource.type}_update_request`, resource, rules, false), response: { 200: showResponse, ...writeErrors } };
}

export function deleteRouteSchema(registry: Registry, resource: ResourceDefinition) {
  const { showResponse: _show, consumes: _consumes, ...schema } = writeRouteSchema(registry, resource, deleteSummary(resource), true);
  const { 409: _c, 415: _m, ...errors } = writeErrors;
  return {
    ...schema,
    response:
      resource.write?.deleteAnswer === 'no-content'
        ? { 204: Type.Null({ description: 'Deleted' }), ...errors }
        : { 200: { ...named('empty_response', Type.Object({ data: Type.Object({}) })), description: 'Deleted' }, ...errors },
  };
}

/** POST (add), PATCH (replace) and DELETE (remove) on a to-many relationship endpoint. */
export function relationshipWriteRouteSchema(
  resource: ResourceDefinition,
  name: string,
  relationship: RelationshipDef,
  operation: 'add' | 'replace' | 'remove',
) {
  return {
    tags: [tagOf(resource)],
    summary: relationshipWriteSummary(resource, name, operation),
    description: [
      `Body: {"data": [{"type": "${relationship.type}", "id": "..."}], "meta": {...}}. Answers with the relationship's linkage afterwards.`,
      relationship.write?.description,
    ]
      .filter((text) => text !== undefined)
      .join(' '),
    security: [{ Bearer: [] }],
    produces: [JSONAPI_MEDIA_TYPE],
    consumes: [JSONAPI_MEDIA_TYPE, 'application/json'],
    params: Type.Object({ id: Type.String({ description: 'Record id' }) }),
    body: named(
      'to_many_relationship_request',
      Type.Object({ data: Type.Array(resourceIdentifierSchema()), meta: Type.Optional(Type.Record(Type.String(), Type.Unknown())) }),
    ),
    response: {
      200: named('to_many_relationship_response', Type.Object({ data: Type.Array(resourceIdentifierSchema()), links: relationshipLinksSchema() })),
      ...writeErrors,
    },
  };
}

/** `POST /v1/<type>/<id>/<action>`. */
export function actionRouteSchema(registry: Registry, resource: ResourceDefinition, name: string, action: ActionDef) {
  const bodyResource = action.body ? registry.get(action.body.type) : undefined;
  const answer = bodyResource ?? resource;
  const showResponse = writeAnswerSchema(answer, action.answerMeta);
  return {
    tags: [tagOf(resource)],
    summary: actionSummary(resource, name),
    description: action.description,
    security: [{ Bearer: [] }],
    produces: [JSONAPI_MEDIA_TYPE],
    ...(action.body && bodyResource ? { consumes: [JSONAPI_MEDIA_TYPE, 'application/json'], body: writeBodySchema(`${resource.type}_${name}_request`, bodyResource, action.body.rules, true) } : {}),
    params: Type.Object({ id: Type.String({ description: 'Record id' }) }),
    response: {
      [bodyResource ? 201 : action.accepted ? 202 : 200]: action.accepted
        ? { ...showResponse, description: 'Accepted: the work starts now and finishes later; the record as it is now' }
        : showResponse,
      ...writeErrors,
    },
  };
}
