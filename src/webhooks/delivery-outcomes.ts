// What an attempt's answer does: every attempt is logged (webhook_attempts); the delivery, if the
// claim still holds it (the fence of delivery-queue.ts), succeeds, is retried on the schedule, or
// has failed; and the hook's health follows: failing_since is the first failure after the last
// success, and a failure when it is 5 days old disables the hook and fails its unfinished
// deliveries. A stale attempt (its lease ran out, or the delivery was cancelled or redelivered
// meanwhile) is logged and changes nothing else.
//
// Times: the queue (next_attempt_at) runs on real time; everything else written here (the
// attempt's times, updated_at, last_attempt_at, failing_since, disabled_at) and the 5-day rule use
// the account's time (real time plus the offset the claim read; docs/sandbox.md).
import type { DatabaseHandle } from '../db/connect.js';
import { lockSiteWrites } from '../db/site-counters.js';
import type { ClaimedDelivery } from './delivery-queue.js';
import { retryDelayMs } from './retry-schedule.js';
import type { PostResult } from './webhook-sender.js';

/** A hook whose every attempt failed for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 60 * 60 * 1000;

export interface Outcome {
  /** The delivery took the outcome (false: a stale attempt, logged only). */
  applied: boolean;
  status: 'succeeded' | 'retrying' | 'failed' | 'released';
  /** The attempt is what disabled the hook. */
  disabledHook: boolean;
}

const isSuccess = (status: number | null) => status !== null && status >= 200 && status < 300;

/** The delivery's last_error for an answer that is not a success (null for a success). */
export function failureReason(result: PostResult): string | null {
  if (result.status === null) return result.error ?? 'no answer';
  if (isSuccess(result.status)) return null;
  if (result.status >= 300 && result.status < 400) return `the receiver answered ${result.status}, a redirect (redirects are not followed)`;
  return `the receiver answered ${result.status}`;
}

export interface AttemptRecord {
  claim: ClaimedDelivery;
  /** startedAt and now are real time (the worker's clock). */
  attempt: { startedAt: Date; result: PostResult; now: Date; random?: () => number };
}

/** A real time in the account of the claimed delivery. */
const accountTime = (claim: ClaimedDelivery, real: Date): Date => (claim.clockOffsetMs ? new Date(real.getTime() + claim.clockOffsetMs) : real);

/**
 * The outcomes of several attempts, in as few transactions as possible (a worker hands over every
 * attempt that finished while the previous batch was being written: on SQLite each commit is a
 * sync to disk, and one per attempt would bound delivery at the disk's commit rate). Attempts that
 * change their hook (its failing_since or disabled_at) take their site's write lock and are written
 * one transaction each, as every write takes that lock; the rest share one transaction.
 */
export async function recordOutcomes(handle: DatabaseHandle, records: readonly AttemptRecord[]): Promise<Outcome[]> {
  const { traits } = handle;
  // Which hook writes each outcome may need, from the hooks as they are now. Hook rows are counted
  // per site (their writes move the site's data version), so they are written only on a change.
  const hookIds = [...new Set(records.map((r) => r.claim.hookId))];
  const hooks = await handle.db.selectFrom('hooks').select(['id', 'failing_since', 'disabled_at']).where('id', 'in', hookIds).execute();
  const hookById = new Map(hooks.map((h) => [Number(h.id), h]));
  const plans = records.map((record) => {
    const hook = hookById.get(record.claim.hookId);
    const { result, now } = record.attempt;
    const success = isSuccess(result.status);
    const failingSince = traits.decodeTimestamp(hook?.failing_since);
    const live = hook !== undefined && hook.disabled_at === null && !result.abandoned;
    return {
      record,
      clearFailing: live && success && failingSince !== null,
      markFailing: live && !success && failingSince === null,
      disable: live && !success && failingSince !== null && accountTime(record.claim, now).getTime() - Date.parse(failingSince) >= DISABLE_AFTER_MS,
    };
  });
  const outcomes = new Map<AttemptRecord, Outcome>();
  const plain = plans.filter((p) => !p.clearFailing && !p.markFailing && !p.disable);
  if (plain.length > 0) {
    await handle.db.transaction().execute(async (trx) => {
      for (const plan of plain) outcomes.set(plan.record, await writeOutcome(trx, traits, plan));
    });
  }
  for (const plan of plans.filter((p) => !plain.includes(p))) {
    outcomes.set(
      plan.record,
      await handle.db.transaction().execute(async (trx) => {
        await lockSiteWrites(trx, traits, plan.record.claim.siteId);
        return writeOutcome(trx, traits, plan);
      }),
    );
  }
  return records.map((record) => outcomes.get(record)!);
}

