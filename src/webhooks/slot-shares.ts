// How a process's delivery slots (WEBHOOK_CONCURRENCY attempts in flight) are shared, so that
// receivers that are slow or never answer, each attempt holding its slot until its deadline, hold
// only their owner's share. A slot is never taken back once given; fairness is in who may take
// the next one. Two levels, per process:
//
//   - An account may hold at most three quarters of the slots that other accounts leave free:
//     ceil((slots - held by others) * 3 / 4). Alone it has 24 of 32 (what 3 hooks at their cap
//     held before accounts were counted, so one account's throughput stays); the last quarter is
//     room for the next account, which again may take three quarters of what is left (6), and so
//     on. Half would leave room for more stalled accounts, but halved one account's drain rate.
//   - A hook may hold at most its window, and never more than a quarter of the slots. The window
//     starts at 2, grows by one with every attempt the receiver answers (any status), and falls
//     to 1 when an attempt gets no answer. A receiver that accepts and never answers therefore
//     holds 2 slots until its first deadline and 1 after, so even 6 such hooks of one account
//     (12 slots) leave room in the account's share for its healthy hooks, which answer and grow.
//
// Held-back deliveries stay due in the database, for this process once a slot frees or for
// another process: nothing is lost, duplicated or reordered beyond what the queue allows anyway.

/** The first window of a hook this process has not heard answer. */
export const INITIAL_HOOK_WINDOW = 2;

/** Windows kept for hooks with nothing in flight, beyond which those are forgotten. */
const REMEMBERED_WINDOWS = 10_000;

export interface SlotClaimant {
  accountId: number;
  hookId: number;
}

export class SlotShares {
  private readonly byAccount = new Map<number, number>();
  private readonly byHook = new Map<number, number>();
  private readonly windows = new Map<number, number>();
  private total = 0;
  /** A quarter of the slots: the most one hook holds, however well it answers. */
  readonly hookCap: number;

  constructor(readonly slots: number) {
    this.hookCap = Math.max(1, Math.ceil(slots / 4));
  }

  get inFlight(): number {
    return this.total;
  }

  /** The most slots the account may hold while the others hold `others`. */
  accountLimit(others: number): number {
    return Math.max(1, Math.ceil(((this.slots - others) * 3) / 4));
  }

  hookLimit(hookId: number): number {
    return Math.min(this.windows.get(hookId) ?? INITIAL_HOOK_WINDOW, this.hookCap);
  }

  /** Hooks that may take no slot now (the claim skips their deliveries in the index scan). */
  fullHooks(): number[] {
    return [...this.byHook].filter(([hookId, n]) => n >= this.hookLimit(hookId)).map(([hookId]) => hookId);
  }

  /** Accounts that may take no slot now. */
  fullAccounts(): number[] {
    return [...this.byAccount].filter(([, n]) => n >= this.accountLimit(this.total - n)).map(([accountId]) => accountId);
  }

  /**
   * Which of `candidates` (in queue order) may take a slot, at most `limit` of them, each counted
   * against the shares as if the ones before it had taken theirs. Changes nothing.
   */
  admit(candidates: readonly SlotClaimant[], limit: number): boolean[] {
    const byAccount = new Map(this.byAccount);
    const byHook = new Map(this.byHook);
    let total = this.total;
    let taken = 0;
    return candidates.map(({ accountId, hookId }) => {
      if (taken >= limit) return false;
      const account = byAccount.get(accountId) ?? 0;
      const hook = byHook.get(hookId) ?? 0;
      if (hook >= this.hookLimit(hookId) || account >= this.accountLimit(total - account)) return false;
      byAccount.set(accountId, account + 1);
      byHook.set(hookId, hook + 1);
      total++;
      taken++;
      return true;
    });
  }

  started({ accountId, hookId }: SlotClaimant): void {
    this.byAccount.set(accountId, (this.byAccount.get(accountId) ?? 0) + 1);
    this.byHook.set(hookId, (this.byHook.get(hookId) ?? 0) + 1);
    this.total++;
  }

  /** An attempt ended: `answered` whether the receiver answered (undefined: says nothing of it). */
  finished({ accountId, hookId }: SlotClaimant, answered: boolean | undefined): void {
    decrement(this.byAccount, accountId);
    decrement(this.byHook, hookId);
    this.total--;
    if (answered === true) this.windows.set(hookId, Math.min(this.hookLimit(hookId) + 1, this.hookCap));
    else if (answered === false) this.windows.set(hookId, 1);
    if (!this.byHook.has(hookId) && this.windows.get(hookId) === INITIAL_HOOK_WINDOW) this.windows.delete(hookId);
    if (this.windows.size > REMEMBERED_WINDOWS) {
      for (const id of this.windows.keys()) if (!this.byHook.has(id)) this.windows.delete(id);
    }
  }
}

function decrement(map: Map<number, number>, key: number): void {
  const left = (map.get(key) ?? 1) - 1;
  if (left > 0) map.set(key, left);
  else map.delete(key);
}
