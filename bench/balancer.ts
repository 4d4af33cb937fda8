// Several processes behind HAProxy (issue 19): requests/s, p50 and p99 of a page of contacts
// through HAProxy in front of 1, 2 and 3 `sitebiz serve` processes on one PostgreSQL database,
// each through PgBouncer in transaction mode: the configuration test/load-balancer.test.ts tests
// and docs/scaling.md shows (test/support/haproxy.ts, test/support/pgbouncer.ts). Each
// configuration starts its own processes and HAProxy, and stops them before the next, so a
// configuration may carry settings of its own (`env`): a row with read replicas is one more
// entry, e.g. `{ label: '3 processes, replica', processes: 3, env: { DATABASE_REPLICA_URL } }`.
// Rounds alternate the order (1, 2, 3, then 3, 2, 1), so drift of the machine's load hits every
// configuration alike.
import os from 'node:os';
import pg from 'pg';
import { spawnSync } from 'node:child_process';
import { Haproxy, HAPROXY_PATH } from '../test/support/haproxy.js';
import { PgBouncer, PGBOUNCER_PATH } from '../test/support/pgbouncer.js';
import type { Dataset } from './datasets.js';
import { HttpClient } from './http-client.js';
import { runLoad, type LoadGeneratorName, type LoadResult } from './load.js';
import { HOST, freePort, isRunning, sleep, startNode, stopChild, type Child } from './processes.js';
import { mergedPercentile } from './stats.js';

export interface BalancerConfiguration {
  label: string;
  processes: number;
  /** More environment for each of its processes. */
  env?: Record<string, string>;
}

export const DEFAULT_BALANCER_CONFIGURATIONS: BalancerConfiguration[] = [1, 2, 3].map((processes) => ({
  label: `${processes} process${processes > 1 ? 'es' : ''}`,
  processes,
}));

export interface BalancerOptions {
  generator: LoadGeneratorName;
  connections: number;
  /** Measured seconds per configuration, split over the rounds. */
  seconds: number;
  rounds: number;
  warmupSeconds: number;
  configurations?: BalancerConfiguration[];
}

export interface BalancerRow {
  configuration: BalancerConfiguration;
  /**
   * With DATABASE_REPLICA_URL: transactions the replica's own server committed in the database
   * while the configuration ran (pg_stat_database, read after its processes exited, less nothing:
   * the probes are in it), per request answered.
   */
  replicaTransactionsPerRequest?: number;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
}

export interface BalancerResult {
  dataset: Dataset;
  path: string;
  rows: BalancerRow[];
  versions: string;
}

export async function measureBalancer(dataset: Dataset, options: BalancerOptions): Promise<BalancerResult> {
  const configurations = options.configurations ?? DEFAULT_BALANCER_CONFIGURATIONS;
  const bouncer = await PgBouncer.start('transaction', dataset.url);
  const loads = new Map<BalancerConfiguration, LoadResult[]>(configurations.map((c) => [c, []]));
  const replicaTransactions = new Map<BalancerConfiguration, number>();
  const path = `/v1/contacts?filter%5Bsite_id%5D=${dataset.credentials.siteId}&page%5Bsize%5D=25`;
  try {
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? configurations : [...configurations].reverse();
      for (const configuration of order) {
        console.log(`  ${configuration.label}, round ${round + 1}`);
        const replica = configuration.env?.DATABASE_REPLICA_URL;
        const before = replica ? await committedTransactions(replica) : 0;
        loads.get(configuration)!.push(await measureConfiguration(dataset, bouncer, configuration, path, options, options.seconds / options.rounds));
        // The processes have exited, and a PostgreSQL backend reports its counts as it exits.
        if (replica) replicaTransactions.set(configuration, (replicaTransactions.get(configuration) ?? 0) + (await committedTransactions(replica, before)) - before);
      }
    }
  } finally {
    await bouncer.stop();
  }
  const rows = configurations.map((configuration) => {
    const results = loads.get(configuration)!;
    const requests = results.reduce((n, r) => n + r.requests, 0);
    const seconds = results.reduce((n, r) => n + r.seconds, 0);
    const sketches = results.map((r) => r.sketch);
    const onReplica = replicaTransactions.get(configuration);
    return {
      configuration,
      ...(onReplica !== undefined ? { replicaTransactionsPerRequest: onReplica / requests } : {}),
      rps: requests / seconds,
      p50: mergedPercentile(sketches, 50),
      p99: mergedPercentile(sketches, 99),
      requests,
    };
  });
  return { dataset, path, rows, versions: toolVersions() };
}

