// The account clock (docs/sandbox.md, "The account clock"): Stripe's test clocks, one per account.
// An account's "now" is real time plus accounts.clock_offset_ms (src/auth/principal.ts); moving
// the clock raises the offset, never lowers it, and runs the account's due work up to the new
// time, in the same transaction:
//
// - webhook retries that fall due: the queue runs on real time, so an account's unfinished
//   deliveries are moved as much earlier as its clock moved forward (shiftWebhookRetries);
// - everything in DUE_WORK (renewals and payment plan installments), each given the new time.
//
// Races: the advance waits for the account's turn (withAccountLock, holding no connection while it
// waits), then locks the account's row before it reads the offset (lockAccount; SQLite: write
// transactions run one at a time), then every site of the account as writes do, and its due work
// runs under both locks: the order every account-wide action takes them in (account-lock.ts), so
// an advance never deadlocks with a reset or a restore. Two advances of one account therefore run
// one after the other, the second from where the first left the clock: every due item is produced
// once, by the advance whose range holds it, in time order. The API route (src/sandbox/clock.ts),
// the console and `sitebiz clock advance` (src/cli/clock.ts) call advanceAccountClock.
import { sql } from 'kysely';
import { accountNow, type Principal } from '../auth/principal.js';
import type { DatabaseHandle } from '../db/connect.js';
import { ApiError } from '../jsonapi/errors.js';
import type { JsonApiEngine } from '../jsonapi/engine.js';
import type { WriteContext } from '../jsonapi/resource.js';
import { lockAccount, withAccountLock } from './account-lock.js';
import { addIsoDuration, type IsoDuration } from './iso-duration.js';
import { wakeDeliveryWorkers } from './outbox.js';
import { chargeDueRenewals } from './renewals.js';

/**
 * Work that falls due as an account's clock moves: produce every item due at or before `until`
 * (account time) in the given sites, in time order, and move each item's due time past what it
 * produced, so that the next advance does not produce it again.
 *
 * It runs inside the advance's transaction, with the account's row and `siteIds` (every site of
 * the account, ascending) locked. `ctx.now` is `until` and `ctx.principal.clockOffsetMs` the new
 * offset, so events recorded with it (recordEvent) are due for delivery at once; an item that fell
 * due at an earlier moment `t` is written as of `t` with `{ ...ctx, now: t }`. `ctx.principal`
 * reaches every site of the account and its `render` reads them all.
 */
export type DueWork = (ctx: WriteContext, siteIds: readonly number[], until: Date) => Promise<unknown>;

/** What an advance runs, in this order, after moving the account's webhook retries. */
export const DUE_WORK: DueWork[] = [chargeDueRenewals];

/** The account clock as GET /v1/test_helpers/clock shows it. */
export interface ClockState {
  accountId: number;
  /** The account's "now". */
  now: Date;
  offsetMs: number;
  /** Real time when the state was read. */
  realTime: Date;
}

/** An advance's outcome: the clock afterwards, and the account time it moved from. */
export interface AdvanceResult extends ClockState {
  /** The account's time just before the advance (the due work ran for (from, now]). */
  from: Date;
}

export type ClockTarget = { by: IsoDuration; pointer?: string } | { to: Date; pointer?: string };

export interface AdvanceOptions {
  /** Real time (the app's clock), read once the account is locked. */
  realNow: () => Date;
  /**
   * The webhook workers' lease (leaseMs of delivery-queue.ts): deliveries due within it of real
   * now may be attempts in flight (a claim moves next_attempt_at to the lease's end) and are not
   * moved, as the claim's fence would then discard the attempt's outcome.
   */
  leaseMs: number;
}

/** The latest time the clock may reach (timestamps keep four-digit years). */
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/** The account's clock as it is now. */
export async function readAccountClock(handle: DatabaseHandle, accountId: number, realNow: Date): Promise<ClockState> {
  const row = await handle.db.selectFrom('accounts').select('clock_offset_ms').where('id', '=', accountId).executeTakeFirstOrThrow();
  const offsetMs = Number(row.clock_offset_ms);
  return { accountId, now: accountNow(realNow, { clockOffsetMs: offsetMs }), offsetMs, realTime: realNow };
}

