// Several workers, one queue: each due attempt is made by exactly one of them. On PostgreSQL, two
// workers with pools of their own race over hundreds of due deliveries (FOR UPDATE SKIP LOCKED),
// first claiming by hand, then running and woken by NOTIFY alone; on SQLite, two `serve`
// processes share one file. The receiver counts webhook-ids: every one arrives once, none twice.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseDatabaseUrl } from '../../src/config.js';
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import { DeliveryWorker } from '../../src/webhooks/delivery-worker.js';
import { createTestApp, directDatabaseConfig, POSTGRES_ONLY } from '../support/harness.js';
import { Receiver } from '../support/receiver.js';
import { freePort, freshDatabase, startServe, type ServeProcess } from '../support/serve-process.js';
import { createHook, queueDeliveries } from '../support/webhooks.js';

const scratch = mkdtempSync(join(tmpdir(), 'sitebiz-races-cwd-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Every request arrived once: as many requests as distinct webhook-ids, and `count` of them. */
function assertEachOnce(receiver: Receiver, count: number): void {
  const ids = receiver.received.map((r) => String(r.headers['webhook-id']));
  assert.equal(new Set(ids).size, count, 'every delivery arrived');
  assert.equal(ids.length, count, 'none twice');
}

async function until(what: string, done: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`not ${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('two delivery workers on one PostgreSQL database', () => {
  it('make every due attempt exactly once, claiming by hand and then running, woken by NOTIFY alone', POSTGRES_ONLY, async () => {
    const receiver = await Receiver.start();
    // A 10-minute poll: only NOTIFY wakes the running workers.
    const t = await createTestApp('postgres', { env: { WEBHOOK_CONCURRENCY: '8', WEBHOOK_POLL_MS: '600000' } });
    const otherHandle = await connectDatabase(directDatabaseConfig(t), { poolSize: 4 });
    const other = new DeliveryWorker({ handle: otherHandle, log: t.app.log, now: t.clock.now, mode: 'sandbox', timeoutMs: 10_000, concurrency: 8, pollMs: 600_000 });
    try {
      const targetUrl = receiver.url('/race');
      const hook = { id: (await createHook(t, await t.token(), { event: 'tag_added', targetUrl })).id, siteId: t.tenant.siteId, targetUrl };

      await queueDeliveries(t.handle, hook, 300, t.clock.now());
      const [mine, theirs] = await Promise.all([t.app.webhooks.runDue(), other.runDue()]);
      assert.equal(mine + theirs, 300, `${mine} + ${theirs} attempts`);
      assert.ok(mine > 0 && theirs > 0, `both workers claimed some: ${mine} and ${theirs}`);
      assertEachOnce(receiver, 300);

      t.app.webhooks.start();
      other.start();
      await queueDeliveries(t.handle, hook, 300, t.clock.now());
      await until('delivered', () => receiver.received.length >= 600);
      await until('recorded', async () => {
        const open = await t.handle.db.selectFrom('webhook_deliveries').select('id').where('status', '!=', 'succeeded').limit(1).execute();
        return open.length === 0;
      });
      assertEachOnce(receiver, 600);
      const counts = await t.handle.db.selectFrom('webhook_deliveries').select('attempt_count').distinct().execute();
      assert.deepEqual(counts, [{ attempt_count: 1 }], 'one attempt each');
    } finally {
      await other.stop();
      await otherHandle.close();
      await t.close();
      await receiver.close();
    }
  });
});

describe('two serve processes on one SQLite file', () => {
  it('make every due attempt exactly once', async () => {
    const db = await freshDatabase('sqlite');
    const receiver = await Receiver.start();
    // Slow answers and few slots, so that the work takes both processes' turns.
    receiver.react = () => ({ status: 200, delayMs: 5 });
    const servers: ServeProcess[] = [];
    let handle: DatabaseHandle | undefined;
    try {
      const env = { WEBHOOK_POLL_MS: '50', WEBHOOK_CONCURRENCY: '4', LOG_LEVEL: 'debug' };
      for (let i = 0; i < 2; i++) {
        const server = startServe(scratch, ['--port', String(await freePort()), '--database-url', db.url], env);
        servers.push(server);
        await server.waitFor(/sitebiz is serving .*\n/);
      }
      handle = await connectDatabase(parseDatabaseUrl(db.url, 'test', [])!);
      const siteId = Number((await handle.db.selectFrom('sites').select('id').orderBy('id').limit(1).executeTakeFirstOrThrow()).id);
      const stamp = handle.traits.encodeTimestamp(new Date());
      const targetUrl = receiver.url('/shared-file');
      const row = await handle.db
        .insertInto('hooks')
        .values({ site_id: siteId, event: 'tag_added', target_url: targetUrl, resource_id: null, signing_secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', previous_signing_secret: null, previous_secret_expires_at: null, created_at: stamp, updated_at: stamp })
        .returning('id')
        .executeTakeFirstOrThrow();

      await queueDeliveries(handle, { id: Number(row.id), siteId, targetUrl }, 200, new Date());
      await receiver.waitFor(200, 30_000);
      const h = handle;
      await until('recorded', async () => (await h.db.selectFrom('webhook_deliveries').select('id').where('status', '!=', 'succeeded').limit(1).execute()).length === 0);
      assertEachOnce(receiver, 200);
      const attemptsBy = servers.map((s) => s.logs().filter((line) => line.msg === 'webhook attempt').length);
      assert.equal(attemptsBy[0]! + attemptsBy[1]!, 200);
      assert.ok(attemptsBy.every((n) => n > 0), `both processes attempted some: ${attemptsBy.join(' and ')}`);
    } finally {
      await handle?.close();
      for (const server of servers) await server.stop();
      await receiver.close();
      await db.cleanup();
    }
  });
});
