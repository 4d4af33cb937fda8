// POST /v1/test_helpers/checkouts (docs/sandbox.md, "Commerce"): each kind of checkout writes
// exactly the records and events the platform's would, asserted by id and count; the deliveries
// reach a real receiver with payloads valid against the upstream samples; the API's reads see the
// new records at once; a declined card answers 402 with its failed charge kept and no purchase;
// bad input is a 4xx with a pointer and writes nothing; production mode has no such route.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createSite } from '../../src/domain/accounts.js';
import { builders } from '../support/builders.js';
import { buy, checkout, eventsOf, paidBy, transactionsOf } from '../support/commerce.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { Receiver } from '../support/receiver.js';
import { withoutDivergences } from '../support/upstream-divergences.js';
import { upstreamMismatches, UPSTREAM_SKIP_REASON } from '../support/upstream.js';
import { createHook } from '../support/webhooks.js';
import { assertError, otherAccount, rowCounts, send } from '../support/writes.js';

const JSONAPI = 'application/vnd.api+json';
const COMMERCE_EVENTS = ['purchase', 'payment_succeeded', 'order_created'] as const;
const WRITTEN = ['contacts', 'customers', 'purchases', 'transactions', 'purchase_transactions', 'orders', 'order_items', 'offer_grants', 'memberships', 'outgoing_messages', 'outbox_events'];

