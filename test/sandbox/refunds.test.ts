// POST /v1/test_helpers/transactions/{id}/refund (docs/sandbox.md, "Commerce"): a refund
// transaction of the negative amount linked to the charge's purchases, net revenue lowered, no
// payment_succeeded event; partial refunds add up and never exceed the charge; a full refund of a
// one-time purchase ends its access; what cannot be refunded is a 422, another account's a 404.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createSite } from '../../src/domain/accounts.js';
import { builders } from '../support/builders.js';
import { buy, checkout, eventsOf, lastEventId, paidBy, refund, transactionsOf } from '../support/commerce.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { assertError, otherAccount, rowCounts, send } from '../support/writes.js';

for (const dialect of DIALECTS) {
  describe(`sandbox refunds [${dialect}]`, () => {
    let t: TestApp;
    let token: string;

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
    });
    after(() => t.close());

    const freshSite = () => createSite(t.handle, { accountId: t.tenant.accountId, title: 'Shop', subdomain: `shop-${randomBytes(4).toString('hex')}` }, t.clock);
    const netRevenue = async (customerId: number) =>
      Number((await t.handle.db.selectFrom('customers').select('net_revenue_cents').where('id', '=', customerId).executeTakeFirstOrThrow()).net_revenue_cents);
    const customerOf = (doc: { data: { relationships: Record<string, { data: unknown }> } }) => Number((doc.data.relationships.customer!.data as { id: string }).id);

    it('partial refunds add up, never beyond the charge; the last one ends the one-time purchases it paid for', async () => {
      const site = await freshSite();
      const b = builders(t).forSite(site);
      const product = await b.product();
      const offer = await b.offer({ price_in_cents: 5000, productIds: [product] });
      const bump = await b.offer({ price_in_cents: 1000 });
      const doc = await buy(t, token, { offer, email: 'refund@example.com', bumps: [bump] });
      const customerId = customerOf(doc);
      const [charge] = await transactionsOf(t, customerId);
      const chargeId = Number(charge!.id);
      const purchaseIds = await paidBy(t, chargeId);
      assert.equal(await netRevenue(customerId), 6000);
      const since = await lastEventId(t);

      const res = await refund(t, token, chargeId, 2500);
      assert.equal(res.statusCode, 201, res.body);
      const first = res.json().data;
      assert.equal(res.headers.location, `http://sitebiz.test/v1/transactions/${first.id}`);
      assert.deepEqual(
        [first.type, first.attributes.action, first.attributes.state, first.attributes.amount_in_cents, first.attributes.payment_type, first.relationships.offer.data],
        ['transactions', 'refund', 'succeeded', -2500, 'one_time', null],
      );
      assert.deepEqual(first, (await t.get(`/v1/transactions/${first.id}`, token)).json().data, 'as GET renders it');
      assert.deepEqual(await paidBy(t, Number(first.id)), purchaseIds, 'linked to the purchases of the charge');
      assert.equal(await netRevenue(customerId), 3500);
      const active = async () => (await t.handle.db.selectFrom('purchases').select('id').where('id', 'in', purchaseIds).where('deactivated_at', 'is', null).execute()).length;
      assert.equal(await active(), 2, 'a partial refund changes no access');

      assertError(await refund(t, token, chargeId, 3501), 422, 'refund_exceeds_charge', '/data/attributes/amount_in_cents');
      assertError(await refund(t, token, chargeId, 0), 422, 'invalid_attribute', '/data/attributes/amount_in_cents');

      const rest = await refund(t, token, chargeId);
      assert.equal(rest.statusCode, 201, rest.body);
      const second = rest.json().data;
      assert.equal(second.attributes.amount_in_cents, -3500, 'what was left');
      assert.equal(await netRevenue(customerId), 0);
      assertError(await refund(t, token, chargeId, 1), 422, 'not_refundable');

      // A full refund ends the one-time purchases' access.
      const purchases = await t.handle.db.selectFrom('purchases').select(['deactivated_at', 'deactivation_reason']).where('id', 'in', purchaseIds).execute();
      assert.deepEqual(purchases.map((p) => [p.deactivated_at !== null, p.deactivation_reason]), [[true, 'refunded'], [true, 'refunded']]);
      const grants = await t.handle.db.selectFrom('offer_grants').select('revoked_at').where('purchase_id', 'in', purchaseIds).execute();
      assert.ok(grants.length === 2 && grants.every((g) => g.revoked_at !== null), 'grants revoked');
      const members = (await t.get(`/v1/contacts?filter[site_id]=${site}&filter[has_product_id]=${product}`, token)).json().data;
      assert.deepEqual(members, [], 'the product is no longer held');

      // No event: nothing was paid.
      assert.deepEqual(await eventsOf(t, site, since), []);
      const refunds = (await t.get(`/v1/transactions?filter[site_id]=${site}&filter[action_eq]=refund`, token)).json().data as Array<{ id: string }>;
      assert.deepEqual(refunds.map((r) => r.id).sort(), [first.id, second.id].sort());
    });

    it('a subscription charge: refunded, access kept (cancel the subscription for that)', async () => {
      const site = await freshSite();
      const b = builders(t).forSite(site);
      const sub = await b.offer({ payment_type: 'subscription', price_in_cents: 2900 });
      const doc = await buy(t, token, { offer: sub, email: 'sub-refund@example.com' });
      const [charge] = await transactionsOf(t, customerOf(doc));
      const res = await refund(t, token, Number(charge!.id));
      assert.equal(res.statusCode, 201, res.body);
      assert.deepEqual([res.json().data.attributes.amount_in_cents, res.json().data.attributes.payment_type], [-2900, 'subscription']);
      const purchase = await t.handle.db.selectFrom('purchases').select(['deactivated_at', 'subscription_status']).where('id', '=', Number(doc.data.id)).executeTakeFirstOrThrow();
      assert.deepEqual([purchase.deactivated_at, purchase.subscription_status], [null, 'active']);
    });

    it('refuses what is not a successful charge (422) and what is not the account\'s (404), writing nothing', async () => {
      const site = await freshSite();
      const b = builders(t).forSite(site);
      const offer = await b.offer({ price_in_cents: 4000 });
      const declined = await checkout(t, token, { offer, email: 'no-card@example.com', payment_outcome: 'declined' });
      assert.equal(declined.statusCode, 402);
      const customerId = Number((await t.handle.db.selectFrom('customers').select('id').where('site_id', '=', site).executeTakeFirstOrThrow()).id);
      const [failed] = await transactionsOf(t, customerId);
      const doc = await buy(t, token, { offer, email: 'no-card@example.com' });
      const charges = await transactionsOf(t, customerOf(doc));
      const charge = charges.find((x) => x.state === 'succeeded')!;
      const refunded = await refund(t, token, Number(charge.id), 100);
      assert.equal(refunded.statusCode, 201);
      const other = await otherAccount(t);
      const foreignCustomer = await builders(t).forSite(other.siteId).customer();
      const foreign = await builders(t).forSite(other.siteId).transaction({ customerId: foreignCustomer.id, amount_in_cents: 1000 });

      const before = await rowCounts(t, ['transactions', 'purchase_transactions']);
      assertError(await refund(t, token, Number(failed!.id)), 422, 'not_refundable');
      assertError(await refund(t, token, refunded.json().data.id), 422, 'not_refundable');
      assertError(await refund(t, token, foreign), 404, 'not_found');
      assertError(await refund(t, token, 'abc'), 404, 'not_found');
      const post = (body: unknown) => send(t, 'POST', `/v1/test_helpers/transactions/${charge.id}/refund`, token, body);
      assertError(await post({ data: { type: 'refunds', attributes: { amount_in_cents: 'all' } } }), 422, 'invalid_attribute', '/data/attributes/amount_in_cents');
      assertError(await post({ data: { type: 'refunds', attributes: { reason: 'x' } } }), 422, 'unknown_attribute', '/data/attributes/reason');
      assertError(await post({ data: { type: 'transactions' } }), 409, 'type_mismatch', '/data/type');
      assert.deepEqual(await rowCounts(t, ['transactions', 'purchase_transactions']), before);
    });
  });
}
