// GET /v1/events (a sitebiz extension, Stripe-style; docs/webhooks.md "Events"): every webhook event
// of the key's sites, as the outbox holds it (src/domain/outbox.ts), for integrations to reconcile
// against instead of trusting that every delivery arrived. The table is outbox_events (`events` is
// the calendar events' table, which no resource serves).
//
// Permissions: an event needs no permission of its own, but each one is seen only by keys holding
// the read permissions of its type, the same a key needs to create a hook for that event (a
// form_submission event shows a form submission, so it needs view:form_submissions). A key without
// view:hooks reads the events it may read; one holding no such permission sees an empty list.
import { EVENT_READ_PERMISSIONS, HOOK_EVENT_NAMES } from '../domain/hooks.js';
import { attr, defineResource, rel } from '../jsonapi/resource.js';

export const events = defineResource({
  type: 'events',
  upstream: false, // a sitebiz extension (docs/upstream-strict.md)
  table: 'outbox_events',
  description:
    'Webhook events (a sitebiz extension): everything the site\'s hooks were or would have been sent, newest first, each with its payload as deliveries carry it. ' +
    'A key sees the events whose type\'s read permissions it holds (purchase: view:purchases; payment_succeeded: view:transactions; order_created: view:transactions and view:orders; ' +
    'form_submission: view:form_submissions; tag_added and tag_removed: view:contacts).',
  readPermission: null,
  recordPermissions: { column: 'event_type', permissions: EVENT_READ_PERMISSIONS },
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: '-id',
  attributes: {
    event: attr.string({ column: 'event_type', filter: ['eq', 'in'], enum: HOOK_EVENT_NAMES }),
    resource_id: attr.id({
      nullable: true,
      description: 'The id of the record that triggered the event (the `id` of a delivery\'s body); null for events recorded before sitebiz delivered webhooks',
    }),
    payload: attr.json({
      description:
        'The JSON:API resources of the event, rendered as GET rendered them when the event happened (the `payload` of a delivery\'s body); events recorded before sitebiz delivered webhooks hold an object of ids',
    }),
    created_at: attr.datetime({ sort: true, filter: ['gt', 'gte', 'lt', 'lte'] }),
  },
  relationships: {
    site: rel.toOne('sites', 'site_id'),
    deliveries: rel.toMany('webhook_deliveries', 'event_id', { links: true, linkage: false }),
  },
});
