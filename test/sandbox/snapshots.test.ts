// Named snapshots over HTTP (docs/sandbox.md "Reset and snapshots"): POST /v1/test_helpers/snapshots
// saves the account's data, a restore gives back byte-identical API answers for a sample of routes
// after writes made in between (same ids, same total counts), the clock goes back to the
// snapshot's, the counters kept by triggers match the restored rows and the data version moves
// forward; keys, hooks and the delivery log are kept; another account is never touched; names are
// checked, unique and `seed` is reserved.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PERMISSION_NAMES } from '../../src/auth/permissions.js';
import { ACCOUNT_DATA_TABLES } from '../../src/db/account-data.js';
import { COUNTED_TABLES, rowsCounter } from '../../src/db/site-counters.js';
import { builders } from '../support/builders.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from '../support/harness.js';
import { answers, countersOf, sampleRoutes, seedDemo, writeThings } from '../support/snapshots.js';
import { assertError, otherAccount, rowsOf, send } from '../support/writes.js';

const body = (name: unknown) => ({ data: { type: 'snapshots', attributes: { name } } });

for (const dialect of DIALECTS) {
  describe(`snapshots [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let routes: string[];
    let other: { accountId: number; siteId: number; ownerId: number };
    let otherToken: string;
    let hookId: string;

    const save = (name: unknown, as = token) => send(t, 'POST', '/v1/test_helpers/snapshots', as, body(name));
    const restore = (name: string, as = token) => send(t, 'POST', `/v1/test_helpers/snapshots/${name}/restore`, as);
    const remove = (name: string, as = token) => send(t, 'DELETE', `/v1/test_helpers/snapshots/${name}`, as);
    const list = async (as = token) => {
      const res = await t.get('/v1/test_helpers/snapshots', as);
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    const otherSiteRows = async () => ({
      contacts: await t.handle.db.selectFrom('contacts').selectAll().where('site_id', '=', other.siteId).orderBy('id').execute(),
      tags: await t.handle.db.selectFrom('contact_tags').selectAll().where('site_id', '=', other.siteId).orderBy('id').execute(),
      counters: await countersOf(t, other.siteId),
    });

    before(async () => {
      t = await createTestApp(dialect);
      await seedDemo(t);
      token = await t.token();
      routes = await sampleRoutes(t, token);
      other = await otherAccount(t);
      const theirs = builders(t).forSite(other.siteId);
      const theirContact = await theirs.contact({ email: 'theirs@example.com' });
      await theirs.tagging(theirContact, await theirs.tag('Theirs'));
      otherToken = (await t.keyWith(other.ownerId, PERMISSION_NAMES)).token;
      const hook = await send(t, 'POST', '/v1/hooks', token, {
        data: { type: 'hooks', attributes: { event: 'tag_added', target_url: 'http://localhost:4000/hooks' }, relationships: { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } } },
      });
      assert.equal(hook.statusCode, 201, hook.body);
      hookId = hook.json().data.id;
    });
    after(() => t.close());

    it('saves a snapshot: 201 with its name as id, the rows saved per table and a Location', async () => {
      const res = await save('before-writes');
      assert.equal(res.statusCode, 201, res.body);
      assert.match(String(res.headers['content-type']), /application\/vnd\.api\+json/);
      const doc = res.json();
      assert.equal(doc.data.type, 'snapshots');
      assert.equal(doc.data.id, 'before-writes');
      assert.equal(res.headers.location, `${PUBLIC_URL}/v1/test_helpers/snapshots/before-writes`);
      assert.equal(doc.data.links.self, res.headers.location);
      const attrs = doc.data.attributes;
      assert.equal(attrs.name, 'before-writes');
      assert.equal(attrs.reserved, false);
      assert.deepEqual(Object.keys(attrs.row_counts).sort(), ACCOUNT_DATA_TABLES.map((d) => d.table).sort());
      const contacts = await t.handle.db.selectFrom('contacts').select((eb) => eb.fn.countAll().as('n')).where('site_id', '=', t.tenant.siteId).executeTakeFirstOrThrow();
      assert.equal(attrs.row_counts.contacts, Number(contacts.n));
      assert.equal(attrs.total_rows, Object.values(attrs.row_counts as Record<string, number>).reduce((a, b) => a + b, 0));
      assert.ok(attrs.total_rows > 500, `the demo has hundreds of rows (${attrs.total_rows})`);
    });

    it('lists the account\'s snapshots, the seed first; another account sees only its own', async () => {
      const doc = await list();
      assert.deepEqual(doc.data.map((s: { id: string }) => s.id), ['seed', 'before-writes']);
      assert.equal(doc.meta.total_count, 2);
      assert.equal(doc.data[0].attributes.reserved, true);
      assert.deepEqual(doc.data[0].attributes.row_counts, doc.data[1].attributes.row_counts, 'nothing was written between the seed and the save');
      assert.deepEqual((await list(otherToken)).data, []);
    });

    it('restores byte-identical answers after writes, with the same ids and counts; keys, hooks and deliveries kept; other accounts untouched', async () => {
      const before = await answers(t, token, routes);
      const theirsBefore = await otherSiteRows();
      const countersBefore = await countersOf(t, t.tenant.siteId);
      const written = await writeThings(t, token, 'round1');
      const changed = await answers(t, token, routes);
      assert.notDeepEqual(changed, before, 'the writes changed the sample');
      const deliveries = await rowsOf(t, 'webhook_deliveries');
      assert.ok(deliveries.length >= 1, 'the tag hook queued a delivery');
      const keys = await rowsOf(t, 'api_keys');
      const grants = await rowsOf(t, 'oauth_grants');
      const outbox = await rowsOf(t, 'outbox_events');
      const versionBefore = (await countersOf(t, t.tenant.siteId)).version!;

      const res = await restore('before-writes');
      assert.equal(res.statusCode, 200, res.body);
      const doc = res.json();
      assert.equal(doc.data.id, 'before-writes');
      assert.ok(doc.meta.restored_rows > 500);
      assert.equal(typeof doc.meta.milliseconds, 'number');

      const after = await answers(t, token, routes);
      for (const [i, answer] of after.entries()) assert.equal(answer, before[i], `byte-identical: ${routes[i]}`);
      for (const id of written.createdContacts) assert.equal((await t.get(`/v1/contacts/${id}`, token)).statusCode, 404);
      assert.equal((await t.get(`/v1/contacts/${written.deletedContact}`, token)).statusCode, 200, 'the deleted contact is back with its id');

      // The counters match the rows, and the data version only moved forward.
      const counters = await countersOf(t, t.tenant.siteId);
      for (const table of COUNTED_TABLES) assert.equal(counters[rowsCounter(table)], countersBefore[rowsCounter(table)], `rows:${table}`);
      assert.ok(counters.version! > versionBefore, 'the data version moved forward');
      const products = await t.handle.db.selectFrom('products').select(['id', 'active_members_count']).where('site_id', '=', t.tenant.siteId).execute();
      for (const p of products) {
        const active = await t.handle.db.selectFrom('memberships').select((eb) => eb.fn.countAll().as('n')).where('product_id', '=', p.id).where('ended_at', 'is', null).executeTakeFirstOrThrow();
        assert.equal(Number(p.active_members_count), Number(active.n), `active members of product ${p.id}`);
      }

      // Kept: the same token still works (it was used above), keys, grants, hooks, deliveries, events.
      assert.deepEqual(await rowsOf(t, 'api_keys'), keys);
      assert.deepEqual(await rowsOf(t, 'oauth_grants'), grants);
      assert.deepEqual(await rowsOf(t, 'webhook_deliveries'), deliveries);
      assert.deepEqual(await rowsOf(t, 'outbox_events'), outbox);
      assert.equal((await t.get(`/v1/hooks/${hookId}`, token)).statusCode, 200);
      assert.deepEqual(await otherSiteRows(), theirsBefore, 'another account is never touched');
    });

    it('restores again and again: a snapshot stays after its restore', async () => {
      const before = await answers(t, token, routes);
      await writeThings(t, token, 'round2');
      assert.equal((await restore('before-writes')).statusCode, 200);
      assert.deepEqual(await answers(t, token, routes), before);
    });

    it('a later snapshot keeps later writes; restoring the earlier one after it goes further back', async () => {
      const seedAnswers = await answers(t, token, routes);
      const written = await writeThings(t, token, 'round3');
      const later = await answers(t, token, routes);
      assert.equal((await save('after-round3')).statusCode, 201);
      await writeThings(t, token, 'round4');
      assert.equal((await restore('after-round3')).statusCode, 200);
      for (const [i, answer] of (await answers(t, token, routes)).entries()) assert.equal(answer, later[i], `byte-identical: ${routes[i]}`);
      assert.equal((await t.get(`/v1/contacts/${written.createdContacts[0]}`, token)).statusCode, 200);
      assert.equal((await restore('before-writes')).statusCode, 200);
      assert.deepEqual(await answers(t, token, routes), seedAnswers);
    });

    it('sets the account\'s clock back to the snapshot\'s', async () => {
      const offset = async () => Number((await t.handle.db.selectFrom('accounts').select('clock_offset_ms').where('id', '=', t.tenant.accountId).executeTakeFirstOrThrow()).clock_offset_ms);
      assert.equal(await offset(), 0);
      const day = 86_400_000;
      await t.handle.db.updateTable('accounts').set({ clock_offset_ms: 3 * day }).where('id', '=', t.tenant.accountId).execute();
      assert.equal((await save('day-3')).statusCode, 201);
      await t.handle.db.updateTable('accounts').set({ clock_offset_ms: 40 * day }).where('id', '=', t.tenant.accountId).execute();
      const res = await restore('day-3');
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(await offset(), 3 * day);
      assert.equal(res.json().meta.clock.offset_seconds, 3 * 86_400);
      assert.equal(res.json().meta.clock.now, new Date(t.clock.now().getTime() + 3 * day).toISOString());
      assert.equal(res.json().data.attributes.clock_time, new Date(t.clock.now().getTime() + 3 * day).toISOString());
      assert.equal((await restore('before-writes')).statusCode, 200);
      assert.equal(await offset(), 0);
      assert.equal((await remove('day-3')).statusCode, 204);
    });

    it('refuses a duplicate name (409), a bad or reserved name (422 with the pointer), a bad document', async () => {
      assertError(await save('before-writes'), 409, 'snapshot_exists', '/data/attributes/name');
      for (const bad of ['', 'has space', '-dash-first', 'a/b', 'x'.repeat(65), 42, null]) {
        assertError(await save(bad), 422, 'invalid_name', '/data/attributes/name');
      }
      assertError(await send(t, 'POST', '/v1/test_helpers/snapshots', token, { data: { type: 'snapshots', attributes: {} } }), 422, 'missing_attribute', '/data/attributes/name');
      assertError(await save('seed'), 422, 'reserved_name', '/data/attributes/name');
      assertError(await send(t, 'POST', '/v1/test_helpers/snapshots', token, { data: { type: 'contacts', attributes: { name: 'x' } } }), 409, 'type_mismatch', '/data/type');
      assertError(await send(t, 'POST', '/v1/test_helpers/snapshots', token, { data: { type: 'snapshots', attributes: { name: 'x', extra: 1 } } }), 422, 'unknown_attribute', '/data/attributes/extra');
      assertError(await send(t, 'POST', '/v1/test_helpers/snapshots', token, { nope: 1 }), 400, 'invalid_document', '/data');
      assert.deepEqual((await list()).data.map((s: { id: string }) => s.id), ['seed', 'before-writes', 'after-round3']);
    });

    it('deletes a snapshot (204); unknown names are 404; the seed cannot be deleted (409); another account\'s are not found', async () => {
      assertError(await remove('nope'), 404, 'not_found');
      assertError(await restore('nope'), 404, 'not_found');
      assertError(await remove('seed'), 409, 'reserved_snapshot');
      assertError(await remove('after-round3', otherToken), 404, 'not_found');
      assertError(await restore('after-round3', otherToken), 404, 'not_found');
      const res = await remove('after-round3');
      assert.equal(res.statusCode, 204);
      assert.equal(res.body, '');
      assertError(await restore('after-round3'), 404, 'not_found');
      assert.deepEqual((await list()).data.map((s: { id: string }) => s.id), ['seed', 'before-writes']);
      // Its saved rows went with it.
      const snapshotIds = (await t.handle.db.selectFrom('snapshots').select('id').execute()).map((r) => Number(r.id));
      const orphans = await t.handle.db.selectFrom('snapshot_contacts' as never).select('snapshot_id' as never).execute();
      for (const row of orphans as Array<{ snapshot_id: unknown }>) assert.ok(snapshotIds.includes(Number(row.snapshot_id)));
    });

    it('needs manage:sandbox (403)', async () => {
      const { token: limited } = await t.keyWith(t.tenant.ownerId, PERMISSION_NAMES.filter((p) => p !== 'manage:sandbox'));
      assertError(await save('x', limited), 403);
      assertError(await t.get('/v1/test_helpers/snapshots', limited), 403);
      assertError(await restore('before-writes', limited), 403);
    });
  });
}
