// What every PostgreSQL connection of sitebiz's pools gets when it opens: the session settings of
// an OLTP service, and listeners that keep a broken connection from crashing the process.
import type pg from 'pg';

/**
 * Session settings, each measured at 1,000,000 contacts (docs/scaling.md, "Session settings"):
 *
 * - `jit = off`: PostgreSQL JIT-compiles a statement whose cost estimate passes jit_above_cost,
 *   which a deep page's OFFSET or a count of a large site does. Compiling costs 20-30 ms on every
 *   run, for statements that run in a few ms without it; nothing sitebiz runs is the long
 *   analytical query JIT pays off for.
 * - `plan_cache_mode = force_custom_plan`: sitebiz's reads are named prepared statements
 *   (connect.ts, runSelect). After five runs PostgreSQL may switch one to a generic plan, made
 *   without the parameters' values, and a generic plan cannot know that a site has a million
 *   contacts and another ten: page 1 of contacts then scans the site instead of reading 25 index
 *   entries. A custom plan costs a few hundredths of a millisecond of planning per run.
 *
 * They are SET on each new connection before the pool hands it out (pg-pool's onConnect), unless a transaction
 * pooler is between (DATABASE_POOLER=transaction): there a SET would stay on whichever server
 * connection ran it, for the pooler's next client, and sitebiz sets nothing on a session. Set
 * them on the role instead (docs/scaling.md: ALTER ROLE ... SET), where every server connection
 * gets them; without named statements, plan_cache_mode does not matter there anyway.
 */
export const SESSION_SETTINGS = 'set jit = off; set plan_cache_mode = force_custom_plan';

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
