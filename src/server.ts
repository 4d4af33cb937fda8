// `sitebiz serve`: the only place that listens. Migrates, seeds an empty database, serves, and
// shuts down gracefully on SIGTERM/SIGINT. With --workers N above 1, this process becomes the
// primary of a node:cluster: it does the database set-up once, then forks N workers that each
// build the app and listen on the same port (see worker-supervisor.ts).
import cluster from 'node:cluster';
import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { connectDatabase, migrateToLatest, type DatabaseHandle } from './db/connect.js';
import { initialize } from './domain/initialize.js';
import { printCredentials } from './main.js';
import { WorkerSupervisor } from './worker-supervisor.js';

/** Longest time spent taking in connections and requests already on their way at a signal. */
const TAKE_IN_MAX_MS = 1_000;

export async function serve(config: Config): Promise<void> {
  if (config.workers === 1) return serveInThisProcess(config);
  if (cluster.isPrimary) return superviseWorkers(config);
  return serveAsWorker(config);
}

/** One process: today's behaviour, no cluster. */
async function serveInThisProcess(config: Config): Promise<void> {
  const { database, banner } = await prepareDatabase(config);
  const app = await buildApp({ config, database });
  await app.listen({ port: config.port, host: config.host });
  // The signal handlers go in before the banner: whoever reads "serving" may signal at once.
  const signal = shutdownSignal();
  process.stdout.write(`${banner.join('\n')}\nsitebiz is serving ${config.publicUrl}/v1 (docs: ${config.publicUrl}/docs)\n\n`);
  await closeGracefully(app, await signal, config.shutdownTimeoutMs);
}

/**
 * The primary: migrates and seeds once (so workers never race each other for it, and the
 * credentials are printed exactly once), closes its own connection, then runs the workers until
 * SIGTERM/SIGINT.
 */
async function superviseWorkers(config: Config): Promise<void> {
  const { database, banner } = await prepareDatabase(config);
  // The primary answers no request: it keeps no pool and no page cache of its own.
  await database.close();

  const log = pino({ level: config.logLevel }).child({ role: 'primary' });
  const supervisor = new WorkerSupervisor({ workers: config.workers, log, stopGraceMs: config.shutdownTimeoutMs });
  // Installed before the workers start, so that a signal during the start stops them too.
  const signal = shutdownSignal();
  await supervisor.start();
  process.stdout.write(
    `${banner.join('\n')}\nsitebiz is serving ${config.publicUrl}/v1 with ${config.workers} workers (docs: ${config.publicUrl}/docs)\n\n`,
  );
  log.info({ signal: await signal, workers: supervisor.pids() }, 'shutting down: each worker finishes its requests in flight');
  const problems = await supervisor.stop();
  if (problems.length > 0) throw new Error(`not every worker stopped cleanly: ${problems.join('; ')}`);
  log.info('every worker stopped');
}

/** A worker of the cluster: its own app and database pool, listening on the shared port. */
async function serveAsWorker(config: Config): Promise<void> {
  // The primary may stop everyone while this worker is still starting: remember the signal.
  const signal = shutdownSignal();
  const app = await buildApp({ config });
  await app.listen({ port: config.port, host: config.host });
  await closeGracefully(app, await signal, config.shutdownTimeoutMs);
  // Leaving the cluster closes the channel to the primary, the last thing keeping this process up.
  cluster.worker?.disconnect();
}

/**
 * Connects, migrates and, on an empty database, creates the demo account. Returns the open
 * handle and the lines of the banner (the credentials are printed here, once).
 */
async function prepareDatabase(config: Config): Promise<{ database: DatabaseHandle; banner: string[] }> {
  const database = await connectDatabase(config.database);
  await migrateToLatest(database);
  const hasAccount = await database.db.selectFrom('accounts').select('id').limit(1).executeTakeFirst();
  const banner: string[] = [];
  if (!hasAccount) {
    const result = await initialize(database, { demo: true, baseUrl: config.publicUrl });
    process.stdout.write(
      result.created
        ? `\nsitebiz: new database (${database.description}); created the demo account.\n`
        : `\nsitebiz: another process created the account first; here is a new key for its owner.\n`,
    );
    printCredentials(result);
    banner.push(`Then: curl -s ${config.publicUrl}/v1/me -H "Authorization: Bearer <access_token>"`);
  } else {
    banner.push(`Database: ${database.description}. For credentials: npm run sitebiz -- init (prints a new API key).`);
  }
  return { database, banner };
}

/** Resolves with the first SIGTERM or SIGINT. */
function shutdownSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      // A second signal while closing is ignored rather than killing the process mid-request.
      process.on('SIGTERM', () => {});
      process.on('SIGINT', () => {});
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

/**
 * Takes in what has already reached this process, answers every request, then closes the database.
 * Exits with 1 if requests are still running when the deadline passes.
 */
async function closeGracefully(app: FastifyInstance, signal: NodeJS.Signals, deadlineMs: number): Promise<void> {
  app.log.info({ signal, deadlineMs }, 'shutting down: no new connections, finishing requests in flight');
  const force = setTimeout(() => {
    app.log.error({ deadlineMs }, 'requests still running at the shutdown deadline; exiting');
    process.exit(1);
  }, deadlineMs);
  force.unref();
  try {
    await takeInArrivals(app.server, Math.min(TAKE_IN_MAX_MS, deadlineMs / 4));
    // close() stops accepting, closes idle connections, waits for the requests in flight (a
    // request that arrives meanwhile on an open connection is answered with Connection: close),
    // then runs onClose (the database).
    await app.close();
  } catch (error) {
    app.log.error({ err: error }, 'error during shutdown');
  } finally {
    clearTimeout(force);
  }
}

/**
 * Closing the listener resets the connections the kernel has accepted but this process has not
 * taken yet, and closing idle connections drops those whose request has arrived but not been read:
 * a process busy with synchronous work (SQLite) is often behind on both when the signal comes. So
 * let the event loop run until two turns in a row bring no new connection and no new request (or
 * `maxMs` passes), and only then close.
 */
async function takeInArrivals(server: Server, maxMs: number): Promise<void> {
  let arrivals = 0;
  const arrived = () => arrivals++;
  server.on('connection', arrived);
  server.on('request', arrived);
  const deadline = Date.now() + maxMs;
  try {
    for (let quietTurns = 0; quietTurns < 2 && Date.now() < deadline; ) {
      const before = arrivals;
      // Each wait lets one poll phase run: accepts, reads, and the handlers they start.
      await new Promise((resolve) => setImmediate(resolve));
      quietTurns = arrivals === before ? quietTurns + 1 : 0;
    }
  } finally {
    server.off('connection', arrived);
    server.off('request', arrived);
  }
}
