// What the README says about the Node versions CI tests is what .ci/run does: Node 20 (the
// machine's) on both databases, then Node 24 through .ci/node24-tests on SQLite; and Chromium is
// there for the browser suites. No database involved.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('CI and the Node versions the README names', () => {
  it('.ci/run tests both databases under Node 20, then SQLite under Node 24 through .ci/node24-tests', () => {
    const run = read('.ci/run');
    const commands = run.split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
    const node20 = commands.findIndex((line) => /^TEST_DATABASE_URL=postgres:\/\/\S+ npm test$/.test(line));
    // Node 24 on SQLite (its driver is the part that differs by Node version), without the browser
    // suites and the minute of a real Prometheus scraping.
    const node24 = commands.findIndex((line) => /^TEST_BROWSER_SUITES=off TEST_PROMETHEUS_SERVER=off \.ci\/node24-tests$/.test(line));
    assert.ok(node20 >= 0 && node24 > node20, run);
    assert.ok((statSync(join(ROOT, '.ci', 'node24-tests')).mode & 0o111) !== 0, '.ci/node24-tests is executable');
  });

  it('.ci/run installs Chromium when it is missing, before the tests (the browser suites fail without it in CI)', () => {
    const commands = read('.ci/run').split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
    const install = commands.findIndex((line) => line.includes('apt-get install -y chromium'));
    const tests = commands.findIndex((line) => / npm test$/.test(line));
    assert.ok(install >= 0 && install < tests, 'apt-get install -y chromium comes before npm test');
    assert.match(commands[install]!, /^\[ -x "\$\{CHROMIUM_PATH:-\/usr\/bin\/chromium\}" \] \|\| /, 'only when the Chromium the tests use is missing');
  });

  it('.ci/run installs PgBouncer, HAProxy and Prometheus when missing, before the tests (the pooler, load-balancer and metrics suites fail without them in CI)', () => {
    const commands = read('.ci/run').split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
    const tests = commands.findIndex((line) => / npm test$/.test(line));
    for (const [tool, variable, path] of [['pgbouncer', 'PGBOUNCER_PATH', '/usr/sbin/pgbouncer'], ['haproxy', 'HAPROXY_PATH', '/usr/sbin/haproxy'], ['prometheus', 'PROMETHEUS_PATH', '/usr/bin/prometheus']]) {
      const install = commands.findIndex((line) => line.includes(`apt-get install -y ${tool})`));
      assert.ok(install >= 0 && install < tests, `apt-get install -y ${tool} comes before npm test`);
      assert.ok(commands[install]!.startsWith(`[ -x "\${${variable}:-${path}}" ] || `), `only when the ${tool} the tests use is missing`);
    }
  });

  it('.ci/node24-tests takes node@24 from the registry and builds the native module against its headers', () => {
    const script = read('.ci/node24-tests');
    assert.match(script, /npm install --prefix \S+ .*"node@\$node24_version"/);
    assert.match(script, /npm_config_nodedir="\$node24_home" npm rebuild better-sqlite3-napi/, 'overrides the nodedir of ~/.npmrc');
    assert.match(script, /^npm run build$/m, 'the copy runs its own build, since its install ran no script');
  });

  it('the README names the versions CI tests', () => {
    const pinned = /node24_version=\$\{NODE24_VERSION:-(24\.[\d.]+)\}/.exec(read('.ci/node24-tests'))?.[1];
    assert.ok(pinned, 'the Node 24 version is set in one place');
    assert.ok(read('README.md').includes(`**Node.js 20 and Node.js ${pinned}**`), `README.md says CI tests Node.js 20 and ${pinned}`);
  });
});
