// AUDIT_RETENTION_DAYS: the audit log's rows older than that are removed, in batches of ids read
// off the (created_at, id) index, so each statement is short and holds few locks, whatever the
// backlog (the first run after lowering the setting). Every process runs it, hourly: a removal is
// idempotent, and two processes at once only find less to remove.
import type { FastifyBaseLogger } from 'fastify';
import type { AuditWriter } from './audit-events.js';

export const PRUNE_BATCH = 1_000;
export const PRUNE_EVERY_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** Removes the audit rows created before `cutoff`, `batch` at a time; returns how many. */
export async function pruneAuditEvents(handle: AuditWriter, cutoff: Date, batch = PRUNE_BATCH): Promise<number> {
  const before = handle.traits.encodeTimestamp(cutoff);
  let removed = 0;
  for (;;) {
    const result = await handle.db
      .deleteFrom('audit_events')
      .where('id', 'in', (eb) => eb.selectFrom('audit_events').select('id').where('created_at', '<', before).orderBy('created_at').orderBy('id').limit(batch))
      .executeTakeFirst();
    const n = Number(result.numDeletedRows);
    removed += n;
    if (n < batch) return removed;
    // Let requests in between batches (SQLite has one writer).
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export interface AuditRetentionOptions {
  handle: AuditWriter;
  /** 0: keep forever (nothing runs). */
  days: number;
  now: () => Date;
  log: FastifyBaseLogger;
  everyMs?: number;
}

/** The hourly removal, started with the app and stopped when it closes. */
export class AuditRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(private readonly options: AuditRetentionOptions) {}

  /** Removes what is past retention now; 0 when retention is off. */
  async runOnce(): Promise<number> {
    const { days, handle, now } = this.options;
    if (days <= 0) return 0;
    this.running ??= pruneAuditEvents(handle, new Date(now().getTime() - days * DAY_MS)).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  start(): void {
    if (this.options.days <= 0 || this.timer) return;
    const every = this.options.everyMs ?? PRUNE_EVERY_MS;
    // The first run a minute or so after start (jittered, so processes started together do not
    // run together), not during start-up's own work.
    const tick = (delay: number) => {
      this.timer = setTimeout(() => {
        this.runOnce()
          .then((removed) => {
            if (removed > 0) this.options.log.info({ removed, retention_days: this.options.days }, 'audit log: removed rows past retention');
          })
          .catch((error: unknown) => this.options.log.warn({ err: error }, 'audit log: retention run failed; it is tried again later'))
          .finally(() => {
            if (this.timer) tick(every);
          });
      }, delay);
      this.timer.unref();
    };
    tick(Math.min(every, 60_000 + Math.floor(Math.random() * 30_000)));
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => 0);
  }
}
