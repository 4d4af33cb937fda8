// `npm run bench`: requests/s and latency of sitebiz next to a bare node:http server (the ceiling)
// that sends the very same bytes and headers, measured in one run so the ratio sitebiz/raw is
// taken under the same machine noise.
//
//   1. a fresh SQLite database in a temp dir: migrations + the demo account (initialize --demo);
//   2. sitebiz in a child process (`bin/sitebiz.js serve`), an access token from it;
//   3. each target's response recorded from sitebiz and replayed by bench/raw-server.ts, also a
//      child process, so autocannon (here) shares neither server's event loop;
//   4. autocannon against both, warm-up first, then `--rounds` rounds alternating the order
//      (ABBA), so slow drift of the machine's load hits both servers alike;
//   5. a markdown table on stdout; with --write, bench/RESULTS.md rewritten with it.
// Every response must be 2xx, with no socket errors or timeouts, or the run fails. The children
// and the temp dir are removed on success, error, timeout and Ctrl-C; everything is on 127.0.0.1.
//
// To benchmark another endpoint, add an entry to targetsFor() below.
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { connectDatabase, migrateToLatest } from '../src/db/connect.js';
import { initialize } from '../src/domain/initialize.js';
import type { RecordedResponse } from './raw-server.js';

/** One benchmarked request. Paths must be unique: the raw server tells targets apart by path. */
export interface Target {
  name: string;
  /** Path and query string, e.g. /v1/sites?include=owner. */
  path: string;
  headers: Record<string, string>;
}

function targetsFor(accessToken: string): Target[] {
  const auth = { authorization: `Bearer ${accessToken}` };
  return [
    { name: 'GET /v1/version', path: '/v1/version', headers: {} },
    { name: 'GET /v1/sites', path: '/v1/sites', headers: { ...auth } },
    // A page of 25 contacts of the demo site, and lists that include related records (one query
    // per include edge).
    { name: 'GET /v1/contacts', path: '/v1/contacts', headers: { ...auth } },
    {
      name: 'GET /v1/customers?include=contact,offers,products',
      path: '/v1/customers?include=contact,offers,products',
      headers: { ...auth },
    },
    {
      name: 'GET /v1/courses?include=modules,lessons,lessons.media,offers',
      path: '/v1/courses?include=modules,lessons,lessons.media,offers',
      headers: { ...auth },
    },
  ];
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RESULTS_FILE = join(ROOT, 'bench', 'RESULTS.md');
const HOST = '127.0.0.1';

const USAGE = `Usage: npm run bench -- [options]
  --duration <s>      measured seconds per target and server, split over the rounds (default 8)
  --rounds <n>        alternating rounds (sitebiz, raw / raw, sitebiz, ...) (default 2)
  --warmup <s>        unmeasured seconds per target and server before the first round (default 1)
  --connections <n>   concurrent connections (default 10)
  --write             also rewrite bench/RESULTS.md with the figures
  --help`;

interface Options {
  duration: number;
  rounds: number;
  warmup: number;
  connections: number;
  write: boolean;
}

function parseOptions(argv: string[]): Options | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '8' },
      rounds: { type: 'string', default: '2' },
      warmup: { type: 'string', default: '1' },
      connections: { type: 'string', default: '10' },
      write: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return undefined;
  const number = (name: 'duration' | 'rounds' | 'warmup' | 'connections', min: number, max: number, integer: boolean) => {
    const n = Number(values[name]);
    if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
      throw new Error(`--${name} must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}, got ${values[name]}`);
    }
    return n;
  };
  const options = {
    duration: number('duration', 1, 600, false),
    rounds: number('rounds', 1, 20, true),
    warmup: number('warmup', 0, 60, false),
    connections: number('connections', 1, 1000, true),
    write: values.write,
  };
  if (options.duration / options.rounds < 1) throw new Error('--duration / --rounds must be at least one second');
  return options;
}

// ---------------------------------------------------------------------------------------------
// Child processes and cleanup

interface Child {
  name: string;
  process: ChildProcess;
  /** The last few kilobytes of its stdout and stderr, shown when something goes wrong. */
  output: () => string;
  exited: Promise<void>;
}

