// Coupon codes. The platform's coupons are not in the API (upstream lists none), so sitebiz knows
// one fixed set, the codes the demo data uses, valid in every site: a checkout with one of them
// (any case) takes that share off the price of the offer bought (not of its order bumps), per
// unit, rounded to the cent. Any other code is refused (422 at /data/attributes/coupon_code).
import { unprocessable } from '../jsonapi/errors.js';

export type Coupon = 'WELCOME10' | 'SPRING25' | 'PODCAST15' | 'VIPFRIEND';

/** The share of the price each code takes off. */
export const COUPON_DISCOUNTS: Readonly<Record<Coupon, number>> = { WELCOME10: 0.1, SPRING25: 0.25, PODCAST15: 0.15, VIPFRIEND: 0.5 };

/** The code as stored on the purchase (upper case) and its share; 422 for an unknown code. */
export function findCoupon(code: string, pointer: string): { code: Coupon; share: number } {
  const upper = code.trim().toUpperCase();
  if (!Object.hasOwn(COUPON_DISCOUNTS, upper)) {
    throw unprocessable('unknown_coupon', `No coupon with code ${JSON.stringify(code)}; the sandbox knows ${Object.keys(COUPON_DISCOUNTS).join(', ')}`, pointer);
  }
  return { code: upper as Coupon, share: COUPON_DISCOUNTS[upper as Coupon] };
}

/** The discount of one unit of a price, in cents. */
export const unitDiscount = (priceInCents: number, share: number): number => Math.round(priceInCents * share);
