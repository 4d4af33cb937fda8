// The delivery log's one write: redelivering (docs/webhooks.md, "Delivery log"). Deliveries are
// made by src/domain/outbox.ts and attempted by the delivery worker; redelivering queues one again
// for an attempt now, with the same webhook-id and body (the worker builds the body from the
// event), whatever its status. Called by the engine inside the request's transaction.
import { realTimeOf } from '../auth/principal.js';
import { ApiError } from '../jsonapi/errors.js';
import type { WriteContext, WriteTarget } from '../jsonapi/resource.js';
import { wakeDeliveryWorkers } from './outbox.js';

/**
 * Queues the delivery for an attempt now: pending, due now, at the first step of the retry
 * schedule again (failures_in_round 0). attempt_count and the last attempt's outcome stay as the
 * log of what happened so far. A delivery whose hook was deleted cannot be signed (the secret went
 * with the hook): 422 hook_deleted; one whose hook is disabled would only be failed by the worker:
 * 422 hook_disabled (enable the hook first). Either way nothing changes.
 */
export async function redeliver(ctx: WriteContext, record: WriteTarget): Promise<void> {
  const { db, traits } = ctx.handle;
  const delivery = await db.selectFrom('webhook_deliveries').select('hook_id').where('id', '=', record.id).executeTakeFirstOrThrow();
  const hook = await db.selectFrom('hooks').select(['id', 'disabled_at']).where('id', '=', delivery.hook_id).executeTakeFirst();
  if (!hook) {
    throw new ApiError(422, [
      {
        code: 'hook_deleted',
        title: 'Unprocessable Entity',
        detail: `Delivery ${record.id} belongs to hook ${String(delivery.hook_id)}, which was deleted: there is no secret left to sign it with. Create a hook and replay the event from GET /v1/events instead.`,
      },
    ]);
  }
  if (hook.disabled_at !== null) {
    throw new ApiError(422, [
      {
        code: 'hook_disabled',
        title: 'Unprocessable Entity',
        detail: `Delivery ${record.id} belongs to hook ${String(delivery.hook_id)}, which is disabled (its deliveries failed for 5 days): nothing is delivered to it. POST /v1/hooks/${String(delivery.hook_id)}/enable first, then redeliver.`,
      },
    ]);
  }
  const at = traits.encodeTimestamp(ctx.now);
  await db
    .updateTable('webhook_deliveries')
    // Due now in real time: the queue runs on real time, whatever the account's clock says.
    .set({ status: 'pending', next_attempt_at: traits.encodeTimestamp(realTimeOf(ctx.now, ctx.principal)), failures_in_round: 0, updated_at: at })
    .where('id', '=', record.id)
    .execute();
  await wakeDeliveryWorkers(ctx);
}
