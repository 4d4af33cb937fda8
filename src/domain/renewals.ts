// Renewals and installments (docs/sandbox.md, "Commerce"): what falls due when the account's
// clock moves. chargeDueRenewals charges every purchase of the sites whose next_charge_at is at or
// before `until`, in time order (next_charge_at, then id), each at its due time (the transaction,
// its event and its receipt carry that time), again and again until its next due time passes
// `until`: a year's jump makes 12 monthly charges.
//
// - A subscription renews with a `subscription_charge`; a payment plan's installment is a
//   `charge` and counts up multipay_payments_made; after the last installment next_charge_at is
//   null. Each successful payment sends a receipt and a payment_succeeded event, and raises net
//   revenue (payments.ts). The amount is that of the purchase's last single-offer charge (the
//   same price and tax as before), else the purchase's amount.
// - Next due times count from the purchase's start (effective_start_at), so the day of the month
//   does not drift.
// - Not charged: a deactivated purchase, or a subscription that is not active (canceled).
// - purchases.fail_next_charge (POST .../fail_next_payment) makes the next payment fail: a
//   `failed` transaction, no event, no receipt, no revenue, and the flag is cleared. Access after
//   a failure: the memberships the purchase gives are suspended (memberships.suspended_at, so the
//   has_product_id filters stop matching, as the demo's past-due purchases) and the schedule goes
//   on (no retry): the next successful payment lifts the suspension. A failed installment is not
//   counted, so the plan takes one more month. The purchase stays active; cancel it to end it.
//
// Racing callers (two clock advances): each takes the write locks of the sites first, in id order,
// and claims each payment with a conditional UPDATE (WHERE next_charge_at = the value read), so a
// payment is made by exactly one of them, on both databases.
import { lockSiteWrites } from '../db/site-counters.js';
import type { WriteContext } from '../jsonapi/resource.js';
import { announcePayment, insertTransaction, nextDueAfter } from './payments.js';

/** Due purchases read at once; a batch is re-read when a charge makes a purchase due again. */
const BATCH = 200;

interface DueRow {
  id: number;
  siteId: number;
  customerId: number;
  offerId: number;
  title: string;
  paymentType: string;
  amountInCents: number;
  currency: string;
  start: Date;
  /** next_charge_at as read (the claim compares with exactly this value). */
  dueRaw: unknown;
  due: Date;
  paymentsMade: number;
  periodMonths: number;
  installments: number;
  fail: boolean;
}

/** Charges what is due in these sites up to `until`; returns how many payments were attempted. */
export async function chargeDueRenewals(ctx: WriteContext, siteIds: readonly number[], until: Date): Promise<number> {
  if (siteIds.length === 0) return 0;
  const { db, traits } = ctx.handle;
  for (const siteId of [...new Set(siteIds)].sort((a, b) => a - b)) await lockSiteWrites(db, traits, siteId);
  let attempted = 0;
  for (;;) {
    const due = await readDue(ctx, siteIds, until);
    if (due.length === 0) return attempted;
    // Strict time order: stop the batch where a purchase charged in it falls due again before
    // the next row of the batch, and read again.
    let earliestNext = Number.POSITIVE_INFINITY;
    let claimed = 0;
    for (const row of due) {
      if (row.due.getTime() >= earliestNext) break;
      const next = await chargeOne(ctx, row);
      if (next === undefined) continue;
      claimed++;
      if (next !== null && next <= until) earliestNext = Math.min(earliestNext, next.getTime());
    }
    // Each claimed payment moves its purchase on; a batch with none claimed would read the same
    // rows again (never expected while the sites are locked, but never loop on it).
    if (claimed === 0) return attempted;
    attempted += claimed;
  }
}

