// The databases the bench measures: one per (database, size), seeded by the `sitebiz seed`
// command in a child process and timed (target 4). Without --keep they live in the run's temp dir
// (SQLite) or in a PostgreSQL database made for the run, and are removed afterwards. With
// --keep <dir> they are kept and reused by later runs (seeding a million contacts twice per run
// costs minutes); <dir>/manifest.json then remembers how and when each was seeded.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { registerUndo, runToEnd, startNode } from './processes.js';

export type DatabaseKind = 'sqlite' | 'postgres';

export interface Credentials {
  accountId: string;
  siteId: string;
  clientId: string;
  clientSecret: string;
}

export interface SeedingRecord {
  /** The command line that seeded it, as an operator would type it. */
  command: string;
  seconds: number;
  /** ISO date of the seeding (earlier than the run when the database was kept). */
  at: string;
  /** `seed`, or `init --demo` where `sitebiz seed` did not exist yet. */
  tool: SeedTool;
}

export interface Dataset {
  kind: DatabaseKind;
  contacts: number;
  /** DATABASE_URL for sitebiz. */
  url: string;
  credentials: Credentials;
  seeding: SeedingRecord;
  /** Whether this run reused a kept database instead of seeding it. */
  reused: boolean;
}

export type SeedTool = 'seed' | 'init --demo';

export interface DatasetOptions {
  /** Where the run's throw-away SQLite files go. */
  tempDir: string;
  keepDir: string | undefined;
  /** Administrative connection to make and drop the PostgreSQL databases. */
  postgresAdminUrl: string;
  seedTool: SeedTool;
  /** The --seed of `sitebiz seed`: the same data in every run. */
  seed: number;
  seedTimeoutMs: number;
}

const RUN_ID = `${process.pid}_${Date.now().toString(36)}`;

/** `sitebiz seed` exists once `seed --help` succeeds; until then the bench falls back on init --demo. */
export async function detectSeedTool(): Promise<SeedTool> {
  const child = startNode('sitebiz seed --help', ['bin/sitebiz.js', 'seed', '--help']);
  return (await child.exited) === 0 ? 'seed' : 'init --demo';
}

export async function prepareDataset(options: DatasetOptions, kind: DatabaseKind, contacts: number): Promise<Dataset> {
  const key = `${kind}-${contacts}-seed${options.seed}`;
  const manifest = options.keepDir ? readManifest(options.keepDir) : {};
  const kept = manifest[key];
  const target = await databaseFor(options, kind, contacts, key);
  if (kept && kept.seeding.tool === options.seedTool && (await target.exists())) {
    console.log(`${kind}, ${contacts.toLocaleString('en-US')} contacts: reusing ${target.describe} (seeded ${kept.seeding.at})`);
    return { ...kept, reused: true };
  }
  await target.recreate();
  const args = seedArguments(options, contacts, target.url);
  const printed = `sitebiz ${args.slice(1).join(' ').replace(target.url, '<url>')}`;
  console.log(`${kind}, ${contacts.toLocaleString('en-US')} contacts: ${printed} ...`);
  const started = performance.now();
  const output = await runToEnd(startNode(`sitebiz ${options.seedTool}`, args), options.seedTimeoutMs);
  const seconds = (performance.now() - started) / 1000;
  console.log(`  seeded in ${seconds.toFixed(1)} s`);
  const dataset: Dataset = {
    kind,
    contacts,
    url: target.url,
    credentials: credentialsFrom(output, printed),
    seeding: { command: printed, seconds, at: new Date().toISOString(), tool: options.seedTool },
    reused: false,
  };
  if (options.keepDir) {
    const { reused: _reused, ...entry } = dataset;
    writeManifest(options.keepDir, { ...readManifest(options.keepDir), [key]: entry });
  }
  return dataset;
}

