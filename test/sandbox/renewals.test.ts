// Renewals and installments (src/domain/renewals.ts, docs/sandbox.md "Commerce"), called as the
// clock's advance calls them: through engine.transact with the key's principal. Each payment that
// falls due is made once, at its due time, in time order: a year of monthly renewals is 12
// charges, a payment plan stops after its last installment, canceled and deactivated purchases
// are not charged, fail_next_charge makes one payment fail (and suspends access until the next
// succeeds), and racing callers never charge twice.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Principal } from '../../src/auth/principal.js';
import { createSite } from '../../src/domain/accounts.js';
import { seedDemoData } from '../../src/demo/seed.js';
import { chargeDueRenewals } from '../../src/domain/renewals.js';
import { builders } from '../support/builders.js';
import { buy, eventsOf, lastEventId, principalOf, refund, transactionsOf } from '../support/commerce.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { Receiver } from '../support/receiver.js';
import { withoutDivergences } from '../support/upstream-divergences.js';
import { upstreamMismatches, UPSTREAM_SKIP_REASON } from '../support/upstream.js';
import { createHook } from '../support/webhooks.js';
import { send } from '../support/writes.js';

const START = Date.parse('2026-06-01T12:00:00.000Z');
const months = (n: number) => {
  const d = new Date(START);
  d.setUTCMonth(d.getUTCMonth() + n);
  return d;
};

