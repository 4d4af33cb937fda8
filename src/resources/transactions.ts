import { attr, containsText, defineResource, exclusiveEnd, namedFilter, rel } from '../jsonapi/resource.js';
import { currencySymbol, formatMoney } from './money.js';

export const transactions = defineResource({
  type: 'transactions',
  table: 'transactions',
  description:
    'Money movements: charges, subscription charges and refunds. A transaction that pays for several purchases at once (a bundle) has no single offer.',
  readPermission: 'view:transactions',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: '-created_at',
  attributes: {
    action: attr.string({ filter: ['eq', 'in'], enum: ['charge', 'subscription_charge', 'refund', 'dispute'] }),
    state: attr.string({ filter: ['eq', 'in'], enum: ['succeeded', 'failed', 'pending'] }),
    payment_type: attr.string({ nullable: true, filter: ['eq'] }),
    amount_in_cents: attr.integer({ sort: true, filter: ['eq', 'gt', 'gte', 'lt', 'lte'] }),
    sales_tax_in_cents: attr.integer(),
    currency: attr.string({ filter: ['eq'] }),
    currency_symbol: attr.computed('string', ['currency'], (row) => currencySymbol(String(row.currency))),
    formatted_amount: attr.computed('string', ['amount_in_cents', 'currency'], (row) =>
      formatMoney(Number(row.amount_in_cents), String(row.currency)),
    ),
    created_at: attr.datetime({ sort: true }),
  },
  relationships: {
    customer: rel.toOne('customers', 'customer_id'),
    offer: rel.toOne('offers', 'offer_id'),
    purchases: rel.toManyThrough('purchases', { table: 'purchase_transactions', sourceKey: 'transaction_id', targetKey: 'purchase_id' }),
  },
  upstream: { list: ['page[number]', 'page[size]', 'fields'] },
  filters: {
    customer_id: namedFilter('id', 'Transactions of one customer', (eb, id) => eb('transactions.customer_id', '=', id), { references: 'customers' }),
    name_or_email: namedFilter('string', "Transactions whose customer's name or email contains the text, ignoring case", (eb, text, ctx) =>
      eb.exists(
        eb
          .selectFrom('customers as payer')
          .select('payer.id')
          .whereRef('payer.id', '=', 'transactions.customer_id')
          .where((w) =>
            w.or([
              containsText(w, ctx, 'payer.name', text),
              containsText(w, ctx, 'payer.email', text),
            ]),
          ),
      ),
    ),
    start_date: namedFilter('date', 'Transactions created at or after the date (ISO 8601; a date means its start, UTC)', (eb, date, ctx) =>
      eb('transactions.created_at', '>=', ctx.traits.encodeTimestamp(date.at)),
    ),
    end_date: namedFilter('date', 'Transactions created on or before the date (a date includes that whole day, UTC)', (eb, date, ctx) =>
      eb('transactions.created_at', '<', ctx.traits.encodeTimestamp(exclusiveEnd(date))),
    ),
  },
});
