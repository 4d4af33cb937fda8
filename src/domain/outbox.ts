// The transactional outbox: a state change that webhooks announce writes its event in the same
// transaction as the change, so an event exists exactly when the change committed. Delivery (a
// later issue) reads undelivered rows in id order and sets delivered_at.
import type { DatabaseHandle } from '../db/connect.js';

export interface OutboxEvent {
  siteId: number;
  /** Upstream webhook event name, such as form_submission or purchase. */
  type: string;
  payload: unknown;
  /** When the change happened; defaults to now. */
  at?: Date;
}

/** Writes one event; `trx` must be the handle of the transaction making the change. */
export async function recordEvent(trx: DatabaseHandle, event: OutboxEvent): Promise<number> {
  const row = await trx.db
    .insertInto('outbox_events')
    .values({
      site_id: event.siteId,
      event_type: event.type,
      payload: trx.traits.encodeJson(event.payload),
      created_at: trx.traits.encodeTimestamp(event.at ?? new Date()),
      delivered_at: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}
