// What the rate limit costs a request on the hot path: CPU time per GET /v1/me through app.inject
// (the whole Fastify pipeline, token check and all, without the network) with RATE_LIMIT=0 and
// with the default limit, in alternating rounds so that the machine's load hits both alike.
// CPU time rather than wall time: the development machine is shared and busy.
//
//   node --import tsx bench/rate-limit-cost.ts [requests-per-round] [rounds]
import { createTestApp, type TestApp } from '../test/support/harness.js';
import { SETTINGS } from '../src/config.js';

const perRound = Number(process.argv[2] ?? 4000);
const rounds = Number(process.argv[3] ?? 6);

async function cpuMicrosPerRequest(t: TestApp, token: string): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < perRound; i++) {
    const res = await t.app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${token}` } });
    if (res.statusCode !== 200) throw new Error(`GET /v1/me answered ${res.statusCode}: ${res.body}`);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / perRound;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

// A limit no round (nor the warm-up) reaches, so that every request is counted and none refused.
const limits = { off: '0', on: String(Math.max(Number(SETTINGS.rateLimit.default), perRound * (rounds + 1) + 10)) };
const apps = {
  off: await createTestApp('sqlite', { env: { RATE_LIMIT: limits.off } }),
  on: await createTestApp('sqlite', { env: { RATE_LIMIT: limits.on } }),
};
const tokens = { off: await apps.off.token(), on: await apps.on.token() };
const figures: Record<'off' | 'on', number[]> = { off: [], on: [] };
for (const name of ['off', 'on'] as const) await cpuMicrosPerRequest(apps[name], tokens[name]); // warm-up
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
  for (const name of order) figures[name].push(await cpuMicrosPerRequest(apps[name], tokens[name]));
}
for (const app of Object.values(apps)) await app.close();
const off = median(figures.off);
const on = median(figures.on);
console.log(`GET /v1/me through inject, CPU µs per request, median of ${rounds} rounds of ${perRound}:`);
console.log(`  RATE_LIMIT=0:        ${off.toFixed(1)}  (rounds: ${figures.off.map((f) => f.toFixed(0)).join(', ')})`);
console.log(`  RATE_LIMIT=${limits.on}: ${on.toFixed(1)}  (rounds: ${figures.on.map((f) => f.toFixed(0)).join(', ')})`);
console.log(`  the limit costs ${(on - off).toFixed(1)} µs (${(((on - off) / off) * 100).toFixed(1)}%) per request`);