for (const dialect of DIALECTS) {
  describe(`sandbox checkouts [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
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

    const freshSite = () => createSite(t.handle, { accountId: t.tenant.accountId, title: 'Shop', subdomain: `shop-${randomBytes(4).toString('hex')}` }, t.clock);
    const messagesOf = (contactId: number) =>
      t.handle.db.selectFrom('outgoing_messages').select(['kind', 'to_email', 'subject']).where('contact_id', '=', contactId).orderBy('id').execute();
    const siteRows = async (table: 'orders' | 'contacts' | 'transactions', site: number) =>
      (await t.handle.db.selectFrom(table).select('id').where('site_id', '=', site).execute()).length;

    it('a one-time offer with a one-time and a subscription order bump, a coupon and a quantity: every record, event and delivery', async () => {
      const site = await freshSite();
      const b = builders(t).forSite(site);
      const course = await b.product({ title: 'Course' });
      const workbook = await b.product({ title: 'Workbook' });
      const community = await b.product({ title: 'Community' });
      const offer = await b.offer({ title: 'Course offer', price_in_cents: 10000, productIds: [course] });
      const bump = await b.offer({ title: 'Workbook bump', price_in_cents: 1500, productIds: [workbook] });
      const sub = await b.offer({ title: 'Community', payment_type: 'subscription', price_in_cents: 2900, billing_period_months: 1, productIds: [community] });
      const hooks = await Promise.all(COMMERCE_EVENTS.map((event) => createHook(t, token, { event, targetUrl: receiver.url(`/${site}/${event}`), siteId: site })));
      const limited = await createHook(t, token, { event: 'purchase', targetUrl: receiver.url(`/${site}/limited`), siteId: site, resourceId: sub });

      const res = await checkout(t, token, { offer, email: ' Ada@Example.com ', name: 'Ada Lovelace', coupon_code: 'welcome10', quantity: 2, bumps: [bump, sub] });
      assert.equal(res.statusCode, 201, res.body);
      assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/);
      const doc = res.json();
      const purchaseId = Number(doc.data.id);
      assert.equal(res.headers.location, `http://sitebiz.test/v1/purchases/${purchaseId}`);

      // The contact, the customer.
      const contact = await t.handle.db.selectFrom('contacts').selectAll().where('site_id', '=', site).executeTakeFirstOrThrow();
      assert.equal(contact.email, 'ada@example.com');
      assert.equal(contact.name, 'Ada Lovelace');
      const customers = await t.handle.db.selectFrom('customers').selectAll().where('site_id', '=', site).execute();
      assert.equal(customers.length, 1);
      const customer = customers[0]!;
      assert.equal(Number(customer.contact_id), Number(contact.id));
      const customerId = Number(customer.id);

      // Three purchases, the offer's first.
      const purchases = await t.handle.db.selectFrom('purchases').selectAll().where('site_id', '=', site).orderBy('id').execute();
      assert.deepEqual(
        purchases.map((p) => [Number(p.offer_id), p.payment_type, Number(p.amount_in_cents), p.quantity, p.coupon_code, p.source]),
        [
          [offer, 'one_time', (10000 - 1000) * 2, 2, 'WELCOME10', 'checkout'],
          [bump, 'one_time', 1500, 1, null, 'checkout'],
          [sub, 'subscription', 2900, 1, null, 'checkout'],
        ],
      );
      assert.equal(Number(purchases[0]!.id), purchaseId);
      const subscription = purchases[2]!;
      assert.equal(subscription.subscription_status, 'active');
      assert.equal(Date.parse(t.handle.traits.decodeTimestamp(subscription.next_charge_at)!), Date.parse('2026-07-01T12:00:00.000Z'), 'a month on');
      assert.equal(purchases[0]!.next_charge_at, null);

      // Two charges: the bundle of the one-time offers (no offer), the subscription's first period.
      const transactions = await transactionsOf(t, customerId);
      assert.deepEqual(
        transactions.map((x) => [x.action, x.state, x.payment_type, Number(x.amount_in_cents), x.offer_id === null ? null : Number(x.offer_id)]),
        [
          ['charge', 'succeeded', 'one_time', 18000 + 1500, null],
          ['subscription_charge', 'succeeded', 'subscription', 2900, sub],
        ],
      );
      const bundle = Number(transactions[0]!.id);
      const first = Number(transactions[1]!.id);
      assert.deepEqual(await paidBy(t, bundle), [purchaseId, Number(purchases[1]!.id)]);
      assert.deepEqual(await paidBy(t, first), [Number(subscription.id)]);
      const revenue = await t.handle.db.selectFrom('customers').select('net_revenue_cents').where('id', '=', customerId).executeTakeFirstOrThrow();
      assert.equal(Number(revenue.net_revenue_cents), 19500 + 2900);

      // One order, three items.
      const orders = await t.handle.db.selectFrom('orders').selectAll().where('site_id', '=', site).execute();
      assert.equal(orders.length, 1);
      const order = orders[0]!;
      assert.equal(order.order_number, 1001);
      assert.deepEqual([order.subtotal_in_cents, order.discount_amount_in_cents, order.sales_tax_amount_in_cents, order.total_price_in_cents].map(Number), [22400, 2000, 0, 22400]);
      const items = await t.handle.db.selectFrom('order_items').selectAll().where('order_id', '=', order.id).orderBy('id').execute();
      assert.deepEqual(
        items.map((i) => [i.item_type, Number(i.item_id), i.quantity, Number(i.total_price_in_cents)]),
        [
          ['Offer', offer, 2, 18000],
          ['Offer', bump, 1, 1500],
          ['Subscription', sub, 1, 2900],
        ],
      );

      // Access: a grant per purchase, a membership per product.
      const grants = await t.handle.db.selectFrom('offer_grants').selectAll().where('contact_id', '=', contact.id).orderBy('id').execute();
      assert.deepEqual(
        grants.map((g) => [Number(g.offer_id), Number(g.purchase_id)]),
        purchases.map((p) => [Number(p.offer_id), Number(p.id)]),
      );
      const memberships = await t.handle.db.selectFrom('memberships').select('product_id').where('contact_id', '=', contact.id).orderBy('id').execute();
      assert.deepEqual(memberships.map((m) => Number(m.product_id)), [course, workbook, community]);

      // Emails: a welcome per offer, a receipt per charge.
      assert.deepEqual(
        (await messagesOf(Number(contact.id))).map((m) => [m.kind, m.to_email]),
        [...Array(3).fill(['customer_welcome', 'ada@example.com']), ...Array(2).fill(['receipt', 'ada@example.com'])],
      );

      // Events: one per record.
      assert.deepEqual(await eventsOf(t, site), [
        ['purchase', purchaseId],
        ['purchase', Number(purchases[1]!.id)],
        ['purchase', Number(subscription.id)],
        ['payment_succeeded', bundle],
        ['payment_succeeded', first],
        ['order_created', bundle],
      ]);

      // The answer: the purchase as GET renders it, its transactions, customer and order.
      const shown = (await t.get(`/v1/purchases/${purchaseId}`, token)).json();
      assert.deepEqual(doc.data, shown.data);
      assert.deepEqual(
        (doc.included as Array<{ type: string; id: string }>).map((r) => `${r.type} ${r.id}`).sort(),
        [`transactions ${bundle}`, `customers ${customerId}`, `orders ${Number(order.id)}`].sort(),
      );

      // Deliveries: each hook gets its events, valid against the upstream samples.
      await t.app.webhooks.runDue();
      for (const [i, event] of COMMERCE_EVENTS.entries()) {
        const got = receiver.received.filter((r) => r.path === `/${site}/${event}`).map((r) => JSON.parse(r.body) as { id: string; event: string; payload: unknown[] });
        assert.equal(got.length, event === 'purchase' ? 3 : event === 'payment_succeeded' ? 2 : 1, `${event} deliveries to hook ${hooks[i]!.id}`);
        for (const body of got) {
          assert.equal(body.event, event);
          if (!UPSTREAM_SKIP_REASON) {
            const problems = upstreamMismatches('GET', `/v1/hooks/${event}_sample`, 200, withoutDivergences({ data: body.payload }).data, { contentType: JSONAPI });
            assert.deepEqual(problems, [], `${event} delivery against the upstream sample schema`);
          }
        }
      }
      const limitedGot = receiver.received.filter((r) => r.path === `/${site}/limited`).map((r) => JSON.parse(r.body).id);
      assert.deepEqual(limitedGot, [String(subscription.id)], `hook ${limited.id}, limited to the subscription offer, gets its purchase only`);

      // The API sees it all at once.
      const ids = async (url: string) => {
        const listed = await t.get(url, token);
        assert.equal(listed.statusCode, 200, listed.body);
        return (listed.json().data as Array<{ id: string }>).map((r) => Number(r.id)).sort((x, y) => x - y);
      };
      assert.deepEqual(await ids(`/v1/purchases?filter[site_id]=${site}&filter[customer_id]=${customerId}`), purchases.map((p) => Number(p.id)));
      assert.deepEqual(await ids(`/v1/transactions?filter[site_id]=${site}&filter[customer_id]=${customerId}`), [bundle, first]);
      assert.deepEqual(await ids(`/v1/orders?filter[site_id]=${site}&filter[customer_id]=${customerId}`), [Number(order.id)]);
      assert.deepEqual(await ids(`/v1/customers?filter[site_id]=${site}`), [customerId]);
      assert.deepEqual(await ids(`/v1/contacts?filter[site_id]=${site}&filter[has_offer_id]=${sub}`), [Number(contact.id)]);
      assert.deepEqual(await ids(`/v1/contacts?filter[site_id]=${site}&filter[has_product_id]=${workbook}`), [Number(contact.id)]);
    });

    it('the same buyer again: the contact and customer are reused, the order number goes up, a payment plan starts', async () => {
      const site = await freshSite();
      const b = builders(t).forSite(site);
      const existing = await b.contact({ email: 'grace@example.com', name: 'G. Hopper' });
      const plan = await b.offer({ title: 'Mastermind', payment_type: 'multipay', price_in_cents: 30000, installment_count: 3 });
      const single = await b.offer({ title: 'Ebook', price_in_cents: 900, single: true });

      const first = await buy(t, token, { offer: single, email: 'GRACE@example.com' });
      const second = await buy(t, token, { offer: plan, email: 'grace@example.com', name: 'Grace Hopper' });
      const contacts = await t.handle.db.selectFrom('contacts').select(['id', 'name']).where('site_id', '=', site).execute();
      assert.deepEqual(contacts.map((c) => [Number(c.id), c.name]), [[existing, 'Grace Hopper']], 'one contact, found by email, renamed');
      const customerIds = [first, second].map((d) => Number((d.data.relationships.customer!.data as { id: string }).id));
      assert.equal(customerIds[0], customerIds[1], 'one customer');
      const orders = await t.handle.db.selectFrom('orders').select('order_number').where('site_id', '=', site).orderBy('id').execute();
      assert.deepEqual(orders.map((o) => o.order_number), [1001, 1002]);
      const planPurchase = await t.handle.db.selectFrom('purchases').selectAll().where('id', '=', Number(second.data.id)).executeTakeFirstOrThrow();
      assert.equal(planPurchase.multipay_payments_made, 1);
      assert.equal(Date.parse(t.handle.traits.decodeTimestamp(planPurchase.next_charge_at)!), Date.parse('2026-07-01T12:00:00.000Z'));
      const charges = await transactionsOf(t, customerIds[0]!);
      assert.deepEqual(
        charges.map((x) => [x.action, x.payment_type, Number(x.amount_in_cents), Number(x.offer_id)]),
        [
          ['charge', 'one_time', 900, single],
          ['charge', 'multipay', 30000, plan],
        ],
      );
    });

    it('a free offer: a purchase and its access, no charge, no order, only the purchase event', async () => {
      const site = await freshSite();
      const b = builders(t).forSite(site);
      const product = await b.product();
      const free = await b.offer({ title: 'Free guide', payment_type: 'free', productIds: [product] });
      const doc = await buy(t, token, { offer: free, email: 'free@example.com' });
      assert.equal(doc.data.attributes.amount_in_cents, 0);
      assert.deepEqual(doc.included.map((r) => r.type), ['customers']);
      assert.equal(await siteRows('transactions', site), 0);
      assert.equal(await siteRows('orders', site), 0);
      assert.deepEqual(await eventsOf(t, site), [['purchase', Number(doc.data.id)]]);
      const contactId = Number((await t.handle.db.selectFrom('contacts').select('id').where('site_id', '=', site).executeTakeFirstOrThrow()).id);
      assert.deepEqual((await messagesOf(contactId)).map((m) => m.kind), ['customer_welcome']);
      assert.deepEqual(
        ((await t.get(`/v1/contacts?filter[site_id]=${site}&filter[has_product_id]=${product}`, token)).json().data as Array<{ id: string }>).map((c) => Number(c.id)),
        [contactId],
      );
    });

    it('a declined card: 402 payment_declined, the failed charge kept, no purchase, access, order, email or event', async () => {
      const site = await freshSite();
      const b = builders(t).forSite(site);
      const offer = await b.offer({ price_in_cents: 4900 });
      const kept = ['purchases', 'orders', 'offer_grants', 'memberships', 'outgoing_messages', 'outbox_events'];
      const before = await rowCounts(t, kept);
      const res = await checkout(t, token, { offer, email: 'declined@example.com', payment_outcome: 'declined' });
      assertError(res, 402, 'payment_declined', '/data/attributes/payment_outcome');
      assert.deepEqual(await rowCounts(t, kept), before);
      const customer = await t.handle.db.selectFrom('customers').selectAll().where('site_id', '=', site).executeTakeFirstOrThrow();
      assert.equal(Number(customer.net_revenue_cents), 0);
      const failed = await transactionsOf(t, Number(customer.id));
      assert.deepEqual(
        failed.map((x) => [x.action, x.state, Number(x.amount_in_cents), Number(x.offer_id)]),
        [['charge', 'failed', 4900, offer]],
      );
      assert.deepEqual(await paidBy(t, Number(failed[0]!.id)), []);
      const listed = (await t.get(`/v1/transactions?filter[site_id]=${site}`, token)).json().data as Array<{ id: string; attributes: { state: string } }>;
      assert.deepEqual(listed.map((x) => [Number(x.id), x.attributes.state]), [[Number(failed[0]!.id), 'failed']]);

      const free = await b.offer({ payment_type: 'free' });
      assertError(await checkout(t, token, { offer: free, payment_outcome: 'declined' }), 422, 'nothing_to_decline', '/data/attributes/payment_outcome');
    });

    it('bad input: 4xx with a pointer, nothing written', async () => {
      const site = await freshSite();
      const b = builders(t).forSite(site);
      const offer = await b.offer();
      const single = await b.offer({ single: true });
      const euro = await b.offer({ currency: 'EUR' });
      const elsewhere = await builders(t).forSite(await freshSite()).offer();
      const other = await otherAccount(t);
      const foreign = await builders(t).forSite(other.siteId).offer();
      const before = await rowCounts(t, WRITTEN);

      assertError(await checkout(t, token, { offer: foreign }), 404, 'not_found', '/data/relationships/offer/data/id');
      assertError(await checkout(t, token, { offer: 999999999 }), 404, 'not_found', '/data/relationships/offer/data/id');
      assertError(await checkout(t, token, { offer, bumps: [foreign] }), 404, 'not_found', '/data/relationships/order_bumps/data/0/id');
      assertError(await checkout(t, token, { offer, bumps: [elsewhere] }), 422, 'order_bump_other_site', '/data/relationships/order_bumps/data/0/id');
      assertError(await checkout(t, token, { offer, bumps: [single, offer] }), 422, 'order_bump_is_offer', '/data/relationships/order_bumps/data/1/id');
      assertError(await checkout(t, token, { offer, bumps: [single, single] }), 422, 'duplicate_order_bump', '/data/relationships/order_bumps/data/1/id');
      assertError(await checkout(t, token, { offer, bumps: [euro] }), 422, 'currency_mismatch', '/data/relationships/order_bumps/data/0/id');
      assertError(await checkout(t, token, { offer, coupon_code: 'FREESTUFF' }), 422, 'unknown_coupon', '/data/attributes/coupon_code');
      assertError(await checkout(t, token, { offer, email: 'not an email' }), 422, 'invalid_email', '/data/attributes/email');
      assertError(await checkout(t, token, { offer, quantity: 0 }), 422, 'invalid_attribute', '/data/attributes/quantity');
      assertError(await checkout(t, token, { offer: single, quantity: 2 }), 422, 'single_offer', '/data/attributes/quantity');
      assertError(await checkout(t, token, { offer, payment_outcome: 'maybe' as 'declined' }), 422, 'invalid_attribute', '/data/attributes/payment_outcome');

      const post = (body: unknown, query = '') => send(t, 'POST', `/v1/test_helpers/checkouts${query}`, token, body);
      const offerLinkage = { offer: { data: { type: 'offers', id: String(offer) } } };
      assertError(await post({ data: { type: 'checkouts', attributes: {}, relationships: offerLinkage } }), 422, 'missing_attribute', '/data/attributes/email');
      assertError(await post({ data: { type: 'checkouts', attributes: { email: 'x@example.com' } } }), 400, 'missing_relationship', '/data/relationships/offer');
      assertError(await post({ data: { type: 'checkouts', attributes: { email: 'x@example.com', price: 1 }, relationships: offerLinkage } }), 422, 'unknown_attribute', '/data/attributes/price');
      assertError(await post({ data: { type: 'purchases', attributes: { email: 'x@example.com' }, relationships: offerLinkage } }), 409, 'type_mismatch', '/data/type');
      assertError(await post([]), 400, 'invalid_document');
      assertError(await post({}, '?include=offer'), 400);

      assert.deepEqual(await rowCounts(t, WRITTEN), before, 'nothing written');
    });

    it('needs manage:sandbox and the read permissions of the answer', async () => {
      const offer = await builders(t).offer();
      const noSandbox = (await t.keyWith(t.tenant.ownerId, ['view:purchases', 'view:transactions', 'view:customers', 'view:orders'])).token;
      assertError(await checkout(t, noSandbox, { offer }), 403, 'forbidden');
      const noOrders = (await t.keyWith(t.tenant.ownerId, ['manage:sandbox', 'view:purchases', 'view:transactions', 'view:customers'])).token;
      const res = await checkout(t, noOrders, { offer });
      assertError(res, 403, 'forbidden');
      assert.match(res.json().errors[0].detail, /lacks view:orders/);
    });
  });

  describe(`sandbox commerce in production mode [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect, { env: { MODE: 'production' } });
    });
    after(() => t.close());

    it('answers 404: there are no test helpers', async () => {
      const token = await t.token();
      const offer = await builders(t).offer();
      assertError(await checkout(t, token, { offer }), 404);
      assertError(await send(t, 'POST', '/v1/test_helpers/transactions/1/refund', token), 404);
      assert.equal((await rowCounts(t, ['purchases'])).purchases, 0);
    });
  });
}
