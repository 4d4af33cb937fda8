// Failed deliveries, on the test clock (no real waiting): Svix's retry schedule with its jitter,
// then `failed` after the 8th attempt; a redirect and a timeout are failures; the connect, answer
// and body deadlines are separate; only 2 KB of an answer is kept; a receiver down for a simulated
// day gets every event afterwards, each under one webhook-id; a hook failing for 5 days is
// disabled; and the hook row is written only when its health changes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createSite } from '../../src/domain/accounts.js';
import { RETRY_DELAYS_MS, RETRY_JITTER } from '../../src/webhooks/retry-schedule.js';
import { builders } from '../support/builders.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { Receiver } from '../support/receiver.js';
import { addTag, attemptsOf, createHook, deliveriesOf, millis, onlyDeliveryOf } from '../support/webhooks.js';

const DAY_S = 24 * 3600;

for (const dialect of DIALECTS) {
  describe(`webhook retries [${dialect}]`, () => {
    let t: TestApp;
    let receiver: Receiver;

    before(async () => {
      t = await createTestApp(dialect);
      receiver = await Receiver.start();
    });
    after(async () => {
      await t.close();
      await receiver.close();
    });

    /** A site of its own, a tag, and a hook for its tag_added events at `path`. */
    async function hookedSite(path: string) {
      const site = await createSite(t.handle, { accountId: t.tenant.accountId, title: 'Retried', subdomain: `retried-${randomBytes(4).toString('hex')}` }, t.clock);
      const b = builders(t).forSite(site);
      const tagId = await b.tag('Retried');
      const hook = await createHook(t, await t.token(), { event: 'tag_added', targetUrl: receiver.url(path), siteId: site });
      // Tokens expire as the clock moves: a fresh one for each event.
      const event = async () => addTag(t, await t.token(), await b.contact(), tagId);
      return { site, hook, event };
    }
    const at = (path: string) => receiver.received.filter((r) => r.path === path);
    const hookRow = (id: number) => t.handle.db.selectFrom('hooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    /**
     * Moves the clock to the soonest due delivery of the hook; false (and the clock stays) when
     * none is due any more, or none before `until`.
     */
    async function toNextDue(hookId: number, until = Infinity): Promise<boolean> {
      const due = (await deliveriesOf(t, hookId)).map((d) => millis(t, d.next_attempt_at)).filter((m): m is number => m !== null);
      const next = Math.min(...due);
      if (due.length === 0 || next > until) return false;
      t.clock.current = new Date(Math.max(t.clock.now().getTime(), next));
      return true;
    }

    it('retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, each within 10% jitter, then fails the delivery after the 8th attempt', async () => {
      const { hook, event } = await hookedSite('/schedule');
      receiver.react = (r) => (r.path === '/schedule' ? { status: 500, body: 'down for maintenance' } : { status: 200 });
      await event();

      for (let n = 1; n <= 8; n++) {
        await t.app.webhooks.runDue();
        const delivery = await onlyDeliveryOf(t, hook.id);
        assert.equal(delivery.attempt_count, n);
        assert.equal(delivery.failures_in_round, n);
        assert.equal(delivery.last_response_status, 500);
        assert.equal(delivery.last_error, 'the receiver answered 500');
        if (n < 8) {
          assert.equal(delivery.status, 'retrying');
          const delay = millis(t, delivery.next_attempt_at)! - t.clock.now().getTime();
          const planned = RETRY_DELAYS_MS[n - 1]!;
          assert.ok(Math.abs(delay - planned) <= planned * RETRY_JITTER, `retry ${n} after ${delay} ms, planned ${planned} ms ± 10%`);
          // Not due a moment early.
          t.clock.current = new Date(millis(t, delivery.next_attempt_at)! - 1);
          assert.equal(await t.app.webhooks.runDue(), 0);
          t.clock.advance(0.001);
        } else {
          assert.equal(delivery.status, 'failed');
          assert.equal(delivery.next_attempt_at, null);
        }
      }
      const requests = at('/schedule');
      assert.equal(requests.length, 8);
      assert.equal(new Set(requests.map((r) => r.headers['webhook-id'])).size, 1, 'one webhook-id on every attempt');
      assert.equal(new Set(requests.map((r) => r.body)).size, 1, 'the same body bytes on every attempt');
      const attempts = await attemptsOf(t, (await onlyDeliveryOf(t, hook.id)).id);
      assert.deepEqual(attempts.map((a) => a.attempt_number), [1, 2, 3, 4, 5, 6, 7, 8]);
      assert.ok(attempts.every((a) => a.response_status === 500 && a.response_body === 'down for maintenance'));
      t.clock.advance(DAY_S);
      assert.equal(await t.app.webhooks.runDue(), 0, 'nothing more after the last attempt');
    });

    it('counts a redirect as a failure and does not follow it', async () => {
      const { hook, event } = await hookedSite('/redirect');
      receiver.react = (r) => (r.path === '/redirect' ? { status: 302, headers: { location: receiver.url('/redirect-target') } } : { status: 200 });
      await event();
      await t.app.webhooks.runDue();
      const delivery = await onlyDeliveryOf(t, hook.id);
      assert.equal(delivery.status, 'retrying');
      assert.equal(delivery.last_response_status, 302);
      assert.equal(delivery.last_error, 'the receiver answered 302, a redirect (redirects are not followed)');
      assert.equal(at('/redirect-target').length, 0, 'not followed');
      const [attempt] = await attemptsOf(t, delivery.id);
      assert.equal((t.handle.traits.decodeJson(attempt!.response_headers) as Record<string, string>).location, receiver.url('/redirect-target'));
    });

    it('keeps the first 2 KB of an answer for the log, cut at a whole character', async () => {
      const { hook, event } = await hookedSite('/chatty');
      receiver.react = (r) => (r.path === '/chatty' ? { status: 500, body: 'é'.repeat(50_000) } : { status: 200 });
      await event();
      await t.app.webhooks.runDue();
      const [attempt] = await attemptsOf(t, (await onlyDeliveryOf(t, hook.id)).id);
      assert.equal(attempt!.response_status, 500);
      assert.equal(attempt!.response_body, 'é'.repeat(1024), '2048 bytes of two-byte characters');
    });

    it('delivers every event to a receiver that was down for a day, each webhook-id at least once and always the same one per delivery', async () => {
      const { hook, event } = await hookedSite('/outage');
      let down = true;
      receiver.react = (r) => (r.path !== '/outage' ? { status: 200 } : down ? { drop: true } : { status: 204 });
      const start = t.clock.now().getTime();
      for (let i = 0; i < 3; i++) {
        await event();
        t.clock.advance(600);
      }
      while (await toNextDue(hook.id, start + DAY_S * 1000)) await t.app.webhooks.runDue();
      assert.ok((await deliveriesOf(t, hook.id)).every((d) => d.status === 'retrying'), 'still retrying after a day');
      t.clock.current = new Date(start + DAY_S * 1000);
      down = false;
      while (await toNextDue(hook.id)) await t.app.webhooks.runDue();

      const deliveries = await deliveriesOf(t, hook.id);
      assert.equal(deliveries.length, 3);
      const requests = at('/outage');
      for (const delivery of deliveries) {
        assert.equal(delivery.status, 'succeeded');
        assert.equal(delivery.last_response_status, 204);
        const mine = requests.filter((r) => r.headers['webhook-id'] === delivery.webhook_id);
        assert.equal(mine.length, delivery.attempt_count, 'every attempt of the delivery carried its webhook-id');
        assert.ok(mine.length >= 7, `${mine.length} attempts: the day's retries and the one that arrived`);
        assert.equal(new Set(mine.map((r) => r.body)).size, 1, 'the same body each time');
        const attempts = await attemptsOf(t, delivery.id);
        assert.match(attempts[0]!.error!, /socket hang up|ECONNRESET/, 'a dropped connection is logged as such');
      }
      assert.equal(new Set(requests.map((r) => r.headers['webhook-id'])).size, 3, 'no other webhook-id');
    });

    it('sets failing_since at the first failure after a success, clears it at the next success, and writes the hook only then', async () => {
      const { site, hook, event } = await hookedSite('/flaky');
      const version = async () =>
        Number((await t.handle.db.selectFrom('site_counters').select('value').where('site_id', '=', site).where('counter', '=', 'version').executeTakeFirstOrThrow()).value);
      let failing = false;
      receiver.react = (r) => (r.path === '/flaky' && failing ? { status: 503 } : { status: 200 });

      await event();
      let before = await version();
      await t.app.webhooks.runDue();
      assert.equal((await hookRow(hook.id)).failing_since, null);
      assert.equal(await version(), before, 'a success while healthy writes no hook row');

      failing = true;
      await event();
      before = await version();
      await t.app.webhooks.runDue();
      const failedAt = t.clock.now().getTime();
      assert.equal(millis(t, (await hookRow(hook.id)).failing_since), failedAt);
      assert.equal(await version(), before + 1, 'the hook changed');

      t.clock.advance(60);
      await event();
      before = await version();
      await t.app.webhooks.runDue();
      assert.equal(millis(t, (await hookRow(hook.id)).failing_since), failedAt, 'still the first failure');
      assert.equal(await version(), before, 'no change, no write');

      failing = false;
      await toNextDue(hook.id);
      await t.app.webhooks.runDue();
      assert.equal((await hookRow(hook.id)).failing_since, null, 'a success clears it');
    });

    it('disables a hook whose deliveries failed for 5 days, failing its unfinished deliveries; new events are not queued for it', async () => {
      const { hook, event } = await hookedSite('/dead');
      receiver.react = (r) => (r.path === '/dead' ? { status: 500 } : { status: 200 });
      await event();
      await t.app.webhooks.runDue();
      const since = t.clock.now().getTime();

      t.clock.advance(4 * DAY_S);
      await event();
      await t.app.webhooks.runDue();
      assert.equal((await hookRow(hook.id)).disabled_at, null, 'failing for 4 days: still on');

      t.clock.advance(DAY_S);
      await event();
      await t.app.webhooks.runDue();
      const disabled = await hookRow(hook.id);
      assert.equal(millis(t, disabled.disabled_at), t.clock.now().getTime(), 'disabled after 5 days of failures');
      assert.equal(millis(t, disabled.failing_since), since);
      const deliveries = await deliveriesOf(t, hook.id);
      assert.equal(deliveries.length, 3);
      for (const d of deliveries) {
        assert.equal(d.status, 'failed');
        assert.equal(d.next_attempt_at, null);
        assert.equal(d.last_error, 'the hook was disabled: its deliveries failed for 5 days');
      }
      await event();
      assert.equal((await deliveriesOf(t, hook.id)).length, 3, 'a disabled hook gets no new deliveries');
    });
  });

  describe(`webhook timeouts [${dialect}]`, () => {
    it('counts no answer within WEBHOOK_TIMEOUT_MS as a failure', async () => {
      const receiver = await Receiver.start();
      const t = await createTestApp(dialect, { env: { WEBHOOK_TIMEOUT_MS: '200' } });
      try {
        receiver.react = () => ({ hold: true });
        const tagId = await builders(t).tag('Slow');
        const hook = await createHook(t, await t.token(), { event: 'tag_added', targetUrl: receiver.url('/slow') });
        await addTag(t, await t.token(), await builders(t).contact(), tagId);
        await t.app.webhooks.runDue();
        const delivery = await onlyDeliveryOf(t, hook.id);
        assert.equal(delivery.status, 'retrying');
        assert.equal(delivery.last_response_status, null);
        assert.equal(delivery.last_error, 'no answer within 200 ms');
        const [attempt] = await attemptsOf(t, delivery.id);
        assert.equal(attempt!.error, 'no answer within 200 ms');
        assert.ok(attempt!.duration_ms >= 190 && attempt!.duration_ms < 2_000, `${attempt!.duration_ms} ms`);
      } finally {
        receiver.release();
        await t.close();
        await receiver.close();
      }
    });

    it('gives the connection half the timeout: a name that never resolves fails at the connect deadline', async () => {
      // The lookup never answers: the connection is never made (a name slow to resolve, a silent address).
      const t = await createTestApp(dialect, { env: { WEBHOOK_TIMEOUT_MS: '3000' }, webhooks: { lookup: () => new Promise(() => {}) } });
      try {
        const hook = await createHook(t, await t.token(), { event: 'tag_added', targetUrl: 'http://unreachable.test/hooks' });
        await addTag(t, await t.token(), await builders(t).contact(), await builders(t).tag('Unreachable'));
        await t.app.webhooks.runDue();
        const delivery = await onlyDeliveryOf(t, hook.id);
        assert.equal(delivery.status, 'retrying');
        assert.equal(delivery.last_error, 'could not connect within 1500 ms');
        const [attempt] = await attemptsOf(t, delivery.id);
        assert.ok(attempt!.duration_ms >= 1_400 && attempt!.duration_ms < 2_900, `${attempt!.duration_ms} ms: the connect deadline, not the answer's 3000`);
      } finally {
        await t.close();
      }
    });

    it('gives the body 1 s after the status line: a receiver that answers and trickles its body is answered, cut off', async () => {
      const receiver = await Receiver.start();
      const t = await createTestApp(dialect, { env: { WEBHOOK_TIMEOUT_MS: '5000' } });
      try {
        receiver.react = () => ({ status: 200, partial: 'accepted, details follow' });
        const hook = await createHook(t, await t.token(), { event: 'tag_added', targetUrl: receiver.url('/trickle') });
        await addTag(t, await t.token(), await builders(t).contact(), await builders(t).tag('Trickle'));
        await t.app.webhooks.runDue();
        const delivery = await onlyDeliveryOf(t, hook.id);
        assert.equal(delivery.status, 'succeeded', 'the status line was the answer');
        const [attempt] = await attemptsOf(t, delivery.id);
        assert.equal(attempt!.response_body, 'accepted, details follow');
        assert.ok(attempt!.duration_ms >= 900 && attempt!.duration_ms < 3_500, `${attempt!.duration_ms} ms: the body's second, not the answer's 5000`);
      } finally {
        receiver.release();
        await t.close();
        await receiver.close();
      }
    });
  });
}
