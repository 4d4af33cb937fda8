// The sandbox (docs/sandbox.md):
// - accounts.clock_offset_ms: how far the account's clock is ahead of real time. "Now" for
//   everything the account's keys do (new records' timestamps, the `*_in_last` filters,
//   renewals) is real time plus this offset; it only grows, through
//   POST /v1/test_helpers/clock/advance. Access tokens keep real time.
// - offers.billing_period_months (subscriptions: how often they renew) and
//   offers.installment_count (payment plans: how many payments in all), which the platform knows
//   and the earlier schema kept only in price_description. Existing offers are filled in from
//   their price description ("/year" renews yearly; "N payments of" has N payments).
// - purchases.next_charge_at: when the next renewal or installment falls due (null when none
//   will), and purchases.fail_next_charge: the next one fails (fail_next_payment). Existing
//   purchases are filled in (backfillNextCharges): an active subscription, or a payment plan with
//   installments to come, is next charged at the first time after now of its schedule (its start
//   plus whole billing periods), as the demo seed computes it.
import { sql, type Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import { updateManyRows } from '../site-counters.js';
import type { AppMigration } from './index.js';
import { nextDueAfter, plusMonths } from '../../domain/payments.js';

export const sandbox: AppMigration = {
  name: '0010_sandbox',
  summary: 'Adds the sandbox clock, offer billing periods and purchase renewal dates (computed for every purchase).',
  rewritesLargeTable: true,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    await db.schema.alterTable('accounts').addColumn('clock_offset_ms', 'bigint', (c) => c.notNull().defaultTo(0)).execute();

    await db.schema.alterTable('offers').addColumn('billing_period_months', 'integer').execute();
    await db.schema.alterTable('offers').addColumn('installment_count', 'integer').execute();
    await sql`UPDATE offers SET billing_period_months = CASE WHEN price_description LIKE '%/year%' OR price_description LIKE '%per year%' THEN 12 ELSE 1 END WHERE payment_type = 'subscription'`.execute(db);
    await sql`UPDATE offers SET billing_period_months = 1, installment_count = 3 WHERE payment_type = 'multipay'`.execute(db);
    // "N payments of ...": N installments, when the description starts with a number.
    const plans = await sql<{ id: number | string; price_description: string }>`SELECT id, price_description FROM offers WHERE payment_type = 'multipay'`.execute(db);
    for (const plan of plans.rows) {
      const count = /^\s*(\d{1,3})\s+payments?\b/i.exec(plan.price_description)?.[1];
      if (count && Number(count) >= 2) await sql`UPDATE offers SET installment_count = ${Number(count)} WHERE id = ${plan.id}`.execute(db);
    }

    await db.schema.alterTable('purchases').addColumn('next_charge_at', t.timestampType).execute();
    await db.schema
      .alterTable('purchases')
      .addColumn('fail_next_charge', t.booleanType, (c) => c.notNull().defaultTo(t.booleanType === 'boolean' ? sql`false` : sql`0`))
      .execute();
    // Renewals and installments that fall due, soonest first, per site.
    await db.schema
      .createIndex('purchases_next_charge_idx')
      .on('purchases')
      .columns(['site_id', 'next_charge_at', 'id'])
      .where(sql.ref('next_charge_at'), 'is not', null)
      .execute();
    await backfillNextCharges(db, t, new Date());
  },
};

/** Purchases read and written per statement: bounded memory and parameters on a large database. */
const BACKFILL_BATCH = 2_000;

/**
 * The first charge of a schedule after `now`: `start` plus k whole periods (k >= 1), and for a
 * payment plan only while k is below its installment count; null when none is left. The schedule
 * is the renewals' own (src/domain/payments.ts), so the backfill writes what they will expect.
 */
export function nextChargeAfter(start: Date, periodMonths: number, now: Date, installments?: number): Date | null {
  const next = nextDueAfter(start, periodMonths, now);
  // Due times grow with k: the k-th is at or past the installment count's exactly when it is not before that one.
  if (installments !== undefined && next.getTime() >= plusMonths(start, installments * periodMonths).getTime()) return null;
  return next;
}

/**
 * Fills purchases.next_charge_at where it is null, for active subscriptions and payment plans with
 * payments to come (not deactivated), in id order, BACKFILL_BATCH purchases a statement. Each
 * site's data version moves on once (updateManyRows), not once per purchase.
 */
export async function backfillNextCharges(db: Kysely<unknown>, t: DialectTraits, now: Date): Promise<number> {
  // The migration's tables are untyped here (migrations see the schema as it was).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const k = db as Kysely<any>;
  const castTimestamp = t.timestampType === 'text' ? sql.raw('text') : t.timestampType;
  let filled = 0;
  await updateManyRows(k, t.name, 'purchases', async () => {
    const sites = new Set<number>();
    for (let after = 0; ; ) {
      const rows: Array<Record<string, unknown>> = await k
        .selectFrom('purchases as p')
        .innerJoin('offers as o', 'o.id', 'p.offer_id')
        .select(['p.id', 'p.site_id', 'p.created_at', 'p.effective_start_at', 'p.payment_type', 'p.multipay_payments_made', 'o.billing_period_months', 'o.installment_count'])
        .where('p.id', '>', after)
        .where('p.deactivated_at', 'is', null)
        .where('p.next_charge_at', 'is', null)
        .where((eb) => eb.or([eb('p.subscription_status', '=', 'active'), eb('p.payment_type', '=', 'multipay')]))
        .orderBy('p.id')
        .limit(BACKFILL_BATCH)
        .execute();
      if (rows.length === 0) break;
      after = Number(rows[rows.length - 1]!.id);
      const due: Array<{ id: number; at: string }> = [];
      for (const row of rows) {
        const start = t.decodeTimestamp(row.effective_start_at) ?? t.decodeTimestamp(row.created_at);
        if (start === null) continue;
        const multipay = row.payment_type === 'multipay';
        const installments = multipay ? Number(row.installment_count ?? 0) : undefined;
        if (multipay && Number(row.multipay_payments_made ?? 0) >= installments!) continue;
        const at = nextChargeAfter(new Date(start), Math.max(1, Number(row.billing_period_months ?? 1)), now, installments);
        if (at === null) continue;
        due.push({ id: Number(row.id), at: t.encodeTimestamp(at) });
        sites.add(Number(row.site_id));
      }
      if (due.length === 0) continue;
      const cases = sql.join(
        due.map((d) => sql`when ${d.id} then cast(${d.at} as ${castTimestamp})`),
        sql` `,
      );
      await sql`update purchases set next_charge_at = case id ${cases} end where id in (${sql.join(due.map((d) => d.id))})`.execute(k);
      filled += due.length;
    }
    return sites;
  });
  return filled;
}
