// One account-wide sandbox action at a time per account (docs/sandbox.md, "Overlapping actions"):
// clock advances, resets, snapshot restores, saves and deletes, and checkouts change the whole
// account (or wait for its advance), so they run one after another. Two layers:
//
// - In this process, a FIFO queue per account (withAccountLock). A request waits for its turn
//   holding no database connection: fifty advances of one account hold one connection of the
//   pool, not all of it, and other requests keep theirs. The wait is bounded: a request whose
//   expected wait (the actions ahead of it times their recent duration) is longer than
//   ACCOUNT_LOCK_WAIT_MS, or that has waited that long, is answered 429 `account_busy` with
//   Retry-After. The bound stays below the default IDLE_TIMEOUT_MS (15 s), which closes a
//   connection on which no byte moves: a waiting request is answered, never cut off, and an action
//   that committed is always answered, as it never waits after it began.
// - In the database, for other processes (workers, the CLI): lockAccount, the first lock of every
//   such transaction, is the account's row (PostgreSQL: FOR NO KEY UPDATE, so inserts that merely
//   reference the account, journal entries and snapshots, pass), then the account's sites in id
//   order. One order for every account-wide action means no two of them wait for each other in a
//   cycle (a deadlock); writes of one site take only that site's lock. The wait for it is bounded
//   by what is left of the same ACCOUNT_LOCK_WAIT_MS after the wait in the process (lock_timeout),
//   past which the answer is the same 429: the two waits together stay within the bound.
import type { Kysely } from 'kysely';
import type { DialectTraits } from '../db/dialect-traits.js';
import { ApiError } from '../jsonapi/errors.js';

/** The longest a request waits for its account's turn, in this process or in the database. */
export const ACCOUNT_LOCK_WAIT_MS = 10_000;

/** Requests of one account that may wait in this process at once; more are refused at once. */
export const ACCOUNT_LOCK_WAITERS = 100;

interface Turn {
  go: () => void;
  timer: NodeJS.Timeout;
}

class AccountQueue {
  running = false;
  readonly waiting: Turn[] = [];
  /** Recent actions' duration (a moving average), for the expected wait; 0 before the first. */
  averageMs = 0;

  /** How long a request joining the queue now can expect to wait. */
  expectedWaitMs(): number {
    return (this.waiting.length + (this.running ? 1 : 0)) * this.averageMs;
  }
}

/** 429 account_busy: the request would wait (or has waited) too long for the account's turn. */
export function accountBusy(waitMs: number, boundMs = ACCOUNT_LOCK_WAIT_MS): ApiError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new ApiError(
    429,
    [
      {
        code: 'account_busy',
        title: 'Too Many Requests',
        detail: `Another sandbox action of this account (a clock advance, reset, snapshot or checkout) is running, and this one would wait more than ${boundMs / 1000} s for its turn; retry in ${seconds} s`,
      },
    ],
    { 'retry-after': String(seconds) },
  );
}

/** The accounts' queues of one process and pool, each bounded as the options say. */
export class AccountQueues {
  private readonly queues = new Map<number, AccountQueue>();

  constructor(private readonly bounds: { waitMs: number; waiters: number } = { waitMs: ACCOUNT_LOCK_WAIT_MS, waiters: ACCOUNT_LOCK_WAITERS }) {}

  /**
   * Runs `action` once every action of the account queued before it has finished, holding
   * nothing while it waits, with what is left of the wait's bound (for lockAccount). 429
   * account_busy when the wait would be, or has been, too long.
   */
  async run<T>(accountId: number, action: (waitLeftMs: number) => Promise<T>): Promise<T> {
    const arrived = performance.now();
    let queue = this.queues.get(accountId);
    if (!queue) this.queues.set(accountId, (queue = new AccountQueue()));
    const { waitMs, waiters } = this.bounds;
    if (queue.running) {
      const expected = queue.expectedWaitMs();
      if (queue.waiting.length >= waiters || expected > waitMs) throw accountBusy(expected, waitMs);
      const waited = queue;
      await new Promise<void>((resolve, reject) => {
        const turn: Turn = {
          go: resolve,
          timer: setTimeout(() => {
            const at = waited.waiting.indexOf(turn);
            if (at >= 0) waited.waiting.splice(at, 1);
            reject(accountBusy(waited.expectedWaitMs(), waitMs));
          }, waitMs),
        };
        waited.waiting.push(turn);
      });
    } else {
      queue.running = true;
      // Even an idle queue starts on the event loop's next turn: on SQLite an action runs
      // synchronously to its end, and requests already received (a read) are served first.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    const started = performance.now();
    try {
      return await action(Math.max(1, waitMs - (started - arrived)));
    } finally {
      const ms = performance.now() - started;
      queue.averageMs = queue.averageMs === 0 ? ms : 0.7 * queue.averageMs + 0.3 * ms;
      const next = queue.waiting.shift();
      if (next) {
        clearTimeout(next.timer);
        // On the event loop's next turn, for the same reason: handed over at once, the queued
        // actions would run back to back without a socket being read in between.
        setImmediate(next.go);
      } else {
        queue.running = false;
      }
    }
  }
}

// One set of queues per database handle (a process's pool; each test app has its own).
const queuesOf = new WeakMap<object, AccountQueues>();

/**
 * Runs `action` in the account's turn among the actions of this process on `scope` (the database
 * handle), with the bounds above: see AccountQueues.run.
 */
export function withAccountLock<T>(scope: object, accountId: number, action: (waitLeftMs: number) => Promise<T>): Promise<T> {
  let queues = queuesOf.get(scope);
  if (!queues) queuesOf.set(scope, (queues = new AccountQueues()));
  return queues.run(accountId, action);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * The database's lock of the account's actions, taken first in their transaction (see above):
 * the account's row, locked to the end of the transaction, waiting at most `waitMs` (what
 * withAccountLock left of the bound) for another process's action, then 429. Returns the
 * account's clock offset as it is now.
 */
export async function lockAccount(db: AnyDb, traits: DialectTraits, accountId: number, waitMs = ACCOUNT_LOCK_WAIT_MS): Promise<{ clockOffsetMs: number }> {
  await traits.boundLockWaits(db, waitMs);
  let row: { clock_offset_ms: unknown };
  try {
    row = await traits
      .lockingRows(db.selectFrom('accounts').select('clock_offset_ms').where('id', '=', accountId), 'no key update')
      .executeTakeFirstOrThrow();
  } catch (error) {
    if (traits.isLockTimeout(error)) throw accountBusy(ACCOUNT_LOCK_WAIT_MS);
    throw error;
  }
  // The site locks after it wait for single writes, which are short: the server's bound again.
  await traits.boundLockWaits(db, null);
  return { clockOffsetMs: Number(row.clock_offset_ms) };
}
