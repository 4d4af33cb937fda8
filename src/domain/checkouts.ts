// A checkout, as the platform runs one when a person pays on an offer's checkout page: made
// happen by the sandbox (POST /v1/test_helpers/checkouts, `sitebiz trigger purchase`), with the
// same domain code the rest of the API uses. In the caller's transaction (engine.transact), all or
// nothing. The rules (docs/sandbox.md, "Commerce"):
//
// - The offer decides the site; order bumps must be other offers of the same site and currency.
// - The contact is found by email in the site (a given name updates it) or created
//   (src/domain/contacts.ts); the contact becomes a customer (offer-grants.ts ensureCustomer).
// - One purchase per offer (the offer, then each bump), source "checkout", started now. A coupon
//   (coupons.ts) takes its share off each unit of the offer (not of the bumps); quantity counts
//   units of the offer (an offer sold singly takes 1 only). Sales tax is 0: a sandbox checkout
//   has no billing address to tax.
// - Charges: every one-time purchase of the checkout is paid by ONE `charge` transaction (with
//   the `purchases` relationship; its offer is null when it pays for more than one); each
//   subscription's first period is a `subscription_charge` and each payment plan's first
//   installment a `charge` of its own. Free offers charge nothing. The customer's net revenue
//   grows by what was charged; each successful charge sends a receipt ('receipt' message).
// - Subscriptions: subscription_status active, next_charge_at one billing period on
//   (offers.billing_period_months, 1 when unset). Payment plans: multipay_payments_made 1,
//   next_charge_at a month on, or null when the plan has one installment (installment_count, 3
//   when unset). Renewals and installments are charged by renewals.ts.
// - Access: one offer grant per purchase with a membership per product of the offer
//   (offer-grants.ts insertGrant), and the welcome email of each offer.
// - An order when anything was charged: order_number the site's highest plus one (1001 first),
//   one item per purchase (item_type Subscription for a subscription, else Offer), fulfilled at
//   once (access is given at once).
// - Events (webhooks), exactly one per record: `purchase` per purchase (hooks of its offer),
//   `payment_succeeded` per successful charge and `order_created` per order (hooks of any offer
//   it is about).
// - paymentOutcome 'declined': the card is refused. The person still entered their email, so the
//   contact and customer are written as above, and each charge that would have been made is
//   recorded as a `failed` transaction (no purchase links, no event, no net revenue), as the
//   platform keeps failed payment attempts. No purchase, grant, order, email or event. The caller
//   commits that and answers 402. A checkout that charges nothing cannot be declined (422).
import { ApiError, unprocessable } from '../jsonapi/errors.js';
import type { RecordAccess } from '../jsonapi/engine.js';
import type { WriteContext } from '../jsonapi/resource.js';
import { createContact, normalizeEmail, updateContact } from './contacts.js';
import { findCoupon, unitDiscount } from './coupons.js';
import { ensureCustomer, insertGrant, recordWelcomeEmail } from './offer-grants.js';
import { recordEvent } from './outbox.js';
import { announcePayment, insertTransaction, plusMonths } from './payments.js';

export interface CheckoutInput {
  offerId: number | string;
  email: string;
  name?: string;
  couponCode?: string;
  quantity?: number;
  paymentOutcome?: 'succeeded' | 'declined';
  orderBumpIds?: Array<number | string>;
}

export interface CheckoutResult {
  siteId: number;
  /** The purchase of the offer; null when declined. */
  purchaseId: number | null;
  /** Every purchase made: the offer's, then one per order bump. Empty when declined. */
  purchaseIds: number[];
  /** The charges, successful (or, declined, failed), in the order written. */
  transactionIds: number[];
  /** Null when nothing was charged (free offers) or when declined. */
  orderId: number | null;
  customerId: number;
  contactId: number;
  declined: boolean;
  /** The outbox events recorded (purchase, payment_succeeded, order_created), in order. */
  eventIds: number[];
}

/** Where each input is in the request document of POST /v1/test_helpers/checkouts. */
export const CHECKOUT_POINTERS = {
  offer: '/data/relationships/offer/data/id',
  orderBump: (i: number) => `/data/relationships/order_bumps/data/${i}/id`,
  email: '/data/attributes/email',
  name: '/data/attributes/name',
  couponCode: '/data/attributes/coupon_code',
  quantity: '/data/attributes/quantity',
  paymentOutcome: '/data/attributes/payment_outcome',
} as const;

/** The most units of an offer one checkout takes. */
export const MAX_QUANTITY = 1000;

interface OfferRow {
  id: number;
  title: string;
  currency: string;
  priceInCents: number;
  paymentType: string;
  single: boolean;
  billingPeriodMonths: number;
  installmentCount: number;
}

