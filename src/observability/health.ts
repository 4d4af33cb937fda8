// GET /health: whether this process takes new work, for load balancers' health checks. 200
// {"status":"serving"} while it serves; 503 {"status":"draining"} from SIGTERM until it stops
// accepting (SHUTDOWN_DRAIN_MS, src/server.ts), so that a balancer takes it out of rotation while
// it still answers everything sent to it. It touches no database: a database outage shows in the
// API's own 503s, and failing every process's check at once would only turn them into the
// balancer's. Outside /v1, so checks are not counted against RATE_LIMIT and need no token.
import type { FastifyInstance } from 'fastify';

export interface Lifecycle {
  /** Set when a shutdown has begun: the process still answers, but asks not to be sent more. */
  draining: boolean;
}

export function healthRoute(lifecycle: Lifecycle) {
  return async function register(app: FastifyInstance): Promise<void> {
    app.get('/health', { schema: { hide: true }, config: { notJsonApi: true } }, async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return lifecycle.draining ? reply.code(503).send({ status: 'draining' }) : reply.send({ status: 'serving' });
    });
  };
}
