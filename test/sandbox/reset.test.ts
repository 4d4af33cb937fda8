// POST /v1/test_helpers/reset (docs/sandbox.md "Reset and snapshots"): the account's data back to
// the seed snapshot, byte-identical API answers after writes, the clock back where it was when the
// account was seeded, the caller's key still working; readers during a reset see the data before or
// after it, never half of it; an account without a seed snapshot gets a 409 and keeps its data; a
// demo account made by `init --demo` (initialize) has its seed snapshot.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PERMISSION_NAMES } from '../../src/auth/permissions.js';
import { loadConfig } from '../../src/config.js';
import { connectDatabase, migrateToLatest } from '../../src/db/connect.js';
import { initialize } from '../../src/domain/initialize.js';
import { listSnapshots, resetAccount } from '../../src/domain/snapshots.js';
import { builders } from '../support/builders.js';
import { createTestApp, DIALECTS, TestClock, type TestApp } from '../support/harness.js';
import { answers, countersOf, sampleRoutes, seedDemo, writeThings } from '../support/snapshots.js';
import { assertError, otherAccount, send } from '../support/writes.js';

for (const dialect of DIALECTS) {
  describe(`reset [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let routes: string[];
    let seeded: string[];
    const reset = (as = token) => send(t, 'POST', '/v1/test_helpers/reset', as);
    const offset = async () =>
      Number((await t.handle.db.selectFrom('accounts').select('clock_offset_ms').where('id', '=', t.tenant.accountId).executeTakeFirstOrThrow()).clock_offset_ms);

    before(async () => {
      t = await createTestApp(dialect);
      await seedDemo(t);
      token = await t.token();
      routes = await sampleRoutes(t, token);
      seeded = await answers(t, token, routes);
    });
    after(() => t.close());

    it('puts the seeded data back: byte-identical answers, the same ids and counts, the clock as seeded', async () => {
      const written = await writeThings(t, token, 'reset1');
      await t.handle.db.updateTable('accounts').set({ clock_offset_ms: 32 * 86_400_000 }).where('id', '=', t.tenant.accountId).execute();
      assert.notDeepEqual(await answers(t, token, routes), seeded);
      const version = (await countersOf(t, t.tenant.siteId)).version!;

      const res = await reset();
      assert.equal(res.statusCode, 200, res.body);
      const doc = res.json();
      assert.equal(doc.data.id, 'seed');
      assert.equal(doc.data.attributes.reserved, true);
      assert.equal(doc.meta.restored_rows, doc.data.attributes.total_rows);
      assert.equal(doc.meta.clock.offset_seconds, 0);
      assert.equal(await offset(), 0, 'the clock is back where it was when the account was seeded');

      const after = await answers(t, token, routes);
      for (const [i, answer] of after.entries()) assert.equal(answer, seeded[i], `byte-identical: ${routes[i]}`);
      assert.equal((await t.get(`/v1/contacts/${written.createdContacts[0]}`, token)).statusCode, 404);
      assert.equal((await t.get(`/v1/contacts/${written.deletedContact}`, token)).statusCode, 200);
      assert.ok((await countersOf(t, t.tenant.siteId)).version! > version, 'the data version moved forward');
    });

    it('resets again after a restore of another snapshot, and keeps the snapshots', async () => {
      await writeThings(t, token, 'reset2');
      const saved = await send(t, 'POST', '/v1/test_helpers/snapshots', token, { data: { type: 'snapshots', attributes: { name: 'mid' } } });
      assert.equal(saved.statusCode, 201, saved.body);
      assert.equal((await reset()).statusCode, 200);
      assert.deepEqual(await answers(t, token, routes), seeded);
      assert.equal((await send(t, 'POST', '/v1/test_helpers/snapshots/mid/restore', token)).statusCode, 200);
      assert.notDeepEqual(await answers(t, token, routes), seeded);
      assert.equal((await reset()).statusCode, 200);
      assert.deepEqual(await answers(t, token, routes), seeded);
      assert.deepEqual((await listSnapshots(t.handle, t.tenant.accountId)).map((s) => s.name), ['seed', 'mid']);
    });

    it('lets readers read during a reset: each sees the data before it or after it', async () => {
      await writeThings(t, token, 'reset3');
      const count = async () => (await t.get('/v1/contacts?page[size]=1', token)).json().meta.total_count as number;
      const changed = await count();
      const reads = Array.from({ length: 12 }, () => t.get('/v1/contacts?include=tags&page[size]=100', token));
      const [res, ...results] = await Promise.all([reset(), ...reads]);
      assert.equal(res!.statusCode, 200, res!.body);
      const seededCount = JSON.parse(seeded[0]!.slice(seeded[0]!.indexOf('\n') + 1)).meta.total_count as number;
      for (const r of results) {
        assert.equal(r.statusCode, 200, r.body);
        const doc = r.json();
        assert.ok([changed, seededCount].includes(doc.meta.total_count), `total_count ${doc.meta.total_count}`);
        assert.equal(doc.data.length, doc.meta.total_count, 'the rows and the count agree');
      }
      assert.deepEqual(await answers(t, token, routes), seeded);
    });

    it('answers 409 no_seed_snapshot for an account that has none, and changes nothing', async () => {
      const other = await otherAccount(t);
      const contact = await builders(t).forSite(other.siteId).contact({ email: 'kept@example.com' });
      const theirs = (await t.keyWith(other.ownerId, PERMISSION_NAMES)).token;
      assertError(await reset(theirs), 409, 'no_seed_snapshot');
      assert.ok(await t.handle.db.selectFrom('contacts').select('id').where('id', '=', contact).executeTakeFirst());
      assert.deepEqual(await answers(t, token, routes), seeded, 'and the demo account is untouched');
    });

    it('needs manage:sandbox (403)', async () => {
      const { token: limited } = await t.keyWith(t.tenant.ownerId, PERMISSION_NAMES.filter((p) => p !== 'manage:sandbox'));
      assertError(await reset(limited), 403);
    });
  });
}

describe('the demo account of a new database', () => {
  it('has its seed snapshot, and resets to it', async () => {
    const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent' });
    const handle = await connectDatabase(config.database);
    try {
      await migrateToLatest(handle);
      const result = await initialize(handle, { demo: true, baseUrl: 'http://sitebiz.test', clock: new TestClock() });
      const accountId = Number(result.account_id);
      const [seed] = await listSnapshots(handle, accountId);
      assert.equal(seed?.name, 'seed');
      assert.ok(seed.rowCounts.contacts! > 0);
      const contacts = async () => Number((await handle.db.selectFrom('contacts').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const before = await contacts();
      assert.equal(before, seed.rowCounts.contacts);
      await handle.db.deleteFrom('contacts').where('site_id', '=', Number(result.site_id)).execute();
      const reset = await resetAccount(handle, accountId, new Date());
      assert.equal(reset.restoredRows, seed.totalRows);
      assert.equal(await contacts(), before);
    } finally {
      await handle.close();
    }
  });
});
