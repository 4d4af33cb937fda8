// The answers the HTTP edge gives on any route, documented on every operation in one place: an
// Accept the route cannot serve (406), a body it cannot read (400, 413, 415), a control character
// in the path, query or form (400), a path parameter longer than the router takes (414), a
// missing token (401), and the answers of rate limiting and of a server that is shutting down or
// unavailable (429, 503). The statuses that depend on the
// resource (404 of a record or a site filter, 409, 422) are in route-schemas.ts.
import type { FastifyInstance, RouteOptions } from 'fastify';
import { JSONAPI_MEDIA_TYPE } from './media-types.js';
import { errorDocumentSchema } from './route-schemas.js';

/** RFC 6749 §5.2, the errors of the OAuth endpoints. */
const oauthErrorSchema = {
  type: 'object',
  properties: { error: { type: 'string' }, error_description: { type: 'string' } },
} as const;

const METHODS_WITH_BODIES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface EdgeRoute {
  methods: readonly string[];
  url: string;
  jsonApi: boolean;
  bearer: boolean;
}

/** Status → description of what the edge may answer on such a route. */
export function edgeStatuses(route: EdgeRoute): Record<number, string> {
  const statuses: Record<number, string> = {};
  const body = route.methods.some((m) => METHODS_WITH_BODIES.has(m));
  // Any route: a control character in the path, the query or a form (control-characters.ts).
  statuses[400] = body
    ? 'The body is not JSON, not UTF-8, or holds an unpaired surrogate escape, or the path is not valid percent-encoding, or a path segment, query parameter or form field holds a control character'
    : route.url.includes(':')
      ? 'The path is not valid percent-encoding, or a path segment or query parameter holds a control character'
      : 'A query parameter holds a control character';
  if (route.bearer) statuses[401] = 'Missing, malformed, expired or revoked access token';
  if (route.jsonApi) statuses[406] = `Accept allows ${JSONAPI_MEDIA_TYPE} only with an extension or parameter this server does not support`;
  if (body) {
    statuses[413] = 'The body is larger than BODY_LIMIT';
    statuses[415] = 'The body is not JSON (or a form, on the OAuth endpoints), uses a JSON:API extension, or a charset other than UTF-8';
  }
  if (route.url.includes(':')) statuses[414] = 'A path parameter is longer than the router accepts';
  statuses[429] = 'Too many requests; retry after the time in Retry-After';
  statuses[503] = 'The server is shutting down or cannot reach its database; retry later';
  return statuses;
}

/**
 * Adds the edge's statuses to each route's documented responses (those a route documents itself
 * are left as they are). Call before the routes are added and before @fastify/swagger reads them.
 */
export function documentEdgeResponses(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const schema = route.schema as (RouteOptions['schema'] & { hide?: boolean; produces?: readonly string[]; security?: unknown[] }) | undefined;
    if (!schema || schema.hide || !schema.response) return;
    const jsonApi = schema.produces?.includes(JSONAPI_MEDIA_TYPE) ?? false;
    const bearer = JSON.stringify(schema.security ?? []).includes('"Bearer"');
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const responses = schema.response as Record<string, unknown>;
    const errorSchema = route.config?.errorFormat === 'oauth' ? oauthErrorSchema : errorDocumentSchema;
    for (const [status, description] of Object.entries(edgeStatuses({ methods, url: route.url, jsonApi, bearer }))) {
      if (!(status in responses)) responses[status] = { ...errorSchema, description };
    }
  });
}
