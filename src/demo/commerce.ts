// One person's commerce: the customer record, purchases with their payments (charges,
// subscription charges, failures, refunds; bundles paid by one transaction), the offer grants
// they give and the product memberships those grant, grants made by hand, and orders. Kept
// consistent the way the platform keeps it: a deactivated purchase revokes its grant and ends
// its memberships, a failed renewal suspends them, and net revenue is the sum of successful
// payments less refunds.
import type { Catalogue, CatalogueOffer } from './catalogue.js';
import type { OfferKey } from './catalogue-content.js';
import { COUPON_DISCOUNTS, type GrantPlan, type PersonPlan, type PurchasePlan } from './people.js';
import type { Rng } from './random.js';
import type { Row, RowSet } from './rows.js';
import type { Timeline } from './timeline.js';
import { normalizePublicWebsite } from '../domain/customer-rules.js';

export interface CommerceContext {
  set: RowSet;
  catalogue: Catalogue;
  t: Timeline;
  /** The next order number of the site. */
  orderNumbers: { next: number };
}

export interface Buyer {
  plan: PersonPlan;
  contact: Row<'contacts'>;
  createdAt: Date;
  /** When the person last did anything; the customer's last request. */
  lastActivityAt: Date | null;
  bouncedAt: Date | null;
  /** Form sign-ups that grant an offer, and when. */
  formOffers: Array<{ offer: OfferKey; at: Date }>;
}

export interface CommerceResult {
  customer: Row<'customers'> | null;
  netRevenueCents: number;
  /** Offers the person ever had, for tags and the like. */
  offers: Set<OfferKey>;
}

interface Access {
  kind: 'purchase' | 'grant' | 'form';
  at: Date;
  purchase?: PurchasePlan;
  grant?: GrantPlan;
  offer: OfferKey;
}

const HOUR_DAYS = 1 / 24;

export function addCommerce(ctx: CommerceContext, buyer: Buyer, rng: Rng): CommerceResult {
  const { t, catalogue } = ctx;
  const latestStart = t.ago(10 / (24 * 60));
  /** A moment `daysAgo`, but after the person and the offer existed and before now. */
  const momentFor = (daysAgo: number, offer: CatalogueOffer): Date | null => {
    const earliest = t.latest(t.plusMinutes(buyer.createdAt, 30), t.plusDays(offer.createdAt, HOUR_DAYS));
    if (earliest > latestStart) return null;
    const wanted = t.ago(daysAgo);
    return wanted < earliest ? earliest : wanted > latestStart ? latestStart : wanted;
  };

  const accesses: Access[] = [];
  for (const p of buyer.plan.purchases) {
    const at = momentFor(p.daysAgo, catalogue.offers[p.offer]);
    if (at) accesses.push({ kind: 'purchase', at, purchase: p, offer: p.offer });
  }
  for (const g of buyer.plan.grants) {
    const at = momentFor(g.daysAgo, catalogue.offers[g.offer]);
    if (at) accesses.push({ kind: 'grant', at, grant: g, offer: g.offer });
  }
  for (const f of buyer.formOffers) accesses.push({ kind: 'form', at: t.plusMinutes(f.at, 1), offer: f.offer });
  if (accesses.length === 0) return { customer: null, netRevenueCents: 0, offers: new Set() };
  accesses.sort((a, b) => a.at.getTime() - b.at.getTime());

  const plan = buyer.plan;
  const site_id = catalogue.siteId;
  const slug = plan.email.split('@')[0]!.replace(/[^a-z0-9]+/g, '-');
  const joinedAt = accesses[0]!.at;
  const customer = ctx.set.add('customers', {
    site_id,
    contact_id: buyer.contact,
    name: plan.name,
    email: plan.email,
    avatar_url: plan.profile.avatar ? `https://cdn.example.com/northwind/avatars/${slug}.jpg` : null,
    external_user_id: plan.profile.externalId ? `NW-${String(plan.index + 1).padStart(6, '0')}` : null,
    public_bio: plan.profile.bio,
    public_location: plan.profile.bio || plan.profile.website ? `${plan.place.city}, ${plan.place.state}` : null,
    public_website: plan.profile.website ? normalizePublicWebsite(`${slug}.example.com`) : null,
    socials: plan.profile.socials ? { instagram: `https://www.instagram.com/${slug.replace(/-/g, '_')}`, linkedin: `https://www.linkedin.com/in/${slug}` } : null,
    net_revenue_cents: 0,
    sign_in_count: plan.profile.signInCount,
    last_request_at: plan.profile.signInCount > 0 ? buyer.lastActivityAt : null,
    bounced_at: buyer.bouncedAt,
    created_at: joinedAt,
    updated_at: joinedAt,
  });

  const ledger = new Ledger(ctx, customer, buyer, rng);
  for (const access of accesses) {
    if (access.kind === 'purchase') ledger.checkout(access.purchase!, access.at);
    else if (access.kind === 'grant') ledger.grantByHand(access.grant!, access.at);
    else ledger.freePurchase(access.offer, access.at, 'form');
  }
  const values = customer.values;
  values.net_revenue_cents = ledger.netRevenueCents;
  values.updated_at = t.latest(joinedAt, ledger.lastChange, buyer.lastActivityAt);
  return { customer, netRevenueCents: ledger.netRevenueCents, offers: ledger.offers };
}

