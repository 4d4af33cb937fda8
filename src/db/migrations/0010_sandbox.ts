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
//   will), and purchases.fail_next_charge: the next one fails (fail_next_payment).
import { sql, type Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import type { AppMigration } from './index.js';

export const sandbox: AppMigration = {
  name: '0010_sandbox',
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
  },
};
