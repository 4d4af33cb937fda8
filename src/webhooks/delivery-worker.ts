// The delivery worker: every app runs one (buildApp starts it; each `serve --workers` process has
// its own). It claims due deliveries (delivery-queue.ts), posts each (webhook-sender.ts) with at
// most `concurrency` attempts in flight, shared between accounts and hooks (slot-shares.ts), and
// records the outcome (delivery-outcomes.ts).
//
// It looks for due deliveries when told some were queued (by a commit of this process, or, on
// PostgreSQL, by NOTIFY from any process), when the soonest known delivery falls due, and at least
// every `pollMs` (deliveries queued by another process on a shared SQLite file, retries due while
// no server ran, a notification missed while PostgreSQL was away). An idle look is one read of
// the due index; a claim transaction runs only when something is due.
//
// Every "now" (scheduling, leases, started_at) comes from the clock the app was given, so tests
// move it. The queue runs on that real time; what an attempt writes into an account's records is
// the account's time, its sandbox clock (delivery-outcomes.ts). The webhook-timestamp header is
// the one exception: a receiver checks it against its own clock (Standard Webhooks allows 5
// minutes either way), so it is the wall clock's time of the attempt.
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { FastifyBaseLogger } from 'fastify';
import type { Mode } from '../config.js';
import type { DatabaseHandle } from '../db/connect.js';
import type { NotificationListener } from '../db/notifications.js';
import { claimDueFairly, leaseMs, nextDueAt, type ClaimedDelivery } from './delivery-queue.js';
import { failureReason, recordOutcomes, type AttemptRecord, type Outcome } from './delivery-outcomes.js';
import { signatureHeader } from './signing.js';
import { SlotShares } from './slot-shares.js';
import { connectLookup, refusedLiteralReason, RefusedTargetError, systemLookup, type Lookup } from './target-addresses.js';
import { DELIVERY_CHANNEL, onDeliveriesQueued } from './wakeups.js';
import { postWebhook, type PostResult } from './webhook-sender.js';
import type { WebhookTracer } from '../observability/trace-context.js';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** What deliveries say they come from. */
export const USER_AGENT = `sitebiz/${VERSION} (webhooks)`;

export interface DeliveryWorkerOptions {
  handle: DatabaseHandle;
  log: FastifyBaseLogger;
  /** The app's clock. */
  now: () => Date;
  /** production: targets that are or resolve to non-public addresses are refused. */
  mode: Mode;
  timeoutMs: number;
  concurrency: number;
  pollMs: number;
  /**
   * Resolves target hosts (tests route names to their local receiver). Default: the system's
   * resolver, through Node's own lookup in sandbox mode.
   */
  lookup?: Lookup;
  /** The webhook-timestamp clock; default the wall clock. */
  wallClock?: () => Date;
  /** How long stop() lets attempts in flight finish before cutting them short; default 2 s. */
  stopGraceMs?: number;
  /** Jitter of the retry schedule (Math.random's range). */
  random?: () => number;
  /** Told of every attempt recorded, by its outcome (`stale`: the claim had run out), and whether it disabled its hook (metrics). */
  onAttempt?: (outcome: Outcome['status'] | 'stale', disabledHook: boolean) => void;
  /** With traces on (src/observability/tracing.ts): a span per attempt, its traceparent sent along. */
  tracer?: WebhookTracer;
}

interface Flight {
  abort: AbortController;
  done: Promise<void>;
}

const DEFAULT_STOP_GRACE_MS = 2_000;
/** Most outcomes written in one transaction. */
const OUTCOME_BATCH = 256;

