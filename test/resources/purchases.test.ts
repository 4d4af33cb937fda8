// GET /v1/purchases(/{id}) and GET /v1/transactions(/{id}): what customers bought and the money
// that moved. A transaction carries the 1.1.0 `purchases` relationship; its deprecated `offer` is
// null for a bundle transaction that pays several purchases. Read with view:purchases and
// view:transactions.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { purchases } from '../../src/resources/purchases.js';
import { transactions } from '../../src/resources/transactions.js';
import { DIALECTS } from '../support/harness.js';
import {
  assertIncludedDistinct,
  assertUpstream,
  at,
  createWorld,
  getJson,
  idsOf,
  includedKeys,
  readResourceTests,
  selfUrl,
  withoutNullToOne,
  type UpstreamCheck,
  type World,
} from '../support/catalogue-fixtures.js';

const PURCHASES: UpstreamCheck = { list: '/v1/purchases', show: '/v1/purchases/{id}' };
const TRANSACTIONS: UpstreamCheck = {
  list: '/v1/transactions',
  show: '/v1/transactions/{id}',
  // Upstream's prose: the deprecated `offer` relationship "is `null` for bundled (multi-offer)
  // transactions"; its schema types the data as a non-nullable object. The prose wins: a null
  // offer is left out of the check.
  adjust: withoutNullToOne({ transactions: ['offer'] }),
};

