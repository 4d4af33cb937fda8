// How a server's hints name its database (src/cli/credentials.ts commandHint), pure: the rules
// for the default file, other files, and PostgreSQL URLs with and without a password.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { commandHint } from '../../src/cli/credentials.js';
import { loadConfig } from '../../src/config.js';

const CHECKOUT = fileURLToPath(new URL('../..', import.meta.url));
const databaseOf = (url: string) => loadConfig({ DATABASE_URL: url }).database;

describe('commandHint', () => {
  it('names no database for the checkout default, and an absolute path for any other file', () => {
    assert.deepEqual(commandHint(databaseOf('sqlite:data/sitebiz.db'), 'default', CHECKOUT), { prefix: '' });
    assert.deepEqual(commandHint(databaseOf(`sqlite:${join(CHECKOUT, 'data', 'sitebiz.db')}`), 'flag', '/'), { prefix: '' });
    // The default setting, but the server ran elsewhere: its data/ is not the checkout's.
    assert.deepEqual(commandHint(databaseOf('sqlite:data/sitebiz.db'), 'default', '/srv/app'), { prefix: 'DATABASE_URL=sqlite:/srv/app/data/sitebiz.db ' });
    assert.deepEqual(commandHint(databaseOf('sqlite:seeded.db'), 'environment', CHECKOUT), { prefix: `DATABASE_URL=sqlite:${join(CHECKOUT, 'seeded.db')} ` });
    assert.deepEqual(commandHint(databaseOf("sqlite:/tmp/it's here.db"), 'flag', CHECKOUT), { prefix: `DATABASE_URL='sqlite:/tmp/it'\\''s here.db' ` });
    assert.equal(commandHint(databaseOf('sqlite::memory:'), 'flag', CHECKOUT), undefined);
  });

  it('prints a PostgreSQL URL whole when it has no password, and never prints a password', () => {
    const plain = 'postgres://sitebiz@db.internal:5432/sitebiz';
    assert.deepEqual(commandHint(databaseOf(plain), 'environment'), { prefix: `DATABASE_URL=${plain} ` });
    const secret = 'postgres://sitebiz:s3cret@db.internal:5432/sitebiz';
    const fromEnv = commandHint(databaseOf(secret), 'environment')!;
    assert.equal(fromEnv.prefix, '', 'the same environment has it already');
    assert.match(fromEnv.caveat!, /environment this server runs in, where DATABASE_URL \(postgres:\/\/sitebiz:\*\*\*@db\.internal:5432\/sitebiz\) is set/);
    const fromFlag = commandHint(databaseOf(secret), 'flag')!;
    assert.equal(fromFlag.prefix, `DATABASE_URL=${plain} `, 'the URL without its password');
    assert.match(fromFlag.caveat!, /PGPASSWORD/);
    for (const hint of [fromEnv, fromFlag]) assert.doesNotMatch(JSON.stringify(hint), /s3cret/);
  });
});
