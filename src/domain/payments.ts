// Money moving: the transaction rows of charges, renewals and refunds, with the purchases they
// pay for, the customer's net revenue (successful payments less refunds), the receipt email of a
// successful payment and its payment_succeeded event. Shared by checkouts (checkouts.ts),
// renewals and installments (renewals.ts) and refunds (refunds.ts), so that each writes the same
// rows the same way. Runs inside the caller's transaction.
import type { WriteContext } from '../jsonapi/resource.js';
import { recordEvent } from './outbox.js';

export interface PaymentInput {
  siteId: number;
  customerId: number;
  /** Null for a transaction paying for several offers at once (a bundle). */
  offerId: number | null;
  action: 'charge' | 'subscription_charge' | 'refund';
  state: 'succeeded' | 'failed';
  paymentType: string;
  /** Negative for a refund. */
  amountInCents: number;
  salesTaxInCents: number;
  currency: string;
  /** The purchases it pays for (purchase_transactions). */
  purchaseIds: readonly number[];
  /** A refund: the charge it gives money back from. */
  refundedTransactionId?: number;
}

/** Writes one transaction at ctx.now, linked to its purchases; a success changes net revenue. */
export async function insertTransaction(ctx: WriteContext, p: PaymentInput): Promise<number> {
  const { db, traits } = ctx.handle;
  const at = traits.encodeTimestamp(ctx.now);
  const row = await db
    .insertInto('transactions')
    .values({
      site_id: p.siteId,
      customer_id: p.customerId,
      offer_id: p.offerId,
      action: p.action,
      state: p.state,
      payment_type: p.paymentType,
      amount_in_cents: p.amountInCents,
      sales_tax_in_cents: p.salesTaxInCents,
      currency: p.currency,
      refunded_transaction_id: p.refundedTransactionId ?? null,
      created_at: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const id = Number(row.id);
  if (p.purchaseIds.length > 0) {
    await db
      .insertInto('purchase_transactions')
      .values(p.purchaseIds.map((purchaseId) => ({ purchase_id: purchaseId, transaction_id: id })))
      .execute();
  }
  if (p.state === 'succeeded' && p.amountInCents !== 0) {
    await db
      .updateTable('customers')
      .set((eb) => ({ net_revenue_cents: eb('net_revenue_cents', '+', p.amountInCents), updated_at: at }))
      .where('id', '=', p.customerId)
      .execute();
  }
  return id;
}

/**
 * What follows a successful payment (not a refund): the receipt email to the customer and the
 * payment_succeeded event (transaction, customer), which hooks limited to one of `offerIds` see;
 * returns the event's id.
 */
export async function announcePayment(
  ctx: WriteContext,
  p: { siteId: number; transactionId: number; customerId: number; offerIds: readonly number[]; amountInCents: number; currency: string; title: string },
): Promise<number> {
  const { db, traits } = ctx.handle;
  const customer = await db.selectFrom('customers').select(['email', 'contact_id']).where('id', '=', p.customerId).executeTakeFirstOrThrow();
  const amount = `${(p.amountInCents / 100).toFixed(2)} ${p.currency}`;
  await db
    .insertInto('outgoing_messages')
    .values({
      site_id: p.siteId,
      contact_id: customer.contact_id,
      kind: 'receipt',
      to_email: customer.email,
      subject: `Your receipt for ${p.title}`,
      body: `Thank you for your payment of ${amount} for ${p.title} (transaction ${p.transactionId}).`,
      created_at: traits.encodeTimestamp(ctx.now),
    })
    .execute();
  return recordEvent(ctx, {
    siteId: p.siteId,
    type: 'payment_succeeded',
    records: [
      { type: 'transactions', id: p.transactionId },
      { type: 'customers', id: p.customerId },
    ],
    hookResourceIds: p.offerIds,
  });
}

/** `months` calendar months after `date` (UTC), as the demo data counts them (src/demo/timeline.ts). */
export function plusMonths(date: Date, months: number): Date {
  const d = new Date(date.getTime());
  d.setUTCMonth(d.getUTCMonth() + months);
  return d;
}

/**
 * The first due time of a schedule that starts at `start` and falls due every `periodMonths`
 * months that is after `after`: counted from the start, so the day of the month does not drift.
 */
export function nextDueAfter(start: Date, periodMonths: number, after: Date): Date {
  const months = (after.getUTCFullYear() - start.getUTCFullYear()) * 12 + after.getUTCMonth() - start.getUTCMonth();
  let k = Math.max(1, Math.floor(months / periodMonths) - 1);
  while (plusMonths(start, k * periodMonths) <= after) k++;
  return plusMonths(start, k * periodMonths);
}
