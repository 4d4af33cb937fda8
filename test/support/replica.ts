// A PostgreSQL primary and a streaming replica of it, made by the test in a temporary folder: the
// machine's own cluster does not take replication connections (its pg_hba.conf has no replication
// line), so `initdb` makes a primary of the test's own on a free port and `pg_basebackup -R` copies
// it into a replica on another, which streams from it as an operator's would. The server binaries
// are the machine's (the newest /usr/lib/postgresql/<version>/bin, or PG_BIN). As root, every
// PostgreSQL program runs as the `postgres` user, which PostgreSQL requires.
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, appendFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.js';

const run = promisify(execFile);

function postgresBin(): string | undefined {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : undefined;
}

const BIN = postgresBin();

/** Whether this machine has the server programs to make a primary and a replica (the bench asks). */
export const REPLICA_PROGRAMS = BIN !== undefined;

/** Why the replica tests cannot run here, or false. In CI missing server binaries fail them instead. */
export const REPLICA_SKIP: string | false = !process.env.TEST_DATABASE_URL
  ? 'PostgreSQL only: set TEST_DATABASE_URL'
  : BIN || process.env.CI
    ? false
    : 'no PostgreSQL server binaries (initdb, pg_basebackup) under /usr/lib/postgresql; set PG_BIN';

const asRoot = process.getuid?.() === 0;

/** Runs a PostgreSQL program of BIN, as the postgres user when we are root. */
async function pgProgram(program: string, args: readonly string[]): Promise<string> {
  const path = join(BIN!, program);
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, [...args]];
  const { stdout } = await run(file, argv, { maxBuffer: 10 * 1024 * 1024 });
  return stdout;
}

export class StreamingReplica {
  private constructor(
    private readonly dir: string,
    readonly primaryPort: number,
    readonly replicaPort: number,
  ) {}

  private get primaryData() {
    return join(this.dir, 'primary');
  }
  private get replicaData() {
    return join(this.dir, 'replica');
  }

  /**
   * A primary and its replica, both running; the replica waits `applyDelayMs` before it applies a
   * commit (recovery_min_apply_delay), so that it lags as a replica under load does, always.
   */
  static async start(options: { applyDelayMs?: number } = {}): Promise<StreamingReplica> {
    if (!BIN) throw new Error('no PostgreSQL server binaries (set PG_BIN)');
    const dir = mkdtempSync(join(tmpdir(), 'sitebiz-replica-'));
    chmodSync(dir, 0o755);
    if (asRoot) {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const { stdout: group } = await run('id', ['-g', 'postgres']);
      chownSync(dir, Number(stdout.trim()), Number(group.trim()));
    }
    const pair = new StreamingReplica(dir, await freePort(), await freePort());
    await pgProgram('initdb', ['-D', pair.primaryData, '-U', 'postgres', '-A', 'trust', '--no-sync', '--no-instructions']);
    // The primary: WAL for a streaming replica (wal_level replica is the default), no fsync (a
    // test's data), small memory; initdb's pg_hba.conf already lets local replication in by trust.
    pair.configure(pair.primaryData, pair.primaryPort, ['fsync = off', 'shared_buffers = 32MB', 'max_connections = 60']);
    await pair.pgCtl(pair.primaryData, 'start');
    await pgProgram('pg_basebackup', ['-h', '127.0.0.1', '-p', String(pair.primaryPort), '-U', 'postgres', '-D', pair.replicaData, '-R', '-X', 'stream', '--no-sync']);
    pair.configure(pair.replicaData, pair.replicaPort, [`recovery_min_apply_delay = '${options.applyDelayMs ?? 0}ms'`]);
    await pair.pgCtl(pair.replicaData, 'start');
    return pair;
  }

  /** A database URL on the primary. */
  primaryUrl(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.primaryPort}/${database}`;
  }

  /** The same database on the replica. */
  replicaUrl(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.replicaPort}/${database}`;
  }

  /** Makes a database on the primary (it reaches the replica by streaming) and waits until the replica has it. */
  async createDatabase(name: string): Promise<void> {
    await this.sql(this.primaryUrl('postgres'), `create database ${name}`);
    for (let tries = 0; ; tries++) {
      const { rows } = await this.sql(this.replicaUrl('postgres'), `select 1 from pg_database where datname = '${name}'`).catch(() => ({ rows: [] }));
      if (rows.length > 0) return;
      if (tries > 200) throw new Error(`the replica did not get database ${name}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** One statement on a fresh connection. */
  async sql<Row extends pg.QueryResultRow = pg.QueryResultRow>(url: string, text: string): Promise<pg.QueryResult<Row>> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return await client.query<Row>(text);
    } finally {
      await client.end();
    }
  }

  /** Stops the replica at once, as a crash or a lost machine would (its connections are cut). */
  async stopReplica(): Promise<void> {
    await this.pgCtl(this.replicaData, 'stop', ['-m', 'immediate']);
  }

  async startReplica(): Promise<void> {
    await this.pgCtl(this.replicaData, 'start');
  }

  async close(): Promise<void> {
    for (const data of [this.replicaData, this.primaryData]) await this.pgCtl(data, 'stop', ['-m', 'immediate']).catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
  }

  private configure(data: string, port: number, lines: readonly string[]): void {
    appendFileSync(
      join(data, 'postgresql.auto.conf'),
      [`port = ${port}`, "listen_addresses = '127.0.0.1'", `unix_socket_directories = '${this.dir}'`, ...lines, ''].join('\n'),
    );
  }

  private async pgCtl(data: string, action: 'start' | 'stop', extra: readonly string[] = []): Promise<void> {
    await pgProgram('pg_ctl', ['-D', data, '-l', join(this.dir, `${data.endsWith('primary') ? 'primary' : 'replica'}.log`), '-w', '-t', '60', ...extra, action]);
  }
}