/** Writes the rows of one customer's purchases and keeps the running totals. */
class Ledger {
  netRevenueCents = 0;
  lastChange: Date;
  readonly offers = new Set<OfferKey>();
  private readonly site_id: number;

  constructor(
    private readonly ctx: CommerceContext,
    private readonly customer: Row<'customers'>,
    private readonly buyer: Buyer,
    private readonly rng: Rng,
  ) {
    this.site_id = ctx.catalogue.siteId;
    this.lastChange = customer.values.created_at as Date;
  }

  private get t(): Timeline {
    return this.ctx.t;
  }

  private touch(at: Date | null) {
    if (at && at > this.lastChange) this.lastChange = at;
  }

  /** A purchase through checkout: its purchase rows, payments, grants, memberships and order. */
  checkout(p: PurchasePlan, at: Date): void {
    const { t, rng } = this;
    const offer = this.ctx.catalogue.offers[p.offer];
    const spec = offer.spec;
    if (spec.paymentType === 'free') {
      this.freePurchase(p.offer, at, p.source ?? 'checkout', p.referrer ?? null);
      return;
    }
    const quantity = spec.single ? 1 : (p.quantity ?? 1);
    const discount = p.coupon ? Math.round(spec.priceInCents * COUPON_DISCOUNTS[p.coupon]) : 0;
    const amount = (spec.priceInCents - discount) * quantity;
    const taxRate = spec.currency === 'USD' ? this.buyer.plan.place.salesTax : 0;
    const tax = Math.round(amount * taxRate);
    const nowMinus = t.ago(1 / 24);

    // The payment schedule: when each payment falls due, and which one failed.
    const due: Date[] = [];
    let canceledAt: Date | null = null;
    let accessEnd: Date | null = null;
    // The renewal or installment that falls due next (purchases.next_charge_at).
    let nextChargeAt: Date | null = null;
    if (spec.paymentType === 'one_time') {
      due.push(at);
    } else {
      const period = spec.paymentType === 'subscription' ? (spec.periodMonths ?? 1) : 1;
      const count = spec.paymentType === 'multipay' ? (spec.installments ?? 3) : Number.POSITIVE_INFINITY;
      if (p.outcome === 'canceled') {
        const wanted = t.plusDays(at, p.endAfterDays ?? 30);
        canceledAt = wanted < nowMinus ? wanted : nowMinus;
      }
      for (let k = 0; k < count; k++) {
        const when = t.plusMonths(at, k * period);
        if (!t.isPast(when) || (canceledAt && when > canceledAt)) {
          if (canceledAt) accessEnd = when;
          else nextChargeAt = when;
          break;
        }
        due.push(when);
      }
    }
    const failedIndex = p.outcome === 'past_due' && due.length >= 2 ? due.length - 1 : -1;
    const suspendedAt = failedIndex >= 0 ? due[failedIndex]! : null;

    let deactivatedAt: Date | null = null;
    let reason: string | null = null;
    if (p.outcome === 'refunded' || p.outcome === 'deactivated') {
      const wanted = t.plusDays(at, p.endAfterDays ?? 14);
      deactivatedAt = wanted < nowMinus ? wanted : nowMinus;
      reason = p.outcome === 'refunded' ? 'Refunded at the customer’s request' : 'Chargeback: payment disputed';
    } else if (canceledAt && accessEnd && t.isPast(accessEnd)) {
      deactivatedAt = accessEnd;
      reason = 'Subscription canceled';
    }

    const partner = p.bundleWith ? this.ctx.catalogue.offers[p.bundleWith] : undefined;
    const partnerAmount = partner ? partner.spec.priceInCents : 0;
    const partnerTax = Math.round(partnerAmount * taxRate);

    const purchase = this.purchaseRow(offer, at, {
      amount,
      quantity,
      coupon: p.coupon ?? null,
      source: p.source ?? 'checkout',
      referrer: p.referrer ?? null,
      paymentsMade: spec.paymentType === 'multipay' ? due.length - (failedIndex >= 0 ? 1 : 0) : null,
      nextChargeAt: deactivatedAt ? null : nextChargeAt,
      deactivatedAt,
      reason,
      subscription: spec.paymentType === 'subscription' ? { canceledAt } : null,
      free: false,
    });
    const purchases = [purchase];
    if (partner) {
      purchases.push(
        this.purchaseRow(partner, at, {
          amount: partnerAmount,
          quantity: 1,
          coupon: null,
          source: p.source ?? 'checkout',
          referrer: p.referrer ?? null,
          paymentsMade: null,
          deactivatedAt: null,
          reason: null,
          subscription: null,
          free: false,
        }),
      );
    }

    // Payments.
    const paymentType = spec.paymentType;
    const action = paymentType === 'subscription' ? 'subscription_charge' : 'charge';
    if (p.failedFirstAttempt) {
      this.transaction(partner ? null : offer, purchases, at, { action, state: 'failed', paymentType, amount: amount + tax + partnerAmount + partnerTax, tax: tax + partnerTax }, -rng.int(2, 6));
    }
    due.forEach((when, k) => {
      const first = k === 0;
      this.transaction(
        partner && first ? null : offer,
        partner && first ? purchases : [purchase],
        when,
        {
          action,
          state: k === failedIndex ? 'failed' : 'succeeded',
          paymentType,
          amount: amount + tax + (partner && first ? partnerAmount + partnerTax : 0),
          tax: tax + (partner && first ? partnerTax : 0),
        },
      );
    });
    if (p.outcome === 'refunded' && deactivatedAt) {
      this.transaction(offer, [purchase], deactivatedAt, { action: 'refund', state: 'succeeded', paymentType, amount: -(amount + tax), tax: -tax });
    }

    // Access.
    this.grant(offer, purchase, at, deactivatedAt, suspendedAt);
    if (partner) this.grant(partner, purchases[1]!, at, null, null);

    // An order for the checkout.
    this.order(at, tax + partnerTax, [
      { offer, quantity, amount, discount: discount * quantity, subscription: paymentType === 'subscription' },
      ...(partner ? [{ offer: partner, quantity: 1, amount: partnerAmount, discount: 0, subscription: false }] : []),
    ]);
    this.touch(t.latest(at, deactivatedAt, canceledAt, due[due.length - 1]));
  }

