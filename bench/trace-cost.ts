// What traces cost the contacts page: CPU time per GET /v1/contacts through app.inject (the whole
// Fastify pipeline, token check, the page's statements, without the network), with traces off and
// with traces on (exporting to a local OTLP sink that reads and drops what it gets), in
// alternating rounds so that the machine's load hits both alike. CPU time rather than wall time:
// the development machine is shared and busy. The answer cache is off (ANSWER_CACHE_MB=0) so that
// every request runs its statements, each a span with traces on: the dearer case.
//
//   node --import tsx bench/trace-cost.ts [requests-per-round] [rounds] [modes, default off,on]
// Prints one JSON line of medians (µs per request) last.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestApp, type TestApp } from '../test/support/harness.js';
import { builders } from '../test/support/builders.js';

const perRound = Number(process.argv[2] ?? 2000);
const rounds = Number(process.argv[3] ?? 5);
const modes = (process.argv[4] ?? 'off,on').split(',') as Array<'off' | 'on'>;

const sink = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

async function cpuMicrosPerRequest(t: TestApp, token: string): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < perRound; i++) {
    const res = await t.app.inject({ method: 'GET', url: '/v1/contacts', headers: { authorization: `Bearer ${token}` } });
    if (res.statusCode !== 200) throw new Error(`GET /v1/contacts answered ${res.statusCode}: ${res.body}`);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / perRound;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const apps: Partial<Record<'off' | 'on', TestApp>> = {};
const tokens: Partial<Record<'off' | 'on', string>> = {};
for (const mode of modes) {
  const t = await createTestApp('sqlite', { env: { ANSWER_CACHE_MB: '0', RATE_LIMIT: '0', ...(mode === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } : {}) } });
  const b = builders(t);
  for (let i = 0; i < 60; i++) await b.contact({ name: `Contact ${i}` });
  apps[mode] = t;
  tokens[mode] = await t.token();
}
const figures: Record<string, number[]> = Object.fromEntries(modes.map((m) => [m, []]));
for (const mode of modes) await cpuMicrosPerRequest(apps[mode]!, tokens[mode]!); // warm-up
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? modes : [...modes].reverse();
  for (const mode of order) figures[mode]!.push(await cpuMicrosPerRequest(apps[mode]!, tokens[mode]!));
}
for (const t of Object.values(apps)) await t!.close();
sink.close();
for (const mode of modes) console.log(`traces ${mode}: ${median(figures[mode]!).toFixed(1)} µs CPU per request (rounds: ${figures[mode]!.map((f) => f.toFixed(0)).join(', ')})`);
console.log(JSON.stringify(Object.fromEntries(modes.map((m) => [m, Number(median(figures[m]!).toFixed(1))]))));