for (const dialect of DIALECTS) {
  describe(`purchases and transactions [${dialect}]`, () => {
    let w: World;
    const cu = { ada: '', bob: '' };
    const of = { x: '', y: '', z: '' };
    const pr = { p1: '', p2: '' };
    const pu = { pu1: '', pu2: '', pu3: '', pu4: '', pu5: '', second: '', foreign: '' };
    const tx = { t1: '', t2: '', t3: '', t4: '', t5: '', second: '', foreign: '' };

    before(async () => {
      w = await createWorld(dialect);
      const { rows, siteId } = w;
      cu.ada = await rows.customer(siteId, { name: 'Ada Lovelace', email: 'ada@example.com' });
      cu.bob = await rows.customer(siteId, { name: 'Bob Builder', email: 'bob@builder.example' });
      of.x = await rows.offer(siteId, { title: 'Course X', price_in_cents: 4900 });
      of.y = await rows.offer(siteId, { title: 'Membership Y', payment_type: 'subscription', price_in_cents: 2900 });
      of.z = await rows.offer(siteId, { title: 'Freebie Z', payment_type: 'free', price_in_cents: 0 });
      pr.p1 = await rows.product(siteId, { title: 'Product One' });
      pr.p2 = await rows.product(siteId, { title: 'Product Two' });
      await rows.offerProduct(of.x, pr.p1);
      await rows.offerProduct(of.y, pr.p1);
      await rows.offerProduct(of.y, pr.p2);

      pu.pu1 = await rows.purchase(siteId, cu.ada, of.x, {
        amount_in_cents: 4900,
        payment_type: 'one_time',
        multipay_payments_made: null,
        opt_in: true,
        raw_extra_contact_information: { company: 'Analytical Engines' },
        currency: 'USD',
        effective_start_at: at('2026-03-01T10:00:00.000Z'),
        cardholder_name: 'Ada Lovelace',
        billing_address_zip: '02139',
        coupon_code: 'SPRING10',
        source: 'checkout',
        referrer: 'https://google.com/search',
        quantity: 1,
        created_at: at('2026-03-01T10:00:00.000Z'),
        updated_at: at('2026-03-01T10:00:00.000Z'),
      });
      pu.pu2 = await rows.purchase(siteId, cu.bob, of.y, {
        amount_in_cents: 2900,
        payment_type: 'subscription',
        source: 'api',
        referrer: 'https://partner.example/ref',
        deactivated_at: at('2026-05-01T00:00:00.000Z'),
        deactivation_reason: 'refunded',
        created_at: at('2026-04-01T09:00:00.000Z'),
        updated_at: at('2026-05-01T00:00:00.000Z'),
      });
      // Created at the same moment as pu2: the id breaks the tie.
      pu.pu3 = await rows.purchase(siteId, cu.ada, of.z, {
        amount_in_cents: 0,
        payment_type: 'free',
        source: 'checkout',
        created_at: at('2026-04-01T09:00:00.000Z'),
        updated_at: at('2026-04-01T09:00:00.000Z'),
      });
      pu.pu4 = await rows.purchase(siteId, cu.bob, of.x, {
        amount_in_cents: 9800,
        payment_type: 'one_time',
        currency: 'EUR',
        quantity: 2,
        coupon_code: 'SPRINGVIP',
        referrer: 'https://google.com/ads',
        deactivated_at: at('2026-05-25T00:00:00.000Z'),
        deactivation_reason: 'chargeback',
        created_at: at('2026-05-10T12:00:00.000Z'),
        updated_at: at('2026-05-20T00:00:00.000Z'),
      });
      pu.pu5 = await rows.purchase(siteId, cu.ada, of.y, {
        amount_in_cents: 2900,
        payment_type: 'multipay',
        multipay_payments_made: 2,
        source: 'import',
        created_at: at('2026-05-15T08:00:00.000Z'),
        updated_at: at('2026-05-15T08:00:00.000Z'),
      });
      const secondCustomer = await rows.customer(w.secondSiteId);
      pu.second = await rows.purchase(w.secondSiteId, secondCustomer, await rows.offer(w.secondSiteId));
      const foreignCustomer = await rows.customer(w.other.siteId);
      const foreignOffer = await rows.offer(w.other.siteId);
      pu.foreign = await rows.purchase(w.other.siteId, foreignCustomer, foreignOffer);

      tx.t1 = await rows.transaction(siteId, cu.ada, of.x, { action: 'charge', amount_in_cents: 4900, created_at: at('2026-03-01T10:00:00.000Z') });
      tx.t2 = await rows.transaction(siteId, cu.bob, of.y, {
        action: 'subscription_charge',
        payment_type: 'subscription',
        amount_in_cents: 2900,
        sales_tax_in_cents: 290,
        created_at: at('2026-04-01T09:00:00.000Z'),
      });
      // The bundle: one charge for two purchases, so no single offer. The last moment of May 15.
      tx.t3 = await rows.transaction(siteId, cu.ada, null, {
        action: 'charge',
        payment_type: null,
        amount_in_cents: 4900,
        created_at: at('2026-05-15T23:59:59.999Z'),
      });
      // The first moment of May 16.
      tx.t4 = await rows.transaction(siteId, cu.bob, of.x, { action: 'refund', amount_in_cents: -9800, currency: 'EUR', created_at: at('2026-05-16T00:00:00.000Z') });
      tx.t5 = await rows.transaction(siteId, cu.bob, of.x, {
        action: 'charge',
        state: 'failed',
        amount_in_cents: 9800,
        currency: 'EUR',
        created_at: at('2026-05-10T12:00:00.000Z'),
      });
      tx.second = await rows.transaction(w.secondSiteId, secondCustomer, null);
      tx.foreign = await rows.transaction(w.other.siteId, foreignCustomer, foreignOffer);
      await rows.purchaseTransaction(pu.pu1, tx.t1);
      await rows.purchaseTransaction(pu.pu2, tx.t2);
      await rows.purchaseTransaction(pu.pu3, tx.t3);
      await rows.purchaseTransaction(pu.pu5, tx.t3);
      await rows.purchaseTransaction(pu.pu4, tx.t4);
      await rows.purchaseTransaction(pu.pu4, tx.t5);
    });
    after(() => w.t.close());

    const one = (type: string, id: string) => ({ data: { type, id } });
    const many = (type: string, list: string[]) => ({ data: list.map((id) => ({ type, id })) });

    describe('purchases', () => {
      readResourceTests({
        resource: purchases,
        world: () => w,
        fixtures: () => pu,
        upstream: PURCHASES,
        all: () => [pu.pu5, pu.pu4, pu.pu3, pu.pu2, pu.pu1],
        sorts: {
          created_at: () => [pu.pu1, pu.pu2, pu.pu3, pu.pu4, pu.pu5],
          updated_at: () => [pu.pu1, pu.pu3, pu.pu2, pu.pu5, pu.pu4],
        },
        filters: [
          { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [pu.second] },
          { name: 'active', query: () => 'filter[active]=true', expect: () => [pu.pu1, pu.pu3, pu.pu5] },
          { name: 'active', query: () => 'filter[active]=false', expect: () => [pu.pu2, pu.pu4] },
          { name: 'deactivated', query: () => 'filter[deactivated]=true', expect: () => [pu.pu2, pu.pu4] },
          { name: 'deactivated', query: () => 'filter[deactivated]=false', expect: () => [pu.pu1, pu.pu3, pu.pu5] },
          { name: 'customer_id', query: () => `filter[customer_id]=${cu.bob}`, expect: () => [pu.pu2, pu.pu4] },
          { name: 'offer_id', query: () => `filter[offer_id]=${of.x}`, expect: () => [pu.pu1, pu.pu4] },
          { name: 'referrer', query: () => 'filter[referrer]=GOOGLE', expect: () => [pu.pu1, pu.pu4] },
          { name: 'amount_in_cents_eq', query: () => 'filter[amount_in_cents_eq]=2900', expect: () => [pu.pu2, pu.pu5] },
          { name: 'amount_in_cents_gt', query: () => 'filter[amount_in_cents_gt]=2900', expect: () => [pu.pu1, pu.pu4] },
          { name: 'amount_in_cents_gte', query: () => 'filter[amount_in_cents_gte]=2900', expect: () => [pu.pu1, pu.pu2, pu.pu4, pu.pu5] },
          { name: 'amount_in_cents_lt', query: () => 'filter[amount_in_cents_lt]=2900', expect: () => [pu.pu3] },
          { name: 'amount_in_cents_lte', query: () => 'filter[amount_in_cents_lte]=2900', expect: () => [pu.pu2, pu.pu3, pu.pu5] },
          { name: 'payment_type_eq', query: () => 'filter[payment_type_eq]=one_time', expect: () => [pu.pu1, pu.pu4] },
          { name: 'payment_type_in', query: () => 'filter[payment_type_in]=free,multipay', expect: () => [pu.pu3, pu.pu5] },
          { name: 'currency_eq', query: () => 'filter[currency_eq]=EUR', expect: () => [pu.pu4] },
          { name: 'deactivated_at_null', query: () => 'filter[deactivated_at_null]=false', expect: () => [pu.pu2, pu.pu4] },
          { name: 'deactivated_at_gt', query: () => 'filter[deactivated_at_gt]=2026-05-10', expect: () => [pu.pu4] },
          { name: 'deactivated_at_lt', query: () => 'filter[deactivated_at_lt]=2026-05-10', expect: () => [pu.pu2] },
          { name: 'coupon_code_eq', query: () => 'filter[coupon_code_eq]=SPRING10', expect: () => [pu.pu1] },
          { name: 'coupon_code_cont', query: () => 'filter[coupon_code_cont]=spring', expect: () => [pu.pu1, pu.pu4] },
          { name: 'coupon_code_null', query: () => 'filter[coupon_code_null]=true', expect: () => [pu.pu2, pu.pu3, pu.pu5] },
          { name: 'source_eq', query: () => 'filter[source_eq]=checkout', expect: () => [pu.pu1, pu.pu3] },
          { name: 'referrer_eq', query: () => `filter[referrer_eq]=${encodeURIComponent('https://partner.example/ref')}`, expect: () => [pu.pu2] },
          { name: 'referrer_cont', query: () => 'filter[referrer_cont]=ADS', expect: () => [pu.pu4] },
          { name: 'referrer_start', query: () => `filter[referrer_start]=${encodeURIComponent('https://google')}`, expect: () => [pu.pu1, pu.pu4] },
          { name: 'quantity_eq', query: () => 'filter[quantity_eq]=1', expect: () => [pu.pu1, pu.pu2, pu.pu3, pu.pu5] },
          { name: 'quantity_gt', query: () => 'filter[quantity_gt]=1', expect: () => [pu.pu4] },
          { name: 'created_at_gt', query: () => 'filter[created_at_gt]=2026-04-01T09:00:00Z', expect: () => [pu.pu4, pu.pu5] },
          { name: 'created_at_gte', query: () => 'filter[created_at_gte]=2026-04-01T09:00:00Z', expect: () => [pu.pu2, pu.pu3, pu.pu4, pu.pu5] },
          { name: 'created_at_lt', query: () => 'filter[created_at_lt]=2026-04-01T09:00:00Z', expect: () => [pu.pu1] },
          { name: 'created_at_lte', query: () => 'filter[created_at_lte]=2026-04-01T09:00:00Z', expect: () => [pu.pu1, pu.pu2, pu.pu3] },
        ],
        sparse: ['amount_in_cents', 'currency', 'deactivated_at'],
        show: () => ({
          id: pu.pu1,
          type: 'purchases',
          attributes: {
            amount_in_cents: 4900,
            payment_type: 'one_time',
            multipay_payments_made: null,
            opt_in: true,
            raw_extra_contact_information: { company: 'Analytical Engines' },
            currency: 'USD',
            effective_start_at: '2026-03-01T10:00:00.000Z',
            cardholder_name: 'Ada Lovelace',
            billing_address_zip: '02139',
            deactivated_at: null,
            deactivation_reason: null,
            coupon_code: 'SPRING10',
            source: 'checkout',
            referrer: 'https://google.com/search',
            quantity: 1,
            created_at: '2026-03-01T10:00:00.000Z',
            updated_at: '2026-03-01T10:00:00.000Z',
          },
          relationships: {
            offer: one('offers', of.x),
            customer: one('customers', cu.ada),
            transactions: many('transactions', [tx.t1]),
            products: many('products', [pr.p1]),
          },
          links: { self: selfUrl('purchases', pu.pu1) },
        }),
        foreign: () => pu.foreign,
      });

      it('renders each purchase’s transactions and its offer’s products', async () => {
        const res = await getJson(w, `/v1/purchases?filter[site_id]=${w.siteId}&fields[purchases]=quantity`);
        const rels = Object.fromEntries(res.json().data.map((d: { id: string; relationships: unknown }) => [d.id, d.relationships]));
        assert.deepEqual(rels[pu.pu4], {
          offer: one('offers', of.x),
          customer: one('customers', cu.bob),
          // Newest first, the transactions' default order.
          transactions: many('transactions', [tx.t4, tx.t5]),
          products: many('products', [pr.p1]),
        });
        assert.deepEqual(rels[pu.pu5].transactions, many('transactions', [tx.t3]));
        assert.deepEqual(rels[pu.pu5].products, many('products', [pr.p1, pr.p2]));
        assert.deepEqual(rels[pu.pu3].products, many('products', []));
      });

      it('shows a deactivated purchase with its reason', async () => {
        const res = await getJson(w, `/v1/purchases/${pu.pu2}?fields[purchases]=deactivated_at,deactivation_reason`);
        assertUpstream(PURCHASES, 'show', res);
        assert.deepEqual(res.json().data.attributes, { deactivated_at: '2026-05-01T00:00:00.000Z', deactivation_reason: 'refunded' });
      });

      it('answers 404 for filter[customer_id] or filter[offer_id] of another account', async () => {
        const foreignPurchase = await getJson(w, `/v1/purchases/${pu.foreign}`, 200, w.other.token);
        const { customer, offer } = foreignPurchase.json().data.relationships;
        for (const [name, id] of [
          ['customer_id', customer.data.id],
          ['offer_id', offer.data.id],
        ]) {
          const res = await getJson(w, `/v1/purchases?filter[site_id]=${w.siteId}&filter[${name}]=${id}`, 404);
          assert.equal(res.json().errors[0].source.parameter, `filter[${name}]`);
        }
      });
    });

    describe('transactions', () => {
      readResourceTests({
        resource: transactions,
        world: () => w,
        fixtures: () => tx,
        upstream: TRANSACTIONS,
        all: () => [tx.t4, tx.t3, tx.t5, tx.t2, tx.t1],
        sorts: {
          amount_in_cents: () => [tx.t4, tx.t2, tx.t1, tx.t3, tx.t5],
          created_at: () => [tx.t1, tx.t2, tx.t5, tx.t3, tx.t4],
        },
        filters: [
          { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [tx.second] },
          { name: 'customer_id', query: () => `filter[customer_id]=${cu.ada}`, expect: () => [tx.t1, tx.t3] },
          { name: 'name_or_email', query: () => 'filter[name_or_email]=BUILDER', expect: () => [tx.t2, tx.t4, tx.t5] },
          { name: 'name_or_email', query: () => 'filter[name_or_email]=lovelace', expect: () => [tx.t1, tx.t3] },
          { name: 'start_date', query: () => 'filter[start_date]=2026-05-10', expect: () => [tx.t5, tx.t3, tx.t4] },
          // A date alone as end_date includes that whole day: the bundle at 23:59:59.999 counts,
          // the refund at midnight after does not.
          { name: 'end_date', query: () => 'filter[end_date]=2026-05-15', expect: () => [tx.t1, tx.t2, tx.t5, tx.t3] },
          // A date-time end is that moment itself, included.
          { name: 'end_date', query: () => 'filter[end_date]=2026-05-15T23:59:59.998Z', expect: () => [tx.t1, tx.t2, tx.t5] },
          { name: 'end_date', query: () => 'filter[end_date]=2026-05-15T23:59:59.999Z', expect: () => [tx.t1, tx.t2, tx.t5, tx.t3] },
          { name: 'action_eq', query: () => 'filter[action_eq]=refund', expect: () => [tx.t4] },
          { name: 'action_in', query: () => 'filter[action_in]=charge,refund', expect: () => [tx.t1, tx.t3, tx.t4, tx.t5] },
          { name: 'state_eq', query: () => 'filter[state_eq]=failed', expect: () => [tx.t5] },
          { name: 'state_in', query: () => 'filter[state_in]=failed,pending', expect: () => [tx.t5] },
          { name: 'payment_type_eq', query: () => 'filter[payment_type_eq]=subscription', expect: () => [tx.t2] },
          { name: 'amount_in_cents_eq', query: () => 'filter[amount_in_cents_eq]=4900', expect: () => [tx.t1, tx.t3] },
          { name: 'amount_in_cents_gt', query: () => 'filter[amount_in_cents_gt]=4900', expect: () => [tx.t5] },
          { name: 'amount_in_cents_gte', query: () => 'filter[amount_in_cents_gte]=4900', expect: () => [tx.t1, tx.t3, tx.t5] },
          { name: 'amount_in_cents_lt', query: () => 'filter[amount_in_cents_lt]=2900', expect: () => [tx.t4] },
          { name: 'amount_in_cents_lte', query: () => 'filter[amount_in_cents_lte]=2900', expect: () => [tx.t2, tx.t4] },
          { name: 'currency_eq', query: () => 'filter[currency_eq]=EUR', expect: () => [tx.t4, tx.t5] },
        ],
        sparse: ['amount_in_cents', 'sales_tax_in_cents'],
        show: () => ({
          id: tx.t3,
          type: 'transactions',
          attributes: {
            action: 'charge',
            state: 'succeeded',
            payment_type: null,
            amount_in_cents: 4900,
            sales_tax_in_cents: 0,
            currency: 'USD',
            currency_symbol: '$',
            formatted_amount: '$49.00',
            created_at: '2026-05-15T23:59:59.999Z',
          },
          relationships: {
            customer: one('customers', cu.ada),
            // A bundle pays several purchases: no single offer.
            offer: { data: null },
            // The purchases' default order: newest first.
            purchases: many('purchases', [pu.pu5, pu.pu3]),
          },
          links: { self: selfUrl('transactions', tx.t3) },
        }),
        foreign: () => tx.foreign,
      });

      it('gives a single-offer transaction its offer and its one purchase', async () => {
        const res = await getJson(w, `/v1/transactions/${tx.t4}`);
        assertUpstream(TRANSACTIONS, 'show', res);
        const data = res.json().data;
        assert.deepEqual(data.relationships, {
          customer: one('customers', cu.bob),
          offer: one('offers', of.x),
          purchases: many('purchases', [pu.pu4]),
        });
        assert.equal(data.attributes.formatted_amount, '-€98.00');
        assert.equal(data.attributes.currency_symbol, '€');
      });

      it('combines start_date and end_date into a range', async () => {
        const res = await getJson(w, `/v1/transactions?filter[site_id]=${w.siteId}&filter[start_date]=2026-04-01&filter[end_date]=2026-05-10`);
        assertUpstream(TRANSACTIONS, 'list', res);
        assert.deepEqual(idsOf(res), [tx.t5, tx.t2]);
        for (const bad of ['filter[start_date]=2026-02-30', 'filter[end_date]=last-week']) {
          const rejected = await getJson(w, `/v1/transactions?filter[site_id]=${w.siteId}&${bad}`, 400);
          assert.equal(rejected.json().errors[0].source.parameter, bad.split('=')[0]);
        }
      });

      it('includes the purchases of the listed transactions once each', async () => {
        const res = await getJson(w, `/v1/transactions?filter[site_id]=${w.siteId}&include=purchases&fields[purchases]=amount_in_cents`);
        assertUpstream(TRANSACTIONS, 'list', res);
        const body = res.json();
        assertIncludedDistinct(body);
        // pu4 is paid by the refund and the failed charge, and is included once.
        assert.deepEqual(includedKeys(body), [pu.pu5, pu.pu4, pu.pu3, pu.pu2, pu.pu1].map((id) => `purchases:${id}`));
      });
    });
  });
}