  /** A free offer, from checkout or granted by a form sign-up. */
  freePurchase(key: OfferKey, at: Date, source: string, referrer: string | null = null): void {
    const offer = this.ctx.catalogue.offers[key];
    const purchase = this.purchaseRow(offer, at, {
      amount: 0,
      quantity: 1,
      coupon: null,
      source,
      referrer,
      paymentsMade: null,
      deactivatedAt: null,
      reason: null,
      subscription: null,
      free: true,
    });
    this.grant(offer, purchase, at, null, null);
    this.touch(at);
  }

  /** Access given by the site's staff, without a purchase; perhaps taken back later. */
  grantByHand(g: GrantPlan, at: Date): void {
    const offer = this.ctx.catalogue.offers[g.offer];
    let revokedAt: Date | null = null;
    if (g.revokeAfterDays !== undefined) {
      const wanted = this.t.plusDays(at, g.revokeAfterDays);
      revokedAt = this.t.isPast(wanted) ? wanted : this.t.ago(1 / 24);
    }
    this.grant(offer, null, at, revokedAt, null);
    this.touch(this.t.latest(at, revokedAt));
  }

  private purchaseRow(
    offer: CatalogueOffer,
    at: Date,
    o: {
      amount: number;
      quantity: number;
      coupon: string | null;
      source: string;
      referrer: string | null;
      paymentsMade: number | null;
      /** When the next renewal or installment falls due; absent when none will. */
      nextChargeAt?: Date | null;
      deactivatedAt: Date | null;
      reason: string | null;
      subscription: { canceledAt: Date | null } | null;
      free: boolean;
    },
  ): Row<'purchases'> {
    const { rng } = this;
    const plan = this.buyer.plan;
    this.offers.add(offer.key);
    const extra = !o.free && plan.company && rng.chance(0.5) ? { company: plan.company, ...(plan.role ? { role: plan.role } : {}) } : {};
    return this.ctx.set.add('purchases', {
      site_id: this.site_id,
      customer_id: this.customer,
      offer_id: offer.row,
      amount_in_cents: o.amount,
      payment_type: offer.spec.paymentType,
      multipay_payments_made: o.paymentsMade,
      opt_in: plan.consent !== 'never' && rng.chance(0.7),
      raw_extra_contact_information: extra,
      currency: offer.spec.currency,
      effective_start_at: at,
      cardholder_name: o.free ? null : plan.name,
      billing_address_zip: o.free ? null : (plan.address?.zip ?? null),
      deactivated_at: o.deactivatedAt,
      deactivation_reason: o.reason,
      coupon_code: o.coupon,
      source: o.source,
      referrer: o.referrer,
      quantity: o.quantity,
      subscription_status: o.subscription ? (o.subscription.canceledAt ? 'canceled' : 'active') : null,
      subscription_canceled_at: o.subscription?.canceledAt ?? null,
      next_charge_at: o.nextChargeAt ?? null,
      created_at: at,
      updated_at: this.t.latest(at, o.deactivatedAt, o.subscription?.canceledAt),
    });
  }