const children: Child[] = [];
let tempDir: string | undefined;

function startChild(name: string, args: string[]): Child {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const entry = { name, process: child, output: () => tail, exited };
  children.push(entry);
  return entry;
}

function isRunning(child: Child): boolean {
  return child.process.exitCode === null && child.process.signalCode === null;
}

async function stopChild(child: Child): Promise<void> {
  if (!isRunning(child)) return;
  child.process.kill('SIGTERM');
  const killed = await Promise.race([child.exited.then(() => true), sleep(3000).then(() => false)]);
  if (!killed && isRunning(child)) {
    child.process.kill('SIGKILL');
    await Promise.race([child.exited, sleep(2000)]);
  }
}

let cleaning: Promise<void> | undefined;
/** Stops the children and removes the temp dir; every caller waits for the same one cleanup. */
function cleanup(): Promise<void> {
  cleaning ??= Promise.all(children.map(stopChild)).then(removeTempDir);
  return cleaning;
}

function removeTempDir(): void {
  if (tempDir === undefined) return;
  rmSync(tempDir, { recursive: true, force: true });
  tempDir = undefined;
}

// Last resort when the process ends some other way: nothing asynchronous runs in 'exit'.
process.on('exit', () => {
  for (const child of children) if (isRunning(child)) child.process.kill('SIGKILL');
  removeTempDir();
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      server.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Resolves with the first stdout line matching `pattern`; rejects if the child exits first. */
function waitForLine(child: Child, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const match = pattern.exec(buffer);
      if (match) finish(() => resolve(match));
    };
    const onExit = () => finish(() => reject(new Error(`${child.name} exited before it was ready:\n${child.output()}`)));
    const timer = setTimeout(() => finish(() => reject(new Error(`${child.name} not ready after ${timeoutMs} ms:\n${child.output()}`))), timeoutMs);
    const finish = (then: () => void) => {
      clearTimeout(timer);
      child.process.stdout?.off('data', onData);
      child.process.off('exit', onExit);
      then();
    };
    child.process.stdout?.on('data', onData);
    child.process.once('exit', onExit);
  });
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers

interface RawResponse {
  status: number;
  rawHeaders: string[];
  body: Buffer;
}

