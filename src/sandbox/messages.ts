// The mailbox (docs/sandbox.md "The mailbox"): the emails sitebiz would have sent, as
// outgoing_messages records them (welcome emails, double opt-in confirmations, receipts), served
// by the engine as the `messages` resource at GET /v1/test_helpers/messages, newest first.
//
// A double opt-in message carries a link that confirms the subscription when followed:
// GET /v1/test_helpers/confirm/<token>, served without a Bearer token (the person who follows it
// has none; the unguessable token is the credential), once (confirmDoubleOptIn), and only in
// sandbox mode like every test helper.
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { confirmDoubleOptIn } from '../domain/form-submissions.js';
import { errorDocumentSchema } from '../jsonapi/route-schemas.js';
import { notFound } from '../jsonapi/errors.js';
import { JSONAPI_MEDIA_TYPE } from '../jsonapi/http.js';
import { attr, defineResource, namedFilter, rel, type ResourceDefinition } from '../jsonapi/resource.js';
import { refuseQueryParameters } from '../jsonapi/routes.js';
import { SANDBOX_PERMISSION, SANDBOX_TAG, type SandboxServices } from './part.js';

/** Where a double opt-in link points, relative to PUBLIC_URL. */
export const CONFIRM_PATH = '/v1/test_helpers/confirm';

const confirmationUrl = (publicUrl: string, token: unknown) => (typeof token === 'string' && token !== '' ? `${publicUrl}${CONFIRM_PATH}/${token}` : null);

/** The `messages` resource; its links are built from PUBLIC_URL. */
export function messagesResource(publicUrl: string): ResourceDefinition {
  return defineResource({
    type: 'messages',
    upstream: false, // a sitebiz extension (docs/upstream-strict.md)
    table: 'outgoing_messages',
    pathPrefix: 'test_helpers',
    tag: SANDBOX_TAG,
    description:
      'The mailbox (sandbox): the emails sitebiz would have sent in the key\'s sites, newest first: customer_welcome (an offer granted), double_opt_in (a form with double opt-in; ' +
      'its body and confirmation_url carry a link that confirms the subscription when followed, once) and receipt (a sandbox checkout). Nothing is really sent.',
    readPermission: SANDBOX_PERMISSION,
    tenancy: { kind: 'site', column: 'site_id' },
    defaultSort: '-created_at',
    attributes: {
      kind: attr.string({ filter: ['eq', 'in'], description: 'customer_welcome, double_opt_in, receipt, ...' }),
      to: attr.string({ column: 'to_email', filter: ['eq', 'cont'], description: 'The recipient\'s email address' }),
      subject: attr.string({ filter: ['cont'] }),
      body: attr.computed(
        'string',
        ['body', 'confirmation_token'],
        (row) => {
          const url = confirmationUrl(publicUrl, row.confirmation_token);
          return url ? `${String(row.body)}\n\nConfirm your subscription: ${url}` : row.body;
        },
        { description: 'The text of the email; a double opt-in message ends with its confirmation link' },
      ),
      confirmation_url: attr.computed('string', ['confirmation_token'], (row) => confirmationUrl(publicUrl, row.confirmation_token), {
        nullable: true,
        description: 'Double opt-in: the link that confirms the subscription (GET, no token needed); null for other messages',
      }),
      confirmed_at: attr.datetime({ nullable: true, description: 'Double opt-in: when the link was followed; null until then' }),
      created_at: attr.datetime({ sort: true, filter: ['gt', 'gte', 'lt', 'lte'] }),
    },
    relationships: {
      site: rel.toOne('sites', 'site_id'),
      contact: rel.toOne('contacts', 'contact_id'),
    },
    filters: {
      kind: namedFilter('strings', 'Messages of these kinds, comma-separated', (eb, kinds) => eb('outgoing_messages.kind', 'in', kinds)),
      to: namedFilter('string', 'Messages to this email address (ignoring case)', (eb, email) => eb('outgoing_messages.to_email', '=', email.trim().toLowerCase())),
      email: namedFilter('string', 'The same as filter[to]', (eb, email) => eb('outgoing_messages.to_email', '=', email.trim().toLowerCase())),
      contact_id: namedFilter('id', 'Messages to this contact', (eb, id) => eb('outgoing_messages.contact_id', '=', id), { references: 'contacts' }),
    },
  });
}

const confirmationSchema = Type.Object({
  data: Type.Object({
    type: Type.Literal('subscription_confirmations'),
    id: Type.String({ description: 'The id of the double opt-in message' }),
    attributes: Type.Object({
      status: Type.Union([Type.Literal('confirmed'), Type.Literal('already_confirmed')]),
      email: Type.String(),
      contact_id: Type.Union([Type.String(), Type.Null()]),
    }),
  }),
});

/**
 * GET /v1/test_helpers/confirm/<token>: outside the authenticated routes (register it with the
 * /v1/test_helpers prefix, in sandbox mode only). 200 the first time and after (status says
 * which), 404 for a token no message carries.
 */
export function confirmationRoute(services: Pick<SandboxServices, 'database' | 'now'>) {
  return async function register(app: FastifyInstance): Promise<void> {
    app.get<{ Params: { token: string } }>(
      '/confirm/:token',
      {
        onRequest: refuseQueryParameters,
        schema: {
          tags: [SANDBOX_TAG],
          summary: 'Confirm a double opt-in subscription',
          description:
            'The link of a double opt-in message (GET /v1/test_helpers/messages, confirmation_url): the person who follows it has no token, so none is asked. ' +
            'The contact becomes subscribed (subscribed true, subscribed_at at the account\'s time), once; following it again answers already_confirmed and changes nothing.',
          params: Type.Object({ token: Type.String({ description: 'The token of the link' }) }),
          produces: [JSONAPI_MEDIA_TYPE],
          response: { 200: confirmationSchema, 404: { ...errorDocumentSchema, description: 'No message carries this token' } },
        },
      },
      async (request, reply) => {
        const token = request.params.token;
        const result = /^[A-Za-z0-9_-]{16,64}$/.test(token) ? await confirmDoubleOptIn(services.database, token, services.now()) : { outcome: 'unknown' as const };
        if (result.outcome === 'unknown') throw notFound('No double opt-in message carries this confirmation link');
        return reply.type(JSONAPI_MEDIA_TYPE).send({
          data: {
            type: 'subscription_confirmations',
            id: String(result.messageId),
            attributes: { status: result.outcome, email: result.email, contact_id: result.contactId === null ? null : String(result.contactId) },
          },
        });
      },
    );
  };
}
