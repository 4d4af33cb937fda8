// The transactional outbox: a state change that webhooks announce writes its event in the same
// transaction as the change, so an event exists exactly when the change committed. The event
// holds its payload as delivered (the records it is about, rendered as GET renders them at that
// moment), and the same transaction queues one delivery for each hook of the site that matches
// it, so a hook receives exactly the events committed while it existed. The delivery worker
// (src/webhooks/delivery-worker.ts) is woken after the commit: in this process directly, in other
// processes by PostgreSQL's NOTIFY (sent at commit) or by their poll.
import { randomBytes } from 'node:crypto';
import type { Insertable } from 'kysely';
import { realTimeOf } from '../auth/principal.js';
import type { DbId, WebhookDeliveriesTable } from '../db/schema.js';
import type { WriteContext } from '../jsonapi/resource.js';
import { checkPayloadTypes, PAYLOAD_TYPES } from '../webhooks/payloads.js';
import { announceDeliveriesQueued, DELIVERY_CHANNEL } from '../webhooks/wakeups.js';
import { currentTraceparent } from '../observability/trace-context.js';

export interface OutboxEvent {
  siteId: number;
  /** Upstream webhook event name, such as form_submission or purchase. */
  type: string;
  /**
   * The records of the payload, in the event's order (payloads.ts, PAYLOAD_TYPES). The first is
   * the record that triggered the event: its id is the `id` of a delivery's body.
   */
  records: ReadonlyArray<{ type: string; id: number }>;
  /**
   * The records a hook's resource_id may name for the event to reach it: the tag of a tag event,
   * the form of a submission, the offers of a commerce event.
   */
  hookResourceIds: readonly number[];
}

/** A Standard Webhooks message id (`webhook-id`), the same on every attempt of one delivery. */
const newWebhookId = (): string => `msg_${randomBytes(18).toString('base64url')}`;

/** Writes one event and queues its deliveries, in the transaction of `ctx`; returns its id. */
export async function recordEvent(ctx: WriteContext, event: OutboxEvent): Promise<number> {
  const { db, traits } = ctx.handle;
  checkPayloadTypes(event.type, event.records.map((r) => r.type));
  if (event.records.length < PAYLOAD_TYPES[event.type]!.length) throw new Error(`${event.type} event: a record of each of ${PAYLOAD_TYPES[event.type]!.join(', ')} is needed`);
  const payload = [];
  for (const record of event.records) {
    const rendered = await ctx.render(record.type, record.id);
    if (!rendered) throw new Error(`${event.type} event: ${record.type} ${record.id} is not in the site`);
    payload.push(rendered);
  }
  const at = traits.encodeTimestamp(ctx.now);
  const resourceId = event.records[0]!.id;
  const row = await db
    .insertInto('outbox_events')
    .values({
      site_id: event.siteId,
      event_type: event.type,
      resource_id: resourceId,
      payload: traits.encodeJson(payload),
      created_at: at,
      // Handed to every hook (as deliveries) right here.
      delivered_at: at,
      // With traces on, the request's trace: its webhook attempts join it (tracing.ts).
      trace_parent: currentTraceparent() ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const eventId = Number(row.id);

  const hooks = await db
    .selectFrom('hooks')
    .select(['id', 'target_url'])
    .where('site_id', '=', event.siteId)
    .where('event', '=', event.type)
    .where('disabled_at', 'is', null)
    .where((eb) => (event.hookResourceIds.length === 0 ? eb('resource_id', 'is', null) : eb.or([eb('resource_id', 'is', null), eb('resource_id', 'in', [...event.hookResourceIds])])))
    .orderBy('id')
    .execute();
  if (hooks.length > 0) {
    // The queue runs on real time (workers compare due times with their own clock): due now,
    // whatever the account's sandbox clock says.
    const dueAt = traits.encodeTimestamp(realTimeOf(ctx.now, ctx.principal));
    await db
      .insertInto('webhook_deliveries')
      .values(
        hooks.map((hook) =>
          newDelivery({ siteId: event.siteId, hookId: hook.id, eventId, event: event.type, resourceId, targetUrl: hook.target_url, dueAt, at }),
        ),
      )
      .execute();
    await wakeDeliveryWorkers(ctx);
  }
  return eventId;
}

/**
 * A new delivery's row, pending and due at `dueAt` (encoded timestamps), with a webhook-id of its
 * own.
 */
export function newDelivery(d: {
  siteId: number;
  hookId: DbId;
  eventId: DbId;
  event: string;
  resourceId: number;
  targetUrl: string;
  dueAt: string;
  at: string;
}): Insertable<WebhookDeliveriesTable> {
  return {
    site_id: d.siteId,
    hook_id: d.hookId,
    event_id: d.eventId,
    event: d.event,
    resource_id: d.resourceId,
    target_url: d.targetUrl,
    webhook_id: newWebhookId(),
    status: 'pending',
    attempt_count: 0,
    failures_in_round: 0,
    next_attempt_at: d.dueAt,
    last_attempt_at: null,
    last_response_status: null,
    last_error: null,
    created_at: d.at,
    updated_at: d.at,
  };
}

/**
 * Deliveries were queued (or queued again) in the transaction of `ctx`: wake the workers once it
 * commits, other processes by NOTIFY (sent at commit) and this one after the commit.
 */
export async function wakeDeliveryWorkers(ctx: WriteContext): Promise<void> {
  await ctx.handle.traits.notify(ctx.handle.db, DELIVERY_CHANNEL);
  ctx.afterCommit(announceDeliveriesQueued);
}
