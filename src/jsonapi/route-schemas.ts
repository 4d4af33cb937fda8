// Route schemas generated from the declarations. They document the API (the OpenAPI document is
// built from them); requests are checked by the planner, which gives better errors than Ajv.
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { JSONAPI_MEDIA_TYPE } from './http.js';
import { tagOf } from './nouns.js';
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

const identifier = (type: string) => Type.Object({ type: Type.Literal(type), id: Type.String() });

/** `data.meta` of an answer that carries something once (WriteDef.answerMeta). */
function answerMetaSchema(members: Record<string, string> | undefined): Record<string, TSchema> {
  if (!members) return {};
  const properties: Record<string, TSchema> = {};
  for (const [name, description] of Object.entries(members)) properties[name] = Type.String({ description });
  return { meta: Type.Object(properties) };
}

export function resourceObjectSchema(resource: ResourceDefinition, meta?: Record<string, string>): TObject {
  const attributes: Record<string, TSchema> = {};
  for (const [name, a] of Object.entries(resource.attributes)) attributes[name] = Type.Optional(attributeSchema(a));
  const relationships: Record<string, TSchema> = {};
  for (const [name, r] of Object.entries(resource.relationships)) {
    const links = Type.Optional(Type.Object({ self: Type.String(), related: Type.Optional(Type.String()) }));
    relationships[name] = Type.Optional(
      r.kind === 'to-one' || r.kind === 'has-one'
        ? Type.Object(
            { data: Type.Union([identifier(r.type), Type.Null()]), links },
            { description: TO_ONE_DESCRIPTION },
          )
        : Type.Object({ data: Type.Optional(Type.Array(identifier(r.type))), links }),
    );
  }
  return Type.Object(
    {
      id: Type.String(),
      type: Type.Literal(resource.type),
      attributes: Type.Object(attributes),
      ...(Object.keys(relationships).length > 0 ? { relationships: Type.Optional(Type.Object(relationships)) } : {}),
      links: Type.Optional(Type.Record(Type.String(), Type.String())),
      ...answerMetaSchema(meta),
    },
    { title: meta ? `${resource.type} (with meta)` : resource.type },
  );
}

export const errorDocumentSchema = Type.Object(
  {
    errors: Type.Array(
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
  },
  { title: 'JSON:API errors' },
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
      200: Type.Object({
        data: Type.Array(resourceObjectSchema(resource)),
        included: Type.Optional(Type.Array(Type.Object({ id: Type.String(), type: Type.String() }, { additionalProperties: true }))),
        links: Type.Object({
          self: Type.String(),
          first: Type.String(),
          prev: Type.Union([Type.String(), Type.Null()]),
          next: Type.Union([Type.String(), Type.Null()]),
          last: Type.String(),
        }),
        // Cursor pages (page[after] / page[before]) have no page numbers: only total_count.
        meta: Type.Object({
          total_pages: Type.Optional(Type.Integer()),
          total_count: Type.Integer(),
          current_page: Type.Optional(Type.Integer()),
        }),
      }),
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
      200: Type.Object({
        data: resourceObjectSchema(resource),
        included: Type.Optional(Type.Array(Type.Object({ id: Type.String(), type: Type.String() }, { additionalProperties: true }))),
        links: Type.Object({ self: Type.String(), current: Type.String() }),
      }),
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
      200: Type.Object({
        data: toOne ? Type.Union([identifier(relationship.type), Type.Null()]) : Type.Array(identifier(relationship.type)),
        links: Type.Object({ self: Type.String(), related: Type.Optional(Type.String()) }),
      }),
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

function writeBodySchema(resource: ResourceDefinition, rules: WriteRules, create: boolean): TObject {
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
    const member = Type.Object({ data: identifier(r.type) });
    relationships[name] = create && rule.required ? member : Type.Optional(member);
  }
  return Type.Object({
    data: Type.Object({
      type: Type.Literal(resource.type),
      ...(create ? {} : { id: Type.String({ description: 'The id in the path' }) }),
      attributes: Type.Optional(Type.Object(attributes)),
      ...(Object.keys(relationships).length > 0 ? { relationships: Type.Optional(Type.Object(relationships)) } : {}),
    }),
  });
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
    showResponse: Type.Object({
      data: resourceObjectSchema(resource, meta),
      links: Type.Object({ self: Type.String(), current: Type.String() }),
    }),
  };
}

export function createRouteSchema(registry: Registry, resource: ResourceDefinition, rules: WriteRules) {
  const { showResponse, ...schema } = writeRouteSchema(registry, resource, createSummary(resource), false, resource.write?.answerMeta);
  return {
    ...schema,
    body: writeBodySchema(resource, rules, true),
    response: { 201: { ...showResponse, description: 'Created; the Location header is links.self' }, ...writeErrors },
  };
}

export function updateRouteSchema(registry: Registry, resource: ResourceDefinition, rules: WriteRules) {
  const { showResponse, ...schema } = writeRouteSchema(registry, resource, updateSummary(resource), true);
  return { ...schema, body: writeBodySchema(resource, rules, false), response: { 200: showResponse, ...writeErrors } };
}

export function deleteRouteSchema(registry: Registry, resource: ResourceDefinition) {
  const { showResponse: _show, consumes: _consumes, ...schema } = writeRouteSchema(registry, resource, deleteSummary(resource), true);
  const { 409: _c, 415: _m, ...errors } = writeErrors;
  return {
    ...schema,
    response:
      resource.write?.deleteAnswer === 'no-content'
        ? { 204: Type.Null({ description: 'Deleted' }), ...errors }
        : { 200: Type.Object({ data: Type.Object({}) }, { description: 'Deleted' }), ...errors },
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
    body: Type.Object({ data: Type.Array(identifier(relationship.type)), meta: Type.Optional(Type.Record(Type.String(), Type.Unknown())) }),
    response: {
      200: Type.Object({ data: Type.Array(identifier(relationship.type)), links: Type.Object({ self: Type.String(), related: Type.Optional(Type.String()) }) }),
      ...writeErrors,
    },
  };
}

/** `POST /v1/<type>/<id>/<action>`. */
export function actionRouteSchema(registry: Registry, resource: ResourceDefinition, name: string, action: ActionDef) {
  const bodyResource = action.body ? registry.get(action.body.type) : undefined;
  const answer = bodyResource ?? resource;
  const showResponse = Type.Object({ data: resourceObjectSchema(answer, action.answerMeta), links: Type.Object({ self: Type.String(), current: Type.String() }) });
  return {
    tags: [tagOf(resource)],
    summary: actionSummary(resource, name),
    description: action.description,
    security: [{ Bearer: [] }],
    produces: [JSONAPI_MEDIA_TYPE],
    ...(action.body && bodyResource ? { consumes: [JSONAPI_MEDIA_TYPE, 'application/json'], body: writeBodySchema(bodyResource, action.body.rules, true) } : {}),
    params: Type.Object({ id: Type.String({ description: 'Record id' }) }),
    response: {
      [bodyResource ? 201 : action.accepted ? 202 : 200]: action.accepted
        ? { ...showResponse, description: 'Accepted: the work starts now and finishes later; the record as it is now' }
        : showResponse,
      ...writeErrors,
    },
  };
}
