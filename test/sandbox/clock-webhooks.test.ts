// Webhooks and the account clock (docs/sandbox.md, "The account clock"): the delivery queue runs on
// real time, but retries follow the account's clock (an advance makes them due as much earlier),
// the worker is woken by an advance, and what the worker writes into the account's records (the
// attempts' times, the delivery's, the hook's health and the 5-day rule, the rotated secret's
// expiry) is the account's time.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createSite } from '../../src/domain/accounts.js';
import { builders } from '../support/builders.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { Receiver } from '../support/receiver.js';
import { addTag, attemptsOf, createHook, millis, onlyDeliveryOf } from '../support/webhooks.js';
import { send } from '../support/writes.js';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

for (const dialect of DIALECTS) {
  describe(`webhooks on the account clock [${dialect}]`, () => {
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

    async function hookedSite(path: string) {
      const site = await createSite(t.handle, { accountId: t.tenant.accountId, title: 'Clocked', subdomain: `clocked-${randomBytes(4).toString('hex')}` }, t.clock);
      const b = builders(t).forSite(site);
      const tagId = await b.tag('Clocked');
      const hook = await createHook(t, await t.token(), { event: 'tag_added', targetUrl: receiver.url(path), siteId: site });
      const event = async () => addTag(t, await t.token(), await b.contact(), tagId);
      return { hook, event };
    }
    const advance = async (duration: string) => {
      const res = await send(t, 'POST', '/v1/test_helpers/clock/advance', await t.token(), { data: { type: 'clocks', attributes: { advance_by: duration } } });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data.attributes as { now: string; offset_seconds: number };
    };
    const offsetMs = async () => Number((await t.handle.db.selectFrom('accounts').select('clock_offset_ms').where('id', '=', t.tenant.accountId).executeTakeFirstOrThrow()).clock_offset_ms);
    const hookRow = (id: number) => t.handle.db.selectFrom('hooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    it('a retry due in 5 minutes of real time is attempted at once after the clock moves 10 minutes, and its records carry the account\'s time', async () => {
      const { hook, event } = await hookedSite('/late');
      receiver.react = (r) => (r.path === '/late' ? { status: 500 } : { status: 200 });
      await event();
      assert.equal(await t.app.webhooks.runDue(), 1);
      t.clock.current = new Date(millis(t, (await onlyDeliveryOf(t, hook.id)).next_attempt_at)!);
      assert.equal(await t.app.webhooks.runDue(), 1);
      const waiting = await onlyDeliveryOf(t, hook.id);
      const wait = millis(t, waiting.next_attempt_at)! - t.clock.now().getTime();
      assert.ok(wait >= 4.5 * MINUTE_MS && wait <= 5.5 * MINUTE_MS, `the second retry waits about 5 minutes (${wait} ms)`);
      assert.equal(await t.app.webhooks.runDue(), 0, 'not due yet');

      const moved = await advance('PT10M');
      const shifted = await onlyDeliveryOf(t, hook.id);
      assert.equal(millis(t, shifted.next_attempt_at), millis(t, waiting.next_attempt_at)! - 10 * MINUTE_MS, 'due 10 minutes earlier in real time');
      assert.equal(await t.app.webhooks.runDue(), 1, 'attempted at once, without real time passing');

      const delivery = await onlyDeliveryOf(t, hook.id);
      assert.equal(delivery.attempt_count, 3);
      const accountNow = Date.parse(moved.now);
      assert.equal(accountNow, t.clock.now().getTime() + (await offsetMs()));
      const attempts = await attemptsOf(t, delivery.id);
      assert.equal(millis(t, attempts[2]!.started_at), accountNow, 'the attempt started at the account\'s time');
      assert.equal(millis(t, attempts[2]!.created_at), accountNow);
      assert.equal(millis(t, delivery.last_attempt_at), accountNow);
      assert.equal(millis(t, delivery.updated_at), accountNow);
      // The next retry is queued in real time.
      const next = millis(t, delivery.next_attempt_at)! - t.clock.now().getTime();
      assert.ok(next >= 27 * MINUTE_MS && next <= 33 * MINUTE_MS, `the third retry waits about 30 minutes of real time (${next} ms)`);
    });

    it('a hook failing for 5 days of the account\'s time is disabled, with failing_since and disabled_at in that time', async () => {
      const { hook, event } = await hookedSite('/five-days');
      receiver.react = (r) => (r.path === '/five-days' ? { status: 503 } : { status: 200 });
      await event();
      await t.app.webhooks.runDue();
      const failingSince = millis(t, (await hookRow(hook.id)).failing_since)!;
      assert.equal(failingSince, t.clock.now().getTime() + (await offsetMs()), 'failing since the account\'s time of the first failure');

      await advance('P5D');
      // The first retry (5 s) was within the workers' lease and kept its real due time.
      t.clock.advance(6);
      await t.app.webhooks.runDue();
      assert.equal((await onlyDeliveryOf(t, hook.id)).attempt_count, 2);
      const disabled = await hookRow(hook.id);
      assert.notEqual(disabled.disabled_at, null, 'disabled after 5 days of the account\'s time');
      assert.equal(millis(t, disabled.disabled_at), t.clock.now().getTime() + (await offsetMs()));
      assert.ok(millis(t, disabled.disabled_at)! - failingSince >= 5 * DAY_MS);
      assert.equal((await onlyDeliveryOf(t, hook.id)).status, 'failed');
    });

    it('the previous signing secret expires 24 hours after rotate_secret in the account\'s time', async () => {
      const { hook, event } = await hookedSite('/rotated');
      const rotated = await send(t, 'POST', `/v1/hooks/${hook.id}/rotate_secret`, await t.token());
      assert.equal(rotated.statusCode, 200, rotated.body);
      await event();
      await t.app.webhooks.runDue();
      const signatures = (h: IncomingHttpHeaders) => String(h['webhook-signature']).split(' ').length;
      const during = receiver.received.filter((r) => r.path === '/rotated');
      assert.equal(signatures(during[0]!.headers), 2, 'both secrets within the day');

      await advance('P2D');
      await event();
      await t.app.webhooks.runDue();
      const afterwards = receiver.received.filter((r) => r.path === '/rotated');
      assert.equal(afterwards.length, 2);
      assert.equal(signatures(afterwards[1]!.headers), 1, 'two days later in the account, the new secret only');
    });
  });

  describe(`the delivery worker woken by an advance [${dialect}]`, () => {
    let t: TestApp;
    let receiver: Receiver;

    before(async () => {
      // Polls once a minute: only the advance's wake-up can bring the retry within the test.
      t = await createTestApp(dialect, { env: { WEBHOOK_POLL_MS: '60000' } });
      receiver = await Receiver.start();
    });
    after(async () => {
      await t.close();
      await receiver.close();
    });

    it('attempts a retry that the advance made due, without waiting for its poll', async () => {
      const b = builders(t);
      const tagId = await b.tag('Woken');
      const hook = await createHook(t, await t.token(), { event: 'tag_added', targetUrl: receiver.url('/woken'), siteId: t.tenant.siteId });
      let fail = true;
      receiver.react = () => (fail ? { status: 500 } : { status: 204 });
      await addTag(t, await t.token(), await b.contact(), tagId);
      await t.app.webhooks.runDue();
      t.clock.current = new Date(millis(t, (await onlyDeliveryOf(t, hook.id)).next_attempt_at)!);
      await t.app.webhooks.runDue();
      assert.equal((await onlyDeliveryOf(t, hook.id)).status, 'retrying');
      fail = false;

      t.app.webhooks.start();
      // The worker now waits for the retry, 5 minutes away on its clock (and its poll, a minute).
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(receiver.received.length, 2);
      const res = await send(t, 'POST', '/v1/test_helpers/clock/advance', await t.token(), { data: { type: 'clocks', attributes: { advance_by: 'PT10M' } } });
      assert.equal(res.statusCode, 200, res.body);
      const deadline = Date.now() + 5_000;
      while ((await onlyDeliveryOf(t, hook.id)).status !== 'succeeded' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal((await onlyDeliveryOf(t, hook.id)).status, 'succeeded');
      assert.equal(receiver.received.length, 3);
    });
  });
}
