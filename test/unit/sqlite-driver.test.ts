// The SQLite driver sitebiz loads survives prepared statements being garbage-collected on the
// running Node (better-sqlite3 12 aborts the process on Node 24.19+; src/db/sqlite-driver.ts picks
// 13 there). The churn runs in a child process so that an abort fails this test, not the runner.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SQLITE_DRIVER_PACKAGE } from '../../src/db/sqlite-driver.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const CHURN = `
import { SQLiteDatabase } from './src/db/sqlite-driver.ts';
const db = new SQLiteDatabase(':memory:');
db.exec('create table t (a integer)');
for (let round = 0; round < 3; round++) {
  for (let i = 0; i < 10000; i++) db.prepare('select ' + (i % 97) + ' as n from t').all();
  globalThis.gc();
  await new Promise((resolve) => setTimeout(resolve, 10));
}
db.close();
console.log('survived');
`;

describe('the SQLite driver for this Node', () => {
  it(`loads ${SQLITE_DRIVER_PACKAGE} on Node ${process.versions.node} (13, Node-API, from Node 22 on)`, () => {
    const major = Number(process.versions.node.split('.')[0]);
    assert.equal(SQLITE_DRIVER_PACKAGE, major >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3');
  });

  it('survives 30,000 prepared statements being garbage-collected', () => {
    const child = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', CHURN], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(child.signal, null, `the process was killed by ${child.signal}: ${child.stderr.slice(0, 800)}`);
    assert.equal(child.status, 0, child.stderr.slice(0, 800));
    assert.match(child.stdout, /survived/);
  });
});
