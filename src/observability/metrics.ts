// Prometheus metrics (METRICS=public|token; docs/operations.md "Metrics"). One Metrics per app,
// with its own prom-client Registry (tests build many apps in one process; counters of one must not
// show in another's scrape), beside one process-wide registry of prom-client's default process
// metrics (CPU, RSS, heap, event-loop lag: they describe the process, not the app, and their
// collectors, once started, are never stopped). With METRICS=off none of this is created: the
// hooks below are not installed and the database has no observer, so nothing is recorded.
//
// Labels stay bounded: a request is labelled with its route template (`/v1/contacts/:id`), never
// its URL, and a request no route matched with `unmatched`; statuses by class (2xx...5xx).
import cluster from 'node:cluster';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Config } from '../config.js';
import type { DatabaseHandle, StatementEvent, StatementTarget } from '../db/connect.js';
import { nextDueAt } from '../webhooks/delivery-queue.js';
import { REFUSED_LIMITS, type RefusedLimit } from '../auth/rate-limits.js';
import type { InjectedFault } from '../sandbox/faults.js';
import type { Outcome } from '../webhooks/delivery-outcomes.js';
import { askPrimaryForMetrics } from './metrics-cluster.js';

/** Seconds. From a cached read (a millisecond) to a slow export page (seconds). */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds. Statements are mostly sub-millisecond on SQLite, a millisecond or so on PostgreSQL. */
const STATEMENT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];
/** Seconds. A free connection is handed out at once; a saturated pool makes callers queue. */
const POOL_WAIT_BUCKETS = [0.0001, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5];

/** The label of a request no route matched (404s of unknown paths): never the raw URL. */
export const UNMATCHED_ROUTE = 'unmatched';
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;
const ATTEMPT_OUTCOMES: ReadonlyArray<Outcome['status'] | 'stale'> = ['succeeded', 'retrying', 'failed', 'released', 'stale'];
const STATEMENT_KINDS = ['select', 'insert', 'update', 'delete', 'other'] as const;

let processRegistry: Registry | undefined;
/** prom-client's default metrics of this process, started once whatever the number of apps. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
    // Gauges named like counters (promtool's lint refuses them); each is the sum of the by-type
    // gauge of the same name without _total, which stays.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) processRegistry.removeSingleMetric(name);
  }
  return processRegistry;
}

/** select, insert, update, delete or other (transaction control, DDL, CTEs) from a statement's first word. */
export function statementKind(sql: string): (typeof STATEMENT_KINDS)[number] {
  const head = sql.trimStart().slice(0, 6).toLowerCase();
  return head === 'select' || head === 'insert' || head === 'update' || head === 'delete' ? head : 'other';
}

export interface MetricsOptions {
  database: DatabaseHandle;
  /** The app's clock: the webhook queue's due times are on it. */
  now: () => Date;
  /** Where a failed queue read at scrape is logged. */
  warn: (error: unknown, message: string) => void;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'route' | 'method' | 'status_class'>;
  private readonly httpDuration: Histogram<'route' | 'method' | 'status_class'>;
  private readonly statementDuration: Histogram<'kind' | 'target'>;
  private readonly statementErrors: Counter<'kind' | 'target'>;
  private readonly poolWait: Histogram<'target'>;
  private readonly rateLimitRefusals: Counter<'limit'>;
  private readonly faults: Counter<'effect' | 'status'>;
  private readonly attempts: Counter<'outcome'>;
  private readonly hooksDisabled: Counter;
  private readonly unobserve: (() => void) | undefined;

