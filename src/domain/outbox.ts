// The transactional outbox: a state change that webhooks announce writes its event in the same
// transaction as the change, so an event exists exactly when the change committed. The event
// holds its payload as delivered (the records it is about, rendered as GET renders them at that
// moment), and the same transaction queues one delivery for each hook of the site that matches
// it, so a hook receives exactly the events committed while it existed. The delivery worker
// (src/webhooks/delivery-worker.ts) is woken after the commit: in this process directly, in other
// processes by PostgreSQL's NOTIFY (sent at commit) or by their poll.
import { randomBytes } from 'node:crypto';
import type { WriteContext } from '../jsonapi/resource.js';
import { checkPayloadTypes, PAYLOAD_TYPES } from '../webhooks/payloads.js';
import { announceDeliveriesQueued, DELIVERY_CHANNEL } from '../webhooks/wakeups.js';

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
export const newWebhookId = (): string => `msg_${randomBytes(18).toString('base64url')}`;

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
    await db
      .insertInto('webhook_deliveries')
      .values(
        hooks.map((hook) => ({
          site_id: event.siteId,
          hook_id: hook.id,
          event_id: eventId,
          event: event.type,
          resource_id: resourceId,
          target_url: hook.target_url,
          webhook_id: newWebhookId(),
          status: 'pending' as const,
          attempt_count: 0,
          failures_in_round: 0,
          next_attempt_at: at,
          last_attempt_at: null,
          last_response_status: null,
          last_error: null,
          created_at: at,
          updated_at: at,
        })),
      )
      .execute();
    await traits.notify(db, DELIVERY_CHANNEL);
    ctx.afterCommit(announceDeliveriesQueued);
  }
  return eventId;
}
