import { sql } from 'kysely';
import { attr, defineResource, rel } from '../jsonapi/resource.js';

const paymentIs = (...types: string[]) => (row: Record<string, unknown>) => types.includes(String(row.payment_type));

export const offers = defineResource({
  type: 'offers',
  table: 'offers',
  description: 'What a site sells or grants: a price and a payment type, giving access to one or more products.',
  readPermission: 'view:offers',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: 'title',
  attributes: {
    title: attr.string({ sort: true, filter: ['eq', 'cont', 'start'], upstream: { sort: true, filter: ['cont'] } }),
    description: attr.string({ nullable: true, filter: ['cont'], upstream: { filter: ['cont'] } }),
    internal_title: attr.string({ nullable: true, filter: ['cont'], description: 'Name shown only to the site staff' }),
    currency: attr.string({ filter: ['eq'], description: 'ISO 4217 code, such as USD' }),
    price_in_cents: attr.integer({ sort: true, filter: ['eq', 'gt', 'gte', 'lt', 'lte'], upstream: { sort: true } }),
    payment_type: attr.string({ filter: ['eq', 'in'], enum: ['one_time', 'subscription', 'multipay', 'free'] }),
    token: attr.string({ description: 'Public token used in checkout URLs' }),
    payment_method: attr.string({ description: 'How the offer is paid: kajabi_payments, stripe, paypal or free' }),
    price_description: attr.string({ description: 'Price as shown to buyers, such as "$49.00/month"' }),
    checkout_url: attr.string({
      description: 'Checkout page of the offer',
      sql: (eb) =>
        sql<string>`'https://' || ${eb
          .selectFrom('sites as offer_site')
          .select('offer_site.subdomain')
          .whereRef('offer_site.id', '=', 'offers.site_id')} || '.mykajabi.com/offers/' || offers.token || '/checkout'`,
    }),
    recurring_offer: attr.computed('boolean', ['payment_type'], paymentIs('subscription', 'multipay'), {
      description: 'Charged more than once (subscription or payment plan)',
    }),
    subscription: attr.computed('boolean', ['payment_type'], paymentIs('subscription')),
    one_time: attr.computed('boolean', ['payment_type'], paymentIs('one_time')),
    single: attr.boolean({ description: 'Bought once per customer (no quantity)' }),
    free: attr.computed('boolean', ['payment_type'], paymentIs('free')),
    image_url: attr.string({ nullable: true }),
  },
  relationships: {
    site: rel.toOne('sites', 'site_id'),
    products: rel.toManyThrough('products', { table: 'offer_products', sourceKey: 'offer_id', targetKey: 'product_id' }, { links: true }),
  },
});
