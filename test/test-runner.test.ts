// `npm test` itself (bin/run-tests.js): what its summary says when the conformance suites or the
// browser suites cannot run. A clone without ../shared, or a machine without Chromium, skips
// them, and the summary must count them as skipped; in CI a missing Chromium fails the run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { chromiumLookup } from './support/browser.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** `npm test <file>` (bin/run-tests.js) in a child, not as a child of this test run. */
function runTestsOf(file: string, env: NodeJS.ProcessEnv) {
  delete env.NODE_TEST_CONTEXT;
  return spawnSync(process.execPath, [join(ROOT, 'bin', 'run-tests.js'), file], { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 });
}

describe('npm test without the upstream document', () => {
  it('reports the conformance suites as skipped and counts them in the summary', () => {
    const env: NodeJS.ProcessEnv = { ...process.env, SITEBIZ_UPSTREAM_OPENAPI: 'none' };
    // Not CI (there a missing document fails), one database, and not as a child of this test run.
    delete env.CI;
    delete env.TEST_DATABASE_URL;
    const result = runTestsOf('test/conformance.test.ts', env);
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /Upstream conformance: skipped/);
    const skipped = Number(/^ℹ skipped (\d+)$/m.exec(result.stdout)?.[1]);
    const tests = Number(/^ℹ tests (\d+)$/m.exec(result.stdout)?.[1]);
    assert.ok(skipped >= 2, `the summary counts the skipped suites (one per database, and the validator's):\n${result.stdout}`);
    assert.equal(skipped, tests, 'nothing in the file ran');
  });
});

describe('npm test without PostgreSQL', () => {
  it('says so at the start and counts the PostgreSQL-only tests as skipped', () => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.TEST_DATABASE_URL;
    const result = runTestsOf('test/database-outage.test.ts', env);
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /^Databases: SQLite only\. PostgreSQL skipped/m);
    const skipped = Number(/^ℹ skipped (\d+)$/m.exec(result.stdout)?.[1]);
    const tests = Number(/^ℹ tests (\d+)$/m.exec(result.stdout)?.[1]);
    assert.ok(skipped >= 2, `the summary counts the file's PostgreSQL-only tests:\n${result.stdout}`);
    assert.equal(skipped, tests, 'nothing in the file ran');
    assert.match(result.stdout, /PostgreSQL only: set TEST_DATABASE_URL/);
  });
});

describe('npm test without Chromium', () => {
  // The browser suites of one file, run by bin/run-tests.js with CHROMIUM_PATH pointing nowhere.
  const runWithoutChromium = (ci: boolean) => {
    const env: NodeJS.ProcessEnv = { ...process.env, CHROMIUM_PATH: '/nonexistent/chromium' };
    delete env.TEST_DATABASE_URL;
    // CI's Node 24 run sets it (the browser suites ran under Node 20); these runs ask as CI does not.
    delete env.TEST_BROWSER_SUITES;
    if (ci) env.CI = 'true';
    else delete env.CI;
    return runTestsOf('test/browser-harness.test.ts', env);
  };

  it('says so at the start, skips the browser suites and counts them as skipped', () => {
    const result = runWithoutChromium(false);
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /^Browser tests: skipped, .*no Chromium at \/nonexistent\/chromium \(apt-get install -y chromium, or set CHROMIUM_PATH\)$/m);
    const skipped = Number(/^ℹ skipped (\d+)$/m.exec(result.stdout)?.[1]);
    const tests = Number(/^ℹ tests (\d+)$/m.exec(result.stdout)?.[1]);
    assert.ok(skipped >= 1, result.stdout);
    assert.equal(skipped, tests, 'nothing in the file ran');
  });

  it('fails in CI, where the browser tests must run', () => {
    const result = runWithoutChromium(true);
    assert.equal(result.status, 1, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /^Browser tests: they will FAIL: no Chromium at \/nonexistent\/chromium, and CI must run them/m);
    assert.match(result.stdout, /^ℹ fail 1$/m);
    assert.match(result.stdout, /Error: no Chromium at \/nonexistent\/chromium, and CI must run the browser tests/);
  });
});

describe('which Chromium npm test names at the start', () => {
  // bin/run-tests.js looks for Chromium as test/support/browser.ts does (a plain script cannot
  // import TypeScript): the two must agree, on an executable, a file that is not one, a folder.
  for (const [what, path] of [
    ['an executable', process.execPath],
    ['a file that is not executable', join(ROOT, 'package.json')],
    ['a folder', ROOT],
  ] as const) {
    it(`CHROMIUM_PATH set to ${what}`, () => {
      const env: NodeJS.ProcessEnv = { ...process.env, CHROMIUM_PATH: path };
      delete env.CI;
      delete env.TEST_BROWSER_SUITES;
      delete env.NODE_TEST_CONTEXT;
      // Only the lines printed before the run matter: run one small file, none of its tests.
      const result = spawnSync(process.execPath, [join(ROOT, 'bin', 'run-tests.js'), '--test-name-pattern=^$', 'test/ci.test.ts'], {
        cwd: ROOT,
        env,
        encoding: 'utf8',
        timeout: 120_000,
      });
      const line = /^Browser tests: .*$/m.exec(result.stdout)?.[0];
      const { found } = chromiumLookup({ CHROMIUM_PATH: path });
      assert.equal(line, found ? `Browser tests: Chromium at ${path}` : `Browser tests: skipped, and counted in "skipped" below: no Chromium at ${path} (apt-get install -y chromium, or set CHROMIUM_PATH)`);
      assert.equal(found, what === 'an executable');
    });
  }
});
