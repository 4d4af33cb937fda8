#!/usr/bin/env node
// `npm test`: every test file under test/ on SQLite, and on PostgreSQL too when
// TEST_DATABASE_URL is set (then it must be reachable: a set but dead URL fails the run rather
// than passing on SQLite alone). Extra arguments go to node's test runner.
import { spawnSync } from 'node:child_process';
import { build, staleReason } from './build.js';
import { accessSync, constants, existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function testFiles(dir) {
  const found = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...testFiles(path));
    else if (name.endsWith('.test.ts')) found.push(relative(root, path));
  }
  return found;
}

const args = process.argv.slice(2);
const explicit = args.filter((a) => a.endsWith('.test.ts'));
const passThrough = args.filter((a) => !a.endsWith('.test.ts'));
const files = explicit.length > 0 ? explicit : testFiles(join(root, 'test'));

if (process.env.TEST_DATABASE_URL) {
  console.log(`Databases: SQLite and PostgreSQL (${process.env.TEST_DATABASE_URL.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@')})`);
} else {
  console.log('Databases: SQLite only. PostgreSQL skipped: set TEST_DATABASE_URL=postgres://... to run every suite on it too.');
}

// The upstream OpenAPI document lives in the project's shared/ folder beside the repo; without it
// the conformance checks are skipped, as skipped tests the summary counts (in CI, where CI=true,
// its absence fails them instead). SITEBIZ_UPSTREAM_OPENAPI=none acts as if it were absent.
const upstreamSetting = process.env.SITEBIZ_UPSTREAM_OPENAPI;
const upstream =
  upstreamSetting === 'none'
    ? undefined
    : [upstreamSetting, join(root, '..', 'shared', 'reference', 'upstream-openapi-v1.1.0.yml')].find((p) => p && existsSync(p));
console.log(
  upstream
    ? `Upstream conformance: checked against ${relative(root, upstream)}`
    : 'Upstream conformance: skipped, and counted in "skipped" below (no ../shared/reference/upstream-openapi-v1.1.0.yml; set SITEBIZ_UPSTREAM_OPENAPI to check against it).',
);

// The browser suites run in Chromium: $CHROMIUM_PATH, else Debian's /usr/bin/chromium. Without it
// they are skipped and counted in "skipped"; in CI a missing Chromium fails them. The lookup is
// test/support/browser.ts's chromiumLookup again (test/test-runner.test.ts checks they agree).
const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const chromiumFound = (() => {
  try {
    accessSync(chromium, constants.X_OK);
    return statSync(chromium).isFile();
  } catch {
    return false;
  }
})();
console.log(
  process.env.TEST_BROWSER_SUITES === 'off'
    ? 'Browser tests: skipped (TEST_BROWSER_SUITES=off), and counted in "skipped" below'
    : chromiumFound
    ? `Browser tests: Chromium at ${chromium}`
    : process.env.CI
      ? `Browser tests: they will FAIL: no Chromium at ${chromium}, and CI must run them (apt-get install -y chromium, or set CHROMIUM_PATH)`
      : `Browser tests: skipped, and counted in "skipped" below: no Chromium at ${chromium} (apt-get install -y chromium, or set CHROMIUM_PATH)`,
);

// The suites import the TypeScript sources through tsx, but those that run `sitebiz` as a user
// does run bin/sitebiz.js, which runs dist/: built here once, before test files start in parallel.
const stale = staleReason();
if (stale) {
  console.log(`Build: dist/ rebuilt first (${stale})`);
  await build();
}

// TEST_TIMINGS=<file>: also write where the time went, per file (bin/test-timings.js).
const timings = process.env.TEST_TIMINGS
  ? ['--test-reporter=spec', '--test-reporter-destination=stdout', `--test-reporter=${join(root, 'bin', 'test-timings.js')}`, `--test-reporter-destination=${process.env.TEST_TIMINGS}`]
  : ['--test-reporter=spec'];
// A test that hangs fails, naming itself, rather than holding the whole run until CI's limit with
// no word of which test (the runner reports files in order, so one stuck file also hides every
// later file's output). The limit applies to each test file as a whole too, and to a file whose
// tests are done while a child process or socket it leaked keeps it open: 20 minutes, above the
// longest file (the pooler's re-run of 17 suites, with its own 15-minute test timeout).
// --test-force-exit is not used: on Node 20 it exits before the timings reporter has written.
const guards = ['--test-timeout=1200000'];
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...guards, ...timings, ...passThrough, ...files], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, NODE_ENV: 'test' },
});
process.exit(result.status ?? 1);
