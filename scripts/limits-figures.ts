// Outside figures for rate limits, slow clients, shutdown and PostgreSQL outages, measured against
// `node <tree>/bin/sitebiz.js serve` over HTTP, so that the same script measures an older tree
// (a `git archive` of an earlier commit with node_modules linked in) and this one.
//
//   node --import tsx scripts/limits-figures.ts [tree] [--only secrets,stall,sigterm,outage]
//
// PostgreSQL figures need TEST_DATABASE_URL (a database is created and dropped; the outage goes
// through a TCP proxy in this process, never touching the server itself).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { accessToken, childEnv, freePort, freshDatabase, request, ServeProcess } from '../test/support/serve-process.js';

const tree = resolve(process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : '.');
const onlyIndex = process.argv.indexOf('--only');
const only = new Set(onlyIndex > 0 ? (process.argv[onlyIndex + 1] ?? '').split(',') : ['secrets', 'stall', 'sigterm', 'outage']);
const scratch = mkdtempSync(join(tmpdir(), 'sitebiz-figures-'));

function serve(databaseUrl: string, port: number, env: Record<string, string> = {}): ServeProcess {
  const child = spawn(process.execPath, [join(tree, 'bin', 'sitebiz.js'), 'serve', '--port', String(port), '--database-url', databaseUrl], {
    cwd: scratch,
    env: childEnv({ LOG_LEVEL: 'warn', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new ServeProcess(child);
}

async function started(databaseUrl: string, env: Record<string, string> = {}) {
  const port = await freePort();
  const server = serve(databaseUrl, port, env);
  await server.waitFor(/sitebiz is serving .*\n/);
  return { server, port, clientId: server.credentials().clientId, token: await accessToken(port, server) };
}

/** A PostgreSQL database of its own, when TEST_DATABASE_URL is set. */
const postgresDatabase = async () => (process.env.TEST_DATABASE_URL ? freshDatabase('postgres') : undefined);

const sqliteUrl = () => `sqlite:${join(mkdtempSync(join(scratch, 'db-')), 'db.sqlite')}`;
const tally = (values: Array<string | number>) =>
  Object.entries(values.reduce<Record<string, number>>((acc, v) => ((acc[String(v)] = (acc[String(v)] ?? 0) + 1), acc), {}))
    .map(([k, n]) => `${k}×${n}`)
    .join(', ');

/** Wrong client secrets for one client id from one address, 10 at a time over keep-alive, for `seconds`. */
async function wrongSecrets(seconds = 10): Promise<void> {
  const { server, port, clientId } = await started(sqliteUrl());
  const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
  const statuses: number[] = [];
  const until = Date.now() + seconds * 1000;
  const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: 'sbzsec_wrong' }).toString();
  const one = () =>
    new Promise<number>((done) => {
      const req = http.request(
        { host: '127.0.0.1', port, method: 'POST', path: '/v1/oauth/token', agent, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': body.length } },
        (res) => res.resume().on('end', () => done(res.statusCode ?? 0)),
      );
      req.on('error', () => done(0));
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (Date.now() < until) statuses.push(await one());
    }),
  );
  agent.destroy();
  await server.stop();
  const checked = statuses.filter((s) => s === 401).length;
  console.log(`wrong secrets: ${statuses.length} requests in ${seconds} s (${tally(statuses)}); secrets checked (401s): ${checked} in ${seconds} s`);
}

/** A request whose headers arrive with a Content-Length and whose body then stalls: how long it is held. */
async function stalledRequest(capSeconds = 45): Promise<void> {
  const { server, port } = await started(sqliteUrl());
  const outcome = await new Promise<string>((done) => {
    const socket = connect(port, '127.0.0.1');
    const startedAt = Date.now();
    let response = '';
    const cap = setTimeout(() => {
      socket.destroy();
      done(`still open after ${capSeconds} s (gave up)`);
    }, capSeconds * 1000);
    socket.setEncoding('utf8').on('data', (chunk: string) => (response += chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(cap);
      done(`closed by the server after ${((Date.now() - startedAt) / 1000).toFixed(1)} s (${response ? response.split('\r\n')[0] : 'no answer'})`);
    });
    socket.write('POST /v1/oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ngrant_type=');
  });
  await server.stop();
  console.log(`stalled body: ${outcome}`);
}

/** 20 requests in flight, then SIGTERM: how many were reset, and the exit. */
async function sigterm(dialect: 'sqlite' | 'postgres', trials = 3): Promise<void> {
  for (let trial = 1; trial <= trials; trial++) {
    const pgdb = dialect === 'postgres' ? await postgresDatabase() : undefined;
    if (dialect === 'postgres' && !pgdb) return;
    const { server, port, token } = await started(pgdb?.url ?? sqliteUrl());
    let sent = 0;
    let allSent: () => void = () => {};
    const sentAll = new Promise<void>((done) => (allSent = done));
    const outcomes = Array.from({ length: 20 }, (_, i) =>
      request(port, {
        path: i % 2 === 0 ? '/v1/contacts?page[size]=100&sort=name' : '/v1/customers?page[size]=50&include=contact',
        requestId: `f${i}`,
        token,
        onSent: () => ++sent === 20 && allSent(),
      }).then(
        (r) => r.status,
        (e: NodeJS.ErrnoException) => e.code ?? 'error',
      ),
    );
    await sentAll;
    const t0 = Date.now();
    const exit = server.stop('SIGTERM');
    const results = await Promise.all(outcomes);
    const { code } = await exit;
    console.log(`SIGTERM [${dialect}] trial ${trial}: ${tally(results)}; exit ${code} after ${((Date.now() - t0) / 1000).toFixed(2)} s`);
    await pgdb?.cleanup();
  }
}

/** PostgreSQL through a proxy that is cut (refused, then stalled) and restored. */
async function outage(): Promise<void> {
  const pgdb = await postgresDatabase();
  if (!pgdb) return console.log('outage: skipped (no TEST_DATABASE_URL)');
  const target = new URL(pgdb.url);
  const sockets = new Set<Socket>();
  let mode: 'forward' | 'stall' = 'forward';
  const track = (s: Socket) => (sockets.add(s), s.on('error', () => s.destroy()).on('close', () => sockets.delete(s)));
  const proxyPort = await freePort();
  let proxy: Server | undefined;
  const listen = () =>
    new Promise<void>((done) => {
      proxy = createServer((client) => {
        track(client);
        if (mode === 'forward') client.pipe(track(connect(Number(target.port || 5432), target.hostname))).pipe(client);
      }).listen(proxyPort, '127.0.0.1', () => done());
    });
  const dropAll = () => [...sockets].forEach((s) => s.destroy());
  await listen();
  const viaProxy = new URL(pgdb.url);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxyPort);
  const { server, port, token } = await started(viaProxy.href);
  const probe = async (label: string, n: number) => {
    const results: string[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = Date.now();
      const outcome = await Promise.race([
        request(port, { path: '/v1/contacts?page[size]=5', requestId: `${label}${i}`, token }).then((r) => String(r.status), (e: NodeJS.ErrnoException) => e.code ?? 'error'),
        new Promise<string>((done) => setTimeout(() => done('no answer in 20 s'), 20_000)),
      ]);
      results.push(`${outcome} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
    console.log(`outage ${label}: ${tally(results.map((r) => r.replace(/ in .*/, '')))}; ${results.join(' | ')}`);
  };
  await probe('before', 3);
  dropAll();
  await new Promise<void>((done) => proxy!.close(() => done()));
  await probe('down (refused)', 5);
  mode = 'stall';
  await listen();
  await probe('down (stalled)', 2);
  mode = 'forward';
  dropAll();
  await probe('back', 5);
  const stop = await server.stop();
  console.log(`outage: exit ${stop.code}`);
  dropAll();
  proxy?.close();
  await pgdb.cleanup();
}

try {
  console.log(`tree: ${tree}`);
  if (only.has('secrets')) await wrongSecrets();
  if (only.has('stall')) await stalledRequest();
  if (only.has('sigterm')) {
    await sigterm('sqlite');
    await sigterm('postgres');
  }
  if (only.has('outage')) await outage();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
