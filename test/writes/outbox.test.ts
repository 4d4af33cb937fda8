// recordEvent writes an outbox row in the caller's transaction: committed with the change, gone
// with a rollback; the payload round-trips as JSON on both databases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DatabaseHandle } from '../../src/db/connect.js';
import { recordEvent } from '../../src/domain/outbox.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';

for (const dialect of DIALECTS) {
  describe(`outbox [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect);
    });
    after(() => t.close());

    const inTransaction = <T>(fn: (trx: DatabaseHandle) => Promise<T>) =>
      t.handle.db.transaction().execute((db) => fn({ ...t.handle, db }));

    it('records an event with its payload, undelivered', async () => {
      const at = new Date('2026-06-01T12:00:00.000Z');
      const payload = { id: '7', tags: ['a', 'b'], nested: { ok: true, n: null } };
      const id = await inTransaction((trx) => recordEvent(trx, { siteId: t.tenant.siteId, type: 'tag_added', payload, at }));
      const row = await t.handle.db.selectFrom('outbox_events').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      assert.equal(row.event_type, 'tag_added');
      assert.equal(Number(row.site_id), t.tenant.siteId);
      assert.deepEqual(t.handle.traits.decodeJson(row.payload), payload);
      assert.equal(t.handle.traits.decodeTimestamp(row.created_at), at.toISOString());
      assert.equal(row.delivered_at, null);
    });

    it('a rolled-back transaction leaves no event', async () => {
      const count = async () => (await t.handle.db.selectFrom('outbox_events').select('id').execute()).length;
      const before = await count();
      await assert.rejects(
        inTransaction(async (trx) => {
          await recordEvent(trx, { siteId: t.tenant.siteId, type: 'purchase', payload: {} });
          throw new Error('the change failed');
        }),
        /the change failed/,
      );
      assert.equal(await count(), before, 'no event without its change');
    });
  });
}
