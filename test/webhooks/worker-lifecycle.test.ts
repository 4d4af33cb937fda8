// The running worker's life, with a 10-minute poll so that only what is tested can wake it: a
// delivery already due when it starts (a retry that fell due while no server ran) is attempted at
// once; it sleeps until the soonest retry is due, not until the poll; stopping lets an attempt in
// flight finish within the grace period, or cuts it short and makes its delivery due again at once;
// and on PostgreSQL its LISTEN connection survives the database going away, catching up on what
// it missed meanwhile.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectDatabase } from '../../src/db/connect.js';
import { builders } from '../support/builders.js';
import { createTestApp, directDatabaseConfig, DIALECTS, POSTGRES_ONLY, type TestApp, type TestAppOptions } from '../support/harness.js';
import { PostgresProxy } from '../support/postgres-proxy.js';
import { Receiver } from '../support/receiver.js';
import { addTag, attemptsOf, createHook, millis, onlyDeliveryOf, queueDeliveries } from '../support/webhooks.js';

const LONG_POLL = { WEBHOOK_POLL_MS: '600000' };

/** An app with a hook to a fresh receiver, for `run`; everything closed afterwards. */
async function withHookedApp(
  dialect: 'sqlite' | 'postgres',
  options: TestAppOptions,
  run: (t: TestApp, receiver: Receiver, hook: { id: number; siteId: number; targetUrl: string }) => Promise<void>,
): Promise<void> {
  const receiver = await Receiver.start();
  const t = await createTestApp(dialect, options);
  try {
    const targetUrl = receiver.url('/lifecycle');
    const { id } = await createHook(t, await t.token(), { event: 'tag_added', targetUrl });
    await run(t, receiver, { id, siteId: t.tenant.siteId, targetUrl });
  } finally {
    receiver.release();
    await t.close();
    await receiver.close();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const dialect of DIALECTS) {
  describe(`the delivery worker's life [${dialect}]`, () => {
    it('attempts what is already due as soon as it starts', async () => {
      await withHookedApp(dialect, { env: LONG_POLL }, async (t, receiver, hook) => {
        const now = t.clock.now();
        await queueDeliveries(t.handle, hook, 2, new Date(now.getTime() - 3_600_000), new Date(now.getTime() - 60_000));
        t.app.webhooks.start();
        await receiver.waitFor(2, 2_000);
      });
    });

    it('with WEBHOOK_WORKER=off the app does not deliver: the deliveries wait, due, for a process that does', async () => {
      await withHookedApp(dialect, { env: { ...LONG_POLL, WEBHOOK_WORKER: 'off' }, webhooks: { autoStart: true } }, async (t, receiver, hook) => {
        await addTag(t, await t.token(), await builders(t).contact(), await builders(t).tag('Off'));
        await sleep(200);
        assert.equal(receiver.received.length, 0, 'nothing delivered');
        const delivery = await onlyDeliveryOf(t, hook.id);
        assert.equal(delivery.status, 'pending');
        assert.equal(delivery.attempt_count, 0);
        await t.app.webhooks.runDue();
        await receiver.waitFor(1, 2_000);
      });
    });

    it('a hook whose receiver never answers holds a quarter of the slots at most: other hooks keep being delivered', async () => {
      // WEBHOOK_CONCURRENCY 4: one attempt of a hook in flight at a time.
      await withHookedApp(dialect, { env: { ...LONG_POLL, WEBHOOK_CONCURRENCY: '4' } }, async (t, receiver, stuck) => {
        const healthy = await createHook(t, await t.token(), { event: 'tag_added', targetUrl: receiver.url('/healthy') });
        receiver.react = (request) => (request.path === '/lifecycle' ? { hold: true } : { status: 204 });
        const now = t.clock.now();
        // The stuck hook's deliveries come first in the queue.
        await queueDeliveries(t.handle, stuck, 20, now, new Date(now.getTime() - 60_000));
        await queueDeliveries(t.handle, { ...stuck, id: healthy.id, targetUrl: receiver.url('/healthy') }, 10, now);
        t.app.webhooks.start();
        await receiver.waitFor(11, 5_000);
        const paths = receiver.received.map((r) => r.path);
        assert.equal(paths.filter((p) => p === '/lifecycle').length, 1, 'one attempt of the stuck hook in flight');
        assert.equal(paths.filter((p) => p === '/healthy').length, 10, 'every delivery of the healthy hook, meanwhile');
      });
    });

    it('sleeps until the soonest delivery is due, not until its poll', async () => {
      await withHookedApp(dialect, { env: LONG_POLL }, async (t, receiver, hook) => {
        const now = t.clock.now();
        await queueDeliveries(t.handle, hook, 1, now, new Date(now.getTime() + 300));
        t.app.webhooks.start();
        await sleep(100);
        assert.equal(receiver.received.length, 0, 'not due yet');
        t.clock.advance(0.3);
        await receiver.waitFor(1, 2_000);
      });
    });

    it('stopping lets an attempt in flight finish within the grace period', async () => {
      await withHookedApp(dialect, { env: LONG_POLL, webhooks: { autoStart: true, stopGraceMs: 5_000 } }, async (t, receiver, hook) => {
        receiver.react = () => ({ status: 200, delayMs: 200 });
        await addTag(t, await t.token(), await builders(t).contact(), await builders(t).tag('Stop'));
        await receiver.waitFor(1);
        await t.app.webhooks.stop();
        const delivery = await onlyDeliveryOf(t, hook.id);
        assert.equal(delivery.status, 'succeeded');
      });
    });

    it('stopping cuts short an attempt that outlasts the grace period and makes its delivery due again at once', async () => {
      await withHookedApp(dialect, { env: LONG_POLL, webhooks: { autoStart: true, stopGraceMs: 50 } }, async (t, receiver, hook) => {
        receiver.react = () => ({ hold: true });
        await addTag(t, await t.token(), await builders(t).contact(), await builders(t).tag('Stop'));
        await receiver.waitFor(1);
        await t.app.webhooks.stop();
        const delivery = await onlyDeliveryOf(t, hook.id);
        assert.equal(delivery.status, 'pending', 'not a failure: the receiver was not at fault');
        assert.equal(delivery.failures_in_round, 0);
        assert.equal(delivery.attempt_count, 1);
        assert.equal(millis(t, delivery.next_attempt_at), t.clock.now().getTime(), 'due again at once, for the next worker');
        assert.equal(delivery.last_error, 'abandoned: sitebiz stopped during the attempt');
        const attempts = await attemptsOf(t, delivery.id);
        assert.deepEqual(attempts.map((a) => [a.response_status, a.error]), [[null, 'abandoned: sitebiz stopped during the attempt']]);
      });
    });
  });
}

const base = process.env.TEST_DATABASE_URL;

describe('the delivery worker while PostgreSQL goes away [postgres]', () => {
  it('keeps serving, listens again once PostgreSQL is back, and attempts what was queued meanwhile', POSTGRES_ONLY, async () => {
    const url = new URL(base!);
    const proxy = new PostgresProxy({ host: url.hostname, port: Number(url.port || 5432) });
    await proxy.start();
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    try {
      await withHookedApp('postgres', { databaseUrl: url.href, env: LONG_POLL, webhooks: { autoStart: true } }, async (t, receiver, hook) => {
        // Another process's connection, which the proxy does not cut.
        const direct = await connectDatabase(directDatabaseConfig(t), { poolSize: 1 });
        try {
          await queueDeliveries(direct, hook, 1, t.clock.now());
          await receiver.waitFor(1, 5_000);

          await proxy.cut('refuse');
          await queueDeliveries(direct, hook, 1, t.clock.now());
          await sleep(300);
          assert.equal(receiver.received.length, 1, 'its notification was missed');
          await proxy.restore();
          await receiver.waitFor(2, 10_000);
          assert.equal((await t.get('/v1/version')).statusCode, 200, 'still serving');
        } finally {
          await direct.close();
        }
      });
    } finally {
      await proxy.restore();
      await proxy.close();
    }
  });
});
