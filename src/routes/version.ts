// GET /v1/version: no authentication; doubles as a health check.
import type { FastifyInstance } from 'fastify';
import { JSONAPI_MEDIA_TYPE } from '../jsonapi/http.js';
import { named } from '../jsonapi/schema-names.js';

export const API_TITLE = 'Site Business Service API';
export const API_VERSION = '1.1.0';

export function versionRoute(publicUrl: string) {
  const body = {
    meta: { title: API_TITLE, version: API_VERSION },
    links: { documentation: `${publicUrl}/docs` },
    jsonapi: { version: '1.1', specification: 'https://jsonapi.org/format/1.1/' },
  };
  const payload = JSON.stringify(body);
  return async function register(app: FastifyInstance): Promise<void> {
    app.get(
      '/version',
      {
        schema: {
          tags: ['Version'],
          produces: [JSONAPI_MEDIA_TYPE],
          summary: 'API version',
          description: 'The API title and version, a link to the documentation and the JSON:API version. No authentication.',
          response: {
            200: named('version_response', {
              type: 'object',
              properties: {
                meta: { type: 'object', properties: { title: { type: 'string' }, version: { type: 'string' } } },
                links: { type: 'object', properties: { documentation: { type: 'string' } } },
                jsonapi: { type: 'object', properties: { version: { type: 'string' }, specification: { type: 'string' } } },
              },
            }),
          },
        },
      },
      async (_request, reply) => reply.type(JSONAPI_MEDIA_TYPE).send(payload),
    );
  };
}