  private transaction(
    offer: CatalogueOffer | null,
    purchases: ReadonlyArray<Row<'purchases'>>,
    at: Date,
    o: { action: string; state: string; paymentType: string; amount: number; tax: number },
    minutesOffset = 0,
  ): void {
    const purchase = purchases[0]!;
    const transaction = this.ctx.set.add('transactions', {
      site_id: this.site_id,
      customer_id: this.customer,
      offer_id: offer ? offer.row : null,
      action: o.action,
      state: o.state,
      payment_type: o.paymentType,
      amount_in_cents: o.amount,
      sales_tax_in_cents: o.tax,
      currency: String(purchase.values.currency),
      created_at: this.t.plusMinutes(at, minutesOffset),
    });
    for (const p of purchases) this.ctx.set.add('purchase_transactions', { purchase_id: p, transaction_id: transaction });
    if (o.state === 'succeeded') this.netRevenueCents += o.amount;
  }

  private grant(offer: CatalogueOffer, purchase: Row<'purchases'> | null, at: Date, endedAt: Date | null, suspendedAt: Date | null): void {
    const { set } = this.ctx;
    const contact = this.buyer.contact;
    this.offers.add(offer.key);
    const updated_at = this.t.latest(at, endedAt, suspendedAt);
    const grant = set.add('offer_grants', {
      site_id: this.site_id,
      contact_id: contact,
      offer_id: offer.row,
      purchase_id: purchase,
      granted_at: at,
      revoked_at: endedAt,
      created_at: at,
      updated_at,
    });
    for (const product of offer.products) {
      set.add('memberships', {
        site_id: this.site_id,
        contact_id: contact,
        product_id: product,
        offer_grant_id: grant,
        started_at: at,
        suspended_at: endedAt ? null : suspendedAt,
        ended_at: endedAt,
        created_at: at,
        updated_at,
      });
    }
  }

  private order(
    at: Date,
    tax: number,
    items: Array<{ offer: CatalogueOffer; quantity: number; amount: number; discount: number; subscription: boolean }>,
  ): void {
    const { t, rng } = this;
    const { set } = this.ctx;
    const currency = items[0]!.offer.spec.currency;
    // Coaching is fulfilled once the session is booked; a few orders await fulfilment.
    const coaching = items.some((i) => i.offer.key === 'coaching');
    const fulfilledWanted = coaching ? t.plusDays(at, 3) : t.plusMinutes(at, 2);
    const fulfilledAt = rng.chance(0.08) || !t.isPast(fulfilledWanted) ? null : fulfilledWanted;
    const subtotal = items.reduce((sum, i) => sum + i.amount, 0);
    const order = set.add('orders', {
      site_id: this.site_id,
      customer_id: this.customer,
      order_number: this.ctx.orderNumbers.next++,
      currency_code: currency,
      fulfilled_at: fulfilledAt,
      total_price_in_cents: subtotal + tax,
      subtotal_in_cents: subtotal,
      sales_tax_amount_in_cents: tax,
      discount_amount_in_cents: items.reduce((sum, i) => sum + i.discount, 0),
      created_at: at,
      updated_at: fulfilledAt ?? at,
    });
    let taxLeft = tax;
    items.forEach((item, i) => {
      const itemTax = i === items.length - 1 ? taxLeft : Math.round((tax * item.amount) / Math.max(1, subtotal));
      taxLeft -= itemTax;
      set.add('order_items', {
        site_id: this.site_id,
        order_id: order,
        quantity: item.quantity,
        currency_code: currency,
        item_type: item.subscription ? 'Subscription' : 'Offer',
        item_id: item.offer.row,
        title: item.offer.spec.title,
        fulfilled_at: fulfilledAt,
        total_price_in_cents: item.amount + itemTax,
        subtotal_in_cents: item.amount,
        sales_tax_amount_in_cents: itemTax,
        discount_amount_in_cents: item.discount,
        created_at: at,
        updated_at: fulfilledAt ?? at,
      });
    });
  }
}
