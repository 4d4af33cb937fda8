// The delivery log (a sitebiz extension, docs/webhooks.md "Delivery log"): one delivery per event
// and matching hook, made with the event (src/domain/outbox.ts), attempted by the delivery worker,
// and each attempt with the receiver's answer. Deliveries keep their hook's id after the hook is
// deleted: the `hook` linkage still names it, though the hook itself is gone (404, never included).
import { HOOK_EVENT_NAMES } from '../domain/hooks.js';
import { redeliver } from '../domain/webhook-deliveries.js';
import { attr, defineResource, rel } from '../jsonapi/resource.js';

export const DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'failed', 'cancelled'] as const;

export const webhookDeliveries = defineResource({
  type: 'webhook_deliveries',
  upstream: false, // a sitebiz extension (docs/upstream-strict.md)
  table: 'webhook_deliveries',
  description:
    'The delivery log (a sitebiz extension): one delivery per event and matching hook, with its status and attempts; kept after the hook is deleted. ' +
    'pending: waiting for its first attempt (or a redelivery); retrying: failed, another attempt is scheduled; succeeded: a receiver answered 2xx; ' +
    'failed: every attempt of the retry schedule failed; cancelled: the hook was deleted first.',
  readPermission: 'view:hooks',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: '-id',
  attributes: {
    event: attr.string({ filter: ['eq', 'in'], enum: HOOK_EVENT_NAMES }),
    resource_id: attr.id({ nullable: true, description: 'The id of the record that triggered the event: the `id` of the delivery\'s body' }),
    status: attr.string({ filter: ['eq', 'in'], enum: DELIVERY_STATUSES }),
    attempt_count: attr.integer({ description: 'Attempts made so far' }),
    next_attempt_at: attr.datetime({
      nullable: true,
      description: 'When the next attempt is due (while an attempt is in flight, the end of its lease); null once the delivery is finished',
    }),
    last_attempt_at: attr.datetime({ nullable: true }),
    last_response_status: attr.integer({ nullable: true, description: 'HTTP status of the last attempt\'s answer; null when none came' }),
    last_error: attr.string({ nullable: true, description: 'Why the last attempt failed (a timeout, a refused connection, a non-2xx answer)' }),
    target_url: attr.string({ description: 'The URL the delivery is posted to (the hook\'s, when the delivery was made)' }),
    webhook_id: attr.string({ description: 'The Standard Webhooks webhook-id header: the same on every attempt, for receivers to deduplicate' }),
    created_at: attr.datetime({ sort: true, filter: ['gt', 'gte', 'lt', 'lte'] }),
    updated_at: attr.datetime(),
  },
  relationships: {
    site: rel.toOne('sites', 'site_id'),
    hook: rel.toOne('hooks', 'hook_id'),
    source_event: rel.toOne('events', 'event_id'),
    attempts: rel.toMany('webhook_attempts', 'delivery_id', { links: true }),
  },
  actions: {
    redeliver: {
      permission: 'manage:hooks',
      description:
        'Queues the delivery for an attempt now (a sitebiz extension), whatever its status: status pending, next_attempt_at now, the retry schedule from its start. ' +
        'The attempt carries the same webhook-id and body. Answers 202 with the delivery as queued. A delivery whose hook was deleted cannot be signed: 422 hook_deleted.',
      run: redeliver,
      accepted: true,
    },
  },
});

export const webhookAttempts = defineResource({
  type: 'webhook_attempts',
  upstream: false, // a sitebiz extension (docs/upstream-strict.md)
  table: 'webhook_attempts',
  description: 'The attempts of a webhook delivery (a sitebiz extension), each with the receiver\'s answer or the error.',
  readPermission: 'view:hooks',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: 'attempt_number',
  // Reached through their delivery (include=attempts, GET /v1/webhook_deliveries/{id}/attempts).
  routes: { list: false, show: true },
  attributes: {
    attempt_number: attr.integer({ sort: true, description: 'The delivery\'s attempt count after this attempt: 1 for its first' }),
    started_at: attr.datetime({ sort: true }),
    duration_ms: attr.integer({ description: 'From connecting to the end of the answer (or the failure), in milliseconds' }),
    response_status: attr.integer({ nullable: true, description: 'The receiver\'s HTTP status; null when no answer came' }),
    response_headers: attr.json({ nullable: true, description: 'The receiver\'s answer headers, name → value' }),
    response_body: attr.string({ nullable: true, description: 'The first 2 KB of the receiver\'s answer' }),
    error: attr.string({ nullable: true, description: 'Why the attempt failed, if it did' }),
    created_at: attr.datetime(),
  },
  relationships: {
    delivery: rel.toOne('webhook_deliveries', 'delivery_id'),
  },
});
