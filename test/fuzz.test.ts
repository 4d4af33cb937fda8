// Fuzzes every operation of the served OpenAPI document (test/support/fuzz.ts) with a fixed seed:
// FUZZ_RUNS requests in all (default 10,000, shared by the databases), each answer documented
// (no 5xx, a documented status, media type and body). FUZZ_SEED changes the seed; a failure
// prints the seed and what reproduces each distinct problem. `npm run fuzz` runs a longer one.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';
import { describeFindings, fuzz, prepareFuzzWorld, type FuzzWorld, type OpenApiDocument } from './support/fuzz.js';
import { withSharedPartsInline } from './support/openapi-document.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);

for (const dialect of DIALECTS) {
  describe(`fuzzing the served OpenAPI document [${dialect}]`, () => {
    let t: TestApp;
    let doc: OpenApiDocument;
    let world: FuzzWorld;
    before(async () => {
      t = await createTestApp(dialect);
      world = await prepareFuzzWorld(t);
      doc = withSharedPartsInline((await t.get('/v1/openapi.json')).json());
    });
    after(() => t.close());

    const runs = Math.ceil(RUNS / DIALECTS.length);
    it(`${runs} generated requests: no 5xx, every answer documented (status, media type, schema)`, { timeout: 600_000 }, async () => {
      const report = await fuzz(t.app, doc, world, { runs, seed: SEED });
      const statuses = [...report.statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`).join(', ');
      console.log(`fuzz [${dialect}] seed ${SEED}: ${report.requests} requests; statuses ${statuses}`);
      assert.equal(report.requests, runs);
      assert.equal(report.failures, 0, describeFindings(report, SEED));
    });
  });
}
