// What traces cost the contacts page: CPU time per GET /v1/contacts through app.inject (the whole
// Fastify pipeline, token check, the page's statements, without the network), with traces off and
// with traces on (exporting to a local OTLP sink that reads and drops what it gets), and, given
// another tree (e.g. a `git archive` of main before traces, its node_modules linked), that tree's
// app ("other"), in short rounds taken in turn so that the machine's load hits each alike. CPU
// time rather than wall time: the development machine is shared and busy. The answer cache is off
// (ANSWER_CACHE_MB=0) so that every request runs its statements, each a span with traces on: the
// dearer case. Apps in one process share its CPU time: the traced app's exports (every 5 s) and
// garbage land in whichever round runs then, so for figures run one app per process, alternating
// processes (docs/operations.md, "Traces", has the loop).
//
//   node --import tsx bench/trace-cost.ts [requests-per-round] [rounds] [apps: off,on,other] [other-tree]
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as here from '../test/support/harness.js';
import { builders } from '../test/support/builders.js';

const perRound = Number(process.argv[2] ?? 300);
const rounds = Number(process.argv[3] ?? 15);
const wanted = (process.argv[4] ?? 'off,on').split(',');
const otherTree = process.argv[5];

const sink = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
});
await new Promise<void>((done) => sink.listen(0, '127.0.0.1', done));
const endpoint = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

type App = Awaited<ReturnType<typeof here.createTestApp>>;
// TRACE_COST_ANSWER_CACHE_MB=32 measures with the default answer cache instead.
const env = { ANSWER_CACHE_MB: process.env.TRACE_COST_ANSWER_CACHE_MB ?? '0', RATE_LIMIT: '0' };
const apps: Record<string, App> = {};
const make = async (name: string, create: typeof here.createTestApp, extra: Record<string, string> = {}) => {
  const t = await create('sqlite', { env: { ...env, ...extra } });
  const b = builders(t);
  for (let i = 0; i < 60; i++) await b.contact({ name: `Contact ${i}` });
  apps[name] = t;
};
if (wanted.includes('off')) await make('off', here.createTestApp);
if (wanted.includes('on')) await make('on', here.createTestApp, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
if (wanted.includes('other')) {
  if (!otherTree) throw new Error('the other tree: its path after the app names');
  const other = (await import(pathToFileURL(resolve(otherTree, 'test/support/harness.ts')).href)) as typeof here;
  await make('other', other.createTestApp);
}
const names = Object.keys(apps);
const tokens = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await apps[n]!.token()] as const)));

async function cpuMicrosPerRequest(name: string): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < perRound; i++) {
    const res = await apps[name]!.app.inject({ method: 'GET', url: '/v1/contacts', headers: { authorization: `Bearer ${tokens[name]}` } });
    if (res.statusCode !== 200) throw new Error(`GET /v1/contacts answered ${res.statusCode}: ${res.body}`);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / perRound;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const figures: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
for (const name of names) for (let i = 0; i < 3; i++) await cpuMicrosPerRequest(name); // warm-up
for (let round = 0; round < rounds; round++) {
  // Each name goes first as often as the others.
  const order = names.map((_, i) => names[(i + round) % names.length]!);
  for (const name of order) figures[name]!.push(await cpuMicrosPerRequest(name));
}
for (const t of Object.values(apps)) await t.close();
sink.close();
console.log(`GET /v1/contacts (25 of 60 contacts, answer cache off) through inject, CPU µs per request, ${rounds} rounds of ${perRound}:`);
for (const name of names) {
  const paired = figures.off ? `; paired ratio to off, median ${median(figures[name]!.map((f, i) => f / figures.off![i]!)).toFixed(3)}` : '';
  console.log(`  ${name.padEnd(5)} median ${median(figures[name]!).toFixed(0)} µs (rounds ${figures[name]!.map((f) => f.toFixed(0)).join(' ')})${paired}`);
}
console.log(JSON.stringify(Object.fromEntries(names.map((n) => [n, Math.round(median(figures[n]!))]))));
