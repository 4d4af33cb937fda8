import { attr, containsText, defineResource, namedFilter, rel } from '../jsonapi/resource.js';
import { cancelPurchaseSubscription, deactivatePurchase, reactivatePurchase } from '../domain/purchases.js';

export const purchases = defineResource({
  type: 'purchases',
  table: 'purchases',
  description:
    'Purchases of offers by customers. Deactivating a purchase ends the access it gave; its subscription, if any, goes on until cancelled.',
  readPermission: 'view:purchases',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: '-created_at',
  attributes: {
    amount_in_cents: attr.integer({ filter: ['eq', 'gt', 'gte', 'lt', 'lte'] }),
    payment_type: attr.string({ filter: ['eq', 'in'], enum: ['one_time', 'subscription', 'multipay', 'free'] }),
    multipay_payments_made: attr.integer({ nullable: true, description: 'Payments made so far on a payment plan' }),
    opt_in: attr.boolean({ description: 'Agreed to marketing email at checkout' }),
    raw_extra_contact_information: attr.json({ description: 'Extra checkout fields as entered' }),
    currency: attr.string({ filter: ['eq'] }),
    effective_start_at: attr.datetime({ nullable: true }),
    cardholder_name: attr.string({ nullable: true }),
    billing_address_zip: attr.string({ nullable: true }),
    deactivated_at: attr.datetime({ nullable: true, filter: ['null', 'gt', 'lt'] }),
    deactivation_reason: attr.string({ nullable: true }),
    coupon_code: attr.string({ nullable: true, filter: ['eq', 'cont', 'null'], upstream: { filter: ['eq'] } }),
    source: attr.string({ nullable: true, filter: ['eq'] }),
    referrer: attr.string({ nullable: true, filter: ['eq', 'cont', 'start'] }),
    quantity: attr.integer({ filter: ['eq', 'gt'] }),
    created_at: attr.datetime({ sort: true, filter: ['gt', 'gte', 'lt', 'lte'], upstream: { sort: true } }),
    updated_at: attr.datetime({ sort: true }),
  },
  relationships: {
    offer: rel.toOne('offers', 'offer_id'),
    customer: rel.toOne('customers', 'customer_id'),
    transactions: rel.toManyThrough('transactions', { table: 'purchase_transactions', sourceKey: 'purchase_id', targetKey: 'transaction_id' }),
    products: rel.toManyThrough('products', { table: 'offer_products', sourceKey: 'offer_id', targetKey: 'product_id', sourceColumn: 'offer_id' }),
  },
  upstream: { show: ['fields'] },
  filters: {
    active: namedFilter('boolean', 'true: purchases that are not deactivated; false: deactivated ones', (eb, v) =>
      v ? eb('purchases.deactivated_at', 'is', null) : eb('purchases.deactivated_at', 'is not', null),
    ),
    deactivated: namedFilter('boolean', 'true: deactivated purchases; false: the others', (eb, v) =>
      v ? eb('purchases.deactivated_at', 'is not', null) : eb('purchases.deactivated_at', 'is', null),
    ),
    customer_id: namedFilter('id', 'Purchases of one customer', (eb, id) => eb('purchases.customer_id', '=', id), { references: 'customers' }),
    offer_id: namedFilter('id', 'Purchases of one offer', (eb, id) => eb('purchases.offer_id', '=', id), { references: 'offers', upstream: false }),
    // Upstream documents filter[referrer] with a contains example.
    referrer: namedFilter('string', 'Purchases whose referrer contains the text, ignoring case', (eb, text, ctx) =>
      containsText(eb, ctx, 'purchases.referrer', text),
    ),
  },
  // POST /v1/purchases/{id}/<action>, no body; each answers the purchase (see domain/purchases.ts).
  actions: {
    deactivate: {
      permission: 'manage:purchases',
      description:
        'Deactivates an active purchase: deactivated_at and deactivation_reason ("deactivated through the API") are set and the access it gave (offer grants, product memberships) ends. The subscription is NOT cancelled; use cancel_subscription for that. A purchase that is already deactivated answers 422 purchase_not_active and nothing changes.',
      run: deactivatePurchase,
    },
    reactivate: {
      permission: 'manage:purchases',
      description:
        'Reactivates a deactivated free purchase (payment_type free or amount 0): deactivated_at and deactivation_reason are cleared and access to the offer and its products is granted again (a new grant; the ended access stays as history). The subscription is not reactivated. A paid purchase answers 422 purchase_not_free; an active one 422 purchase_already_active.',
      run: reactivatePurchase,
    },
    cancel_subscription: {
      permission: 'manage:purchases',
      description:
        'Cancels the active subscription of a purchase (subscription_status canceled, subscription_canceled_at now) and deactivates the purchase (reason "subscription canceled"), ending its access. A purchase already deactivated keeps its deactivation. A purchase without an active subscription answers 422 no_active_subscription.',
      run: cancelPurchaseSubscription,
    },
  },
});