/** Every site of the account, ascending (due work covers the account, whatever the key reaches). */
export async function accountSiteIds(handle: DatabaseHandle, accountId: number): Promise<number[]> {
  const rows = await handle.db.selectFrom('sites').select('id').where('account_id', '=', accountId).orderBy('id').execute();
  return rows.map((r) => Number(r.id));
}

/**
 * Moves the principal's account clock forward to `target` (a duration from the account's current
 * time, or a time) and runs the due work up to it, in one transaction; the clock afterwards.
 * 422 (pointing at `target.pointer`) when the target is not after the account's current time.
 */
export async function advanceAccountClock(
  engine: JsonApiEngine,
  handle: DatabaseHandle,
  principal: Principal,
  target: ClockTarget,
  options: AdvanceOptions,
): Promise<AdvanceResult> {
  return withAccountLock(handle, principal.accountId, async (waitLeftMs) => {
    const siteIds = await accountSiteIds(handle, principal.accountId);
    const accountWide: Principal = { ...principal, siteIds };
    return engine.transact(accountWide, async (ctx, records) => {
      const { db, traits } = ctx.handle;
      // The lock that serialises advances of the account (and its fresh offset).
      const { clockOffsetMs: fromOffset } = await lockAccount(db, traits, principal.accountId, waitLeftMs);
      const realNow = options.realNow();
      const from = new Date(realNow.getTime() + fromOffset);
      const until = 'by' in target ? addIsoDuration(from, target.by) : target.to;
      const pointer = target.pointer ?? '';
      if (!(until.getTime() <= LATEST)) throw clockError('clock_out_of_range', `The clock cannot move past ${new Date(LATEST).toISOString()}`, pointer);
      if (until.getTime() <= from.getTime()) {
        throw clockError(
          'clock_cannot_go_back',
          `The account clock only moves forward: it reads ${from.toISOString()}, and ${'by' in target ? 'the duration does not move it' : `${until.toISOString()} is not later`}`,
          pointer,
        );
      }
      const offsetMs = until.getTime() - realNow.getTime();
      await db.updateTable('accounts').set({ clock_offset_ms: offsetMs }).where('id', '=', principal.accountId).execute();
      await records.lockSites(siteIds);
      const moved: WriteContext = { ...ctx, principal: { ...ctx.principal, clockOffsetMs: offsetMs }, now: until };
      await shiftWebhookRetries(moved, siteIds, until.getTime() - from.getTime(), realNow, options.leaseMs);
      for (const work of DUE_WORK) await work(moved, siteIds, until);
      return { accountId: principal.accountId, now: until, offsetMs, realTime: realNow, from };
    });
  });
}

/**
 * Webhook retries follow the account's clock: the queue runs on real time, so when the clock
 * moves forward by `byMs` the account's unfinished deliveries fall due `byMs` earlier (a retry due
 * in 5 minutes is due at once after an advance of 10). Deliveries due within the workers' lease
 * are left as they are (see AdvanceOptions.leaseMs). Wakes the workers when any moved.
 */
export async function shiftWebhookRetries(ctx: WriteContext, siteIds: readonly number[], byMs: number, realNow: Date, leaseMs: number): Promise<number> {
  if (siteIds.length === 0 || byMs <= 0) return 0;
  const { db, traits } = ctx.handle;
  const moved = await db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: traits.shiftTimestamp(sql.ref('next_attempt_at'), -byMs) as never })
    .where('site_id', 'in', [...siteIds])
    .where('next_attempt_at', '>', traits.encodeTimestamp(new Date(realNow.getTime() + leaseMs)))
    .executeTakeFirst();
  const count = Number(moved.numUpdatedRows);
  if (count > 0) await wakeDeliveryWorkers(ctx);
  return count;
}

const clockError = (code: string, detail: string, pointer: string) =>
  new ApiError(422, [{ code, title: 'Unprocessable Entity', detail, ...(pointer ? { source: { pointer } } : {}) }]);