for (const dialect of DIALECTS) {
  describe(`sandbox renewals and installments [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let principal: Principal;
    let receiver: Receiver;

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      receiver = await Receiver.start();
    });
    after(async () => {
      await t.close();
      await receiver.close();
    });

    /** A site of its own per test (the principal is read after it exists, to reach it). */
    const freshSite = async () => {
      const site = await createSite(t.handle, { accountId: t.tenant.accountId, title: 'Shop', subdomain: `shop-${randomBytes(4).toString('hex')}` }, t.clock);
      // Tokens keep real time, which these tests move: a fresh one per test.
      token = await t.token();
      principal = await principalOf(t, token);
      return site;
    };
    const chargeUntil = (site: number, until: Date) => t.app.engine.transact(principal, (ctx) => chargeDueRenewals(ctx, [site], until));
    const customerOf = (doc: { data: { relationships: Record<string, { data: unknown }> } }) => Number((doc.data.relationships.customer!.data as { id: string }).id);
    const at = (value: unknown) => Date.parse(t.handle.traits.decodeTimestamp(value)!);
    const purchase = (id: string | number) => t.handle.db.selectFrom('purchases').selectAll().where('id', '=', Number(id)).executeTakeFirstOrThrow();
    const withClock = (time: number) => {
      t.clock.current = new Date(time);
    };

    it('a year of a monthly subscription: 12 renewals, each at its due time, with its event and receipt; again: none', async () => {
      withClock(START);
      const site = await freshSite();
      const b = builders(t).forSite(site);
      const sub = await b.offer({ title: 'Monthly', payment_type: 'subscription', price_in_cents: 2900, billing_period_months: 1 });
      const hook = await createHook(t, token, { event: 'payment_succeeded', targetUrl: receiver.url(`/${site}/paid`), siteId: site });
      const doc = await buy(t, token, { offer: sub, email: 'monthly@example.com' });
      const customerId = customerOf(doc);
      const since = await lastEventId(t);

      assert.equal(await chargeUntil(site, months(12)), 12);
      const charges = await transactionsOf(t, customerId);
      assert.equal(charges.length, 13, 'the first period and 12 renewals');
      const renewals = charges.slice(1);
      assert.deepEqual(renewals.map((x) => [x.action, x.state, Number(x.amount_in_cents), Number(x.offer_id)]), Array(12).fill(['subscription_charge', 'succeeded', 2900, sub]));
      assert.deepEqual(renewals.map((x) => at(x.created_at)), Array.from({ length: 12 }, (_, i) => months(i + 1).getTime()), 'each at its due time');
      assert.deepEqual(await eventsOf(t, site, since), renewals.map((x) => ['payment_succeeded', Number(x.id)]));
      const events = await t.handle.db.selectFrom('outbox_events').select('created_at').where('site_id', '=', site).where('id', '>', since).orderBy('id').execute();
      assert.deepEqual(events.map((e) => at(e.created_at)), renewals.map((x) => at(x.created_at)), 'events carry the due time');
      const receipts = await t.handle.db.selectFrom('outgoing_messages').select('created_at').where('site_id', '=', site).where('kind', '=', 'receipt').orderBy('id').execute();
      assert.equal(receipts.length, 13);
      const customer = await t.handle.db.selectFrom('customers').select('net_revenue_cents').where('id', '=', customerId).executeTakeFirstOrThrow();
      assert.equal(Number(customer.net_revenue_cents), 13 * 2900);
      const p = await purchase(doc.data.id);
      assert.equal(at(p.next_charge_at), months(13).getTime());
      assert.equal(p.subscription_status, 'active');

      assert.equal(await chargeUntil(site, months(12)), 0, 'nothing is due twice');
      assert.equal((await transactionsOf(t, customerId)).length, 13);

      // The API lists them; the deliveries validate against the upstream sample.
      const listed = (await t.get(`/v1/transactions?filter[site_id]=${site}&filter[customer_id]=${customerId}&page[size]=50`, token)).json().data;
      assert.equal(listed.length, 13);
      // Deliveries are queued on real time at the due time (the clock's advance makes that now).
      withClock(months(12).getTime() + 1000);
      await t.app.webhooks.runDue();
      const got = receiver.received.filter((r) => r.path === `/${site}/paid`).map((r) => JSON.parse(r.body) as { id: string; payload: unknown[] });
      assert.equal(got.length, 13, `hook ${hook.id}: the first payment and 12 renewals`);
      assert.deepEqual(got.slice(1).map((g) => Number(g.id)).sort((x, y) => x - y), renewals.map((x) => Number(x.id)));
      if (!UPSTREAM_SKIP_REASON) {
        for (const body of got) {
          assert.deepEqual(upstreamMismatches('GET', '/v1/hooks/payment_succeeded_sample', 200, withoutDivergences({ data: body.payload }).data, { contentType: 'application/vnd.api+json' }), []);
        }
      }
    });

    it('a yearly subscription renews once a year; several purchases are charged in time order', async () => {
      withClock(START);
      const site = await freshSite();
      const b = builders(t).forSite(site);
      const yearly = await b.offer({ payment_type: 'subscription', price_in_cents: 29000, billing_period_months: 12 });
      const monthly = await b.offer({ payment_type: 'subscription', price_in_cents: 1000, billing_period_months: 1 });
      const y = await buy(t, token, { offer: yearly, email: 'yearly@example.com' });
      withClock(START + 10 * 86_400_000);
      const m = await buy(t, await t.token(), { offer: monthly, email: 'later@example.com' });
      withClock(START);

      assert.equal(await chargeUntil(site, months(13)), 1 + 12);
      const renewals = await t.handle.db
        .selectFrom('transactions')
        .select(['id', 'customer_id', 'created_at'])
        .where('site_id', '=', site)
        .where('created_at', '>', t.handle.traits.encodeTimestamp(new Date(START + 11 * 86_400_000)))
        .orderBy('id')
        .execute();
      const times = renewals.map((x) => at(x.created_at));
      assert.deepEqual(times, [...times].sort((a, b2) => a - b2), 'written in time order');
      assert.equal(renewals.filter((x) => Number(x.customer_id) === customerOf(y)).length, 1);
      assert.equal(renewals.filter((x) => Number(x.customer_id) === customerOf(m)).length, 12);
      assert.equal(at((await purchase(y.data.id)).next_charge_at), months(24).getTime());
    });

    it('a payment plan: installments count up to installment_count, then nothing more falls due', async () => {
      withClock(START);
      const site = await freshSite();
      const plan = await builders(t).forSite(site).offer({ payment_type: 'multipay', price_in_cents: 10000, installment_count: 3 });
      const doc = await buy(t, token, { offer: plan, email: 'plan@example.com' });
      assert.equal(await chargeUntil(site, months(1)), 1);
      assert.equal((await purchase(doc.data.id)).multipay_payments_made, 2);
      assert.equal(await chargeUntil(site, months(12)), 1);
      const p = await purchase(doc.data.id);
      assert.deepEqual([p.multipay_payments_made, p.next_charge_at], [3, null]);
      const charges = await transactionsOf(t, customerOf(doc));
      assert.deepEqual(charges.map((x) => [x.action, x.payment_type, Number(x.amount_in_cents), at(x.created_at)]), [0, 1, 2].map((k) => ['charge', 'multipay', 10000, months(k).getTime()]));
    });

    it('canceled subscriptions and deactivated purchases are not charged', async () => {
      withClock(START);
      const site = await freshSite();
      const b = builders(t).forSite(site);
      const sub = await b.offer({ payment_type: 'subscription', price_in_cents: 500 });
      const plan = await b.offer({ payment_type: 'multipay', price_in_cents: 500 });
      const canceled = await buy(t, token, { offer: sub, email: 'cancel@example.com' });
      const deactivated = await buy(t, token, { offer: plan, email: 'deactivate@example.com' });
      assert.equal((await send(t, 'POST', `/v1/purchases/${canceled.data.id}/cancel_subscription`, token)).statusCode, 200);
      assert.equal((await send(t, 'POST', `/v1/purchases/${deactivated.data.id}/deactivate`, token)).statusCode, 200);
      assert.equal(await chargeUntil(site, months(6)), 0);
      assert.equal((await transactionsOf(t, customerOf(canceled))).length, 1);
      assert.equal((await transactionsOf(t, customerOf(deactivated))).length, 1);
    });

    it('fail_next_charge: that payment fails (no event, no revenue), access is suspended until the next one succeeds', async () => {
      withClock(START);
      const site = await freshSite();
      const b = builders(t).forSite(site);
      const product = await b.product();
      const sub = await b.offer({ payment_type: 'subscription', price_in_cents: 2000, productIds: [product] });
      const plan = await b.offer({ payment_type: 'multipay', price_in_cents: 3000, installment_count: 2 });
      const doc = await buy(t, token, { offer: sub, email: 'failing@example.com' });
      const planDoc = await buy(t, token, { offer: plan, email: 'failing-plan@example.com' });
      const customerId = customerOf(doc);
      const flag = (id: string) => t.handle.db.updateTable('purchases').set({ fail_next_charge: t.handle.traits.encodeBoolean(true) }).where('id', '=', Number(id)).execute();
      await flag(doc.data.id);
      await flag(planDoc.data.id);
      const since = await lastEventId(t);
      const holders = async () => ((await t.get(`/v1/contacts?filter[site_id]=${site}&filter[has_active_product_id]=${product}`, token)).json().data as unknown[]).length;
      assert.equal(await holders(), 1);

      assert.equal(await chargeUntil(site, months(1)), 2);
      const [, failed] = await transactionsOf(t, customerId);
      assert.deepEqual([failed!.action, failed!.state, at(failed!.created_at)], ['subscription_charge', 'failed', months(1).getTime()]);
      assert.deepEqual(await eventsOf(t, site, since), [], 'no payment_succeeded for a failure');
      const p = await purchase(doc.data.id);
      assert.equal(t.handle.traits.decodeBoolean(p.fail_next_charge), false, 'the flag is cleared');
      assert.equal(at(p.next_charge_at), months(2).getTime(), 'the schedule goes on');
      assert.equal(p.deactivated_at, null);
      assert.equal(await holders(), 0, 'access suspended');
      const revenue = await t.handle.db.selectFrom('customers').select('net_revenue_cents').where('id', '=', customerId).executeTakeFirstOrThrow();
      assert.equal(Number(revenue.net_revenue_cents), 2000);
      const planPurchase = await purchase(planDoc.data.id);
      assert.deepEqual([planPurchase.multipay_payments_made, at(planPurchase.next_charge_at)], [1, months(2).getTime()], 'a failed installment is not counted');

      assert.equal(await chargeUntil(site, months(2)), 2);
      assert.equal(await holders(), 1, 'the next payment succeeded: access resumed');
      assert.deepEqual((await eventsOf(t, site, since)).map(([type]) => type), ['payment_succeeded', 'payment_succeeded']);
      const donePlan = await purchase(planDoc.data.id);
      assert.deepEqual([donePlan.multipay_payments_made, donePlan.next_charge_at], [2, null]);
    });

    it('racing callers charge each payment once', async () => {
      withClock(START);
      const site = await freshSite();
      const b = builders(t).forSite(site);
      const sub = await b.offer({ payment_type: 'subscription', price_in_cents: 700 });
      const docs = [];
      for (let i = 0; i < 3; i++) docs.push(await buy(t, token, { offer: sub, email: `race-${i}@example.com` }));
      const counts = await Promise.all(Array.from({ length: 4 }, () => chargeUntil(site, months(12))));
      assert.equal(counts.reduce((a, c) => a + c, 0), 36, `charged ${counts.join(' + ')}`);
      for (const doc of docs) {
        const charges = await transactionsOf(t, customerOf(doc));
        assert.equal(charges.length, 13);
        assert.equal(new Set(charges.map((x) => at(x.created_at))).size, 13, 'each due time once');
      }
    });
  });

  describe(`sandbox commerce on the demo data [${dialect}]`, () => {
    let t: TestApp;

    before(async () => {
      t = await createTestApp(dialect);
      await seedDemoData(t.handle, { accountId: t.tenant.accountId, siteId: t.tenant.siteId }, t.clock);
    });
    after(() => t.close());

    it('a month of renewals and installments charges each purchase due once; a checkout with a demo coupon and a refund of a demo charge work', async () => {
      const token = await t.token();
      const principal = await principalOf(t, token);
      const site = t.tenant.siteId;
      const until = new Date(t.clock.now().getTime() + 31 * 86_400_000);
      const dueRows = await t.handle.db
        .selectFrom('purchases')
        .select(['id', 'payment_type', 'multipay_payments_made'])
        .where('site_id', '=', site)
        .where('next_charge_at', '<=', t.handle.traits.encodeTimestamp(until))
        .where('deactivated_at', 'is', null)
        .where((eb) => eb.or([eb('subscription_status', 'is', null), eb('subscription_status', '=', 'active')]))
        .execute();
      assert.ok(dueRows.length > 0, 'the demo has renewals due within a month');
      const before = await lastEventId(t);
      const charged = await t.app.engine.transact(principal, (ctx) => chargeDueRenewals(ctx, [site], until));
      assert.ok(charged >= dueRows.length, `${charged} payments for ${dueRows.length} purchases due`);
      const events = await eventsOf(t, site, before);
      const failed = await t.handle.db.selectFrom('transactions').select('id').where('site_id', '=', site).where('state', '=', 'failed').where('created_at', '>', t.handle.traits.encodeTimestamp(t.clock.now())).execute();
      assert.equal(events.length + failed.length, charged, 'a payment_succeeded per successful payment');
      assert.ok(events.every(([type]) => type === 'payment_succeeded'));
      assert.equal(await t.app.engine.transact(principal, (ctx) => chargeDueRenewals(ctx, [site], until)), 0, 'nothing twice');

      const offers = await t.handle.db.selectFrom('offers').select(['id', 'payment_type']).where('site_id', '=', site).orderBy('id').execute();
      const oneTime = offers.find((o) => o.payment_type === 'one_time')!;
      const doc = await buy(t, token, { offer: Number(oneTime.id), email: 'sandbox-buyer@example.com', coupon_code: 'SPRING25' });
      assert.equal(doc.data.attributes.coupon_code, 'SPRING25');
      const demoCharge = await t.handle.db
        .selectFrom('transactions')
        .select('id')
        .where('site_id', '=', site)
        .where('action', '=', 'charge')
        .where('state', '=', 'succeeded')
        .where('amount_in_cents', '>', 0)
        .orderBy('id')
        .executeTakeFirstOrThrow();
      const res = await refund(t, token, Number(demoCharge.id), 1);
      assert.equal(res.statusCode, 201, res.body);
    });
  });
}

describe('the billing schedule', () => {
  it('counts due times from the start, so the day of the month does not drift', async () => {
    const { nextDueAfter, plusMonths } = await import('../../src/domain/payments.js');
    const start = new Date('2026-01-15T09:30:00.000Z');
    let due = plusMonths(start, 1);
    const seen = [due.toISOString()];
    for (let i = 0; i < 13; i++) {
      due = nextDueAfter(start, 1, due);
      seen.push(due.toISOString());
    }
    assert.deepEqual(seen.map((s) => s.slice(8)), Array(14).fill('15T09:30:00.000Z'));
    assert.equal(seen[13], '2027-03-15T09:30:00.000Z');
    assert.equal(nextDueAfter(start, 12, new Date('2026-01-15T09:30:00.000Z')).toISOString(), '2027-01-15T09:30:00.000Z');
    assert.equal(nextDueAfter(start, 3, new Date('2026-05-01T00:00:00.000Z')).toISOString(), '2026-07-15T09:30:00.000Z');
  });
});
