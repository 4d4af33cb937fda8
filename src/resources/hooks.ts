import { attr, defineResource, rel } from '../jsonapi/resource.js';

export const hooks = defineResource({
  type: 'hooks',
  table: 'hooks',
  nouns: { singular: 'webhook', plural: 'webhooks' },
  description: 'Webhook subscriptions: an event of the site and the URL it is posted to.',
  readPermission: 'view:hooks',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: '-created_at',
  attributes: {
    event: attr.string({
      filter: ['eq', 'in'],
      enum: ['purchase', 'payment_succeeded', 'order_created', 'form_submission', 'tag_added', 'tag_removed'],
    }),
    target_url: attr.string({ description: 'Where events are posted' }),
    resource_id: attr.integer({ nullable: true, description: 'The form or tag the hook is limited to, if any' }),
    created_at: attr.datetime({ sort: true }),
    updated_at: attr.datetime(),
  },
  relationships: { site: rel.toOne('sites', 'site_id') },
});
