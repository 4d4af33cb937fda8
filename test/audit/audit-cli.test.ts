// The audit log of CLI commands (docs/operations.md "Audit log"): `sitebiz keys create|rotate|delete`,
// `snapshot restore` and `users set-password`, run on a database of their own, each leave one row
// naming the CLI (user@host, no address); a command that fails leaves none, and no row holds the
// secret the command printed. The key and snapshot commands run in this process (their run
// functions); set-password reads standard input, so it runs as a process.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { keysCreateCommand, keysDeleteCommand, keysRotateCommand } from '../../src/cli/admin.js';
import { snapshotDeleteCommand, snapshotRestoreCommand, snapshotSaveCommand } from '../../src/cli/snapshot.js';
import type { Command } from '../../src/cli/command.js';
import { connectDatabase, migrateToLatest, type DatabaseHandle } from '../../src/db/connect.js';
import { loadConfig } from '../../src/config.js';
import { createAccount, createSite, createUser } from '../../src/domain/accounts.js';
import { DIALECTS } from '../support/harness.js';
import { freshDatabase, runSitebiz, type FreshDatabase } from '../support/serve-process.js';

/** Runs a command's function here, with --json; returns the one JSON object it printed. */
async function run(command: Command, values: Record<string, string | boolean>, positionals: string[] = []): Promise<Record<string, any>> {
  const printed: string[] = [];
  const write = process.stdout.write;
  // The command prints text; the test runner's own (binary) reports pass through.
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk === 'string') {
      printed.push(chunk);
      return true;
    }
    return (write as (...args: unknown[]) => boolean).call(process.stdout, chunk, ...rest);
  }) as typeof process.stdout.write;
  try {
    await command.run({ ...values, json: true }, positionals);
  } finally {
    process.stdout.write = write;
  }
  return JSON.parse(printed.join(''));
}

for (const dialect of DIALECTS) {
  describe(`audit log of CLI commands [${dialect}]`, () => {
    let db: FreshDatabase;
    let handle: DatabaseHandle;
    let accountId: number;
    let ownerId: number;
    const email = `owner-cli-${dialect}@example.com`;
    const rows = async (action: string) => handle.db.selectFrom('audit_events').selectAll().where('action', '=', action).orderBy('id').execute();

    before(async () => {
      db = await freshDatabase(dialect);
      handle = await connectDatabase(loadConfig({ DATABASE_URL: db.url, LOG_LEVEL: 'silent' }).database);
      await migrateToLatest(handle);
      accountId = await createAccount(handle, { name: 'CLI account' });
      ownerId = await createUser(handle, { accountId, name: 'Olive Owner', email, role: 'owner' });
      await createSite(handle, { accountId, title: 'CLI site', subdomain: `cli-${dialect}` });
    });
    after(async () => {
      await handle?.close();
      await db?.cleanup();
    });

    it('records keys created, rotated and deleted by the CLI, and nothing for a key that does not exist', async () => {
      const flags = { 'database-url': db.url };
      const created = await run(keysCreateCommand, { ...flags, user: String(ownerId), name: 'nightly export', permissions: 'view:sites' });
      const rotated = await run(keysRotateCommand, flags, [created.id]);
      await run(keysDeleteCommand, flags, [created.client_id]);
      await assert.rejects(run(keysRotateCommand, flags, [created.id]), /no API key/);
      await assert.rejects(run(keysDeleteCommand, flags, ['999999']), /no API key/);

      const all = await handle.db.selectFrom('audit_events').selectAll().orderBy('id').execute();
      assert.deepEqual(all.map((r) => r.action), ['api_key.created', 'api_key.rotated', 'api_key.deleted']);
      for (const row of all) {
        assert.equal(Number(row.account_id), accountId);
        assert.equal(row.actor_kind, 'cli');
        assert.match(row.actor_label, /.@./);
        assert.equal(row.actor_user_id, null);
        assert.equal(row.source_address, null);
        assert.equal(row.target_type, 'api_keys');
        assert.equal(row.target_id, created.id);
      }
      const text = JSON.stringify(all);
      assert.ok(!text.includes(created.client_secret) && !text.includes(rotated.client_secret), 'no secret in the log');
    });

    it('records a snapshot saved, restored and deleted by the CLI, and nothing for a snapshot that does not exist', async () => {
      const flags = { 'database-url': db.url, account: String(accountId) };
      await run(snapshotSaveCommand, flags, ['before-cli']);
      await run(snapshotRestoreCommand, flags, ['before-cli']);
      await assert.rejects(run(snapshotRestoreCommand, flags, ['nonesuch']), /no snapshot named/);
      await run(snapshotDeleteCommand, flags, ['before-cli']);
      for (const action of ['sandbox.snapshot_saved', 'sandbox.snapshot_restored', 'sandbox.snapshot_deleted']) {
        const recorded = await rows(action);
        assert.equal(recorded.length, 1, action);
        assert.equal(recorded[0]!.actor_kind, 'cli');
        assert.equal(recorded[0]!.target_id, 'before-cli');
      }
    });

    it('records a password set by `sitebiz users set-password`, never the password', async () => {
      const password = 'a password for the audit';
      const set = await runSitebiz(['users', 'set-password', '--email', email, '--password-stdin', '--database-url', db.url, '--json'], { stdin: password });
      assert.equal(set.code, 0, set.stderr);
      const rowsSet = await rows('user.password_set');
      assert.equal(rowsSet.length, 1);
      assert.equal(rowsSet[0]!.actor_kind, 'cli');
      assert.equal(rowsSet[0]!.target_id, String(ownerId));
      assert.ok(!JSON.stringify(rowsSet).includes(password));
    });
  });
}
