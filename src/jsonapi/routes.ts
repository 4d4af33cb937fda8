// Mounts the generic list and show routes of every declared resource.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { principalOf } from '../auth/authenticate.js';
import type { JsonApiEngine } from './engine.js';
import { invalidParameter } from './errors.js';
import { JSONAPI_MEDIA_TYPE } from './http.js';
import { parseQueryString } from './query-parser.js';
import {
  actionRouteSchema,
  createRouteSchema,
  deleteRouteSchema,
  listRouteSchema,
  relatedRouteSchema,
  relationshipRouteSchema,
  relationshipWriteRouteSchema,
  showRouteSchema,
  updateRouteSchema,
} from './route-schemas.js';
import { actionUpstream, deleteUpstream, EXTENSION_ROUTE, listUpstream, relationshipUpstream, showUpstream, writeUpstream } from './upstream-surface.js';

/** The raw query string of a request, without `?`. */
export function rawQueryOf(request: FastifyRequest): string {
  const at = request.url.indexOf('?');
  return at < 0 ? '' : request.url.slice(at + 1);
}

export function pathOf(request: FastifyRequest): string {
  const at = request.url.indexOf('?');
  return at < 0 ? request.url : request.url.slice(0, at);
}

/**
 * Writes and actions take no query parameter: JSON:API answers 400 for one the server does not
 * process, rather than writing as if it had not been given (`DELETE ...?include=x` deleted).
 */
export async function refuseQueryParameters(request: FastifyRequest): Promise<void> {
  const first = parseQueryString(rawQueryOf(request)).pairs[0];
  if (first) throw invalidParameter(first[0], `${first[0]} does not apply to ${request.method} ${pathOf(request)}, which takes no query parameters`);
}

/**
 * The routes of every declared resource served at `pathPrefix` (none: the API's own resources,
 * at /v1/<type>), relative to where they are registered: an extension that serves resources under
 * a prefix of its own (the sandbox, /v1/test_helpers) mounts them inside its scope.
 */
export function resourceRoutes(engine: JsonApiEngine, pathPrefix?: string) {
  return async function register(app: FastifyInstance): Promise<void> {
    const registry = engine.registry;
    for (const resource of registry.all()) {
      if (resource.pathPrefix !== pathPrefix) continue;
      if (resource.routes.list) {
        app.get(`/${resource.type}`, { schema: listRouteSchema(registry, resource), config: { upstream: listUpstream(registry, resource) } }, async (request, reply) => {
          const answer = await engine.listAnswer(resource, rawQueryOf(request), principalOf(request));
          return reply.type(JSONAPI_MEDIA_TYPE).header('etag', answer.etag).send(answer.body);
        });
      }
      for (const [name, relationship] of Object.entries(resource.relationships)) {
        if (!relationship.links) continue;
        app.get<{ Params: { id: string } }>(
          `/${resource.type}/:id/relationships/${name}`,
          { schema: relationshipRouteSchema(resource, name, relationship), config: { upstream: relationshipUpstream(resource, name) } },
          async (request, reply) => {
            const doc = await engine.relationship(resource, request.params.id, name, rawQueryOf(request), principalOf(request));
            return reply.type(JSONAPI_MEDIA_TYPE).send(doc);
          },
        );
        if (relationship.kind === 'to-many' || relationship.kind === 'to-many-through') {
          const target = engine.registry.get(relationship.type);
          app.get<{ Params: { id: string } }>(
            `/${resource.type}/:id/${name}`,
            // Related-record routes are a sitebiz extension (the seed's links.related).
            { schema: relatedRouteSchema(engine.registry, resource, name, target), config: { upstream: EXTENSION_ROUTE } },
            async (request, reply) => {
              const doc = await engine.related(resource, request.params.id, name, rawQueryOf(request), principalOf(request));
              return reply.type(JSONAPI_MEDIA_TYPE).send(doc);
            },
          );
        }
      }
      if (resource.routes.show) {
        app.get<{ Params: { id: string } }>(
          `/${resource.type}/:id`,
          { schema: showRouteSchema(engine.registry, resource), config: { upstream: showUpstream(registry, resource) } },
          async (request, reply) => {
            const answer = await engine.showAnswer(resource, request.params.id, rawQueryOf(request), principalOf(request));
            return reply.type(JSONAPI_MEDIA_TYPE).header('etag', answer.etag).send(answer.body);
          },
        );
      }
      const write = resource.write;
      if (write?.create) {
        const config = { upstream: writeUpstream(resource, write.rules) };
        app.post(`/${resource.type}`, { schema: createRouteSchema(engine.registry, resource, write.rules), config, onRequest: refuseQueryParameters }, async (request, reply) => {
          const doc = await engine.create(resource, request.body, principalOf(request));
          return reply.code(201).header('location', doc.links.self).type(JSONAPI_MEDIA_TYPE).send(doc);
        });
      }
      if (write?.update) {
        app.patch<{ Params: { id: string } }>(
          `/${resource.type}/:id`,
          {
            schema: updateRouteSchema(engine.registry, resource, write.updateRules ?? write.rules),
            config: { upstream: writeUpstream(resource, write.updateRules ?? write.rules) },
            onRequest: refuseQueryParameters,
          },
          async (request, reply) => {
            const doc = await engine.update(resource, request.params.id, request.body, principalOf(request));
            return reply.type(JSONAPI_MEDIA_TYPE).send(doc);
          },
        );
      }
      if (write?.delete) {
        app.delete<{ Params: { id: string } }>(
          `/${resource.type}/:id`,
          { schema: deleteRouteSchema(engine.registry, resource), config: { upstream: deleteUpstream(resource) }, onRequest: refuseQueryParameters },
          async (request, reply) => {
            const doc = await engine.delete(resource, request.params.id, principalOf(request));
            if (write.deleteAnswer === 'no-content') return reply.code(204).send();
            return reply.type(JSONAPI_MEDIA_TYPE).send(doc);
          },
        );
      }
      for (const [name, relationship] of Object.entries(resource.relationships)) {
        const relationshipWrite = relationship.write;
        if (!relationshipWrite) continue;
        const url = `/${resource.type}/:id/relationships/${name}`;
        const operations = [
          ['POST', 'add'],
          ['PATCH', 'replace'],
          ['DELETE', 'remove'],
        ] as const;
        for (const [method, operation] of operations) {
          if (!relationshipWrite[operation]) continue;
          app.route<{ Params: { id: string } }>({
            method,
            url,
            schema: relationshipWriteRouteSchema(resource, name, relationship, operation),
            config: { upstream: relationshipUpstream(resource, name) },
            onRequest: refuseQueryParameters,
            handler: async (request, reply) => {
              const doc = await engine.writeRelationship(resource, request.params.id, name, operation, request.body, principalOf(request));
              return reply.type(JSONAPI_MEDIA_TYPE).send(doc);
            },
          });
        }
      }
      for (const [name, action] of Object.entries(resource.actions)) {
        app.post<{ Params: { id: string } }>(
          `/${resource.type}/:id/${name}`,
          { schema: actionRouteSchema(engine.registry, resource, name, action), config: { upstream: actionUpstream(registry, resource, action) }, onRequest: refuseQueryParameters },
          async (request, reply) => {
            const { status, document } = await engine.action(resource, request.params.id, name, request.body, principalOf(request));
            if (status === 201) reply.header('location', document.links.self);
            return reply.code(status).type(JSONAPI_MEDIA_TYPE).send(document);
          },
        );
      }
    }
  };
}
