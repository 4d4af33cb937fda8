// Purchases: the lifecycle the API can drive (the seed's state table and upstream 1.1.0). Called
// by the engine inside the request's transaction; a refusal changes nothing.
//
//   deactivate           active → deactivated (deactivated_at = now, deactivation_reason
//                        "deactivated through the API"). The subscription is NOT cancelled: its
//                        status stays as it was. The access the purchase gave ends: its offer
//                        grants are revoked and their memberships ended, so the contact filters
//                        (has_product_id, has_offer_id, previously_owned_product_id ...) see it at
//                        once. An already deactivated purchase: 422 purchase_not_active.
//   reactivate           deactivated free purchase → active (deactivated_at and the reason
//                        cleared), with a NEW grant of the offer and a membership per product of
//                        the offer. The revoked grant and ended memberships stay as history, so
//                        "previously owned" stays truthful for the time without access.
//                        Upstream: "this will not reactivate the subscription". An active purchase
//                        is 422 purchase_already_active; a paid one 422 purchase_not_free; one
//                        whose customer's contact was deleted 422 customer_detached.
//   cancel_subscription  subscription_status active → canceled (subscription_canceled_at = now),
//                        and the purchase is deactivated as above with the reason "subscription
//                        canceled". A purchase already deactivated (deactivate keeps the
//                        subscription) only has its subscription cancelled; its deactivation keeps
//                        its time and reason. Without an active subscription: 422
//                        no_active_subscription.
//
// Each transition is a conditional UPDATE (WHERE the state it starts from), so of two concurrent
// requests exactly one makes it and the other gets the 422, on both databases.
import { ApiError } from '../jsonapi/errors.js';
import type { WriteContext, WriteTarget } from '../jsonapi/resource.js';
import { endGrants, insertGrant } from './offer-grants.js';

export const DEACTIVATED_THROUGH_API = 'deactivated through the API';
export const SUBSCRIPTION_CANCELED = 'subscription canceled';

/** A purchase whose state does not allow the transition; there is no request member to point at. */
const cannot = (code: string, detail: string) => new ApiError(422, [{ code, title: 'Unprocessable Entity', detail }]);

export async function deactivatePurchase(ctx: WriteContext, record: WriteTarget): Promise<void> {
  if (!(await deactivate(ctx, record, DEACTIVATED_THROUGH_API))) {
    throw cannot('purchase_not_active', `Purchase ${record.id} is already deactivated; only an active purchase can be deactivated`);
  }
}

export async function reactivatePurchase(ctx: WriteContext, record: WriteTarget): Promise<void> {
  const db = ctx.handle.db;
  const purchase = await db
    .selectFrom('purchases')
    .innerJoin('customers', 'customers.id', 'purchases.customer_id')
    .select(['purchases.deactivated_at', 'purchases.payment_type', 'purchases.amount_in_cents', 'purchases.offer_id', 'customers.contact_id'])
    .where('purchases.id', '=', record.id)
    .executeTakeFirstOrThrow();
  if (purchase.deactivated_at === null) {
    throw cannot('purchase_already_active', `Purchase ${record.id} is active; only a deactivated purchase can be reactivated`);
  }
  if (purchase.payment_type !== 'free' && Number(purchase.amount_in_cents) !== 0) {
    throw cannot('purchase_not_free', `Purchase ${record.id} was paid for; only a free purchase can be reactivated`);
  }
  if (purchase.contact_id === null) {
    throw cannot('customer_detached', `The customer of purchase ${record.id} has no contact (it was deleted), so there is nobody to give access to`);
  }
  const updated = await db
    .updateTable('purchases')
    .set({ deactivated_at: null, deactivation_reason: null, updated_at: ctx.handle.traits.encodeTimestamp(ctx.now) })
    .where('id', '=', record.id)
    .where('deactivated_at', 'is not', null)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) {
    throw cannot('purchase_already_active', `Purchase ${record.id} is active; only a deactivated purchase can be reactivated`);
  }
  await grantAccess(ctx, record, Number(purchase.contact_id), Number(purchase.offer_id));
}

export async function cancelPurchaseSubscription(ctx: WriteContext, record: WriteTarget): Promise<void> {
  const at = ctx.handle.traits.encodeTimestamp(ctx.now);
  const canceled = await ctx.handle.db
    .updateTable('purchases')
    .set({ subscription_status: 'canceled', subscription_canceled_at: at, updated_at: at })
    .where('id', '=', record.id)
    .where('subscription_status', '=', 'active')
    .executeTakeFirst();
  if (Number(canceled.numUpdatedRows) === 0) {
    throw cannot('no_active_subscription', `Purchase ${record.id} has no active subscription to cancel`);
  }
  // Already deactivated (deactivate leaves the subscription running): nothing more to end.
  await deactivate(ctx, record, SUBSCRIPTION_CANCELED);
}

/**
 * Deactivates an active purchase and ends its access (grants revoked, memberships ended); false
 * when it was not active. Also used by refunds (src/domain/refunds.ts).
 */
export async function deactivate(ctx: WriteContext, record: WriteTarget, reason: string): Promise<boolean> {
  const db = ctx.handle.db;
  const at = ctx.handle.traits.encodeTimestamp(ctx.now);
  const updated = await db
    .updateTable('purchases')
    .set({ deactivated_at: at, deactivation_reason: reason, updated_at: at })
    .where('id', '=', record.id)
    .where('deactivated_at', 'is', null)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) return false;
  const grants = await db
    .selectFrom('offer_grants')
    .select('id')
    .where('purchase_id', '=', record.id)
    .where('revoked_at', 'is', null)
    .execute();
  await endGrants(ctx, grants.map((g) => Number(g.id)));
  return true;
}

/** A new grant of the offer for the purchase, and a current membership per product of the offer. */
async function grantAccess(ctx: WriteContext, record: WriteTarget, contactId: number, offerId: number): Promise<void> {
  const products = await ctx.handle.db.selectFrom('offer_products').select('product_id').where('offer_id', '=', offerId).orderBy('product_id').execute();
  await insertGrant(ctx, { siteId: record.siteId, contactId, offerId, purchaseId: record.id, productIds: products.map((p) => Number(p.product_id)) });
}