/** One line of the checkout: an offer bought, what it costs now, and its purchase once made. */
interface Line {
  offer: OfferRow;
  quantity: number;
  /** Charged now (a subscription's first period, a plan's first installment), after discount. */
  amount: number;
  discount: number;
  coupon: string | null;
  purchaseId?: number;
}

/** A charge of the checkout: one transaction and the lines it pays for. */
interface Charge {
  lines: Line[];
  action: 'charge' | 'subscription_charge';
  paymentType: string;
  amount: number;
}

export async function createCheckout(ctx: WriteContext, records: RecordAccess, input: CheckoutInput): Promise<CheckoutResult> {
  const P = CHECKOUT_POINTERS;
  const quantity = input.quantity ?? 1;
  if (!Number.isInteger(quantity) || quantity < 1 || quantity > MAX_QUANTITY) {
    throw unprocessable('invalid_attribute', `quantity must be a whole number from 1 to ${MAX_QUANTITY}`, P.quantity);
  }
  const outcome = input.paymentOutcome ?? 'succeeded';
  if (outcome !== 'succeeded' && outcome !== 'declined') {
    throw unprocessable('invalid_attribute', 'payment_outcome must be succeeded or declined', P.paymentOutcome);
  }
  const email = normalizeEmail(input.email);
  const coupon = input.couponCode === undefined || input.couponCode === null || input.couponCode.trim() === '' ? null : findCoupon(input.couponCode, P.couponCode);

  // The offer locks its site; bumps must be of that site, once each, other than the offer.
  const offerTarget = await records.find('offers', input.offerId, P.offer);
  const siteId = offerTarget.siteId;
  const bumpIds: number[] = [];
  for (const [i, raw] of (input.orderBumpIds ?? []).entries()) {
    const bump = await records.find('offers', raw, P.orderBump(i));
    if (bump.siteId !== siteId) {
      throw unprocessable('order_bump_other_site', `Offer ${bump.id} is of another site than offer ${offerTarget.id}; an order bump is an offer of the same site`, P.orderBump(i));
    }
    if (bump.id === offerTarget.id) throw unprocessable('order_bump_is_offer', `Offer ${bump.id} is the offer bought; an order bump is another offer`, P.orderBump(i));
    if (bumpIds.includes(bump.id)) throw unprocessable('duplicate_order_bump', `Offer ${bump.id} is named twice as an order bump`, P.orderBump(i));
    bumpIds.push(bump.id);
  }
  const offers = await loadOffers(ctx, [offerTarget.id, ...bumpIds]);
  const main = offers.get(offerTarget.id)!;
  if (quantity > 1 && main.single) throw unprocessable('single_offer', `Offer ${main.id} is sold singly: quantity must be 1`, P.quantity);
  bumpIds.forEach((id, i) => {
    const bump = offers.get(id)!;
    if (bump.currency !== main.currency) {
      throw unprocessable('currency_mismatch', `Order bump ${id} is priced in ${bump.currency}, the offer in ${main.currency}; one checkout charges one currency`, P.orderBump(i));
    }
  });

  const lines: Line[] = [lineOf(main, quantity, coupon), ...bumpIds.map((id) => lineOf(offers.get(id)!, 1, null))];
  const charges = chargesOf(lines);
  if (outcome === 'declined' && charges.length === 0) {
    throw unprocessable('nothing_to_decline', 'This checkout charges nothing (free offers only), so there is no payment to decline', P.paymentOutcome);
  }

  const contactId = await upsertContact(ctx, siteId, email, input.name);
  const customer = await ensureCustomer(ctx, siteId, contactId);
  const base = { siteId, contactId, customerId: customer.id };

  if (outcome === 'declined') {
    const transactionIds: number[] = [];
    for (const charge of charges) {
      transactionIds.push(await insertTransaction(ctx, { ...transactionOf(base, charge), state: 'failed', purchaseIds: [] }));
    }
    return { ...base, purchaseId: null, purchaseIds: [], transactionIds, orderId: null, declined: true, eventIds: [] };
  }

  const { db } = ctx.handle;
  const contact = await db.selectFrom('contacts').select('name').where('id', '=', contactId).executeTakeFirstOrThrow();
  for (const line of lines) {
    line.purchaseId = await insertPurchase(ctx, { ...base, line, cardholderName: line.offer.paymentType === 'free' ? null : contact.name });
    const products = await db.selectFrom('offer_products').select('product_id').where('offer_id', '=', line.offer.id).orderBy('product_id').execute();
    const granted = await insertGrant(ctx, { siteId, contactId, offerId: line.offer.id, purchaseId: line.purchaseId, productIds: products.map((p) => Number(p.product_id)) });
    if (granted !== null) await recordWelcomeEmail(ctx, { siteId, contactId, email: customer.email, title: line.offer.title });
  }
  const transactionIds: number[] = [];
  for (const charge of charges) {
    transactionIds.push(await insertTransaction(ctx, { ...transactionOf(base, charge), state: 'succeeded', purchaseIds: charge.lines.map((l) => l.purchaseId!) }));
  }
  const orderId = charges.length === 0 ? null : await insertOrder(ctx, { ...base, lines });

  // The events, once every record they show is written (a purchase's payload links its
  // transactions).
  const eventIds: number[] = [];
  const customerRecord = { type: 'customers', id: customer.id };
  for (const line of lines) {
    eventIds.push(
      await recordEvent(ctx, {
        siteId,
        type: 'purchase',
        records: [{ type: 'purchases', id: line.purchaseId! }, { type: 'offers', id: line.offer.id }, customerRecord],
        hookResourceIds: [line.offer.id],
      }),
    );
  }
  for (const [i, charge] of charges.entries()) {
    eventIds.push(
      await announcePayment(ctx, {
        siteId,
        transactionId: transactionIds[i]!,
        customerId: customer.id,
        offerIds: charge.lines.map((l) => l.offer.id),
        amountInCents: charge.amount,
        currency: main.currency,
        title: charge.lines.map((l) => l.offer.title).join(', '),
      }),
    );
  }
  if (orderId !== null) {
    const items = await db.selectFrom('order_items').select('id').where('order_id', '=', orderId).orderBy('id').execute();
    eventIds.push(
      await recordEvent(ctx, {
        siteId,
        type: 'order_created',
        records: [{ type: 'transactions', id: transactionIds[0]! }, customerRecord, { type: 'orders', id: orderId }, ...items.map((item) => ({ type: 'order_items', id: Number(item.id) }))],
        hookResourceIds: lines.map((l) => l.offer.id),
      }),
    );
  }
  return { ...base, purchaseId: lines[0]!.purchaseId!, purchaseIds: lines.map((l) => l.purchaseId!), transactionIds, orderId, declined: false, eventIds };
}

