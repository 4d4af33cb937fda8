// `sitebiz serve`: the only place that listens. Migrates, seeds an empty database, serves, and
// shuts down gracefully on SIGTERM/SIGINT.
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { connectDatabase, migrateToLatest } from './db/connect.js';
import { initialize } from './domain/initialize.js';
import { printCredentials } from './main.js';

const SHUTDOWN_GRACE_MS = 10_000;

export async function serve(config: Config): Promise<void> {
  const database = await connectDatabase(config.database);
  await migrateToLatest(database);
  const hasAccount = await database.db.selectFrom('accounts').select('id').limit(1).executeTakeFirst();
  const app = await buildApp({ config, database });

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

  await app.listen({ port: config.port, host: config.host });

  // The signal handlers go in before the banner: whoever reads "serving" may signal at once.
  const stopped = new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      app.log.info({ signal }, 'shutting down: no new connections, finishing requests in flight');
      const force = setTimeout(() => {
        app.log.error('requests still running after the grace period; exiting');
        process.exit(1);
      }, SHUTDOWN_GRACE_MS);
      force.unref();
      // close() stops accepting, waits for in-flight requests, then runs onClose (the pool).
      app.close().then(resolve, (error: unknown) => {
        app.log.error({ err: error }, 'error during shutdown');
        resolve();
      });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  process.stdout.write(`${banner.join('\n')}\nsitebiz is serving ${config.publicUrl}/v1 (docs: ${config.publicUrl}/docs)\n\n`);
  await stopped;
}
