// `sitebiz serve`: the only place that listens. Migrates, seeds an empty database, serves, and
// shuts down gracefully on SIGTERM/SIGINT. With --workers N above 1, this process becomes the
// primary of a node:cluster: it does the database set-up once, then forks N workers that each
// build the app and listen on the same port (see worker-supervisor.ts).
import cluster from 'node:cluster';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { connectDatabase, migrateToLatest, type DatabaseHandle } from './db/connect.js';
import { initialize } from './domain/initialize.js';
import { printCredentials } from './main.js';
import { WorkerSupervisor } from './worker-supervisor.js';

const SHUTDOWN_GRACE_MS = 10_000;

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
  await closeGracefully(app, await signal);
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
  const supervisor = new WorkerSupervisor({ workers: config.workers, log, stopGraceMs: SHUTDOWN_GRACE_MS });
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
  await closeGracefully(app, await signal);
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
 * Stops accepting, finishes the requests in flight, closes the database. Exits with 1 if
 * requests are still running after the grace period.
 */
async function closeGracefully(app: FastifyInstance, signal: NodeJS.Signals): Promise<void> {
  app.log.info({ signal }, 'shutting down: no new connections, finishing requests in flight');
  const force = setTimeout(() => {
    app.log.error('requests still running after the grace period; exiting');
    process.exit(1);
  }, SHUTDOWN_GRACE_MS);
  force.unref();
  try {
    // close() stops accepting, waits for in-flight requests, then runs onClose (the pool).
    await app.close();
  } catch (error) {
    app.log.error({ err: error }, 'error during shutdown');
  } finally {
    clearTimeout(force);
  }
}
