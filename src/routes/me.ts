// GET /v1/me: the API key's user, rendered by the engine from the `users` declaration.
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/authenticate.js';
import type { JsonApiEngine } from '../jsonapi/engine.js';
import { JSONAPI_MEDIA_TYPE } from '../jsonapi/http.js';
import { showRouteSchema } from '../jsonapi/route-schemas.js';
import { rawQueryOf } from '../jsonapi/routes.js';
import { showWithoutQueryUpstream } from '../jsonapi/upstream-surface.js';

export function meRoute(engine: JsonApiEngine) {
  const users = engine.registry.get('users');
  return async function register(app: FastifyInstance): Promise<void> {
    app.get(
      '/me',
      { schema: { ...showRouteSchema(engine.registry, users, false), summary: 'The current user', tags: ['Me'] }, config: { upstream: showWithoutQueryUpstream(engine.registry, users) } },
      async (request, reply) => {
        const principal = principalOf(request);
        // The canonical path, whatever form (trailing slash) the request used.
        const doc = await engine.show(users, String(principal.userId), rawQueryOf(request), principal, '/v1/me');
        return reply.type(JSONAPI_MEDIA_TYPE).send(doc);
      },
    );
  };
}
