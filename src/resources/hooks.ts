import { checkHookTarget, createHook, deleteHook, enableHook, HOOK_EVENT_NAMES, rotateHookSecret } from '../domain/hooks.js';
import { attr, defineResource, rel } from '../jsonapi/resource.js';

export const hooks = defineResource({
  type: 'hooks',
  table: 'hooks',
  nouns: { singular: 'webhook', plural: 'webhooks' },
  description: 'Webhook subscriptions: an event of the site and the URL it is posted to.',
  readPermission: 'view:hooks',
  tenancy: { kind: 'site', column: 'site_id', siteFilter: 'optional' },
  defaultSort: '-id',
  attributes: {
    event: attr.string({
      filter: ['eq', 'in'],
      upstream: { filter: ['eq'] },
      enum: HOOK_EVENT_NAMES,
    }),
    target_url: attr.string({ description: 'Where events are posted: an absolute http or https URL' }),
    resource_id: attr.integer({
      nullable: true,
      // Upstream's own example sends "resource_id": "123"; its schema says integer. Both work.
      acceptsDigitString: true,
      description: 'The record the hook is limited to, if any: a contact tag (tag events), a form (form_submission) or an offer (purchase, payment_succeeded, order_created)',
    }),
    created_at: attr.datetime({ sort: true }),
    updated_at: attr.datetime(),
    disabled_at: attr.datetime({
      nullable: true,
      upstream: false,
      filter: ['null'],
      description:
        'When the hook was disabled (a sitebiz extension): because every delivery failed for 5 days, or from the start (the demo\'s hooks, whose hosts are made up); nothing is delivered to it until POST /v1/hooks/{id}/enable. Null while it is enabled',
    }),
    failing_since: attr.datetime({
      nullable: true,
      upstream: false,
      description:
        'When the hook\'s current run of failed deliveries began (a sitebiz extension): set by the first failure after a success, cleared by a success or by POST /v1/hooks/{id}/enable; a hook still failing 5 days later is disabled. Null while its deliveries succeed',
    }),
  },
  relationships: {
    site: rel.toOne('sites', 'site_id'),
    // GET /v1/hooks/{id}/deliveries: the hook's delivery log, newest first (never rendered as linkage: it grows with every event).
    deliveries: rel.toMany('webhook_deliveries', 'hook_id', { links: true, linkage: false, upstream: false }),
  },
  upstream: { list: ['page[number]', 'page[size]'], show: [] },
  write: {
    // Creating a hook also needs the read permissions of its event (src/domain/hooks.ts).
    permission: 'manage:hooks',
    rules: { writable: ['event', 'target_url', 'resource_id'], required: ['event', 'target_url'], relationships: { site: { required: true } } },
    beforeTransaction: checkHookTarget,
    create: createHook,
    answerMeta: { signing_secret: 'The hook\'s Standard Webhooks signing secret (whsec_...), shown only in this answer' },
    delete: deleteHook,
    deleteAnswer: 'no-content',
  },
  actions: {
    rotate_secret: {
      permission: 'manage:hooks',
      description:
        'Gives the hook a new signing secret, answered once in data.meta.signing_secret (an extension of sitebiz). For 24 hours deliveries are signed with the new and the previous secret.',
      run: rotateHookSecret,
      upstream: false,
      answerMeta: { signing_secret: 'The new signing secret (whsec_...), shown only in this answer' },
    },
    enable: {
      permission: 'manage:hooks',
      description:
        'Turns a disabled hook on again (a sitebiz extension): disabled_at and failing_since are cleared and events from now on are delivered to it. An enabled hook answers 200 unchanged.',
      run: enableHook,
      upstream: false,
    },
  },
});