export class DeliveryWorker {
  private running = false;
  private stopped = false;
  private readonly flights = new Set<Flight>();
  /** A look for due deliveries was asked for while one ran: run another after it. */
  private wanted = false;
  private pumping: Promise<void> | undefined;
  /** The last claim filled every free slot, so more may be due once a slot frees. */
  private backlog = false;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private listener: NotificationListener | undefined;
  private readonly agents = {
    http: new http.Agent({ keepAlive: true, scheduling: 'lifo', timeout: 5_000 }),
    https: new https.Agent({ keepAlive: true, scheduling: 'lifo', timeout: 5_000 }),
  };
  private readonly lookup;
  private readonly leaseMs: number;
  /** Who may take the next slot: accounts and hooks each hold their share (slot-shares.ts). */
  private readonly shares: SlotShares;
  /** Outcomes waiting to be written (record()), and whether a batch is being written. */
  private readonly outcomes: Array<{ record: AttemptRecord; resolve: (outcome: Outcome) => void; reject: (error: unknown) => void }> = [];
  private writingOutcomes = false;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.leaseMs = leaseMs(options.timeoutMs);
    this.shares = new SlotShares(options.concurrency);
    const production = options.mode === 'production';
    this.lookup = production || options.lookup ? connectLookup(options.lookup ?? systemLookup, production) : undefined;
  }

  /** Starts looking for due deliveries, now and whenever woken; idempotent. */
  start(): void {
    if (this.running || this.stopped) return;
    this.running = true;
    this.unsubscribe = onDeliveriesQueued(() => this.wake());
    this.listener = this.options.handle.listen?.(DELIVERY_CHANNEL, {
      onNotify: () => this.wake(),
      onError: (error, retryInMs) => this.options.log.warn({ err: error, retryInMs }, 'webhook deliveries: lost the database notification connection; polling meanwhile'),
    });
    this.wake();
  }

  /**
   * Stops claiming, gives attempts in flight the grace period to finish, then cuts the rest short
   * (each is made due again at once, for whichever worker comes next), and closes its connections.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.running = false;
    clearTimeout(this.timer);
    this.unsubscribe?.();
    await this.listener?.close();
    await this.pumping;
    if (this.flights.size > 0) {
      let graceTimer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (graceTimer = setTimeout(resolve, this.options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS)));
      await Promise.race([Promise.all([...this.flights].map((f) => f.done)), grace]);
      clearTimeout(graceTimer);
      for (const flight of this.flights) flight.abort.abort();
      await Promise.all([...this.flights].map((f) => f.done));
    }
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /** Looks for due deliveries soon (coalesced with a look under way). */
  wake(): void {
    if (!this.running) return;
    this.wanted = true;
    if (this.pumping) return;
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined;
      // Asked for between the look's last check and its end.
      if (this.wanted) this.wake();
    });
  }

  /**
   * Claims and attempts everything due at the clock's now, and resolves when every attempt is
   * recorded; the number of attempts made. For tests and tools that move the clock themselves.
   */
  async runDue(): Promise<number> {
    let attempts = 0;
    for (;;) {
      const { claimed } = await claimDueFairly(this.options.handle, { now: this.options.now(), limit: this.options.concurrency, leaseMs: this.leaseMs });
      if (claimed.length === 0) return attempts;
      attempts += claimed.length;
      await this.recordWritePositions(claimed);
      await Promise.all(claimed.map((delivery) => this.launch(delivery)));
    }
  }

  private async pump(): Promise<void> {
    while (this.running && this.wanted) {
      this.wanted = false;
      try {
        await this.claimWhatIsDue();
      } catch (error) {
        this.options.log.warn({ err: error }, 'webhook deliveries: looking for due deliveries failed; trying again at the next poll');
        this.schedule(this.options.pollMs);
      }
    }
  }

  private async claimWhatIsDue(): Promise<void> {
    while (this.running) {
      const free = this.options.concurrency - this.flights.size;
      // A finishing attempt wakes the worker again.
      if (free <= 0) return;
      const now = this.options.now();
      const next = await nextDueAt(this.options.handle);
      if (next === undefined || next > now) {
        this.backlog = false;
        this.schedule(next === undefined ? this.options.pollMs : next.getTime() - now.getTime());
        return;
      }
      const { claimed, heldBack } = await claimDueFairly(this.options.handle, {
        now,
        limit: free,
        leaseMs: this.leaseMs,
        shares: this.shares,
      });
      // More may be due once a slot frees, or once an account or hook at its share finishes an attempt.
      this.backlog = claimed.length === free || heldBack;
      if (claimed.length === 0) {
        // Held back by accounts or hooks at their share: their attempts in flight wake the worker as they
        // finish. Otherwise everything due is being claimed by other workers.
        if (!(heldBack && this.flights.size > 0)) this.schedule(this.options.pollMs);
        return;
      }
      await this.recordWritePositions(claimed);
      for (const delivery of claimed) void this.launch(delivery);
    }
  }

  /**
   * With read replicas, a receiver that reads the record an event names must find it: before a
   * claim's attempts go out, each of its accounts' reads is made to wait for a replica past the
   * primary's position now (src/db/replicas.ts), once per account. The request that queued the
   * event records that too, but its answer may still be on the way.
   */
  private async recordWritePositions(claimed: readonly ClaimedDelivery[]): Promise<void> {
    const replicas = this.options.handle.replicas;
    if (!replicas) return;
    await Promise.all(
      [...new Set(claimed.map((d) => d.accountId))].map((accountId) =>
        replicas.recordWrite(accountId).catch((error: unknown) => this.options.log.warn({ err: error }, 'the write position for read replicas was not recorded before webhook attempts')),
      ),
    );
  }

  /** The next look, in `ms` but never later than the poll. */
  private schedule(ms: number): void {
    clearTimeout(this.timer);
    if (!this.running) return;
    this.timer = setTimeout(() => this.wake(), Math.max(0, Math.min(ms, this.options.pollMs)));
    this.timer.unref();
  }

  private launch(delivery: ClaimedDelivery): Promise<void> {
    const abort = new AbortController();
    /** Whether the receiver answered, for the hook's window (undefined: the attempt says nothing of it). */
    let answered: boolean | undefined;
    const flight: Flight = {
      abort,
      done: this.attempt(delivery, abort.signal, (result) => (answered = result.abandoned ? undefined : result.status !== null))
        .catch((error: unknown) => {
          // Most likely the database is away: the lease makes the delivery due again.
          this.options.log.error({ err: error, delivery: delivery.id }, 'webhook deliveries: could not record an attempt; it is made again when its lease ends');
        })
        .finally(() => {
          this.flights.delete(flight);
          this.shares.finished(delivery, answered);
          if (this.backlog) this.wake();
        }),
    };
    this.flights.add(flight);
    this.shares.started(delivery);
    return flight.done;
  }

  /**
   * Records an attempt's outcome together with the others that finished meanwhile (group commit:
   * while one batch is written the next gathers, so a busy worker commits once per batch rather
   * than once per attempt, and an idle one at once).
   */
  private record(record: AttemptRecord): Promise<Outcome> {
    return new Promise((resolve, reject) => {
      this.outcomes.push({ record, resolve, reject });
      void this.writeOutcomes();
    });
  }

  private async writeOutcomes(): Promise<void> {
    if (this.writingOutcomes) return;
    this.writingOutcomes = true;
    try {
      while (this.outcomes.length > 0) {
        const batch = this.outcomes.splice(0, OUTCOME_BATCH);
        try {
          const written = await recordOutcomes(this.options.handle, batch.map((b) => b.record));
          batch.forEach((b, i) => b.resolve(written[i]!));
        } catch (error) {
          // Not recorded: each delivery is attempted again when its lease ends.
          for (const b of batch) b.reject(error);
        }
      }
    } finally {
      this.writingOutcomes = false;
    }
  }

  private async attempt(delivery: ClaimedDelivery, signal: AbortSignal, posted: (result: PostResult) => void): Promise<void> {
    const startedAt = this.options.now();
    const span = this.options.tracer?.startAttempt({
      traceparent: delivery.traceparent,
      event: delivery.event,
      targetUrl: delivery.targetUrl,
      webhookId: delivery.webhookId,
      deliveryId: delivery.id,
      attemptNumber: delivery.attemptNumber,
    });
    const result = await this.post(delivery, signal, span?.headers);
    span?.end(result);
    posted(result);
    const outcome = await this.record({ claim: delivery, attempt: { startedAt, result, now: this.options.now(), ...(this.options.random ? { random: this.options.random } : {}) } });
    this.options.onAttempt?.(outcome.applied ? outcome.status : 'stale', outcome.disabledHook);
    const log = this.options.log;
    log.debug(
      {
        delivery: delivery.id,
        webhookId: delivery.webhookId,
        event: delivery.event,
        attempt: delivery.attemptNumber,
        status: result.status,
        error: failureReason(result),
        durationMs: result.durationMs,
        outcome: outcome.applied ? outcome.status : 'stale',
      },
      'webhook attempt',
    );
    if (outcome.disabledHook) log.info({ hook: delivery.hookId }, 'webhook hook disabled: its deliveries failed for 5 days');
  }

  private async post(delivery: ClaimedDelivery, signal: AbortSignal, traceHeaders: Readonly<Record<string, string>> | undefined): Promise<PostResult> {
    let url: URL;
    try {
      url = new URL(delivery.targetUrl);
    } catch {
      return refusal(`target_url ${JSON.stringify(delivery.targetUrl)} is not a URL`);
    }
    if (this.options.mode === 'production') {
      // A connection to an IP literal resolves nothing, so the lookup's check would not run.
      const refused = refusedLiteralReason(url);
      if (refused) return refusal(new RefusedTargetError(refused).message);
    }
    const sentAt = (this.options.wallClock ?? (() => new Date()))();
    const signature = signatureHeader(delivery.secrets, delivery.webhookId, sentAt, delivery.body);
    return postWebhook({
      url,
      body: delivery.body,
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': delivery.webhookId,
        'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
        ...(signature ? { 'webhook-signature': signature } : {}),
        ...traceHeaders,
      },
      timeoutMs: this.options.timeoutMs,
      ...(this.lookup ? { lookup: this.lookup } : {}),
      agents: this.agents,
      signal,
    });
  }
}

const refusal = (error: string): PostResult => ({ status: null, headers: null, body: null, error, durationMs: 0, abandoned: false });
