// Health checks for load balancers and orchestrators, outside /v1: no token, not counted against
// RATE_LIMIT, hidden from the API description, and nothing in them but a status and a reason.
//
// - GET /healthz: the process is alive (its event loop answers). It touches no database, so an
//   orchestrator's liveness probe never restarts processes because the database is down.
// - GET /readyz: the process can serve: it is not draining, and the database answers a read of
//   the migration table within READY_DATABASE_DEADLINE_MS showing every migration this version
//   knows. During a SIGTERM drain (SHUTDOWN_DRAIN_MS, src/server.ts) it turns 503 first, while
//   every other request is still answered, so a balancer stops sending before connections close.
// - GET /health: the check of earlier versions (and of load balancer configurations written for
//   them): 503 while draining, otherwise 200, without the database. Kept as it was.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { DatabaseHandle } from '../db/connect.js';
import { pendingMigrations } from '../db/migration-status.js';

export interface Lifecycle {
  /** Set when a shutdown has begun: the process still answers, but asks not to be sent more. */
  draining: boolean;
}

/** How long /readyz waits for the database before calling the process not ready. */
export const READY_DATABASE_DEADLINE_MS = 2_000;

export type Readiness =
  | { ready: true }
  | { ready: false; reason: 'draining' | 'database_unavailable' | 'migrations_pending'; detail: string; error?: unknown };

/**
 * What /readyz answers. The database's part is one read of the migration table (a few dozen
 * rows): it proves the database answers and that the schema has every migration this version
 * knows, even after an older backup was restored under a running process.
 */
export function readinessCheck(lifecycle: Lifecycle, database: DatabaseHandle, deadlineMs = READY_DATABASE_DEADLINE_MS) {
  return async function readiness(): Promise<Readiness> {
    if (lifecycle.draining) return { ready: false, reason: 'draining', detail: 'the process is shutting down and takes no new work' };
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), deadlineMs);
    });
    try {
      const answered = await Promise.race([pendingMigrations(database), deadline]);
      if (answered === 'late') return { ready: false, reason: 'database_unavailable', detail: `the database did not answer within ${deadlineMs} ms` };
      if (answered.length > 0) {
        return { ready: false, reason: 'migrations_pending', detail: `${answered.length} migration${answered.length === 1 ? ' is' : 's are'} not applied yet (sitebiz migrate --status)` };
      }
      return { ready: true };
    } catch (error) {
      // The error itself may name hosts or users: the log has it, the answer does not.
      return { ready: false, reason: 'database_unavailable', detail: 'the database refused the check statement', error };
    } finally {
      clearTimeout(timer);
    }
  };
}

const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

export function healthRoutes(lifecycle: Lifecycle, database: DatabaseHandle) {
  const readiness = readinessCheck(lifecycle, database);
  return async function register(app: FastifyInstance): Promise<void> {
    const options = { schema: { hide: true }, config: { notJsonApi: true } } as const;
    app.get('/healthz', options, async (_request, reply) => noStore(reply).send({ status: 'alive' }));
    app.get('/readyz', options, async (request, reply) => {
      const state = await readiness();
      if (state.ready) return noStore(reply).send({ status: 'ready' });
      if (state.reason === 'database_unavailable') request.log.warn({ reason: state.detail, err: state.error }, 'not ready');
      return noStore(reply).code(503).send({ status: 'not_ready', reason: state.reason, detail: state.detail });
    });
    app.get('/health', options, async (_request, reply) =>
      lifecycle.draining ? noStore(reply).code(503).send({ status: 'draining' }) : noStore(reply).send({ status: 'serving' }),
    );
  };
}