async function measureConfiguration(
  dataset: Dataset,
  bouncer: PgBouncer,
  configuration: BalancerConfiguration,
  path: string,
  options: BalancerOptions,
  seconds: number,
): Promise<LoadResult> {
  const proxyPort = await freePort();
  const publicUrl = `http://${HOST}:${proxyPort}`;
  const ports: number[] = [];
  const children: Child[] = [];
  let proxy: Haproxy | undefined;
  try {
    for (let i = 0; i < configuration.processes; i++) {
      const port = await freePort();
      ports.push(port);
      const args = ['bin/sitebiz.js', 'serve', '--database-url', bouncer.through(dataset.url), '--port', String(port), '--host', HOST, '--public-url', publicUrl];
      // As the scale suite: a token that outlives the run, warnings only, no rate limit.
      args.push('--access-token-ttl', String(24 * 3600), '--log-level', 'warn', '--rate-limit', '0');
      children.push(startNode(`sitebiz serve ${i + 1} of ${configuration.processes} (${configuration.label})`, args, { ...process.env, DATABASE_POOLER: 'transaction', ...configuration.env }));
    }
    await Promise.all(children.map((child, i) => waitForVersion(child, ports[i]!)));
    proxy = await Haproxy.start(ports, proxyPort);
    await proxy.waitFor('UP');
    const token = await accessToken(publicUrl, dataset);
    const spec = { url: `${publicUrl}${path}`, method: 'GET' as const, headers: { authorization: `Bearer ${token}` }, connections: options.connections };
    if (options.warmupSeconds > 0) await runLoad(options.generator, { ...spec, label: `warm-up (${configuration.label})`, seconds: options.warmupSeconds });
    return await runLoad(options.generator, { ...spec, label: `GET contacts through HAProxy (${configuration.label})`, seconds });
  } finally {
    await proxy?.stop();
    await Promise.all(children.map(stopChild));
  }
}

/**
 * xact_commit of the URL's database on its server; with `atLeastAbove`, waits (up to 5 s) for the
 * count to pass it, as exiting backends report theirs a moment later.
 */
async function committedTransactions(url: string, atLeastAbove?: number): Promise<number> {
  const database = new URL(url).pathname.slice(1);
  for (let tries = 0; ; tries++) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    let count: number;
    try {
      const { rows } = await client.query<{ n: string }>('select xact_commit::text as n from pg_stat_database where datname = $1', [database]);
      count = Number(rows[0]?.n ?? 0);
    } finally {
      await client.end();
    }
    if (atLeastAbove === undefined || count > atLeastAbove + 1 || tries >= 50) return count;
    await sleep(100);
  }
}

async function waitForVersion(child: Child, port: number): Promise<void> {
  const client = new HttpClient(`http://${HOST}:${port}`);
  const deadline = Date.now() + 120_000;
  try {
    for (;;) {
      if (!isRunning(child)) throw new Error(`${child.name} exited before it answered:\n${child.output()}`);
      try {
        if ((await client.send('/v1/version', { timeoutMs: 5000 })).status === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`${child.name} did not answer /v1/version within 120 s:\n${child.output()}`);
      await sleep(200);
    }
  } finally {
    client.close();
  }
}

async function accessToken(baseUrl: string, dataset: Dataset): Promise<string> {
  const client = new HttpClient(baseUrl);
  try {
    const grant = await client.json<{ access_token?: string }>('/v1/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: dataset.credentials.clientId, client_secret: dataset.credentials.clientSecret }).toString(),
    });
    if (!grant.access_token) throw new Error('POST /v1/oauth/token gave no access_token');
    return grant.access_token;
  } finally {
    client.close();
  }
}

function toolVersions(): string {
  const first = (command: string, args: string[]) => spawnSync(command, args, { encoding: 'utf8' }).stdout.split('\n')[0]?.trim() ?? '';
  const haproxy = /HAProxy version (\S+)/.exec(first(HAPROXY_PATH, ['-v']))?.[1] ?? '?';
  const pgbouncer = /PgBouncer (\S+)/.exec(first(PGBOUNCER_PATH, ['--version']))?.[1] ?? '?';
  return `HAProxy ${haproxy}, PgBouncer ${pgbouncer}`;
}

