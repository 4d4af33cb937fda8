// `sitebiz serve`: the only place that listens. Migrates, seeds an empty database, serves, and
// shuts down gracefully on SIGTERM/SIGINT. With --workers N above 1, this process becomes the
// primary of a node:cluster: it does the database set-up once, then forks N workers that each
// build the app and listen on the same port (see worker-supervisor.ts). The app's modules (Fastify,
// the resources, the console) are imported where an app is built, so the primary never loads them.
import cluster from 'node:cluster';
import type { Server } from 'node:http';
import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import type { Config, SettingSource } from './config.js';
import { connectDatabase, migrateToLatest, type DatabaseHandle } from './db/connect.js';
import type { InitResult } from './domain/initialize.js';
import { commandHint, credentialLines, type CommandHint } from './cli/credentials.js';
import { saveServerPublicUrl } from './db/instance-settings.js';
import { PortUnavailableError } from './cli/command.js';
import { WorkerSupervisor } from './worker-supervisor.js';

/** Longest time spent taking in connections and requests already on their way at a signal. */
const TAKE_IN_MAX_MS = 1_000;

export interface ServeOptions {
  /** Announce with one JSON object instead of text (`sitebiz serve --json`). */
  json?: boolean;
  /** Where DATABASE_URL came from, which decides how the hints name the database (commandHint). */
  databaseSource?: SettingSource;
}

export async function serve(config: Config, options: ServeOptions = {}): Promise<void> {
  if (config.workers === 1) return serveInThisProcess(config, options);
  if (cluster.isPrimary) return superviseWorkers(config, options);
  return serveAsWorker(config);
}

/** The hints' way to run a command on this server's database (the default source: a test's serve()). */
const hintFor = (config: Config, options: ServeOptions): CommandHint | undefined => commandHint(config.database, options.databaseSource ?? 'default');

/** The port cannot be listened on: said plainly, before anything is created or printed. */

/**
 * Listens on the port for a moment and lets it go. Run before the database is created and the
 * credentials printed, so that a taken port leaves nothing behind and prints no secret that no
 * server will accept. (Another program can still take the port in between; then listen fails.)
 */
export async function checkPortIsFree(config: Config, options: ServeOptions = {}): Promise<void> {
  if (config.port === 0) return;
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ port: config.port, host: config.host, exclusive: true }, resolve);
    });
  } catch (error) {
    throw new PortUnavailableError(portProblem(config, (error as NodeJS.ErrnoException).code, hintFor(config, options)));
  }
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

function portProblem(config: Config, code: string | undefined, hint: CommandHint | undefined): string {
  const where = `port ${config.port} on ${config.host}`;
  const other = config.port < 65535 ? config.port + 1 : 3000;
  // On the same database: a bare `PORT=3001 npm start` would serve the default one instead.
  const prefix = hint?.prefix ?? '';
  const pick = `pick another port${hint?.caveat ? ` (${hint.caveat.replace(/:$/, '')})` : ''}: ${prefix}PORT=${other} npm start, or ${prefix}sitebiz serve --port ${other}`;
  if (code === 'EADDRINUSE') {
    return `${where} is already in use (another sitebiz, or another program, is listening there). Stop it, or ${pick}. Nothing was created.`;
  }
  if (code === 'EACCES') return `${where} needs privileges this user does not have; ${pick}. Nothing was created.`;
  if (code === 'EADDRNOTAVAIL') return `${config.host} is not an address of this machine; set HOST (or --host), e.g. 127.0.0.1 or 0.0.0.0.`;
  return `cannot listen on ${where} (${code ?? 'unknown error'}); ${pick}.`;
}

/** One process: today's behaviour, no cluster. */
async function serveInThisProcess(config: Config, options: ServeOptions): Promise<void> {
  await checkPortIsFree(config, options);
  const [prepared, { buildApp }] = await Promise.all([prepareDatabase(config), import('./app.js')]);
  const app = await buildApp({ config, database: prepared.database });
  await app.listen({ port: config.port, host: config.host });
  // The signal handlers go in before the banner: whoever reads "serving" may signal at once.
  const signal = shutdownSignal();
  announce(config, prepared, options);
  await closeGracefully(app, await signal, config);
}