async function loadOffers(ctx: WriteContext, ids: readonly number[]): Promise<Map<number, OfferRow>> {
  const rows = await ctx.handle.db
    .selectFrom('offers')
    .select(['id', 'title', 'currency', 'price_in_cents', 'payment_type', 'single', 'billing_period_months', 'installment_count'])
    .where('id', 'in', [...ids])
    .execute();
  return new Map(
    rows.map((o) => [
      Number(o.id),
      {
        id: Number(o.id),
        title: o.title,
        currency: o.currency,
        priceInCents: Number(o.price_in_cents),
        paymentType: o.payment_type,
        single: ctx.handle.traits.decodeBoolean(o.single) === true,
        billingPeriodMonths: o.billing_period_months === null ? 1 : Number(o.billing_period_months),
        installmentCount: o.installment_count === null ? 3 : Number(o.installment_count),
      },
    ]),
  );
}

function lineOf(offer: OfferRow, quantity: number, coupon: { code: string; share: number } | null): Line {
  const price = offer.paymentType === 'free' ? 0 : offer.priceInCents;
  const discount = coupon ? unitDiscount(price, coupon.share) : 0;
  return { offer, quantity, amount: (price - discount) * quantity, discount: discount * quantity, coupon: coupon?.code ?? null };
}

/** One bundled charge for the one-time lines, one per subscription or plan; none for free ones. */
function chargesOf(lines: readonly Line[]): Charge[] {
  const oneTime = lines.filter((l) => l.offer.paymentType === 'one_time');
  const charges: Charge[] = [];
  if (oneTime.length > 0) charges.push({ lines: oneTime, action: 'charge', paymentType: 'one_time', amount: oneTime.reduce((sum, l) => sum + l.amount, 0) });
  for (const line of lines) {
    if (line.offer.paymentType === 'subscription') charges.push({ lines: [line], action: 'subscription_charge', paymentType: 'subscription', amount: line.amount });
    else if (line.offer.paymentType === 'multipay') charges.push({ lines: [line], action: 'charge', paymentType: 'multipay', amount: line.amount });
  }
  return charges;
}

function transactionOf(base: { siteId: number; customerId: number }, charge: Charge) {
  return {
    siteId: base.siteId,
    customerId: base.customerId,
    offerId: charge.lines.length === 1 ? charge.lines[0]!.offer.id : null,
    action: charge.action,
    paymentType: charge.paymentType,
    amountInCents: charge.amount,
    salesTaxInCents: 0,
    currency: charge.lines[0]!.offer.currency,
  };
}

