// Upgrades (docs/operations.md "Upgrades"): `sitebiz migrate --status` and `sitebiz migrate` on a
// database at an older version; MIGRATE_ON_START=off, where `serve` waits for `sitebiz migrate`
// and other commands refuse; and three `serve` processes started at once on an old PostgreSQL
// database, of which exactly one applies the pending migrations while the others wait and then
// all three serve. Each runs as operators run it: `node bin/sitebiz.js` in processes of their own.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../src/config.js';
import { connectDatabase, migrateTo } from '../src/db/connect.js';
import { pendingMigrations } from '../src/db/migration-status.js';
import { MIGRATIONS } from '../src/db/migrations/index.js';
import { createAccount, createSite, createUser } from '../src/domain/accounts.js';
import { insertKeyAsOldVersion } from './support/old-schema.js';
import { PERMISSION_NAMES } from '../src/auth/permissions.js';
import { DIALECTS, POSTGRES_ONLY } from './support/harness.js';
import { freePort, freshDatabase, request, runSitebiz, startServe, type ServeProcess } from './support/serve-process.js';

/** The old version the tests upgrade from: the last three migrations are pending. */
const OLD = MIGRATIONS.at(-4)!.name;
const PENDING = MIGRATIONS.slice(-3).map((m) => m.name);

const scratch = mkdtempSync(join(tmpdir(), 'sitebiz-upgrades-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A database at the OLD version with an account, a site and a key (made by this version's domain code where the old schema serves it). */
async function oldDatabase(url: string): Promise<{ clientId: string; clientSecret: string; siteId: number }> {
  const handle = await connectDatabase(loadConfig({ DATABASE_URL: url }).database, { poolSize: 1 });
  try {
    await migrateTo(handle, OLD);
    assert.deepEqual(await pendingMigrations(handle), PENDING);
    const accountId = await createAccount(handle, { name: 'Upgraded' });
    const userId = await createUser(handle, { accountId, name: 'Owner', email: 'owner@example.com', role: 'owner' });
    const siteId = await createSite(handle, { accountId, title: 'Site', subdomain: 'upgraded' });
    const key = await insertKeyAsOldVersion(handle, { accountId, userId, name: 'upgrade key', permissions: PERMISSION_NAMES });
    return { clientId: key.clientId, clientSecret: key.clientSecret, siteId };
  } finally {
    await handle.close();
  }
}

async function pendingIn(url: string): Promise<string[]> {
  const handle = await connectDatabase(loadConfig({ DATABASE_URL: url }).database, { poolSize: 1 });
  try {
    return await pendingMigrations(handle);
  } finally {
    await handle.close();
  }
}

/** Gets a token with the key, then reads the site's contacts: the process serves the API. */
async function answersApi(port: number, key: { clientId: string; clientSecret: string; siteId: number }, label: string): Promise<void> {
  const grant = await request(port, {
    method: 'POST',
    path: '/v1/oauth/token',
    requestId: `${label}-grant`,
    form: { grant_type: 'client_credentials', client_id: key.clientId, client_secret: key.clientSecret },
  });
  assert.equal(grant.status, 200, grant.body);
  const token = (JSON.parse(grant.body) as { access_token: string }).access_token;
  const list = await request(port, { path: `/v1/contacts?filter[site_id]=${key.siteId}`, requestId: `${label}-list`, token });
  assert.equal(list.status, 200, list.body);
}

interface Announcement {
  serving: string;
  migrations_applied: string[];
}

const announcement = (server: ServeProcess): Announcement =>
  JSON.parse(server.stdout.split('\n').find((line) => line.includes('"serving"'))!) as Announcement;

for (const dialect of DIALECTS) {
  describe(`upgrades [${dialect}]`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    it('migrate --status lists applied and pending migrations with what each does, changing nothing; migrate applies them; a backup of the old version restores and migrates', async () => {
      const db = await freshDatabase(dialect);
      cleanups.push(db.cleanup);
      const key = await oldDatabase(db.url);
      const backupFile = join(scratch, `old-${dialect}.backup`);
      const backup = await runSitebiz(['backup', backupFile, '--json', '--database-url', db.url]);
      assert.equal(backup.code, 0, backup.stderr + backup.stdout);

      const status = await runSitebiz(['migrate', '--status', '--json', '--database-url', db.url]);
      assert.equal(status.code, 0, status.stderr);
      const json = JSON.parse(status.stdout) as {
        applied: Array<{ name: string; applied_at: string }>;
        pending: Array<{ name: string; summary: string; rewrites_large_table: boolean }>;
        unknown: string[];
      };
      assert.deepEqual(json.applied.map((m) => m.name), MIGRATIONS.slice(0, -3).map((m) => m.name));
      assert.ok(json.applied.every((m) => !Number.isNaN(Date.parse(m.applied_at))));
      assert.deepEqual(
        json.pending,
        MIGRATIONS.slice(-3).map((m) => ({ name: m.name, summary: m.summary, rewrites_large_table: m.rewritesLargeTable })),
      );
      assert.ok(json.pending.every((m) => m.summary.length > 10));
      assert.deepEqual(json.unknown, []);
      assert.deepEqual(await pendingIn(db.url), PENDING, '--status applies nothing');

      const text = await runSitebiz(['migrate', '--status', '--database-url', db.url]);
      assert.match(text.stdout, new RegExp(`Pending: 3 migration\\(s\\)`));
      for (const m of MIGRATIONS.slice(-3)) {
        assert.ok(text.stdout.includes(m.summary), `the text names what ${m.name} does`);
        assert.equal(new RegExp(`${m.name}  \\[rewrites or indexes a large table\\]`).test(text.stdout), m.rewritesLargeTable);
      }

      const migrate = await runSitebiz(['migrate', '--json', '--database-url', db.url]);
      assert.equal(migrate.code, 0, migrate.stderr);
      assert.deepEqual(JSON.parse(migrate.stdout), { applied: PENDING });
      assert.deepEqual(await pendingIn(db.url), []);

      // The backup taken at the old version: restored as it was, then migrated to this version.
      const target = await freshDatabase(dialect);
      cleanups.push(target.cleanup);
      const restore = await runSitebiz(['restore', backupFile, '--json', '--database-url', target.url]);
      assert.equal(restore.code, 0, restore.stderr + restore.stdout);
      const restored = JSON.parse(restore.stdout) as { backupMigration: string; migrationsApplied: string[] };
      assert.equal(restored.backupMigration, OLD);
      assert.deepEqual(restored.migrationsApplied, PENDING);
      assert.deepEqual(await pendingIn(target.url), []);
      const port = await freePort();
      const server = startServe(scratch, ['--json', '--port', String(port)], { DATABASE_URL: target.url, MODE: 'production' });
      cleanups.push(async () => void (await server.stop()));
      await server.waitFor(/"serving"/);
      await answersApi(port, key, 'restored-old');
    });

    it('MIGRATE_ON_START=off: commands refuse an old schema naming `sitebiz migrate`; serve waits without listening until it has run, then serves', async () => {
      const db = await freshDatabase(dialect);
      cleanups.push(db.cleanup);
      const key = await oldDatabase(db.url);
      const env = { DATABASE_URL: db.url, MIGRATE_ON_START: 'off' };

      const refused = await runSitebiz(['keys', 'list', '--json'], { env });
      assert.equal(refused.code, 1);
      assert.match(JSON.parse(refused.stdout).error.message, /lacks 3 migration\(s\).*MIGRATE_ON_START is off: run `sitebiz migrate` first/);

      const port = await freePort();
      const server = startServe(scratch, ['--json', '--port', String(port)], { ...env, MODE: 'production' });
      cleanups.push(async () => void (await server.stop()));
      await server.waitFor(/waiting for `sitebiz migrate`/);
      assert.ok(!server.stdout.includes('"serving"'), 'it does not serve on the old schema');
      await assert.rejects(request(port, { path: '/v1/version', requestId: 'early' }), /ECONNREFUSED/, 'it does not listen meanwhile');
      assert.deepEqual(await pendingIn(db.url), PENDING, 'it applies nothing itself');

      const migrate = await runSitebiz(['migrate', '--json'], { env });
      assert.deepEqual(JSON.parse(migrate.stdout), { applied: PENDING });
      await server.waitFor(/"serving"/);
      assert.deepEqual(announcement(server).migrations_applied, []);
      await answersApi(port, key, 'after-migrate');
    });
  });
}

