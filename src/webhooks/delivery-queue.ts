// Taking due deliveries off the queue (webhook_deliveries), safely with several workers.
//
// A claim is one short write transaction: it selects due deliveries (next_attempt_at <= now,
// soonest first) through traits.claimingRows (PostgreSQL: FOR UPDATE SKIP LOCKED, so concurrent
// claimers take different rows; SQLite: its write transactions run one at a time), and moves each
// to the end of a lease and its attempt_count on by one. No transaction is open during the HTTP
// attempt. A worker that dies holding a claim loses nothing: when the lease ends the delivery is
// due again and another worker attempts it, with the same webhook-id.
//
// The claim is also the fence: the attempt's outcome is written only where the delivery still
// has the claimed attempt_count and lease end and is unfinished (delivery-outcomes.ts), so a worker
// whose lease ran out, a delivery cancelled or redelivered meanwhile, is never overwritten.
//
// Two clocks: the queue (next_attempt_at, leases) runs on real time, and what the worker writes
// into an account's records (updated_at, attempts' times, a hook's health) is that account's time
// (its sandbox clock, accounts.clock_offset_ms; docs/sandbox.md). The claim reads the offsets of
// the candidates' accounts with one query per claim (the shares need them too), and each claim
// carries its offset.
import { sql } from 'kysely';
import type { DatabaseHandle } from '../db/connect.js';
import type { SlotShares } from './slot-shares.js';

export interface ClaimedDelivery {
  id: number;
  siteId: number;
  accountId: number;
  hookId: number;
  event: string;
  webhookId: string;
  targetUrl: string;
  /** attempt_count after the claim: this attempt's number, and the fencing token. */
  attemptNumber: number;
  /** failures_in_round when claimed: the step of the retry schedule a failure moves to. */
  failuresInRound: number;
  /** next_attempt_at as the claim set it (encoded): the other half of the fence. */
  leaseUntil: string;
  /** The hook's secrets to sign with: the current one, and the previous one until it expires. */
  secrets: string[];
  /** The request body, the same bytes on every attempt. */
  body: string;
  /** The delivery's account clock offset when claimed, ms: its account time is real time plus this. */
  clockOffsetMs: number;
  /** The W3C traceparent of the request that made the event (traces on), for the attempt's span. */
  traceparent: string | null;
}

/** The lease of a claim: the attempt's deadline and a margin for recording its outcome. */
export function leaseMs(timeoutMs: number): number {
  return timeoutMs + Math.max(1_000, Math.round(timeoutMs / 2));
}

/**
 * When the soonest unfinished delivery is due (it may be now or past), or undefined when none
 * is: one read of the first entry of the due index.
 */
export async function nextDueAt(handle: DatabaseHandle): Promise<Date | undefined> {
  const row = await handle.db
    .selectFrom('webhook_deliveries')
    .select('next_attempt_at')
    .where('next_attempt_at', 'is not', null)
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  const at = handle.traits.decodeTimestamp(row?.next_attempt_at);
  return at === null ? undefined : new Date(at);
}

const HOOK_DELETED = 'the hook was deleted';
const HOOK_DISABLED = 'the hook is disabled (POST /v1/hooks/{id}/enable turns it on again)';

export interface ClaimOptions {
  now: Date;
  limit: number;
  leaseMs: number;
  /**
   * Fairness between accounts and between hooks (slot-shares.ts): this process's attempts in
   * flight and what each account and hook may still take, so that receivers that are slow or never
   * answer hold their owner's share of the slots and never all of them. Undefined: no shares
   * (tests that drain by hand).
   */
  shares?: SlotShares;
}

export interface ClaimResult {
  claimed: ClaimedDelivery[];
  /** Due deliveries were passed over because their account or hook had its share in flight. */
  heldBack: boolean;
}

/**
 * Claims up to `limit` deliveries due at `now` for a lease of `leaseMs`, saying whether hooks at
 * their share held due deliveries back. Deliveries whose hook is gone are cancelled, and those of
 * a disabled hook failed, instead of being claimed.
 */
