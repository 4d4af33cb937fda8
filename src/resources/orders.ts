import { attr, defineResource, namedFilter, rel } from '../jsonapi/resource.js';
import { currencySymbol, formatMoney } from './money.js';

const money = (column: string) =>
  attr.computed('string', [column, 'currency_code'], (row) => formatMoney(Number(row[column]), String(row.currency_code)));

export const orders = defineResource({
  type: 'orders',
  table: 'orders',
  description: 'Orders of physical or digital goods, with their items.',
  readPermission: 'view:orders',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: '-created_at',
  attributes: {
    order_number: attr.integer({ sort: true, filter: ['eq', 'gt', 'lt'], upstream: { sort: true, filter: ['eq'] } }),
    currency_code: attr.string({ filter: ['eq', 'in', 'start'] }),
    fulfilled_at: attr.datetime({ sort: true, nullable: true, filter: ['null', 'gt', 'lt'], upstream: { sort: true, filter: ['null'] } }),
    created_at: attr.datetime({ sort: true, filter: ['gt', 'gteq', 'gte', 'lt', 'lteq', 'lte'], upstream: { sort: true } }),
    total_price_in_cents: attr.integer({ filter: ['eq', 'gt', 'gteq', 'gte', 'lt', 'lteq', 'lte'] }),
    subtotal_in_cents: attr.integer(),
    sales_tax_amount_in_cents: attr.integer(),
    discount_amount_in_cents: attr.integer(),
    formatted_total_price: money('total_price_in_cents'),
    formatted_subtotal: money('subtotal_in_cents'),
    currency_symbol: attr.computed('string', ['currency_code'], (row) => currencySymbol(String(row.currency_code))),
  },
  relationships: {
    site: rel.toOne('sites', 'site_id'),
    customer: rel.toOne('customers', 'customer_id'),
    order_items: rel.toMany('order_items', 'order_id'),
  },
  filters: {
    customer_id: namedFilter('id', 'Orders of one customer', (eb, id) => eb('orders.customer_id', '=', id), { references: 'customers' }),
  },
});

export const orderItems = defineResource({
  type: 'order_items',
  table: 'order_items',
  description: 'The lines of orders.',
  readPermission: 'view:orders',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: '-created_at',
  attributes: {
    quantity: attr.integer({ sort: true, filter: ['eq', 'gt', 'lt'], upstream: { sort: true } }),
    currency_code: attr.string({ filter: ['eq'] }),
    item_type: attr.string({ filter: ['eq', 'cont', 'in', 'not_in'], upstream: { filter: ['eq'] }, description: 'Offer, Product or Shipping' }),
    item_id: attr.integer({ filter: ['eq', 'in'], upstream: { filter: ['eq'] } }),
    title: attr.string({ filter: ['cont'] }),
    fulfilled_at: attr.datetime({ sort: true, nullable: true, filter: ['null'], upstream: { sort: true, filter: ['null'] } }),
    created_at: attr.datetime({ sort: true, upstream: { sort: true } }),
    total_price_in_cents: attr.integer(),
    subtotal_in_cents: attr.integer(),
    sales_tax_amount_in_cents: attr.integer(),
    discount_amount_in_cents: attr.integer(),
    formatted_total_price: money('total_price_in_cents'),
    formatted_subtotal: money('subtotal_in_cents'),
    currency_symbol: attr.computed('string', ['currency_code'], (row) => currencySymbol(String(row.currency_code))),
  },
  relationships: { order: rel.toOne('orders', 'order_id') },
  filters: {
    order_id: namedFilter('id', 'Items of one order', (eb, id) => eb('order_items.order_id', '=', id), { references: 'orders', upstream: false }),
  },
});
