// Email broadcasts and email activity: what the `*_email_broadcast_id` and engagement filters of
// contacts and customers read. The upstream API serves neither, so they are sandbox test helpers
// (docs/sandbox.md, "Email activity and broadcasts"), served under /v1/test_helpers in sandbox mode
// only, with the manage:sandbox permission: list, show and create broadcasts; show and list the
// activity that POST /v1/test_helpers/contacts/{id}/email_activity records (src/sandbox/email-activity.ts).
import { createEmailBroadcast, EMAIL_ACTIVITY_KINDS } from '../domain/email-activity.js';
import { attr, defineResource, namedFilter, rel } from '../jsonapi/resource.js';

// Test helpers: a sitebiz extension (docs/upstream-strict.md).
const SANDBOX = { pathPrefix: 'test_helpers', tag: 'Sandbox', upstream: false } as const;
const PERMISSION = 'manage:sandbox';

export const emailBroadcasts = defineResource({
  ...SANDBOX,
  type: 'email_broadcasts',
  table: 'email_broadcasts',
  description:
    'Email broadcasts of a site (a sandbox test helper: the upstream API lists none): the ids the contacts\' and customers\' `*_email_broadcast_id` filters take. ' +
    'POST makes one; POST /v1/test_helpers/contacts/{id}/email_activity records what happened to it for a contact.',
  readPermission: PERMISSION,
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: '-sent_at',
  attributes: {
    subject: attr.string({ sort: true, filter: ['eq', 'cont'], description: 'The subject line' }),
    sent_at: attr.datetime({
      nullable: true,
      sort: true,
      filter: ['gt', 'gte', 'lt', 'lte', 'null'],
      description: 'When it was sent (account time). A create without it is sent now; null: a draft, which records no activity',
    }),
    created_at: attr.datetime({ sort: true }),
    updated_at: attr.datetime(),
  },
  relationships: { site: rel.toOne('sites', 'site_id') },
  write: {
    permission: PERMISSION,
    // The site may be left out when the key reaches one site (src/domain/email-activity.ts).
    rules: { writable: ['subject', 'sent_at'], required: ['subject'], relationships: { site: { required: false } } },
    create: createEmailBroadcast,
  },
});

export const emailActivities = defineResource({
  ...SANDBOX,
  type: 'email_activities',
  table: 'email_events',
  nouns: { singular: 'email activity', plural: 'email activities' },
  description:
    'What happened to an email for a contact: sent, delivered, opened, clicked, bounced, dropped, complained or unsubscribed (a sandbox test helper). ' +
    'The seeded demo history is here too; POST /v1/test_helpers/contacts/{id}/email_activity records more.',
  readPermission: PERMISSION,
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: '-created_at',
  attributes: {
    kind: attr.string({ filter: ['eq', 'in'], enum: EMAIL_ACTIVITY_KINDS, description: 'What happened' }),
    bounce_type: attr.string({ nullable: true, enum: ['hard', 'soft'], description: 'hard or soft, for bounces; null otherwise' }),
    occurred_at: attr.datetime({ description: 'When it happened (account time)' }),
    created_at: attr.datetime({ sort: true }),
  },
  relationships: {
    site: rel.toOne('sites', 'site_id'),
    contact: rel.toOne('contacts', 'contact_id'),
    broadcast: rel.toOne('email_broadcasts', 'email_broadcast_id'),
  },
  filters: {
    contact_id: namedFilter('id', 'Activity of one contact', (eb, id) => eb('email_events.contact_id', '=', id), { references: 'contacts' }),
    email_broadcast_id: namedFilter('id', 'Activity of one broadcast', (eb, id) => eb('email_events.email_broadcast_id', '=', id), {
      references: 'email_broadcasts',
    }),
  },
});