function get(baseUrl: string, path: string, headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, baseUrl), { method, headers, agent: false, timeout: 5000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

async function waitForHttp(child: Child, baseUrl: string, path: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!isRunning(child)) throw new Error(`${child.name} exited before it answered:\n${child.output()}`);
    try {
      const res = await get(baseUrl, path);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${child.name} did not answer ${path} within ${timeoutMs} ms:\n${child.output()}`);
    await sleep(100);
  }
}

// Node's http server writes these itself (or they describe the connection, not the response).
const NOT_REPLAYED = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

function headerPairs(rawHeaders: string[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (!NOT_REPLAYED.has(name.toLowerCase())) pairs.push([name, rawHeaders[i + 1]!]);
  }
  return pairs;
}

// ---------------------------------------------------------------------------------------------
// Measurement

type ServerName = 'sitebiz' | 'raw';

interface Tally {
  requests: number;
  seconds: number;
  /** Every response time in ms (autocannon's own histogram only has whole milliseconds). */
  latencies: number[];
  non2xx: number;
  errors: number;
  timeouts: number;
  resets: number;
  statusCodes: Record<string, number>;
}

const emptyTally = (): Tally => ({ requests: 0, seconds: 0, latencies: [], non2xx: 0, errors: 0, timeouts: 0, resets: 0, statusCodes: {} });

/** Everything sent during the run, warm-ups included: all of it must have succeeded. */
const overall = emptyTally();

function addCounters(into: Tally, result: autocannon.Result): void {
  into.non2xx += result.non2xx;
  into.errors += result.errors;
  into.timeouts += result.timeouts;
  into.resets += result.resets;
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) into.statusCodes[code] = (into.statusCodes[code] ?? 0) + count;
}

function load(url: string, target: Target, seconds: number, connections: number, into: Tally | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = [];
    const instance = autocannon(
      { url, headers: target.headers, connections, duration: seconds, timeout: 10, skipAggregateResult: true },
      (error, result) => {
        if (error) return reject(error);
        overall.requests += result.totalCompletedRequests ?? 0;
        addCounters(overall, result);
        if (into) {
          into.requests += result.totalCompletedRequests ?? 0;
          into.seconds += result.duration;
          for (const l of latencies) into.latencies.push(l);
          addCounters(into, result);
        }
        resolve();
      },
    );
    if (into) instance.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
}

function figures(tally: Tally): Figures {
  const sorted = Float64Array.from(tally.latencies).sort();
  const asArray = Array.from(sorted);
  return { rps: tally.requests / tally.seconds, p50: percentile(asArray, 50), p99: percentile(asArray, 99), requests: tally.requests };
}

function rssKiB(pid: number | undefined): { rss: number; hwm: number } | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { rss: field('VmRSS'), hwm: field('VmHWM') };
  } catch {
    return undefined; // not Linux, or the process is gone
  }
}

const mib = (kib: number | undefined) => (kib === undefined || Number.isNaN(kib) ? 'n/a' : `${(kib / 1024).toFixed(1)} MiB`);

// ---------------------------------------------------------------------------------------------
// Report

interface Row {
  target: Target;
  sitebiz: Figures;
  raw: Figures;
}

const fmtRps = (n: number) => Math.round(n).toLocaleString('en-US');
const fmtMs = (n: number) => n.toFixed(2);
const fmtRatio = (n: number) => n.toFixed(2);

function table(rows: Row[]): string {
  const lines = [
    '| Target | sitebiz req/s | raw req/s | req/s sitebiz/raw | sitebiz p50 / p99 (ms) | raw p50 / p99 (ms) | p50 sitebiz/raw |',
    '|---|--:|--:|--:|--:|--:|--:|',
  ];
  for (const { target, sitebiz, raw } of rows) {
    lines.push(
      `| \`${target.name}\` | ${fmtRps(sitebiz.rps)} | ${fmtRps(raw.rps)} | ${fmtRatio(sitebiz.rps / raw.rps)} | ` +
        `${fmtMs(sitebiz.p50)} / ${fmtMs(sitebiz.p99)} | ${fmtMs(raw.p50)} / ${fmtMs(raw.p99)} | ${fmtRatio(sitebiz.p50 / raw.p50)} |`,
    );
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// The run

async function main(options: Options): Promise<void> {
  const cpus = os.cpus();
  const load0 = os.loadavg();
  tempDir = mkdtempSync(join(os.tmpdir(), 'sitebiz-bench-'));
  const dbFile = join(tempDir, 'bench.db');
  const port = await freePort();
  const baseUrl = `http://${HOST}:${port}`;

  // 1. The database: migrations and the demo account, with a key to get a token with.
  const handle = await connectDatabase({ dialect: 'sqlite', url: `sqlite:${dbFile}`, filename: dbFile });
  let credentials;
  try {
    await migrateToLatest(handle);
    credentials = await initialize(handle, { demo: true, baseUrl });
  } finally {
    await handle.close();
  }

  // 2. sitebiz.
  const sitebiz = startChild('sitebiz', [
    'bin/sitebiz.js',
    'serve',
    '--database-url',
    `sqlite:${dbFile}`,
    '--port',
    String(port),
    '--host',
    HOST,
    '--public-url',
    baseUrl,
    '--log-level',
    'warn',
  ]);
  await waitForHttp(sitebiz, baseUrl, '/v1/version', 30_000);
  const tokenResponse = await get(
    baseUrl,
    '/v1/oauth/token',
    { 'content-type': 'application/x-www-form-urlencoded' },
    'POST',
    new URLSearchParams({ grant_type: 'client_credentials', client_id: credentials.client_id, client_secret: credentials.client_secret }).toString(),
  );
  if (tokenResponse.status !== 200) throw new Error(`POST /v1/oauth/token answered ${tokenResponse.status}: ${tokenResponse.body.toString()}`);
  const accessToken = (JSON.parse(tokenResponse.body.toString()) as { access_token?: string }).access_token;
  if (!accessToken) throw new Error('POST /v1/oauth/token gave no access_token');
  const targets = targetsFor(accessToken);
  if (new Set(targets.map((t) => t.path)).size !== targets.length) throw new Error('two targets share a path');

  // 3. Record what sitebiz answers, and start the raw server replaying it.
  const recorded: RecordedResponse[] = [];
  for (const target of targets) {
    const res = await get(baseUrl, target.path, target.headers);
    if (res.status < 200 || res.status > 299) throw new Error(`${target.name} answered ${res.status}: ${res.body.toString().slice(0, 500)}`);
    recorded.push({ path: target.path, status: res.status, headers: headerPairs(res.rawHeaders), bodyBase64: res.body.toString('base64') });
  }
  const responsesFile = join(tempDir, 'responses.json');
  writeFileSync(responsesFile, JSON.stringify(recorded));
  const raw = startChild('raw server', ['--import', 'tsx', 'bench/raw-server.ts', responsesFile]);
  const rawPort = Number((await waitForLine(raw, /^listening (\d+)$/m, 30_000))[1]);
  const rawUrl = `http://${HOST}:${rawPort}`;
  // The replay must match: same status, body and headers (x-request-id aside, fresh per request).
  for (const [i, target] of targets.entries()) {
    const res = await get(rawUrl, target.path, target.headers);
    const want = recorded[i]!;
    const strip = (pairs: Array<[string, string]>) => JSON.stringify(pairs.filter(([n]) => n.toLowerCase() !== 'x-request-id'));
    if (res.status !== want.status || res.body.toString('base64') !== want.bodyBase64 || strip(headerPairs(res.rawHeaders)) !== strip(want.headers)) {
      throw new Error(`the raw server's ${target.name} differs from sitebiz's`);
    }
  }

  const urls: Record<ServerName, string> = { sitebiz: baseUrl, raw: rawUrl };
  const rssBefore = rssKiB(sitebiz.process.pid);
  console.log(`sitebiz pid ${sitebiz.process.pid} on ${baseUrl}, raw server pid ${raw.process.pid} on ${rawUrl}`);
  console.log(`sitebiz RSS before load: ${mib(rssBefore?.rss)}`);

  // 4. Warm-up, then alternating rounds.
  const perRound = options.duration / options.rounds;
  for (const target of targets) {
    for (const server of ['sitebiz', 'raw'] as const) {
      if (options.warmup > 0) await load(urls[server] + target.path, target, options.warmup, options.connections, undefined);
    }
  }
  const tallies = new Map<string, Tally>();
  const tallyOf = (target: Target, server: ServerName) => {
    const key = `${server} ${target.path}`;
    let tally = tallies.get(key);
    if (!tally) tallies.set(key, (tally = emptyTally()));
    return tally;
  };
  for (let round = 0; round < options.rounds; round++) {
    const order: ServerName[] = round % 2 === 0 ? ['sitebiz', 'raw'] : ['raw', 'sitebiz'];
    for (const target of targets) {
      for (const server of order) {
        process.stdout.write(`round ${round + 1}/${options.rounds}: ${target.name} on ${server} (${perRound}s)... `);
        const tally = tallyOf(target, server);
        const before = tally.requests;
        await load(urls[server] + target.path, target, perRound, options.connections, tally);
        process.stdout.write(`${fmtRps((tally.requests - before) / perRound)} req/s\n`);
      }
    }
  }
  const rssAfter = rssKiB(sitebiz.process.pid);
  const rawRss = rssKiB(raw.process.pid);
  console.log(`sitebiz RSS after load: ${mib(rssAfter?.rss)} (peak ${mib(rssAfter?.hwm)}); raw server RSS: ${mib(rawRss?.rss)}`);

  // Every request of the run must have been a 2xx answer.
  const failed = overall.non2xx + overall.errors + overall.timeouts + overall.resets;
  if (failed > 0 || overall.requests === 0) {
    throw new Error(
      `not every request succeeded: ${overall.requests} completed, ${overall.non2xx} non-2xx, ${overall.errors} errors, ` +
        `${overall.timeouts} timeouts, ${overall.resets} resets; status codes ${JSON.stringify(overall.statusCodes)}`,
    );
  }

  // 5. Report.
  const rows: Row[] = targets.map((target) => ({ target, sitebiz: figures(tallyOf(target, 'sitebiz')), raw: figures(tallyOf(target, 'raw')) }));
  const markdown = table(rows);
  const memory =
    `sitebiz RSS: ${mib(rssBefore?.rss)} before load, ${mib(rssAfter?.rss)} after (peak ${mib(rssAfter?.hwm)}); ` +
    `raw server: ${mib(rawRss?.rss)}.`;
  const setup =
    `${options.connections} connections, ${options.duration}s measured per target and server in ${options.rounds} alternating ` +
    `round(s) after a ${options.warmup}s warm-up; ${overall.requests.toLocaleString('en-US')} requests in all, every one 2xx.`;
  console.log(`\n${markdown}\n\n${setup}\n${memory}`);

  if (options.write) {
    const machine =
      `${cpus.length} logical CPU(s) (${cpus[0]?.model.trim() ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ` +
      `${os.platform()} ${os.release()}; load average ${load0.map((l) => l.toFixed(2)).join(' / ')} at the start`;
    const document = `# Benchmark results

Written by \`npm run bench -- --write\` (bench/run.ts). Run \`npm run bench\` to print fresh figures
without touching this file; \`npm run bench -- --help\` lists the options.

- Date: ${new Date().toISOString()}
- Node: ${process.version}
- Machine: ${machine}
- Setup: ${setup}
- sitebiz and the raw server each run in their own child process; autocannon runs in the bench
  process. All three share the machine, so the load generator competes with the server for CPU.

${markdown}

${memory}

## How to read it

Each row compares sitebiz with a bare \`node:http\` server that answers the same path with the
very bytes and headers sitebiz sent (recorded from sitebiz at the start of the run), so the raw
column is the ceiling for Node on this machine and **req/s sitebiz/raw** is the share of it
sitebiz reaches (1.00 would be free; lower means more time spent per request in Fastify, routing,
authentication, the database and serialization). Latencies are per request at ${options.connections}
concurrent connections, from every response of the measured rounds. Absolute numbers depend on the
machine and on whatever else it was running, so compare runs by their ratios, not their req/s.
On a machine with few cores the raw figure is partly autocannon's own limit (it shares the CPUs),
so the ceiling is understated and a ratio near 1 flatters sitebiz; the ratio is most telling for
the endpoints where sitebiz is far below the ceiling.
`;
    writeFileSync(RESULTS_FILE, document);
    console.log(`\nwrote ${RESULTS_FILE}`);
  }
}

async function entry(): Promise<number> {
  let options: Options | undefined;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    return 2;
  }
  if (!options) {
    console.log(USAGE);
    return 0;
  }

  // Bounded in time: the measured seconds, the warm-ups, and generous room for start-up.
  const targetsCount = targetsFor('token').length;
  const budgetMs = (targetsCount * 2 * (options.duration + options.warmup + options.rounds) * 2 + 120) * 1000;
  let timedOut = false;
  let stopping = false;
  const stopAll = (reason: string) => {
    if (stopping) return; // a second Ctrl-C (or the launcher passing one on) changes nothing
    stopping = true;
    console.error(`\nbench: ${reason}; stopping`);
    void cleanup().finally(() => process.exit(1));
  };
  const watchdog = setTimeout(() => {
    timedOut = true;
    stopAll(`still running after ${Math.round(budgetMs / 1000)}s`);
  }, budgetMs);
  watchdog.unref();
  process.on('SIGINT', () => stopAll('interrupted'));
  process.on('SIGTERM', () => stopAll('terminated'));

  try {
    await main(options);
    return 0;
  } catch (error) {
    if (!timedOut) console.error(`\nbench failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    clearTimeout(watchdog);
    await cleanup();
  }
}

// Exit explicitly: a stray socket or timer must not keep a finished run alive.
process.exit(await entry());
