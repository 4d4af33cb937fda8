// Helpers of the webhook delivery suites: hooks and tags through the API with a real token, and
// the delivery log read straight from the database.
import assert from 'node:assert/strict';
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
