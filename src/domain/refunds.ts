// Refunds (POST /v1/test_helpers/transactions/{id}/refund; docs/sandbox.md, "Commerce"), in the
// caller's transaction:
//
// - Only a successful `charge` or `subscription_charge` with money in it can be refunded (422
//   not_refundable otherwise: a refund, a failed charge, a free one).
// - A refund is a `refund` transaction of a negative amount (as the demo data has them), state
//   succeeded, of the charge's customer, offer, payment type and currency, linked to the same
//   purchases and naming the charge (transactions.refunded_transaction_id). Its sales tax is the
//   charge's, in proportion. The customer's net revenue goes down by the amount. No
//   payment_succeeded event (nothing was paid) and no email.
// - The amount defaults to what is left of the charge; partial refunds add up and never exceed
//   the charge (422 at /data/attributes/amount_in_cents).
// - Access: once a charge is refunded in full, each one-time purchase it paid for that is still
//   active is deactivated with the reason "refunded", ending its grants and memberships (the
//   purchase deactivation of purchases.ts). A partial refund changes no access, and neither
//   does refunding a subscription or payment plan payment: cancel or deactivate the purchase for
//   that, as on the platform.
import { ApiError, unprocessable } from '../jsonapi/errors.js';
import type { RecordAccess } from '../jsonapi/engine.js';
import type { WriteContext } from '../jsonapi/resource.js';
import { insertTransaction } from './payments.js';
import { deactivate } from './purchases.js';

export const REFUNDED_REASON = 'refunded';
export const REFUND_AMOUNT_POINTER = '/data/attributes/amount_in_cents';

export interface RefundResult {
  refundId: number;
  siteId: number;
  amountInCents: number;
  /** Purchases deactivated because their charge is now refunded in full. */
  deactivatedPurchaseIds: number[];
}

const notRefundable = (detail: string) => new ApiError(422, [{ code: 'not_refundable', title: 'Unprocessable Entity', detail }]);

export async function refundTransaction(
  ctx: WriteContext,
  records: RecordAccess,
  transactionId: number | string,
  amountInCents?: number,
): Promise<RefundResult> {
  const target = await records.find('transactions', transactionId);
  const { db } = ctx.handle;
  const charge = await db.selectFrom('transactions').selectAll().where('id', '=', target.id).executeTakeFirstOrThrow();
  if (charge.action !== 'charge' && charge.action !== 'subscription_charge') {
    throw notRefundable(`Transaction ${target.id} is a ${charge.action}; only a charge or a subscription charge can be refunded`);
  }
  if (charge.state !== 'succeeded') throw notRefundable(`Transaction ${target.id} is ${charge.state}; only a successful charge can be refunded`);
  const charged = Number(charge.amount_in_cents);
  if (charged <= 0) throw notRefundable(`Transaction ${target.id} charged nothing; there is nothing to refund`);
  const before = await db
    .selectFrom('transactions')
    .select((eb) => eb.fn.sum<number | string | null>('amount_in_cents').as('n'))
    .where('refunded_transaction_id', '=', target.id)
    .where('action', '=', 'refund')
    .where('state', '=', 'succeeded')
    .executeTakeFirst();
  const refunded = -Number(before?.n ?? 0);
  const left = charged - refunded;
  if (left <= 0) throw notRefundable(`Transaction ${target.id} is refunded in full already`);
  const amount = amountInCents ?? left;
  if (!Number.isInteger(amount) || amount < 1) throw unprocessable('invalid_attribute', 'amount_in_cents must be a whole number of cents above 0', REFUND_AMOUNT_POINTER);
  if (amount > left) {
    throw unprocessable('refund_exceeds_charge', `Only ${left} of the ${charged} cents of transaction ${target.id} are left to refund (${refunded} refunded already)`, REFUND_AMOUNT_POINTER);
  }
  const purchases = await db
    .selectFrom('purchase_transactions')
    .innerJoin('purchases', 'purchases.id', 'purchase_transactions.purchase_id')
    .select(['purchases.id', 'purchases.payment_type'])
    .where('purchase_transactions.transaction_id', '=', target.id)
    .orderBy('purchases.id')
    .execute();
  const tax = Number(charge.sales_tax_in_cents);
  const refundId = await insertTransaction(ctx, {
    siteId: target.siteId,
    customerId: Number(charge.customer_id),
    offerId: charge.offer_id === null ? null : Number(charge.offer_id),
    action: 'refund',
    state: 'succeeded',
    paymentType: charge.payment_type ?? 'one_time',
    amountInCents: -amount,
    salesTaxInCents: -Math.round((tax * amount) / charged),
    currency: charge.currency,
    purchaseIds: purchases.map((p) => Number(p.id)),
    refundedTransactionId: target.id,
  });
  const deactivatedPurchaseIds: number[] = [];
  if (amount === left) {
    for (const purchase of purchases) {
      if (purchase.payment_type !== 'one_time') continue;
      if (await deactivate(ctx, { id: Number(purchase.id), siteId: target.siteId }, REFUNDED_REASON)) deactivatedPurchaseIds.push(Number(purchase.id));
    }
  }
  return { refundId, siteId: target.siteId, amountInCents: amount, deactivatedPurchaseIds };
}