function seedArguments(options: DatasetOptions, contacts: number, url: string): string[] {
  const common = ['--json', '--database-url', url, '--log-level', 'warn'];
  if (options.seedTool === 'seed') {
    // --no-snapshot: the seed target measures making the data; the sandbox's seed snapshot (a copy
    // of every row, for reset) is measured by the sandbox suite (bench/snapshots.ts).
    return ['bin/sitebiz.js', 'seed', '--contacts', String(contacts), '--sites', '1', '--seed', String(options.seed), '--no-snapshot', ...common];
  }
  // init --demo takes at least the 60 contacts of the demo set.
  return ['bin/sitebiz.js', 'init', '--demo', '--contacts', String(Math.max(60, contacts)), ...common];
}

/** Reads the one JSON object the command prints (seed: site_ids; init: site_id). */
export function credentialsFrom(output: string, command: string): Credentials {
  const line = output
    .split('\n')
    .map((l) => l.trim())
    .reverse()
    .find((l) => l.startsWith('{'));
  if (!line) throw new Error(`${command} printed no JSON object:\n${output.slice(-2000)}`);
  const json = JSON.parse(line) as Record<string, unknown>;
  const siteId = Array.isArray(json.site_ids) ? json.site_ids[0] : json.site_id;
  const fields = { accountId: json.account_id, siteId, clientId: json.client_id, clientSecret: json.client_secret };
  for (const [name, value] of Object.entries(fields)) {
    if ((typeof value !== 'string' && typeof value !== 'number') || String(value) === '') {
      throw new Error(`${command} printed no ${name}: ${line}`);
    }
  }
  return {
    accountId: String(fields.accountId),
    siteId: String(fields.siteId),
    clientId: String(fields.clientId),
    clientSecret: String(fields.clientSecret),
  };
}

interface DatabaseTarget {
  url: string;
  describe: string;
  exists(): Promise<boolean>;
  /** Empty: dropped if it existed, then made again. */
  recreate(): Promise<void>;
}

async function databaseFor(options: DatasetOptions, kind: DatabaseKind, contacts: number, key: string): Promise<DatabaseTarget> {
  if (kind === 'sqlite') {
    const dir = options.keepDir ?? options.tempDir;
    mkdirSync(dir, { recursive: true });
    const file = join(dir, options.keepDir ? `${key}.db` : `bench-${contacts}.db`);
    return {
      url: `sqlite:${file}`,
      describe: file,
      exists: async () => existsSync(file),
      recreate: async () => {
        for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(file + suffix, { force: true });
      },
    };
  }
  const name = options.keepDir ? `sitebiz_bench_keep_${key.replaceAll('-', '_')}` : `sitebiz_bench_${RUN_ID}_${contacts}`;
  const admin = new URL(options.postgresAdminUrl);
  const url = new URL(options.postgresAdminUrl);
  url.pathname = `/${name}`;
  const quoted = `"${name}"`;
  const exists = () => withAdmin(admin, async (client) => (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1);
  return {
    url: url.toString(),
    describe: `PostgreSQL database ${name}`,
    exists,
    recreate: async () => {
      await withAdmin(admin, async (client) => {
        await client.query(`DROP DATABASE IF EXISTS ${quoted} WITH (FORCE)`);
        await client.query(`CREATE DATABASE ${quoted}`);
      });
      if (!options.keepDir) {
        registerUndo(`drop PostgreSQL database ${name}`, () =>
          withAdmin(admin, async (client) => {
            await client.query(`DROP DATABASE IF EXISTS ${quoted} WITH (FORCE)`);
          }),
        );
      }
    },
  };
}

async function withAdmin<T>(url: URL, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`cannot reach PostgreSQL at ${url.toString()} (--postgres-url): ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

type Manifest = Record<string, Omit<Dataset, 'reused'>>;

const manifestFile = (dir: string) => join(dir, 'manifest.json');

function readManifest(dir: string): Manifest {
  const file = manifestFile(dir);
  if (!existsSync(file)) return {};
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Manifest;
  } catch (error) {
    throw new Error(`${file} is not the bench's manifest (${error instanceof Error ? error.message : String(error)}); remove it or choose another --keep`);
  }
}

function writeManifest(dir: string, manifest: Manifest): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(manifestFile(dir), `${JSON.stringify(manifest, null, 2)}\n`);
}