async function readDue(ctx: WriteContext, siteIds: readonly number[], until: Date): Promise<DueRow[]> {
  const { db, traits } = ctx.handle;
  const rows = await db
    .selectFrom('purchases')
    .innerJoin('offers', 'offers.id', 'purchases.offer_id')
    .select([
      'purchases.id',
      'purchases.site_id',
      'purchases.customer_id',
      'purchases.offer_id',
      'offers.title',
      'purchases.payment_type',
      'purchases.amount_in_cents',
      'purchases.currency',
      'purchases.effective_start_at',
      'purchases.created_at',
      'purchases.next_charge_at',
      'purchases.multipay_payments_made',
      'purchases.fail_next_charge',
      'offers.billing_period_months',
      'offers.installment_count',
    ])
    .where('purchases.site_id', 'in', [...siteIds])
    .where('purchases.next_charge_at', 'is not', null)
    .where('purchases.next_charge_at', '<=', traits.encodeTimestamp(until))
    .where('purchases.deactivated_at', 'is', null)
    .where((eb) => eb.or([eb('purchases.subscription_status', 'is', null), eb('purchases.subscription_status', '=', 'active')]))
    .orderBy('purchases.next_charge_at')
    .orderBy('purchases.id')
    .limit(BATCH)
    .execute();
  const date = (value: unknown) => new Date(traits.decodeTimestamp(value)!);
  return rows.map((r) => ({
    id: Number(r.id),
    siteId: Number(r.site_id),
    customerId: Number(r.customer_id),
    offerId: Number(r.offer_id),
    title: r.title,
    paymentType: r.payment_type,
    amountInCents: Number(r.amount_in_cents),
    currency: r.currency,
    start: date(r.effective_start_at ?? r.created_at),
    dueRaw: r.next_charge_at,
    due: date(r.next_charge_at),
    paymentsMade: Number(r.multipay_payments_made ?? 0),
    periodMonths: r.payment_type === 'subscription' ? Number(r.billing_period_months ?? 1) : 1,
    installments: Number(r.installment_count ?? 3),
    fail: traits.decodeBoolean(r.fail_next_charge) === true,
  }));
}

/**
 * Claims and makes one payment at its due time. Returns the purchase's next due time (null: none),
 * or undefined when another caller claimed it first.
 */
async function chargeOne(ctx: WriteContext, row: DueRow): Promise<Date | null | undefined> {
  const { db, traits } = ctx.handle;
  // Everything this payment writes carries its due time.
  const at: WriteContext = { ...ctx, now: row.due };
  const stamp = traits.encodeTimestamp(row.due);
  const plan = row.paymentType === 'multipay';
  const paymentsMade = plan && !row.fail ? row.paymentsMade + 1 : row.paymentsMade;
  const next = plan && paymentsMade >= row.installments ? null : nextDueAfter(row.start, row.periodMonths, row.due);
  const claimed = await db
    .updateTable('purchases')
    .set({
      next_charge_at: next === null ? null : traits.encodeTimestamp(next),
      fail_next_charge: traits.encodeBoolean(false),
      ...(plan ? { multipay_payments_made: paymentsMade } : {}),
      updated_at: stamp,
    })
    .where('id', '=', row.id)
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    .where('next_charge_at', '=', row.dueRaw as any)
    .executeTakeFirst();
  if (Number(claimed.numUpdatedRows) === 0) return undefined;

  const last = await db
    .selectFrom('transactions')
    .innerJoin('purchase_transactions', 'purchase_transactions.transaction_id', 'transactions.id')
    .select(['transactions.amount_in_cents', 'transactions.sales_tax_in_cents'])
    .where('purchase_transactions.purchase_id', '=', row.id)
    .where('transactions.offer_id', 'is not', null)
    .where('transactions.action', 'in', ['charge', 'subscription_charge'])
    .where('transactions.state', '=', 'succeeded')
    .orderBy('transactions.created_at', 'desc')
    .orderBy('transactions.id', 'desc')
    .executeTakeFirst();
  const amount = last ? Number(last.amount_in_cents) : row.amountInCents;
  const transactionId = await insertTransaction(at, {
    siteId: row.siteId,
    customerId: row.customerId,
    offerId: row.offerId,
    action: row.paymentType === 'subscription' ? 'subscription_charge' : 'charge',
    state: row.fail ? 'failed' : 'succeeded',
    paymentType: row.paymentType,
    amountInCents: amount,
    salesTaxInCents: last ? Number(last.sales_tax_in_cents) : 0,
    currency: row.currency,
    purchaseIds: [row.id],
  });
  await setSuspended(at, row.id, row.fail);
  if (!row.fail) {
    await announcePayment(at, { siteId: row.siteId, transactionId, customerId: row.customerId, offerIds: [row.offerId], amountInCents: amount, currency: row.currency, title: row.title });
  }
  return next;
}

/** Suspends (a failed payment) or resumes (a successful one) the memberships the purchase gives. */
async function setSuspended(ctx: WriteContext, purchaseId: number, suspended: boolean): Promise<void> {
  const { db, traits } = ctx.handle;
  const at = traits.encodeTimestamp(ctx.now);
  const grants = db.selectFrom('offer_grants').select('id').where('purchase_id', '=', purchaseId).where('revoked_at', 'is', null);
  await db
    .updateTable('memberships')
    .set({ suspended_at: suspended ? at : null, updated_at: at })
    .where('offer_grant_id', 'in', grants)
    .where('ended_at', 'is', null)
    .where('suspended_at', suspended ? 'is' : 'is not', null)
    .execute();
}
