// `npm run fuzz`: the long fuzzing run (test/support/fuzz.ts), by default 100,000 requests shared
// by SQLite and, when TEST_DATABASE_URL is set, PostgreSQL. FUZZ_RUNS and FUZZ_SEED as in
// test/fuzz.test.ts. Prints the statuses seen and every distinct problem with what reproduces it;
// exits 1 when any answer was a 5xx or undocumented.
import { createTestApp, DIALECTS } from '../test/support/harness.js';
import { describeFindings, fuzz, prepareFuzzWorld, type OpenApiDocument } from '../test/support/fuzz.js';
import { withSharedPartsInline } from '../test/support/openapi-document.js';

const runs = Number(process.env.FUZZ_RUNS ?? 100_000);
const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2_147_483_647);
let failed = false;

for (const dialect of DIALECTS) {
  const t = await createTestApp(dialect);
  try {
    const world = await prepareFuzzWorld(t);
    const doc = withSharedPartsInline((await t.get('/v1/openapi.json')).json() as OpenApiDocument);
    const share = Math.ceil(runs / DIALECTS.length);
    const started = performance.now();
    const report = await fuzz(t.app, doc, world, {
      runs: share,
      seed,
      chunk: 5_000,
      onChunk: (done) => process.stderr.write(`\r[${dialect}] ${done}/${share}`),
    });
    const seconds = ((performance.now() - started) / 1000).toFixed(0);
    const statuses = [...report.statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`).join(', ');
    const fivexx = [...report.statuses].filter(([s]) => s >= 500).reduce((sum, [, n]) => sum + n, 0);
    console.log(`\n[${dialect}] seed ${seed}: ${report.requests} requests in ${seconds} s; ${fivexx} 5xx; ${report.failures} undocumented or 5xx; statuses ${statuses}`);
    if (report.failures > 0) {
      failed = true;
      console.log(describeFindings(report, seed, 100));
    }
  } finally {
    await t.close();
  }
}
process.exit(failed ? 1 : 0);
