// `npm test` itself (bin/run-tests.js): what its summary says when the conformance suites cannot
// run. A clone without ../shared skips them, and the summary must count them as skipped.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('npm test without the upstream document', () => {
  it('reports the conformance suites as skipped and counts them in the summary', () => {
    const env: NodeJS.ProcessEnv = { ...process.env, SITEBIZ_UPSTREAM_OPENAPI: 'none' };
    // Not CI (there a missing document fails), one database, and not as a child of this test run.
    delete env.CI;
    delete env.TEST_DATABASE_URL;
    delete env.NODE_TEST_CONTEXT;
    const result = spawnSync(process.execPath, [join(ROOT, 'bin', 'run-tests.js'), 'test/conformance.test.ts'], {
      cwd: ROOT,
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /Upstream conformance: skipped/);
    const skipped = Number(/^ℹ skipped (\d+)$/m.exec(result.stdout)?.[1]);
    const tests = Number(/^ℹ tests (\d+)$/m.exec(result.stdout)?.[1]);
    assert.ok(skipped >= 2, `the summary counts the skipped suites (one per database, and the validator's):\n${result.stdout}`);
    assert.equal(skipped, tests, 'nothing in the file ran');
  });
});
