// What METRICS costs a request: CPU time per GET /v1/contacts (a page of 25 of 60 contacts)
// through app.inject (the whole Fastify pipeline, token check and all, without the network) with
// METRICS=off and METRICS=public, in alternating rounds so that the machine's load hits both
// alike. Twice: with the answer cache (the default: the page comes from memory, only the request
// metrics count) and without it (ANSWER_CACHE_MB=0: every request runs its statements, which the
// database observer times too). CPU time rather than wall time: the machine is shared and busy.
//
//   node --import tsx bench/metrics-cost.ts [requests-per-round] [rounds] [--alone]
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Metrics } from '../src/observability/metrics.js';
import { builders } from '../test/support/builders.js';
import { createTestApp, type TestApp } from '../test/support/harness.js';

const args = process.argv.slice(2).filter((a) => a !== '--alone');
/** Only the timings alone (seconds, where the rounds take minutes on a busy machine). */
const aloneOnly = process.argv.includes('--alone');
const perRound = Number(args[0] ?? 1000);
const rounds = Number(args[1] ?? 6);
const PAGE = '/v1/contacts?page[size]=25';

async function cpuMicrosPerRequest(t: TestApp, token: string): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < perRound; i++) {
    const res = await t.app.inject({ method: 'GET', url: PAGE, headers: { authorization: `Bearer ${token}` } });
    if (res.statusCode !== 200) throw new Error(`GET ${PAGE} answered ${res.statusCode}: ${res.body}`);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / perRound;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function app(env: Record<string, string>): Promise<{ t: TestApp; token: string }> {
  // RATE_LIMIT off: the rounds would pass the default limit of one key.
  const t = await createTestApp('sqlite', { env: { RATE_LIMIT: '0', ...env } });
  const b = builders(t);
  for (let i = 0; i < 60; i++) await b.contact();
  return { t, token: await t.token() };
}

for (const cache of aloneOnly ? [] : ['32', '0']) {
  const apps = { off: await app({ METRICS: 'off', ANSWER_CACHE_MB: cache }), public: await app({ METRICS: 'public', ANSWER_CACHE_MB: cache }) };
  const figures: Record<keyof typeof apps, number[]> = { off: [], public: [] };
  for (const name of ['off', 'public'] as const) await cpuMicrosPerRequest(apps[name].t, apps[name].token); // warm-up
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? (['off', 'public'] as const) : (['public', 'off'] as const);
    for (const name of order) figures[name].push(await cpuMicrosPerRequest(apps[name].t, apps[name].token));
  }
  for (const { t } of Object.values(apps)) await t.close();
  const off = median(figures.off);
  const on = median(figures.public);
  console.log(`GET ${PAGE} through inject, ANSWER_CACHE_MB=${cache}, CPU µs per request, median of ${rounds} rounds of ${perRound}:`);
  console.log(`  METRICS=off:    ${off.toFixed(1)}  (rounds: ${figures.off.map((f) => f.toFixed(0)).join(', ')})`);
  console.log(`  METRICS=public: ${on.toFixed(1)}  (rounds: ${figures.public.map((f) => f.toFixed(0)).join(', ')})`);
  console.log(`  metrics cost ${(on - off).toFixed(1)} µs (${(((on - off) / off) * 100).toFixed(1)}%) per request`);
}

// The metrics' own work per request, alone: what onResponse and one statement observation cost.
{
  const { t } = await app({ METRICS: 'off' });
  let statements = 0;
  const unobserve = t.handle.observe!({ statement: () => statements++ });
  await t.app.inject({ method: 'GET', url: PAGE, headers: { authorization: `Bearer ${await t.token()}` } });
  statements = 0;
  await t.app.inject({ method: 'GET', url: PAGE, headers: { authorization: `Bearer ${await t.token()}` } });
  const perRequest = statements;
  unobserve();
  const metrics = new Metrics({ database: t.handle, now: () => new Date(), warn: () => {} });
  const request = { routeOptions: { url: '/v1/contacts' }, method: 'GET' } as unknown as FastifyRequest;
  const reply = { statusCode: 200, elapsedTime: 3.2 } as unknown as FastifyReply;
  const n = 1_000_000;
  const time = (fn: () => void) => {
    const start = process.cpuUsage();
    for (let i = 0; i < n; i++) fn();
    const used = process.cpuUsage(start);
    return ((used.user + used.system) / n) * 1000;
  };
  time(() => void metrics.onResponse(request, reply));
  const hookNs = time(() => void metrics.onResponse(request, reply));
  const event = { sql: 'select "id" from "contacts" where "site_id" = $1 limit $2', parameters: [1, 25], milliseconds: 0.2, target: 'primary' as const, failed: false };
  const observe = (metrics as unknown as { statement(e: typeof event): void }).statement.bind(metrics);
  time(() => observe(event));
  const statementNs = time(() => observe(event));
  metrics.close();
  await t.close();
  console.log(`Alone, CPU ns: onResponse ${hookNs.toFixed(0)} per request; a statement observed ${statementNs.toFixed(0)}; this page without the answer cache runs ${perRequest} statements (token check included)`);
  console.log(`  so METRICS=public adds about ${((hookNs + perRequest * statementNs) / 1000).toFixed(1)} µs of CPU per uncached page, ${(hookNs / 1000).toFixed(1)} µs per cached one`);
}