/** The section of bench/RESULTS.md: the table and what it says. */
export function balancerSection(result: BalancerResult, heading: string, command: string): string[] {
  const base = result.rows.find((r) => r.configuration.processes === 1 && !r.configuration.env) ?? result.rows[0]!;
  const lines = [
    heading,
    '',
    `\`${command}\`, ${new Date().toISOString()}, Node ${process.version}, ${result.versions}, ${os.cpus().length} cores, load average ` +
      `${os.loadavg().map((l) => l.toFixed(2)).join(' / ')} at the end. PostgreSQL, ${result.dataset.contacts.toLocaleString('en-US')} contacts; ` +
      'every process through PgBouncer in transaction mode (`DATABASE_POOLER=transaction`), HAProxy round-robin in front with the configuration ' +
      'of docs/scaling.md; the load generator, HAProxy, PgBouncer, PostgreSQL and the processes on the same machine.',
    '',
    `\`GET ${decodeURIComponent(result.path).replace(/site_id\]=\d+/, 'site_id]=S')}\` through HAProxy, authenticated:`,
    '',
    '| Configuration | Requests/s | × of 1 process | p50 | p99 | Requests | Replica transactions per request |',
    '| --- | --: | --: | --: | --: | --: | --: |',
    ...result.rows.map(
      (r) =>
        `| ${r.configuration.label} | ${Math.round(r.rps).toLocaleString('en-US')} | ${(r.rps / base.rps).toFixed(2)}× | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms | ${r.requests.toLocaleString('en-US')} | ${r.replicaTransactionsPerRequest === undefined ? '' : r.replicaTransactionsPerRequest.toFixed(2)} |`,
    ),
    '',
    ...whatItSays(result, base),
    '',
  ];
  return lines;
}

/** What the ratios say, and do not say, for a machine with cores to spare. */
function whatItSays(result: BalancerResult, base: BalancerRow): string[] {
  const most = result.rows.reduce((a, b) => (b.configuration.processes > a.configuration.processes ? b : a));
  const cores = os.cpus().length;
  return [
    `What this says: ${most.configuration.processes} processes gave ${(most.rps / base.rps).toFixed(2)}× the reads of one. Here the ${cores} cores are ` +
      'shared by the load generator, HAProxy, PgBouncer, PostgreSQL and every process (and whatever else runs: see the load average), so a ' +
      'second or third process adds no core, only competition for the same ones; the ratio is the cost of HAProxy and of more processes, not ' +
      'their gain. Where each process has a core of its own and PostgreSQL has its own, reads are expected to grow with the processes as ' +
      '`--workers` did on a 16-core machine (12.3× from 1 to 12 workers on SQLite), until PostgreSQL is the limit: a page of contacts costs ' +
      'PostgreSQL about as much CPU as sitebiz (docs/scaling.md, Measured capacity), so plan PostgreSQL cores along with the processes.',
    ...replicaSays(result),
  ];
}

/** The rows with a replica against those without, at the same number of processes. */
function replicaSays(result: BalancerResult): string[] {
  const pairs = result.rows
    .filter((r) => r.replicaTransactionsPerRequest !== undefined)
    .map((withReplica) => ({ withReplica, without: result.rows.find((r) => r.configuration.processes === withReplica.configuration.processes && r.configuration.env === undefined) }))
    .filter((p): p is { withReplica: BalancerRow; without: BalancerRow } => p.without !== undefined);
  if (pairs.length === 0) return [];
  const ratios = pairs.map((p) => `${(p.withReplica.rps / p.without.rps).toFixed(2)}×`).join(', ');
  const perRequest = pairs.map((p) => p.withReplica.replicaTransactionsPerRequest!.toFixed(2)).join(', ');
  return [
    '',
    `With the replica (a streaming replica of the bench's own primary, DATABASE_REPLICA_URL): ${ratios} the reads of the same processes without it, ` +
      `and the replica's own server committed ${perRequest} transactions per request (the page's statements, and the probes): the reads went to it. ` +
      'On this machine the replica is one more PostgreSQL server on the same 2 cores, so it cannot add capacity here; what it shows is that ' +
      'routing reads to a replica costs nothing measurable per request. On its own machine a replica takes those reads off the primary, ' +
      'whose cores are then left for writes, tokens and the accounts that just wrote.',
  ];
}