  constructor(private readonly options: MetricsOptions) {
    const registers = [this.registry];
    const { database } = options;
    this.httpRequests = new Counter({
      name: 'sitebiz_http_requests_total',
      help: 'HTTP requests answered, by route template, method and status class',
      labelNames: ['route', 'method', 'status_class'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'sitebiz_http_request_duration_seconds',
      help: 'Time from a request arriving to its answer being sent, by route template, method and status class',
      labelNames: ['route', 'method', 'status_class'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.statementDuration = new Histogram({
      name: 'sitebiz_db_statement_duration_seconds',
      help: 'Database statements run (its _count) and their time, by kind and by server (primary or read replica)',
      labelNames: ['kind', 'target'],
      buckets: STATEMENT_BUCKETS,
      registers,
    });
    this.statementErrors = new Counter({
      name: 'sitebiz_db_statement_errors_total',
      help: 'Database statements that failed, by kind and server',
      labelNames: ['kind', 'target'],
      registers,
    });
    this.poolWait = new Histogram({
      name: 'sitebiz_db_pool_wait_seconds',
      help: 'PostgreSQL: time waited for a pool connection, per checkout',
      labelNames: ['target'],
      buckets: POOL_WAIT_BUCKETS,
      registers,
    });
    this.rateLimitRefusals = new Counter({
      name: 'sitebiz_rate_limit_refusals_total',
      help: 'Requests refused with 429 by a rate limit: requests (RATE_LIMIT), auth_failures (AUTH_FAILURE_LIMIT lockout) or console_sign_in (the console sign-in throttle)',
      labelNames: ['limit'],
      registers,
    });
    this.faults = new Counter({
      name: 'sitebiz_sandbox_faults_injected_total',
      help: 'Sandbox faults that answered or delayed a request, by effect (error, latency, latency_and_error) and status',
      labelNames: ['effect', 'status'],
      registers,
    });
    this.attempts = new Counter({
      name: 'sitebiz_webhook_attempts_total',
      help: 'Webhook attempts recorded, by the outcome of their delivery (stale: the claim had run out)',
      labelNames: ['outcome'],
      registers,
    });
    this.hooksDisabled = new Counter({
      name: 'sitebiz_webhook_hooks_disabled_total',
      help: 'Hooks disabled because their deliveries failed for 5 days',
      registers,
    });
    // Every database and process reads the same queue: summing the workers' readings would
    // multiply it, so a cluster scrape takes the largest (aggregator max).
    // Both gauges come from one read per scrape: a scrape collects them at once, so the second
    // shares the read in flight.
    let inFlight: Promise<{ pending: number; oldestDueAge: number }> | undefined;
    const readQueue = () => (inFlight ??= this.readQueue().finally(() => (inFlight = undefined)));
    new Gauge({
      name: 'sitebiz_webhook_deliveries_pending',
      help: 'Webhook deliveries not finished (pending or retrying, leased ones included)',
      aggregator: 'max',
      registers,
      async collect() {
        this.set((await readQueue()).pending);
      },
    });
    new Gauge({
      name: 'sitebiz_webhook_oldest_due_age_seconds',
      help: 'How long the soonest due webhook delivery has been waiting past its due time (0: none is overdue)',
      aggregator: 'max',
      registers,
      async collect() {
        this.set((await readQueue()).oldestDueAge);
      },
    });
    if (database.poolStates) {
      const states = database.poolStates;
      new Gauge({
        name: 'sitebiz_db_pool_connections',
        help: 'PostgreSQL pool connections by state (idle, busy), summed over pools of the same server kind',
        labelNames: ['target', 'state'],
        registers,
        collect() {
          this.reset();
          for (const s of states()) {
            this.inc({ target: s.target, state: 'idle' }, s.idle);
            this.inc({ target: s.target, state: 'busy' }, s.total - s.idle);
          }
        },
      });
      new Gauge({
        name: 'sitebiz_db_pool_waiting_clients',
        help: 'PostgreSQL: callers waiting for a pool connection now',
        labelNames: ['target'],
        registers,
        collect() {
          this.reset();
          for (const s of states()) this.inc({ target: s.target }, s.waiting);
        },
      });
      new Gauge({
        name: 'sitebiz_db_pool_max_connections',
        help: 'PostgreSQL: the pools\' size (DATABASE_POOL_SIZE per pool)',
        labelNames: ['target'],
        registers,
        collect() {
          this.reset();
          for (const s of states()) this.inc({ target: s.target }, s.max);
        },
      });
    }
    // Zero series for every known label value, so rate() and alerts see them from the first scrape.
    for (const limit of REFUSED_LIMITS) this.rateLimitRefusals.inc({ limit }, 0);
    for (const outcome of ATTEMPT_OUTCOMES) this.attempts.inc({ outcome }, 0);
    this.hooksDisabled.inc(0);

    this.unobserve = database.observe?.({
      statement: (event) => this.statement(event),
      ...(database.poolStates ? { connectionWait: (ms: number, target: StatementTarget) => this.poolWait.observe({ target }, ms / 1000) } : {}),
    });
  }

  private statement(event: StatementEvent): void {
    const labels = { kind: statementKind(event.sql), target: event.target };
    if (event.failed) this.statementErrors.inc(labels);
    else this.statementDuration.observe(labels, event.milliseconds / 1000);
  }

  private async readQueue(): Promise<{ pending: number; oldestDueAge: number }> {
    const { database, now } = this.options;
    try {
      // Both read the partial index of unfinished deliveries (webhook_deliveries_due_idx): the
      // count scans only the queue, never the finished history; the soonest due is its first entry.
      const [row, due] = await Promise.all([
        database.db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number | string>().as('n')).where('next_attempt_at', 'is not', null).executeTakeFirst(),
        nextDueAt(database),
      ]);
      const age = due ? Math.max(0, (now().getTime() - due.getTime()) / 1000) : 0;
      return { pending: Number(row?.n ?? 0), oldestDueAge: age };
    } catch (error) {
      // An unknown value rather than a stale or invented one; the scrape itself still answers.
      this.options.warn(error, 'metrics: the webhook queue could not be read');
      return { pending: Number.NaN, oldestDueAge: Number.NaN };
    }
  }

  /** The onResponse hook: one count and one observation per answered request. */
  readonly onResponse = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    // A route matched only through the not-found handler has no url; a method outside the usual
    // few (Node accepts dozens) is `other`: no client can add label values.
    const method = METHODS.has(request.method) ? request.method : 'other';
    const statusClass = STATUS_CLASSES[Math.floor(reply.statusCode / 100) - 1] ?? 'other';
    const labels = { route, method, status_class: statusClass };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, reply.elapsedTime / 1000);
  };

  readonly rateLimitRefused = (limit: RefusedLimit): void => {
    this.rateLimitRefusals.inc({ limit });
  };

  readonly faultInjected = (fault: InjectedFault): void => {
    const effect = fault.status === null ? 'latency' : fault.latency ? 'latency_and_error' : 'error';
    this.faults.inc({ effect, status: fault.status === null ? 'none' : String(fault.status) });
  };

  readonly webhookAttempt = (outcome: Outcome['status'] | 'stale', disabledHook: boolean): void => {
    this.attempts.inc({ outcome });
    if (disabledHook) this.hooksDisabled.inc();
  };

  /** This process's metrics in the Prometheus text format: the app's, then the process's. */
  async text(): Promise<string> {
    return (await this.registry.metrics()) + (await processMetrics().metrics());
  }

  /**
   * In a worker of `serve --workers`, the primary's next cluster scrape reads this app's
   * registries (prom-client's AggregatorRegistry asks every worker over IPC).
   */
  joinCluster(): void {
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([this.registry, processMetrics()]);
  }

  close(): void {
    this.unobserve?.();
  }
}

/** SHA-256 of a token: compared in constant time whatever the lengths. */
const digest = (token: string) => createHash('sha256').update(token).digest();

/**
 * GET /metrics, outside /v1: no API token, not counted by RATE_LIMIT, not in the OpenAPI
 * document. METRICS=token asks for `Authorization: Bearer <METRICS_TOKEN>`. In a worker of
 * `serve --workers N` the answer is the whole server's, aggregated by the primary.
 */
export function metricsRoute(config: Config, metrics: Metrics) {
  const expected = config.metrics === 'token' && config.metricsToken ? digest(config.metricsToken) : undefined;
  const inCluster = cluster.isWorker && typeof process.send === 'function';
  if (inCluster) metrics.joinCluster();
  return async function register(app: FastifyInstance): Promise<void> {
    app.get('/metrics', { schema: { hide: true }, config: { notJsonApi: true } }, async (request, reply) => {
      reply.header('cache-control', 'no-store');
      if (expected) {
        const header = request.headers.authorization ?? '';
        const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
        if (!match || !timingSafeEqual(digest(match[1]!), expected)) {
          return reply
            .code(401)
            .header('www-authenticate', 'Bearer realm="metrics"')
            .type('text/plain; charset=utf-8')
            .send(match ? 'The Bearer token is not METRICS_TOKEN.\n' : 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>.\n');
        }
      }
      const text = inCluster ? await askPrimaryForMetrics() : await metrics.text();
      return reply.type(metrics.registry.contentType).send(text);
    });
  };
}