async function writeOutcome(
  trx: DatabaseHandle['db'],
  traits: DatabaseHandle['traits'],
  plan: { record: AttemptRecord; clearFailing: boolean; markFailing: boolean; disable: boolean },
): Promise<Outcome> {
  const { claim, attempt } = plan.record;
  const { clearFailing, markFailing, disable } = plan;
  const { result, now } = attempt;
  // The account's time, for its records; the queue's due times stay real.
  const at = traits.encodeTimestamp(accountTime(claim, now));
  const realAt = traits.encodeTimestamp(now);
  const startedAt = traits.encodeTimestamp(accountTime(claim, attempt.startedAt));
  const success = isSuccess(result.status);
  const reason = failureReason(result);
  await trx
    .insertInto('webhook_attempts')
    .values({
      site_id: claim.siteId,
      delivery_id: claim.id,
      attempt_number: claim.attemptNumber,
      started_at: startedAt,
      duration_ms: result.durationMs,
      response_status: result.status,
      response_headers: result.headers === null ? null : traits.encodeJson(result.headers),
      response_body: result.body,
      error: result.status === null ? result.error : null,
      created_at: at,
    })
    .execute();

  const failures = claim.failuresInRound + 1;
  const delay = success || result.abandoned ? undefined : retryDelayMs(failures, attempt.random);
  const status: Outcome['status'] = result.abandoned ? 'released' : success ? 'succeeded' : delay === undefined ? 'failed' : 'retrying';
  const change =
    status === 'released'
      ? // Cut short by a stopping worker: due again at once, for another worker, and not a failure.
        { next_attempt_at: realAt, last_error: reason }
      : status === 'succeeded'
        ? { status, next_attempt_at: null, last_response_status: result.status, last_error: null }
        : {
            status,
            failures_in_round: failures,
            next_attempt_at: delay === undefined ? null : traits.encodeTimestamp(new Date(now.getTime() + delay)),
            last_response_status: result.status,
            last_error: reason,
          };
  const updated = await trx
    .updateTable('webhook_deliveries')
    .set({ ...change, last_attempt_at: startedAt, updated_at: at })
    .where('id', '=', claim.id)
    .where('attempt_count', '=', claim.attemptNumber)
    .where('next_attempt_at', '=', claim.leaseUntil)
    .where('status', 'in', ['pending', 'retrying'])
    .executeTakeFirst();
  const applied = Number(updated.numUpdatedRows) === 1;
  if (!applied) return { applied, status, disabledHook: false };

  if (clearFailing) {
    await trx.updateTable('hooks').set({ failing_since: null }).where('id', '=', claim.hookId).where('failing_since', 'is not', null).execute();
  }
  if (markFailing) {
    await trx.updateTable('hooks').set({ failing_since: at }).where('id', '=', claim.hookId).where('failing_since', 'is', null).execute();
  }
  let disabledHook = false;
  if (disable) {
    const disabled = await trx
      .updateTable('hooks')
      .set({ disabled_at: at, updated_at: at })
      .where('id', '=', claim.hookId)
      .where('disabled_at', 'is', null)
      .where('failing_since', 'is not', null)
      .executeTakeFirst();
    disabledHook = Number(disabled.numUpdatedRows) === 1;
    if (disabledHook) {
      await trx
        .updateTable('webhook_deliveries')
        .set({ status: 'failed', next_attempt_at: null, last_error: 'the hook was disabled: its deliveries failed for 5 days', updated_at: at })
        .where('hook_id', '=', claim.hookId)
        .where('next_attempt_at', 'is not', null)
        .execute();
    }
  }
  return { applied, status: disabledHook ? 'failed' : status, disabledHook };
}
