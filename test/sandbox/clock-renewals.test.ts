// The clock and commerce together, as an integration builder drives them over HTTP: a checkout of
// a monthly subscription, then POST /v1/test_helpers/clock/advance month after month for a year,
// gives exactly 12 renewal charges (not 11 or 13), each with its payment_succeeded delivery; a
// year in one advance gives the same 12; advances racing each other charge nothing twice; and
// fail_next_payment makes the next renewal fail.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createSite } from '../../src/domain/accounts.js';
import { builders } from '../support/builders.js';
import { buy, transactionsOf } from '../support/commerce.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { Receiver } from '../support/receiver.js';
import { createHook } from '../support/webhooks.js';
import { send } from '../support/writes.js';

const advanceBy = (duration: string) => ({ data: { type: 'clocks', attributes: { advance_by: duration } } });

for (const dialect of DIALECTS) {
  describe(`renewals follow the account clock [${dialect}]`, () => {
    let t: TestApp;
    let receiver: Receiver;

    before(async () => {
      receiver = await Receiver.start();
    });
    after(async () => receiver.close());

    /** A fresh app (a clock of its own), a site and a monthly subscription bought at the start. */
    const subscriber = async () => {
      t = await createTestApp(dialect);
      const site = await createSite(t.handle, { accountId: t.tenant.accountId, title: 'Shop', subdomain: `shop-${randomBytes(4).toString('hex')}` }, t.clock);
      const token = await t.token();
      const offer = await builders(t).forSite(site).offer({ title: 'Monthly', payment_type: 'subscription', price_in_cents: 1900, billing_period_months: 1 });
      // Each test's app starts its ids afresh: a path of its own on the shared receiver.
      const path = `/${randomBytes(4).toString('hex')}/paid`;
      const hook = await createHook(t, token, { event: 'payment_succeeded', targetUrl: receiver.url(path), siteId: site });
      const doc = await buy(t, token, { offer, email: `monthly-${randomBytes(3).toString('hex')}@example.com` });
      const customerId = Number((doc.data.relationships.customer!.data as { id: string }).id);
      return { site, path, token, hook, purchaseId: doc.data.id, customerId };
    };
    const renewals = async (customerId: number) => (await transactionsOf(t, customerId)).filter((x) => x.action === 'subscription_charge').slice(1);

    it('twelve monthly advances: 12 renewals, one per advance, each delivered as payment_succeeded', async () => {
      const { site, path, token, customerId } = await subscriber();
      try {
        for (let month = 1; month <= 12; month++) {
          const res = await send(t, 'POST', '/v1/test_helpers/clock/advance', token, advanceBy('P1M'));
          assert.equal(res.statusCode, 200, res.body);
          assert.equal((await renewals(customerId)).length, month, `after ${month} advance(s)`);
        }
        const charged = await renewals(customerId);
        assert.deepEqual(
          charged.map((x) => [x.state, Number(x.amount_in_cents)]),
          Array(12).fill(['succeeded', 1900]),
        );
        await t.app.webhooks.runDue();
        const delivered = receiver.received.filter((r) => r.path === path).map((r) => Number((JSON.parse(r.body) as { id: string }).id));
        for (const renewal of charged) assert.ok(delivered.includes(Number(renewal.id)), `renewal ${renewal.id} delivered`);
        // The API sees them at once, with account-time timestamps.
        const listed = (await t.get(`/v1/transactions?filter[site_id]=${site}&filter[customer_id]=${customerId}&page[size]=50`, token)).json();
        assert.equal(listed.meta.total_count, 13, 'the first charge and 12 renewals');
      } finally {
        await t.close();
      }
    });

    it('a year in one advance: the same 12; four advances racing: each renewal once', async () => {
      const { token, customerId } = await subscriber();
      try {
        const res = await send(t, 'POST', '/v1/test_helpers/clock/advance', token, advanceBy('P1Y'));
        assert.equal(res.statusCode, 200, res.body);
        assert.equal((await renewals(customerId)).length, 12);

        const raced = await Promise.all(Array.from({ length: 4 }, () => send(t, 'POST', '/v1/test_helpers/clock/advance', token, advanceBy('P1M'))));
        assert.deepEqual(raced.map((r) => r.statusCode), [200, 200, 200, 200], raced.map((r) => r.body).join('\n'));
        const charged = await renewals(customerId);
        assert.equal(charged.length, 16, 'four more months: four more renewals');
        const times = charged.map((x) => t.handle.traits.decodeTimestamp(x.created_at));
        assert.equal(new Set(times).size, 16, 'each due time charged once');
        assert.deepEqual([...times].sort(), times, 'in time order');
      } finally {
        await t.close();
      }
    });

    it('fail_next_payment: the next renewal fails (a failed transaction, no delivery), the one after succeeds', async () => {
      const { path, token, purchaseId, customerId } = await subscriber();
      try {
        const marked = await send(t, 'POST', `/v1/test_helpers/purchases/${purchaseId}/fail_next_payment`, token);
        assert.equal(marked.statusCode, 200, marked.body);
        await send(t, 'POST', '/v1/test_helpers/clock/advance', token, advanceBy('P2M'));
        const charged = await renewals(customerId);
        assert.deepEqual(charged.map((x) => x.state), ['failed', 'succeeded']);
        await t.app.webhooks.runDue();
        const delivered = receiver.received.filter((r) => r.path === path).map((r) => Number((JSON.parse(r.body) as { id: string }).id));
        assert.ok(!delivered.includes(Number(charged[0]!.id)), 'no payment_succeeded for the failed renewal');
        assert.ok(delivered.includes(Number(charged[1]!.id)));
      } finally {
        await t.close();
      }
    });
  });
}