export async function claimDueFairly(handle: DatabaseHandle, options: ClaimOptions): Promise<ClaimResult> {
  const { traits } = handle;
  const at = traits.encodeTimestamp(options.now);
  const leaseUntil = traits.encodeTimestamp(new Date(options.now.getTime() + options.leaseMs));
  const shares = options.shares;
  const fullHooks = shares?.fullHooks() ?? [];
  const fullAccounts = shares?.fullAccounts() ?? [];
  let heldBack = fullHooks.length > 0 || fullAccounts.length > 0;
  const claimed = await handle.db.transaction().execute(async (trx) => {
    // Twice the free slots are read, so that one account's or hook's due deliveries coming first
    // still leave others some; those not taken are simply not updated (and, on PostgreSQL,
    // unlocked at the end of this short transaction). Accounts and hooks already at their share
    // are skipped in the index scan.
    const candidates = await traits
      .claimingRows(
        trx
          .selectFrom('webhook_deliveries')
          .select(['id', 'site_id', 'hook_id', 'event_id', 'event', 'resource_id', 'target_url', 'webhook_id', 'attempt_count', 'failures_in_round'])
          .where('next_attempt_at', '<=', at)
          .$if(fullHooks.length > 0, (q) => q.where('hook_id', 'not in', fullHooks))
          .$if(fullAccounts.length > 0, (q) => q.where('site_id', 'not in', (eb) => eb.selectFrom('sites').select('sites.id').where('sites.account_id', 'in', fullAccounts)))
          .orderBy('next_attempt_at')
          .orderBy('id')
          .limit(shares ? options.limit * 2 : options.limit),
      )
      .execute();
    if (candidates.length === 0) return [];
    // The candidates' accounts, for their shares and their clocks (one query, locking nothing).
    const accountOfSite = await accountsOfSites(trx, [...new Set(candidates.map((d) => Number(d.site_id)))]);
    const admitted = shares
      ? shares.admit(candidates.map((d) => ({ accountId: accountOfSite.get(Number(d.site_id))?.accountId ?? 0, hookId: Number(d.hook_id) })), options.limit)
      : candidates.map(() => true);
    if (admitted.includes(false)) heldBack = true;
    const due = candidates.filter((_, i) => admitted[i]);
    if (due.length === 0) return [];
    const offsetOf = (d: { site_id: unknown }) => accountOfSite.get(Number(d.site_id))?.clockOffsetMs ?? 0;
    /** Writes `change` to the deliveries, each stamped updated_at with its account's time (one statement per distinct offset). */
    const updateStamped = async (rows: typeof due, change: (at: string) => Record<string, unknown>) => {
      for (const offset of new Set(rows.map(offsetOf))) {
        const ids = rows.filter((d) => offsetOf(d) === offset).map((d) => Number(d.id));
        await trx
          .updateTable('webhook_deliveries')
          .set(change(traits.encodeTimestamp(new Date(options.now.getTime() + offset))) as never)
          .where('id', 'in', ids)
          .execute();
      }
    };
    // Read, not locked: a hook row locked here would hold up its site's writes, and a rotation or
    // deletion committed after this read is handled by the fence.
    const hooks = await trx
      .selectFrom('hooks')
      .select(['id', 'signing_secret', 'previous_signing_secret', 'previous_secret_expires_at', 'disabled_at'])
      .where('id', 'in', [...new Set(due.map((d) => d.hook_id))])
      .execute();
    const hookById = new Map(hooks.map((h) => [Number(h.id), h]));
    const finish = async (rows: typeof due, status: 'cancelled' | 'failed', reason: string) => {
      await updateStamped(rows, (updatedAt) => ({ status, next_attempt_at: null, last_error: reason, updated_at: updatedAt }));
    };
    await finish(due.filter((d) => !hookById.has(Number(d.hook_id))), 'cancelled', HOOK_DELETED);
    await finish(due.filter((d) => hookById.get(Number(d.hook_id))?.disabled_at != null), 'failed', HOOK_DISABLED);
    const live = due.filter((d) => hookById.get(Number(d.hook_id))?.disabled_at === null);
    if (live.length === 0) return [];
    await updateStamped(live, (updatedAt) => ({ next_attempt_at: leaseUntil, attempt_count: sql`attempt_count + 1`, updated_at: updatedAt }));
    const events = await trx
      .selectFrom('outbox_events')
      .select(['id', 'payload', 'trace_parent'])
      .where('id', 'in', [...new Set(live.map((d) => d.event_id))])
      .execute();
    const payloadOf = new Map(events.map((e) => [Number(e.id), traits.decodeJson(e.payload)]));
    const traceparentOf = new Map(events.map((e) => [Number(e.id), e.trace_parent]));
    return live.map((d): ClaimedDelivery => {
      const hook = hookById.get(Number(d.hook_id))!;
      return {
        id: Number(d.id),
        siteId: Number(d.site_id),
        accountId: accountOfSite.get(Number(d.site_id))?.accountId ?? 0,
        hookId: Number(d.hook_id),
        event: d.event,
        webhookId: d.webhook_id,
        targetUrl: d.target_url,
        attemptNumber: d.attempt_count + 1,
        failuresInRound: d.failures_in_round,
        leaseUntil,
        // previous_secret_expires_at was written in the account's time.
        secrets: signingSecrets(handle, hook, new Date(options.now.getTime() + offsetOf(d))),
        body: JSON.stringify({ id: String(d.resource_id ?? ''), event: d.event, payload: payloadOf.get(Number(d.event_id)) ?? [] }),
        clockOffsetMs: offsetOf(d),
        traceparent: traceparentOf.get(Number(d.event_id)) ?? null,
      };
    });
  });
  return { claimed, heldBack };
}

/** Each site's account and its clock offset, ms (one query). */
async function accountsOfSites(db: DatabaseHandle['db'], siteIds: number[]): Promise<Map<number, { accountId: number; clockOffsetMs: number }>> {
  const rows = await db
    .selectFrom('sites')
    .innerJoin('accounts', 'accounts.id', 'sites.account_id')
    .select(['sites.id as site_id', 'accounts.id as account_id', 'accounts.clock_offset_ms'])
    .where('sites.id', 'in', siteIds)
    .execute();
  return new Map(rows.map((r) => [Number(r.site_id), { accountId: Number(r.account_id), clockOffsetMs: Number(r.clock_offset_ms) }]));
}

function signingSecrets(
  handle: DatabaseHandle,
  hook: { signing_secret: string | null; previous_signing_secret: string | null; previous_secret_expires_at: unknown },
  now: Date,
): string[] {
  const secrets = hook.signing_secret === null ? [] : [hook.signing_secret];
  const expires = handle.traits.decodeTimestamp(hook.previous_secret_expires_at);
  if (hook.previous_signing_secret !== null && expires !== null && Date.parse(expires) > now.getTime()) secrets.push(hook.previous_signing_secret);
  return secrets;
}
