// PgBouncer (Debian's package) in front of TEST_DATABASE_URL's server, for the pooler tests: its
// own configuration in a temporary folder, on a free port, every database name passed through
// (`* = host=... port=...`). PgBouncer's defaults otherwise, but for max_client_conn (test files
// open many pools) and no Unix socket. Started as `-u postgres` when this runs as root, which
// PgBouncer refuses to run as.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';

export const PGBOUNCER_PATH = process.env.PGBOUNCER_PATH || '/usr/sbin/pgbouncer';

/** Why the pooler tests cannot run here, or false. In CI a missing PgBouncer fails them instead. */
export const PGBOUNCER_SKIP: string | false = (() => {
  if (!process.env.TEST_DATABASE_URL) return 'PostgreSQL only: set TEST_DATABASE_URL';
  try {
    accessSync(PGBOUNCER_PATH, constants.X_OK);
    return false;
  } catch {
    return process.env.CI ? false : `no PgBouncer at ${PGBOUNCER_PATH} (apt-get install -y pgbouncer, or set PGBOUNCER_PATH)`;
  }
})();

export type PoolMode = 'session' | 'transaction';

export class PgBouncer {
  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    /** The server's URL through the pooler: the same user and database name, PgBouncer's port. */
    readonly url: string,
  ) {}

  /** `serverUrl`: the PostgreSQL server to pool (default TEST_DATABASE_URL's; the bench passes its own). */
  static async start(poolMode: PoolMode, serverUrl = process.env.TEST_DATABASE_URL!): Promise<PgBouncer> {
    accessSync(PGBOUNCER_PATH, constants.X_OK);
    const server = new URL(serverUrl);
    const dir = mkdtempSync(join(tmpdir(), 'sitebiz-pgbouncer-'));
    chmodSync(dir, 0o777);
    const port = await freePort();
    writeFileSync(join(dir, 'users.txt'), `"${decodeURIComponent(server.username || 'postgres')}" ""\n`);
    writeFileSync(
      join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        `* = host=${server.hostname} port=${server.port || 5432}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${join(dir, 'users.txt')}`,
        `pool_mode = ${poolMode}`,
        'max_client_conn = 2000',
        `logfile = ${join(dir, 'pgbouncer.log')}`,
        '',
      ].join('\n'),
    );
    const asRoot = process.getuid?.() === 0;
    // Its log goes to the file: a pipe nobody reads while a test blocks (spawnSync) would fill, and
    // PgBouncer would stop at its next log line.
    const child = spawn(PGBOUNCER_PATH, ['--quiet', ...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], { stdio: 'ignore' });
    const url = new URL(server.href);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    const bouncer = new PgBouncer(child, dir, url.href);
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`PgBouncer exited (${child.exitCode}): ${bouncer.log()}`);
      const client = new pg.Client({ connectionString: bouncer.url });
      try {
        await client.connect();
        await client.query('select 1');
        await client.end();
        return bouncer;
      } catch (error) {
        await client.end().catch(() => {});
        if (Date.now() > deadline) {
          await bouncer.stop();
          throw new Error(`PgBouncer did not answer within 15 s (${(error as Error).message}): ${bouncer.log()}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  /** `base` (a URL of TEST_DATABASE_URL's server) with PgBouncer's address instead. */
  through(base: string): string {
    const url = new URL(base);
    const pooler = new URL(this.url);
    url.hostname = pooler.hostname;
    url.port = pooler.port;
    return url.href;
  }

  log(): string {
    try {
      return readFileSync(join(this.dir, 'pgbouncer.log'), 'utf8');
    } catch {
      return '';
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      this.child.kill('SIGTERM');
      await new Promise((resolve) => this.child.once('exit', resolve));
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