// Not in the loop: SQLite has one writer at a time by design, and the suite counts this test as
// skipped (not absent) without TEST_DATABASE_URL.
describe('upgrades: several processes at once [postgres]', () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('three serve processes started at once on an old PostgreSQL database: exactly one migrates, all three then serve', POSTGRES_ONLY, async () => {
    const db = await freshDatabase('postgres');
    cleanups.push(db.cleanup);
    const key = await oldDatabase(db.url);
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    const servers = ports.map((port) => startServe(scratch, ['--json', '--port', String(port)], { DATABASE_URL: db.url, MODE: 'production' }));
    cleanups.push(async () => void (await Promise.all(servers.map((s) => s.stop()))));
    await Promise.all(servers.map((s) => s.waitFor(/"serving"/)));

    const applied = servers.map((s) => announcement(s).migrations_applied);
    assert.deepEqual(applied.filter((a) => a.length > 0), [PENDING], `exactly one process applied the pending migrations: ${JSON.stringify(applied)}`);
    assert.equal(applied.filter((a) => a.length === 0).length, 2, 'the other two applied none');
    assert.deepEqual(await pendingIn(db.url), []);
    // The migration table has each migration once.
    const status = JSON.parse((await runSitebiz(['migrate', '--status', '--json', '--database-url', db.url])).stdout) as { applied: Array<{ name: string }> };
    assert.deepEqual(status.applied.map((m) => m.name), MIGRATIONS.map((m) => m.name));
    await Promise.all(ports.map((port, i) => answersApi(port, key, `server-${i}`)));
  });
});