/**
 * The primary: migrates and seeds once (so workers never race each other for it, and the
 * credentials are printed exactly once), closes its own connection, then runs the workers until
 * SIGTERM/SIGINT.
 */
async function superviseWorkers(config: Config, options: ServeOptions): Promise<void> {
  await checkPortIsFree(config, options);
  const prepared = await prepareDatabase(config);
  // The primary answers no request: it keeps no pool and no page cache of its own.
  await prepared.database.close();

  const log = pino({ level: config.logLevel }).child({ role: 'primary' });
  // GET /metrics of any worker is the whole server's: the primary gathers every worker's (metrics-cluster.ts).
  if (config.metrics !== 'off') (await import('./observability/metrics-cluster.js')).answerMetricsRequests();
  const supervisor = new WorkerSupervisor({ workers: config.workers, log, stopGraceMs: config.shutdownDrainMs + config.shutdownTimeoutMs });
  // Installed before the workers start, so that a signal during the start stops them too.
  const signal = shutdownSignal();
  await supervisor.start();
  announce(config, prepared, options);
  log.info({ signal: await signal, workers: supervisor.pids() }, 'shutting down: each worker finishes its requests in flight');
  const problems = await supervisor.stop();
  if (problems.length > 0) throw new Error(`not every worker stopped cleanly: ${problems.join('; ')}`);
  log.info('every worker stopped');
}

/** A worker of the cluster: its own app and database pool, listening on the shared port. */
async function serveAsWorker(config: Config): Promise<void> {
  // The primary may stop everyone while this worker is still starting: remember the signal.
  const signal = shutdownSignal();
  const { buildApp } = await import('./app.js');
  const app = await buildApp({ config });
  await app.listen({ port: config.port, host: config.host });
  await closeGracefully(app, await signal, config);
  // Leaving the cluster closes the channel to the primary, the last thing keeping this process up.
  cluster.worker?.disconnect();
}

interface PreparedDatabase {
  database: DatabaseHandle;
  /** The demo account's first key, when this start created it (or lost the race to create it). */
  credentials: InitResult | undefined;
  /** No account exists (production mode makes none). */
  empty: boolean;
  /** The migrations this start applied (none when another process, or `sitebiz migrate`, had). */
  migrationsApplied: string[];
}

/**
 * Connects, migrates and, in sandbox mode on an empty database, creates the demo account with a
 * first key. Production mode never makes an account by itself: `sitebiz init --empty` does.
 */
async function prepareDatabase(config: Config): Promise<PreparedDatabase> {
  const database = await connectDatabase(config.database);
  const migrationsApplied = config.migrateOnStart ? await migrateToLatest(database) : await waitForCurrentSchema(database, config);
  if (migrationsApplied.length > 0) startupLog(config).info({ migrations: migrationsApplied }, `applied ${migrationsApplied.length} migration(s)`);
  // For the commands run beside this server (init, users sign-in-link), which print links to it
  // but are not given its PORT or PUBLIC_URL. Written once here, by the primary when there are workers.
  await saveServerPublicUrl(database, config.publicUrl);
  const hasAccount = await database.db.selectFrom('accounts').select('id').limit(1).executeTakeFirst();
  // The demo generator is loaded only for the start that needs it.
  const credentials =
    hasAccount || config.mode === 'production'
      ? undefined
      : await (await import('./domain/initialize.js')).initialize(database, { demo: true, baseUrl: config.publicUrl });
  return { database, credentials, empty: !hasAccount && !credentials, migrationsApplied };
}

const startupLog = (config: Config) => pino({ level: config.logLevel }).child({ role: 'startup' });

const SCHEMA_POLL_MS = 1_000;
const SCHEMA_WAIT_LOG_EVERY_MS = 10_000;

/**
 * MIGRATE_ON_START=off: the operator migrates (`sitebiz migrate`, e.g. a deploy job). A process
 * started on an older schema would serve with the wrong tables, so it does not listen until the
 * schema is current: a load balancer or orchestrator sees it not ready, and it starts by itself
 * once the migration job has run. It says every 10 s what it waits for.
 */
