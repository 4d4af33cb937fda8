// POST /v1/test_helpers/contacts/{id}/email_activity: something happened to a broadcast email for
// a contact (src/domain/email-activity.ts). Answers 201 with the recorded email_activities record
// (its contact, as it is after the activity, in `included` when the key may read contacts).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/authenticate.js';
import { withoutSiteNote } from '../auth/principal.js';
import { EMAIL_ACTIVITY_KINDS, recordEmailActivity } from '../domain/email-activity.js';
import { JSONAPI_MEDIA_TYPE } from '../jsonapi/http.js';
import { errorDocumentSchema, errorResponses, resourceObjectSchema } from '../jsonapi/route-schemas.js';
import { refuseQueryParameters } from '../jsonapi/routes.js';
import { readResourceDocument, type WriteRules } from '../jsonapi/write-document.js';
import { SANDBOX_TAG, type SandboxPart } from './part.js';

const RULES: WriteRules = { writable: ['kind', 'bounce_type'], required: ['kind'], relationships: { broadcast: { required: true } } };

export const emailActivityRoutes: SandboxPart = ({ engine }) =>
  async function register(app: FastifyInstance): Promise<void> {
    const activities = engine.registry.find('email_activities');
    const contacts = engine.registry.find('contacts');
    // An app built on a registry without them (the engine's own tests build one) serves no such route.
    if (!activities || !contacts) return;
    app.post<{ Params: { id: string } }>(
      '/contacts/:id/email_activity',
      {
        onRequest: refuseQueryParameters,
        schema: {
          tags: [SANDBOX_TAG],
          summary: 'Record email activity for a contact',
          description:
            `Something happened to a broadcast email for the contact: ${EMAIL_ACTIVITY_KINDS.join(', ')}. The contacts' and customers' email filters ` +
            '(`opened_email_broadcast_id`, `bounced_in_last`, `suppressed`, the engagement segments, ...) see it at once. bounced keeps the latest bounce on the ' +
            'contact (bounce_type hard unless soft is given); complained sets complained_at; complained and unsubscribed end the contact\'s marketing consent ' +
            '(subscribed false, its sequences and newsletters too). The broadcast must be of the contact\'s site and sent (sent_at not null, not later than now). ' +
            'Answers the recorded activity, with the contact in `included`.',
          security: [{ Bearer: [] }],
          produces: [JSONAPI_MEDIA_TYPE],
          consumes: [JSONAPI_MEDIA_TYPE, 'application/json'],
          params: Type.Object({ id: Type.String({ description: 'Contact id' }) }),
          body: Type.Object({
            data: Type.Object({
              type: Type.Literal('email_activities'),
              attributes: Type.Object({
                kind: Type.String({ enum: [...EMAIL_ACTIVITY_KINDS] }),
                bounce_type: Type.Optional(Type.Union([Type.String({ enum: ['hard', 'soft'], description: 'bounced only; default hard' }), Type.Null()])),
              }),
              relationships: Type.Object({
                broadcast: Type.Object({ data: Type.Object({ type: Type.Literal('email_broadcasts'), id: Type.String() }) }),
              }),
            }),
          }),
          response: {
            201: Type.Object(
              {
                data: resourceObjectSchema(activities),
                included: Type.Optional(Type.Array(resourceObjectSchema(contacts))),
                links: Type.Object({ self: Type.String(), current: Type.String() }),
              },
              { description: 'Recorded; the Location header is links.self' },
            ),
            ...errorResponses,
            404: { ...errorDocumentSchema, description: 'No such contact, or a broadcast not in its site (source.pointer names it)' },
            409: { ...errorDocumentSchema, description: 'data.type is not email_activities, or the broadcast is named with another type' },
            422: { ...errorDocumentSchema, description: 'A bad kind or bounce_type, or a broadcast not sent yet (source.pointer names it)' },
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const document = readResourceDocument(activities, request.body, RULES, { create: true });
        const recorded = await engine.transact(principal, (ctx, records) => recordEmailActivity(ctx, records, request.params.id, document));
        // Only for keys that may read contacts: including it for another key would answer 403 after the write.
        const include = contacts.readPermission === null || principal.permissions.has(contacts.readPermission) ? 'include=contact' : '';
        const doc = await engine.show(activities, String(recorded.id), include, withoutSiteNote(principal));
        return reply.code(201).header('location', doc.links.self).type(JSONAPI_MEDIA_TYPE).send(doc);
      },
    );
  };
