import { attr, defineResource, exclusiveEnd, namedFilter } from '../jsonapi/resource.js';

const STATUSES = ['pending', 'in_transit', 'paid', 'failed', 'canceled'] as const;

export const kajabiPaymentsPayouts = defineResource({
  type: 'kajabi_payments_payouts',
  table: 'kajabi_payments_payouts',
  nouns: { singular: 'Kajabi Payments payout', plural: 'Kajabi Payments payouts' },
  description: 'Transfers of Kajabi Payments funds to the site owner’s bank account. filter[site_id] is required.',
  readPermission: 'view:payouts',
  tenancy: { kind: 'site', column: 'site_id', siteFilter: 'required' },
  defaultSort: '-initiated_date',
  attributes: {
    status: attr.computed('string', ['status'], (row) => statusLabel(String(row.status)), {
      description: 'Pending, In transit, Paid, Failed or Canceled',
      store: (value) => ({ status: String(value).trim().toLowerCase().replace(/\s+/g, '_') }),
    }),
    amount: attr.computed('number', ['amount_in_cents'], (row) => Number(row.amount_in_cents) / 100, {
      description: 'Amount in the currency’s units, such as 1500.00',
      store: (value) => ({ amount_in_cents: Math.round(Number(value) * 100) }),
    }),
    currency: attr.string(),
    initiated_date: attr.datetime({ column: 'initiated_at', sort: true, description: 'When the payout was created (UTC)' }),
    estimated_arrival_date: attr.datetime({ column: 'estimated_arrival_at', sort: true, description: 'Expected arrival (UTC)' }),
    bank_account: attr.string({ column: 'destination', description: 'Bank and last digits of the account' }),
  },
  upstream: { list: ['page[number]'], show: ['filter[site_id]'] },
  filters: {
    status: namedFilter('string', `Payouts in one status: ${STATUSES.join(', ')} (case ignored)`, (eb, value) =>
      eb('kajabi_payments_payouts.status', '=', value.trim().toLowerCase().replace(/\s+/g, '_')),
    ),
    start_date: namedFilter('date', 'Payouts initiated at or after the date (ISO 8601, UTC)', (eb, date, ctx) =>
      eb('kajabi_payments_payouts.initiated_at', '>=', ctx.traits.encodeTimestamp(date.at)),
    ),
    end_date: namedFilter('date', 'Payouts initiated on or before the date (a date includes that whole day, UTC)', (eb, date, ctx) =>
      eb('kajabi_payments_payouts.initiated_at', '<', ctx.traits.encodeTimestamp(exclusiveEnd(date))),
    ),
  },
});

function statusLabel(status: string): string {
  const words = status.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