async function waitForCurrentSchema(database: DatabaseHandle, config: Config): Promise<string[]> {
  const { migrationStatus } = await import('./db/migration-status.js');
  let lastLog = 0;
  for (;;) {
    const { pending, unknown } = await migrationStatus(database);
    if (pending.length === 0) return [];
    if (performance.now() - lastLog >= SCHEMA_WAIT_LOG_EVERY_MS) {
      lastLog = performance.now();
      startupLog(config).warn(
        { pending: pending.map((m) => m.name), ...(unknown.length > 0 ? { unknown } : {}) },
        `MIGRATE_ON_START=off and the schema lacks ${pending.length} migration(s): waiting for \`sitebiz migrate\` before serving (\`sitebiz migrate --status\` lists them)`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, SCHEMA_POLL_MS));
  }
}

/** Says the server is up: the credentials once, on the first start, then where it serves. */
function announce(config: Config, { database, credentials, empty, migrationsApplied }: PreparedDatabase, options: ServeOptions): void {
  const hint = hintFor(config, options);
  const workers = config.workers > 1 ? ` with ${config.workers} workers` : '';
  if (options.json) {
    const { created: _created, ...printed } = credentials ?? { created: false };
    const json = {
      serving: `${config.publicUrl}/v1`,
      docs: `${config.publicUrl}/docs`,
      console: `${config.publicUrl}/console`,
      database: database.description,
      workers: config.workers,
      mode: config.mode,
      migrations_applied: migrationsApplied,
    };
    process.stdout.write(`${JSON.stringify({ ...json, credentials: credentials ? printed : null })}\n`);
    return;
  }
  const lines: string[] = [];
  if (credentials) {
    lines.push(
      '',
      credentials.created
        ? `sitebiz: new database (${database.description}); created the demo account.`
        : 'sitebiz: another process created the account first; here is a new key for its owner.',
      ...credentialLines(credentials),
      `Then: curl -s ${config.publicUrl}/v1/me -H "Authorization: Bearer <access_token>"`,
    );
  } else if (!hint) {
    lines.push(`Database: ${database.description}, which no other process can reach: commands such as init need a database file or PostgreSQL.`);
  } else if (empty) {
    lines.push(
      `Database: ${database.description}, with no account: production mode makes no demo account.`,
      ...(hint.caveat ? [`Run the commands below ${hint.caveat}`] : []),
      `Create one: ${hint.prefix}npm run sitebiz -- init --empty (prints its API key).`,
    );
  } else {
    // Each command as it runs from the checkout, on this database (commandHint).
    lines.push(
      `Database: ${database.description}.`,
      ...(hint.caveat ? [`Run the commands below ${hint.caveat}`] : []),
      `For credentials: ${hint.prefix}npm run sitebiz -- init (prints a new API key);`,
      `for the console: ${hint.prefix}npm run sitebiz -- users sign-in-link (prints a one-time sign-in link).`,
    );
  }
  lines.push(
    config.mode === 'production'
      ? 'Mode: production (no demo account on an empty database).'
      : 'Mode: sandbox (the default: demo account on an empty database; MODE=production for a live installation).',
  );
  lines.push(`sitebiz is serving ${config.publicUrl}/v1${workers} (docs: ${config.publicUrl}/docs, console: ${config.publicUrl}/console)`, '', '');
  process.stdout.write(lines.join('\n'));
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
 * Drains (SHUTDOWN_DRAIN_MS: serving on while GET /readyz says 503, until the load balancer has
 * taken the process out), takes in what has already reached this process, answers every request,
 * then closes the database. Exits with 1 if requests are still running when the deadline passes.
 *
 * Behind a balancer the drain is what makes a restart lose nothing: once the listener closes,
 * a connection the balancer opened a moment before is reset by the kernel, or closed unread as
 * idle, after the balancer has sent it a request; the balancer cannot safely send that request
 * elsewhere, and its client gets no answer. A process the balancer no longer sends to has none.
 */
async function closeGracefully(app: FastifyInstance, signal: NodeJS.Signals, config: Pick<Config, 'shutdownTimeoutMs' | 'shutdownDrainMs'>): Promise<void> {
  const deadlineMs = config.shutdownTimeoutMs;
  if (config.shutdownDrainMs > 0) {
    app.log.info({ signal, drainMs: config.shutdownDrainMs }, 'shutting down: draining (GET /readyz answers 503), still serving');
    app.lifecycle.draining = true;
    await new Promise((resolve) => setTimeout(resolve, config.shutdownDrainMs));
  }
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
