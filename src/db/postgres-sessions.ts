// What every PostgreSQL connection of sitebiz's pools gets when it opens: the session settings of
// an OLTP service, and listeners that keep a broken connection from crashing the process.
import type pg from 'pg';

/**
 * The session setting, measured at 1,000,000 contacts (docs/scaling.md, "PostgreSQL session
 * settings"): `jit = off`. PostgreSQL JIT-compiles a statement whose cost estimate passes
 * jit_above_cost, which a deep page's OFFSET, a count of a large site, or a generic plan of page 1
 * (it cannot know LIMIT $2 is 25) does. Compiling costs 10-300 ms on every run, for statements that
 * run in well under a millisecond to a few without it; nothing sitebiz runs is the long analytical
 * query JIT pays off for. (plan_cache_mode stays `auto`: forcing custom plans re-planned the token's
 * statement on every request, 0.8 ms each against 0.006 ms for its generic plan, and tripled a
 * page's time; with JIT off the generic plan of page 1 runs in 0.1 ms.)
 *
 * It is SET on each new connection before the pool hands it out (pg-pool's onConnect), unless a
 * transaction pooler is between (DATABASE_POOLER=transaction): there a SET would stay on whichever
 * server connection ran it, for the pooler's next client, and sitebiz sets nothing on a session.
 * Set it on the role instead (docs/scaling.md: ALTER ROLE ... SET), where every server connection
 * gets it.
 */
export const SESSION_SETTINGS = 'set jit = off';

/** The pool option that sets SESSION_SETTINGS on each new connection, or none (see above). */
export function sessionSetUp(sessionSettings: boolean): Pick<pg.PoolConfig, 'onConnect'> {
  if (!sessionSettings) return {};
  // A server that refuses a setting still serves, only without it.
  return { onConnect: (client) => client.query(SESSION_SETTINGS).then(() => undefined, () => undefined) };
}

export function prepareConnections(pool: pg.Pool): void {
  // A connection that fails while idle must not crash the process; the pool drops it (and drops a
  // checked-out one that broke when it is released), so new connections are made once the server
  // is back: recovery needs no restart.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    // A connection that fails while checked out (a query in flight when the server goes away) also
    // emits 'error', and neither the pool nor Kysely listens then: unheard, it would crash the
    // process. The query itself fails with the error, and the pool drops the connection on release.
    client.on('error', () => {});
  });
}