/** The contact with this email in the site (its name updated when one is given), else a new one. */
async function upsertContact(ctx: WriteContext, siteId: number, email: string, name: string | undefined): Promise<number> {
  const existing = await ctx.handle.db.selectFrom('contacts').select(['id', 'name']).where('site_id', '=', siteId).where('email', '=', email).executeTakeFirst();
  const given = name?.trim() ?? '';
  const attributes: Record<string, unknown> = given === '' ? {} : { name: given };
  if (!existing) return createContact(ctx, { attributes: { email, ...attributes }, relationships: {}, meta: {}, targets: { site: { id: siteId, siteId } } });
  const id = Number(existing.id);
  if (given !== '' && given !== existing.name) await updateContact(ctx, { id, siteId }, { attributes, relationships: {}, meta: {}, targets: {} });
  return id;
}

async function insertPurchase(ctx: WriteContext, p: { siteId: number; customerId: number; line: Line; cardholderName: string | null }): Promise<number> {
  const { db, traits } = ctx.handle;
  const { offer } = p.line;
  const at = traits.encodeTimestamp(ctx.now);
  let nextChargeAt: Date | null = null;
  if (offer.paymentType === 'subscription') nextChargeAt = plusMonths(ctx.now, offer.billingPeriodMonths);
  if (offer.paymentType === 'multipay' && offer.installmentCount > 1) nextChargeAt = plusMonths(ctx.now, 1);
  const row = await db
    .insertInto('purchases')
    .values({
      site_id: p.siteId,
      customer_id: p.customerId,
      offer_id: offer.id,
      amount_in_cents: p.line.amount,
      payment_type: offer.paymentType,
      multipay_payments_made: offer.paymentType === 'multipay' ? 1 : null,
      opt_in: traits.encodeBoolean(false),
      raw_extra_contact_information: traits.encodeJson({}),
      currency: offer.currency,
      effective_start_at: at,
      cardholder_name: p.cardholderName,
      billing_address_zip: null,
      deactivated_at: null,
      deactivation_reason: null,
      coupon_code: p.line.coupon,
      source: 'checkout',
      referrer: null,
      quantity: p.line.quantity,
      subscription_status: offer.paymentType === 'subscription' ? 'active' : null,
      subscription_canceled_at: null,
      next_charge_at: nextChargeAt === null ? null : traits.encodeTimestamp(nextChargeAt),
      created_at: at,
      updated_at: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

async function insertOrder(ctx: WriteContext, o: { siteId: number; customerId: number; lines: readonly Line[] }): Promise<number> {
  const { db, traits } = ctx.handle;
  const at = traits.encodeTimestamp(ctx.now);
  // The site is locked for the write (records.find), so the highest number cannot move meanwhile.
  const highest = await db.selectFrom('orders').select((eb) => eb.fn.max('order_number').as('n')).where('site_id', '=', o.siteId).executeTakeFirst();
  const orderNumber = highest?.n === null || highest?.n === undefined ? 1001 : Number(highest.n) + 1;
  const currency = o.lines[0]!.offer.currency;
  const subtotal = o.lines.reduce((sum, l) => sum + l.amount, 0);
  const row = await db
    .insertInto('orders')
    .values({
      site_id: o.siteId,
      customer_id: o.customerId,
      order_number: orderNumber,
      currency_code: currency,
      fulfilled_at: at,
      total_price_in_cents: subtotal,
      subtotal_in_cents: subtotal,
      sales_tax_amount_in_cents: 0,
      discount_amount_in_cents: o.lines.reduce((sum, l) => sum + l.discount, 0),
      created_at: at,
      updated_at: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const orderId = Number(row.id);
  await db
    .insertInto('order_items')
    .values(
      o.lines.map((l) => ({
        site_id: o.siteId,
        order_id: orderId,
        quantity: l.quantity,
        currency_code: currency,
        item_type: l.offer.paymentType === 'subscription' ? 'Subscription' : 'Offer',
        item_id: l.offer.id,
        title: l.offer.title,
        fulfilled_at: at,
        total_price_in_cents: l.amount,
        subtotal_in_cents: l.amount,
        sales_tax_amount_in_cents: 0,
        discount_amount_in_cents: l.discount,
        created_at: at,
        updated_at: at,
      })),
    )
    .execute();
  return orderId;
}

/** The answer to a declined checkout, sent after its failed transactions are committed. */
export function paymentDeclined(result: CheckoutResult): ApiError {
  return new ApiError(402, [
    {
      code: 'payment_declined',
      title: 'Payment Required',
      detail: `The card was declined (payment_outcome "declined"): no purchase was made; the failed payment is transaction ${result.transactionIds.join(', ')}`,
      source: { pointer: CHECKOUT_POINTERS.paymentOutcome },
    },
  ]);
}
