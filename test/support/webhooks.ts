// Helpers of the webhook delivery suites: hooks and tags through the API with a real token, and
// the delivery log read straight from the database.
import assert from 'node:assert/strict';
import type { DatabaseHandle } from '../../src/db/connect.js';
import { newDelivery } from '../../src/domain/outbox.js';
import { DELIVERY_CHANNEL } from '../../src/webhooks/wakeups.js';
import type { TestApp } from './harness.js';
import { send } from './writes.js';

export interface CreatedHook {
  id: number;
  secret: string;
}

/** POST /v1/hooks; the hook's id and its signing secret (shown only in this answer). */
export async function createHook(
  t: TestApp,
  token: string,
  hook: { event: string; targetUrl: string; resourceId?: number | null; siteId?: number },
): Promise<CreatedHook> {
  const res = await send(t, 'POST', '/v1/hooks', token, {
    data: {
      type: 'hooks',
      attributes: { event: hook.event, target_url: hook.targetUrl, resource_id: hook.resourceId ?? null },
      relationships: { site: { data: { type: 'sites', id: String(hook.siteId ?? t.tenant.siteId) } } },
    },
  });
  assert.equal(res.statusCode, 201, res.body);
  const data = res.json().data;
  return { id: Number(data.id), secret: data.meta.signing_secret as string };
}

/** POST /v1/contacts/{id}/relationships/tags: a tag_added event. */
export async function addTag(t: TestApp, token: string, contactId: number, tagId: number): Promise<void> {
  const res = await send(t, 'POST', `/v1/contacts/${contactId}/relationships/tags`, token, { data: [{ type: 'contact_tags', id: String(tagId) }] });
  assert.equal(res.statusCode, 200, res.body);
}

/** A hook's deliveries, oldest first. */
export function deliveriesOf(t: TestApp, hookId: number) {
  return t.handle.db.selectFrom('webhook_deliveries').selectAll().where('hook_id', '=', hookId).orderBy('id').execute();
}

export async function onlyDeliveryOf(t: TestApp, hookId: number) {
  const deliveries = await deliveriesOf(t, hookId);
  assert.equal(deliveries.length, 1, `one delivery for hook ${hookId}`);
  return deliveries[0]!;
}

/** A delivery's attempts, in order. */
export function attemptsOf(t: TestApp, deliveryId: unknown) {
  return t.handle.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', Number(deliveryId)).orderBy('id').execute();
}

/** A timestamp column as epoch milliseconds (null stays null). */
export function millis(t: TestApp, value: unknown): number | null {
  const text = t.handle.traits.decodeTimestamp(value);
  return text === null ? null : Date.parse(text);
}

/**
 * `count` events with one delivery each to the hook, due at `dueAt`, written straight to the
 * database in one transaction that signals other processes at its commit (PostgreSQL), as a write
 * queuing deliveries does; no in-process wake-up, as if another process had written them.
 */
export async function queueDeliveries(handle: DatabaseHandle, hook: { id: number; siteId: number; targetUrl: string }, count: number, now: Date, dueAt = now): Promise<void> {
  const { traits } = handle;
  const at = traits.encodeTimestamp(now);
  const due = traits.encodeTimestamp(dueAt);
  await handle.db.transaction().execute(async (trx) => {
    const events = await trx
      .insertInto('outbox_events')
      .values(Array.from({ length: count }, (_, i) => ({ site_id: hook.siteId, event_type: 'tag_added', resource_id: i + 1, payload: traits.encodeJson([{ type: 'contacts', id: String(i + 1) }]), created_at: at, delivered_at: at })))
      .returning('id')
      .execute();
    await trx
      .insertInto('webhook_deliveries')
      .values(
        events.map((e, i) =>
          newDelivery({ siteId: hook.siteId, hookId: hook.id, eventId: e.id, event: 'tag_added', resourceId: i + 1, targetUrl: hook.targetUrl, dueAt: due, at }),
        ),
      )
      .execute();
    await traits.notify(trx, DELIVERY_CHANNEL);
  });
}
