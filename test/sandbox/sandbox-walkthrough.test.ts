// The sandbox walkthrough leaves the account as a user expects (docs/sandbox.md "Reset and
// snapshots" and "The demo's hooks"): the demo's hooks, whose hosts are made up, are disabled and
// get no deliveries; a clock advance that disables a hook whose receiver is down is undone by a
// reset (no hook stays "disabled since" a date the restored clock has not reached), a hook's
// health comes back as a snapshot saw it; and the delivery log and the events, which a reset keeps,
// list the delivery made after the reset first, though its account time is a month earlier.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { builders } from '../support/builders.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { Receiver } from '../support/receiver.js';
import { seedDemo } from '../support/snapshots.js';
import { addTag, createHook, deliveriesOf } from '../support/webhooks.js';
import { send } from '../support/writes.js';

interface HookAttributes {
  event: string;
  target_url: string;
  disabled_at: string | null;
  failing_since: string | null;
}

for (const dialect of DIALECTS) {
  describe(`the sandbox walkthrough's aftermath [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let receiver: Receiver;
    let demoHooks: Array<{ id: string; attributes: HookAttributes }>;

    before(async () => {
      t = await createTestApp(dialect);
      await seedDemo(t);
      token = await t.token();
      receiver = await Receiver.start();
      receiver.react = (r) => (r.path === '/down' ? { status: 503 } : { status: 204 });
      const res = await t.get('/v1/hooks?page[size]=100', token);
      assert.equal(res.statusCode, 200, res.body);
      demoHooks = res.json().data;
    });
    after(async () => {
      await t.close();
      await receiver.close();
    });

    const advance = async (duration: string) => {
      const res = await send(t, 'POST', '/v1/test_helpers/clock/advance', token, { data: { type: 'clocks', attributes: { advance_by: duration } } });
      assert.equal(res.statusCode, 200, res.body);
    };
    const hook = async (id: number | string) => {
      const res = await t.get(`/v1/hooks/${id}`, token);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data.attributes as HookAttributes;
    };
    /** A tag_added event in the demo site, for a new contact and a new tag. */
    const tagEvent = async (label: string) => {
      const b = builders(t).forSite(t.tenant.siteId);
      await addTag(t, token, await b.contact(), await b.tag(label));
    };

    it('creates the demo\'s hooks disabled, so their made-up hosts are never posted to', async () => {
      assert.equal(demoHooks.length, 6);
      for (const h of demoHooks) assert.notEqual(h.attributes.disabled_at, null, `${h.attributes.event} -> ${h.attributes.target_url} is disabled`);
      // The demo's VIP tag has tag_added and tag_removed hooks: tagging a contact VIP is their event.
      const vip = await t.get('/v1/contact_tags?filter[name_eq]=VIP', token);
      const vipId = Number(vip.json().data[0].id);
      await addTag(t, token, await builders(t).forSite(t.tenant.siteId).contact(), vipId);
      await advance('P1M');
      await t.app.webhooks.runDue();
      for (const h of demoHooks) assert.deepEqual(await deliveriesOf(t, Number(h.id)), [], `no delivery for the demo's ${h.attributes.event} hook`);
    });

    it('reset enables again a hook disabled after the seed, keeps the demo\'s hooks as seeded, and lists what was made after it first', async () => {
      const down = await createHook(t, token, { event: 'tag_added', targetUrl: receiver.url('/down') });
      const up = await createHook(t, token, { event: 'tag_added', targetUrl: receiver.url('/up') });
      await tagEvent('before-advance');
      await t.app.webhooks.runDue();
      assert.notEqual((await hook(down.id)).failing_since, null, 'its receiver is down');

      // A month later (account time) the failing hook's retry fails 5 days after its first failure.
      await advance('P1M');
      t.clock.advance(6); // the first retry (5 s) was within the worker's lease: due in real time
      await t.app.webhooks.runDue();
      const disabled = await hook(down.id);
      assert.notEqual(disabled.disabled_at, null, 'disabled by the 5-day rule');
      await tagEvent('during-the-month');
      await t.app.webhooks.runDue();
      const monthLater = (await deliveriesOf(t, up.id)).at(-1)!;

      const reset = await send(t, 'POST', '/v1/test_helpers/reset', token);
      assert.equal(reset.statusCode, 200, reset.body);
      const after = await hook(down.id);
      assert.equal(after.disabled_at, null, `no hook stays "disabled since" ${disabled.disabled_at}, after the restored clock`);
      assert.equal(after.failing_since, null);
      for (const seeded of demoHooks) {
        const now = await hook(seeded.id);
        assert.equal(now.disabled_at, seeded.attributes.disabled_at, `the demo's ${seeded.attributes.event} hook as seeded`);
        assert.equal(now.failing_since, seeded.attributes.failing_since);
      }

      // Made after the reset, a month earlier in account time than the one above: listed first.
      await tagEvent('after-reset');
      await t.app.webhooks.runDue();
      const afterReset = (await deliveriesOf(t, up.id)).at(-1)!;
      assert.ok(Date.parse(t.handle.traits.decodeTimestamp(afterReset.created_at)!) < Date.parse(t.handle.traits.decodeTimestamp(monthLater.created_at)!));
      const log = await t.get(`/v1/hooks/${up.id}/deliveries`, token);
      assert.equal(log.statusCode, 200, log.body);
      assert.deepEqual(
        (log.json().data as Array<{ id: string }>).slice(0, 2).map((d) => Number(d.id)),
        [Number(afterReset.id), Number(monthLater.id)],
        'newest first: the order they were made',
      );
      const all = await t.get('/v1/webhook_deliveries?page[size]=2', token);
      assert.equal(Number(all.json().data[0].id), Number(afterReset.id));
      const events = await t.get('/v1/events?page[size]=1', token);
      assert.equal(events.json().data[0].id, String(afterReset.event_id), 'the events too');
      const byTime = await t.get(`/v1/hooks/${up.id}/deliveries?sort=-created_at&page[size]=1`, token);
      assert.equal(Number(byTime.json().data[0].id), Number(monthLater.id), 'sort=-created_at still orders by account time');
    });

    it('restores a hook\'s health as the snapshot saw it: enabled then, enabled again; disabled then, disabled again', async () => {
      const flaky = await createHook(t, token, { event: 'tag_added', targetUrl: receiver.url('/down') });
      const saved = await send(t, 'POST', '/v1/test_helpers/snapshots', token, { data: { type: 'snapshots', attributes: { name: 'healthy' } } });
      assert.equal(saved.statusCode, 201, saved.body);
      await tagEvent('flaky');
      await t.app.webhooks.runDue();
      await advance('P6D');
      t.clock.advance(6);
      await t.app.webhooks.runDue();
      assert.notEqual((await hook(flaky.id)).disabled_at, null);
      const restored = await send(t, 'POST', '/v1/test_helpers/snapshots/healthy/restore', token);
      assert.equal(restored.statusCode, 200, restored.body);
      assert.deepEqual(
        { disabled_at: (await hook(flaky.id)).disabled_at, failing_since: (await hook(flaky.id)).failing_since },
        { disabled_at: null, failing_since: null },
      );

      // The demo's fulfilment hook was disabled when the seed was saved: enabled now, a reset
      // disables it again, with its seeded dates.
      const fulfilment = demoHooks.find((h) => h.attributes.event === 'order_created')!;
      const enabled = await send(t, 'POST', `/v1/hooks/${fulfilment.id}/enable`, token);
      assert.equal(enabled.statusCode, 200, enabled.body);
      assert.equal((await hook(fulfilment.id)).disabled_at, null);
      assert.equal((await send(t, 'POST', '/v1/test_helpers/reset', token)).statusCode, 200);
      const back = await hook(fulfilment.id);
      assert.equal(back.disabled_at, fulfilment.attributes.disabled_at);
      assert.equal(back.failing_since, fulfilment.attributes.failing_since);
    });
  });
}
