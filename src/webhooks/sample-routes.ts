// GET /v1/hooks/<event>_sample for the six events: the event's payload built from synthetic
// records with id 0 by the same builder as real deliveries (payloads.ts). Seeing a sample needs
// what creating a hook for the event needs: manage:hooks, view:hooks and the event's permissions.
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/authenticate.js';
import { HOOK_EVENT_NAMES, HOOK_EVENTS, requireEventPermissions } from '../domain/hooks.js';
import type { JsonApiEngine } from '../jsonapi/engine.js';
import { forbidden } from '../jsonapi/errors.js';
import { JSONAPI_MEDIA_TYPE } from '../jsonapi/http.js';
import { errorResponses, resourceObjectSchema } from '../jsonapi/route-schemas.js';
import { refuseQueryParameters } from '../jsonapi/routes.js';
import { UPSTREAM_WITHOUT_QUERY } from '../jsonapi/upstream-surface.js';
import { PAYLOAD_TYPES, samplePayload } from './payloads.js';

const SAMPLE_PERMISSIONS = ['manage:hooks', 'view:hooks'] as const;

export function hookSampleRoutes(engine: JsonApiEngine) {
  return async function register(app: FastifyInstance): Promise<void> {
    for (const event of HOOK_EVENT_NAMES) {
      const types = [...new Set(PAYLOAD_TYPES[event])];
      // An app built on a registry without hooks or the payload's types (the engine's own tests
      // build one) serves no sample for the event.
      if (!engine.registry.find('hooks') || !types.every((type) => engine.registry.find(type))) continue;
      const items: TSchema[] = types.map((type) => resourceObjectSchema(engine.registry.get(type)));
      const permissions = [...SAMPLE_PERMISSIONS, ...HOOK_EVENTS[event]!.permissions].join(', ');
      app.get(
        `/hooks/${event}_sample`,
        {
          onRequest: refuseQueryParameters,
          config: { upstream: UPSTREAM_WITHOUT_QUERY },
          schema: {
            tags: ['Webhooks'],
            summary: `Sample ${event.replace(/_/g, ' ')} payload`,
            description:
              `The payload of a ${event} delivery (${PAYLOAD_TYPES[event]!.join(', ')}), built from synthetic records with id "0" by the code that builds real deliveries. ` +
              `Needs ${permissions}, as creating a hook for ${event} does. The records' site relationship names the key's first site.`,
            security: [{ Bearer: [] }],
            produces: [JSONAPI_MEDIA_TYPE],
            response: {
              200: Type.Array(items.length === 1 ? items[0]! : Type.Union(items), { description: 'The sample payload: JSON:API resource objects' }),
              ...errorResponses,
            },
          },
        },
        async (request, reply) => {
          const principal = principalOf(request);
          const missing = SAMPLE_PERMISSIONS.filter((p) => !principal.permissions.has(p));
          if (missing.length > 0) throw forbidden(`Hook samples need the ${permissions} permissions; this API key lacks ${missing.join(' and ')}`);
          requireEventPermissions(principal.permissions, event);
          const siteId = principal.siteIds.length > 0 ? Math.min(...principal.siteIds) : null;
          return reply.type(JSONAPI_MEDIA_TYPE).send(samplePayload(engine, event, siteId));
        },
      );
    }
  };
}
