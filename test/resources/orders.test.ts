// GET /v1/orders(/{id}) (with include=order_items) and GET /v1/order_items(/{id}). Read with
// view:orders.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { orderItems, orders } from '../../src/resources/orders.js';
import { DIALECTS } from '../support/harness.js';
import {
  assertIncludedDistinct,
  assertUpstream,
  at,
  createWorld,
  getJson,
  includedKeys,
  readResourceTests,
  selfUrl,
  type UpstreamCheck,
  type World,
} from '../support/catalogue-fixtures.js';

const ORDERS: UpstreamCheck = { list: '/v1/orders', show: '/v1/orders/{id}' };
const ITEMS: UpstreamCheck = { list: '/v1/order_items', show: '/v1/order_items/{id}' };

for (const dialect of DIALECTS) {
  describe(`orders and order items [${dialect}]`, () => {
    let w: World;
    const cu = { ada: '', bob: '' };
    const or = { or1: '', or2: '', or3: '', or4: '', second: '', foreign: '' };
    const oi = { oi1: '', oi2: '', oi3: '', oi4: '', second: '', foreign: '' };

    before(async () => {
      w = await createWorld(dialect);
      const { rows, siteId } = w;
      cu.ada = await rows.customer(siteId, { name: 'Ada Lovelace' });
      cu.bob = await rows.customer(siteId, { name: 'Bob Builder' });
      or.or1 = await rows.order(siteId, cu.ada, 1001, {
        currency_code: 'USD',
        total_price_in_cents: 5900,
        subtotal_in_cents: 5000,
        sales_tax_amount_in_cents: 900,
        discount_amount_in_cents: 0,
        fulfilled_at: at('2026-03-02T00:00:00.000Z'),
        created_at: at('2026-03-01T10:00:00.000Z'),
      });
      or.or2 = await rows.order(siteId, cu.bob, 1002, {
        currency_code: 'CAD',
        total_price_in_cents: 2000,
        subtotal_in_cents: 2500,
        discount_amount_in_cents: 500,
        created_at: at('2026-04-01T10:00:00.000Z'),
      });
      // Created at the same moment as #1002: the id breaks the tie.
      or.or3 = await rows.order(siteId, cu.ada, 1003, {
        currency_code: 'EUR',
        total_price_in_cents: 12000,
        subtotal_in_cents: 12000,
        fulfilled_at: at('2026-05-05T00:00:00.000Z'),
        created_at: at('2026-04-01T10:00:00.000Z'),
      });
      or.or4 = await rows.order(siteId, cu.bob, 1000, { currency_code: 'USD', total_price_in_cents: 2000, subtotal_in_cents: 2000, created_at: at('2026-05-01T10:00:00.000Z') });
      or.second = await rows.order(w.secondSiteId, await rows.customer(w.secondSiteId), 1001);
      or.foreign = await rows.order(w.other.siteId, await rows.customer(w.other.siteId), 1001);

      oi.oi1 = await rows.orderItem(siteId, or.or1, {
        quantity: 1,
        currency_code: 'USD',
        item_type: 'Offer',
        item_id: 11,
        title: 'Course X',
        total_price_in_cents: 4900,
        subtotal_in_cents: 4000,
        sales_tax_amount_in_cents: 900,
        discount_amount_in_cents: 0,
        fulfilled_at: at('2026-03-02T00:00:00.000Z'),
        created_at: at('2026-03-01T10:00:00.000Z'),
      });
      // Created at the same moment as oi1: the id breaks the tie.
      oi.oi2 = await rows.orderItem(siteId, or.or1, {
        quantity: 2,
        item_type: 'Product',
        item_id: 21,
        title: 'Workbook',
        total_price_in_cents: 1000,
        subtotal_in_cents: 1000,
        created_at: at('2026-03-01T10:00:00.000Z'),
      });
      oi.oi3 = await rows.orderItem(siteId, or.or2, { quantity: 1, currency_code: 'CAD', item_type: 'Shipping', item_id: 31, title: 'Express shipping', created_at: at('2026-04-01T10:00:00.000Z') });
      oi.oi4 = await rows.orderItem(siteId, or.or3, {
        quantity: 3,
        currency_code: 'EUR',
        item_type: 'Offer',
        item_id: 12,
        title: 'Membership Y',
        fulfilled_at: at('2026-05-05T00:00:00.000Z'),
        created_at: at('2026-04-02T10:00:00.000Z'),
      });
      oi.second = await rows.orderItem(w.secondSiteId, or.second);
      oi.foreign = await rows.orderItem(w.other.siteId, or.foreign);
    });
    after(() => w.t.close());

    const items = (list: string[]) => ({ data: list.map((id) => ({ type: 'order_items', id })) });
    const or1 = () => ({
      id: or.or1,
      type: 'orders',
      attributes: {
        order_number: 1001,
        currency_code: 'USD',
        fulfilled_at: '2026-03-02T00:00:00.000Z',
        created_at: '2026-03-01T10:00:00.000Z',
        total_price_in_cents: 5900,
        subtotal_in_cents: 5000,
        sales_tax_amount_in_cents: 900,
        discount_amount_in_cents: 0,
        formatted_total_price: '$59.00',
        formatted_subtotal: '$50.00',
        currency_symbol: '$',
      },
      relationships: {
        site: { data: { type: 'sites', id: w.siteId } },
        customer: { data: { type: 'customers', id: cu.ada } },
        // The items' default order: newest first, then the higher id.
        order_items: items([oi.oi2, oi.oi1]),
      },
      links: { self: selfUrl('orders', or.or1) },
    });

    describe('orders', () => {
      readResourceTests({
        resource: orders,
        world: () => w,
        fixtures: () => or,
        upstream: ORDERS,
        all: () => [or.or4, or.or3, or.or2, or.or1],
        sorts: {
          order_number: () => [or.or4, or.or1, or.or2, or.or3],
          fulfilled_at: () => [or.or1, or.or3, or.or2, or.or4],
          created_at: () => [or.or1, or.or2, or.or3, or.or4],
        },
        filters: [
          { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [or.second] },
          { name: 'customer_id', query: () => `filter[customer_id]=${cu.ada}`, expect: () => [or.or1, or.or3] },
          { name: 'order_number_eq', query: () => 'filter[order_number_eq]=1002', expect: () => [or.or2] },
          { name: 'order_number_gt', query: () => 'filter[order_number_gt]=1001', expect: () => [or.or2, or.or3] },
          { name: 'order_number_lt', query: () => 'filter[order_number_lt]=1001', expect: () => [or.or4] },
          { name: 'currency_code_eq', query: () => 'filter[currency_code_eq]=USD', expect: () => [or.or1, or.or4] },
          { name: 'currency_code_in', query: () => 'filter[currency_code_in]=CAD,EUR', expect: () => [or.or2, or.or3] },
          { name: 'currency_code_start', query: () => 'filter[currency_code_start]=c', expect: () => [or.or2] },
          { name: 'fulfilled_at_null', query: () => 'filter[fulfilled_at_null]=true', expect: () => [or.or2, or.or4] },
          { name: 'fulfilled_at_gt', query: () => 'filter[fulfilled_at_gt]=2026-04-01', expect: () => [or.or3] },
          { name: 'fulfilled_at_lt', query: () => 'filter[fulfilled_at_lt]=2026-04-01', expect: () => [or.or1] },
          { name: 'created_at_gt', query: () => 'filter[created_at_gt]=2026-04-01T10:00:00Z', expect: () => [or.or4] },
          { name: 'created_at_gteq', query: () => 'filter[created_at_gteq]=2026-04-01T10:00:00Z', expect: () => [or.or2, or.or3, or.or4] },
          { name: 'created_at_gte', query: () => 'filter[created_at_gte]=2026-04-01T10:00:00Z', expect: () => [or.or2, or.or3, or.or4] },
          { name: 'created_at_lt', query: () => 'filter[created_at_lt]=2026-04-01T10:00:00Z', expect: () => [or.or1] },
          { name: 'created_at_lteq', query: () => 'filter[created_at_lteq]=2026-04-01T10:00:00Z', expect: () => [or.or1, or.or2, or.or3] },
          { name: 'created_at_lte', query: () => 'filter[created_at_lte]=2026-04-01T10:00:00Z', expect: () => [or.or1, or.or2, or.or3] },
          { name: 'total_price_in_cents_eq', query: () => 'filter[total_price_in_cents_eq]=2000', expect: () => [or.or2, or.or4] },
          { name: 'total_price_in_cents_gt', query: () => 'filter[total_price_in_cents_gt]=2000', expect: () => [or.or1, or.or3] },
          { name: 'total_price_in_cents_gteq', query: () => 'filter[total_price_in_cents_gteq]=5900', expect: () => [or.or1, or.or3] },
          { name: 'total_price_in_cents_gte', query: () => 'filter[total_price_in_cents_gte]=5900', expect: () => [or.or1, or.or3] },
          { name: 'total_price_in_cents_lt', query: () => 'filter[total_price_in_cents_lt]=5900', expect: () => [or.or2, or.or4] },
          { name: 'total_price_in_cents_lteq', query: () => 'filter[total_price_in_cents_lteq]=5900', expect: () => [or.or1, or.or2, or.or4] },
          { name: 'total_price_in_cents_lte', query: () => 'filter[total_price_in_cents_lte]=5900', expect: () => [or.or1, or.or2, or.or4] },
        ],
        sparse: ['order_number', 'formatted_total_price'],
        show: or1,
        foreign: () => or.foreign,
      });

      it('shows an order with include=order_items', async () => {
        const res = await getJson(w, `/v1/orders/${or.or1}?include=order_items`);
        assertUpstream(ORDERS, 'show', res);
        const body = res.json();
        assert.deepEqual(body.data, or1());
        assertIncludedDistinct(body);
        assert.deepEqual(includedKeys(body), [`order_items:${oi.oi2}`, `order_items:${oi.oi1}`]);
        assert.deepEqual(body.included[1], {
          id: oi.oi1,
          type: 'order_items',
          attributes: {
            quantity: 1,
            currency_code: 'USD',
            item_type: 'Offer',
            item_id: 11,
            title: 'Course X',
            fulfilled_at: '2026-03-02T00:00:00.000Z',
            created_at: '2026-03-01T10:00:00.000Z',
            total_price_in_cents: 4900,
            subtotal_in_cents: 4000,
            sales_tax_amount_in_cents: 900,
            discount_amount_in_cents: 0,
            formatted_total_price: '$49.00',
            formatted_subtotal: '$40.00',
            currency_symbol: '$',
          },
          relationships: { order: { data: { type: 'orders', id: or.or1 } } },
          links: { self: selfUrl('order_items', oi.oi1) },
        });
      });

      it('lists orders with include=order_items, each item once under its order', async () => {
        const res = await getJson(w, `/v1/orders?filter[site_id]=${w.siteId}&include=order_items&fields[order_items]=title`);
        assertUpstream(ORDERS, 'list', res);
        const body = res.json();
        assertIncludedDistinct(body);
        const linkage = Object.fromEntries(
          body.data.map((d: { id: string; relationships: { order_items: { data: { id: string }[] } } }) => [d.id, d.relationships.order_items.data.map((x) => x.id)]),
        );
        assert.deepEqual(linkage, { [or.or4]: [], [or.or3]: [oi.oi4], [or.or2]: [oi.oi3], [or.or1]: [oi.oi2, oi.oi1] });
        assert.deepEqual(includedKeys(body), [oi.oi4, oi.oi3, oi.oi2, oi.oi1].map((id) => `order_items:${id}`));
      });

      it('formats money in the order’s currency', async () => {
        const res = await getJson(w, `/v1/orders/${or.or3}?fields[orders]=formatted_total_price,formatted_subtotal,currency_symbol`);
        assertUpstream(ORDERS, 'show', res);
        assert.deepEqual(res.json().data.attributes, { formatted_total_price: '€120.00', formatted_subtotal: '€120.00', currency_symbol: '€' });
      });
    });

    describe('order_items', () => {
      readResourceTests({
        resource: orderItems,
        world: () => w,
        fixtures: () => oi,
        upstream: ITEMS,
        all: () => [oi.oi4, oi.oi3, oi.oi2, oi.oi1],
        sorts: {
          quantity: () => [oi.oi1, oi.oi3, oi.oi2, oi.oi4],
          fulfilled_at: () => [oi.oi1, oi.oi4, oi.oi2, oi.oi3],
          created_at: () => [oi.oi1, oi.oi2, oi.oi3, oi.oi4],
        },
        filters: [
          { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [oi.second] },
          { name: 'order_id', query: () => `filter[order_id]=${or.or1}`, expect: () => [oi.oi1, oi.oi2] },
          { name: 'quantity_eq', query: () => 'filter[quantity_eq]=1', expect: () => [oi.oi1, oi.oi3] },
          { name: 'quantity_gt', query: () => 'filter[quantity_gt]=1', expect: () => [oi.oi2, oi.oi4] },
          { name: 'quantity_lt', query: () => 'filter[quantity_lt]=3', expect: () => [oi.oi1, oi.oi2, oi.oi3] },
          { name: 'currency_code_eq', query: () => 'filter[currency_code_eq]=USD', expect: () => [oi.oi1, oi.oi2] },
          { name: 'item_type_eq', query: () => 'filter[item_type_eq]=Offer', expect: () => [oi.oi1, oi.oi4] },
          { name: 'item_type_cont', query: () => 'filter[item_type_cont]=PRO', expect: () => [oi.oi2] },
          { name: 'item_type_in', query: () => 'filter[item_type_in]=Product,Shipping', expect: () => [oi.oi2, oi.oi3] },
          { name: 'item_type_not_in', query: () => 'filter[item_type_not_in]=Offer', expect: () => [oi.oi2, oi.oi3] },
          { name: 'item_id_eq', query: () => 'filter[item_id_eq]=21', expect: () => [oi.oi2] },
          { name: 'item_id_in', query: () => 'filter[item_id_in]=11,12', expect: () => [oi.oi1, oi.oi4] },
          { name: 'title_cont', query: () => 'filter[title_cont]=SHIP', expect: () => [oi.oi3, oi.oi4] },
          { name: 'fulfilled_at_null', query: () => 'filter[fulfilled_at_null]=true', expect: () => [oi.oi2, oi.oi3] },
        ],
        sparse: ['title', 'quantity'],
        show: () => ({
          id: oi.oi3,
          type: 'order_items',
          attributes: {
            quantity: 1,
            currency_code: 'CAD',
            item_type: 'Shipping',
            item_id: 31,
            title: 'Express shipping',
            fulfilled_at: null,
            created_at: '2026-04-01T10:00:00.000Z',
            total_price_in_cents: 1000,
            subtotal_in_cents: 1000,
            sales_tax_amount_in_cents: 0,
            discount_amount_in_cents: 0,
            formatted_total_price: '$10.00',
            formatted_subtotal: '$10.00',
            currency_symbol: '$',
          },
          relationships: { order: { data: { type: 'orders', id: or.or2 } } },
          links: { self: selfUrl('order_items', oi.oi3) },
        }),
        foreign: () => oi.foreign,
      });
    });
  });
}
