// Migration 0010_sandbox on a database seeded before it: purchases.next_charge_at is filled in for
// active subscriptions and payment plans with installments to come (the first time after now of
// their schedule) and left null for the rest; each site's data version moves on. And the demo
// seed fills it for new databases.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Migrator } from 'kysely';
import { parseDatabaseUrl, type DatabaseConfig } from '../../src/config.js';
import { connectDatabase, dropSchema, migrateToLatest, type DatabaseHandle } from '../../src/db/connect.js';
import { MIGRATIONS, migrationProvider } from '../../src/db/migrations/index.js';
import { nextChargeAfter } from '../../src/db/migrations/0010_sandbox.js';
import { createAccount, createSite } from '../../src/domain/accounts.js';
import { seedDemoData } from '../../src/demo/seed.js';
import { builders, type Builders } from '../support/builders.js';
import { DIALECTS, TestClock, type DialectName } from '../support/harness.js';

const DAY_MS = 86_400_000;

function databaseConfig(dialect: DialectName): DatabaseConfig {
  const problems: string[] = [];
  const config = parseDatabaseUrl(dialect === 'sqlite' ? 'sqlite::memory:' : process.env.TEST_DATABASE_URL!, 'test database', problems);
  if (!config) throw new Error(problems.join('; '));
  return config;
}

/** The k-th charge of a schedule, counted as JavaScript adds months. */
const monthsAfter = (start: Date, months: number) => {
  const d = new Date(start);
  d.setUTCMonth(d.getUTCMonth() + months);
  return d;
};

describe('nextChargeAfter', () => {
  it('is the first whole period after now, never the start itself, and none past the last installment', () => {
    const start = new Date('2026-01-31T10:00:00.000Z');
    assert.deepEqual(nextChargeAfter(start, 1, new Date('2026-01-31T10:00:00.000Z')), monthsAfter(start, 1));
    assert.deepEqual(nextChargeAfter(start, 1, new Date('2025-06-01T00:00:00.000Z')), monthsAfter(start, 1), 'a start in the future: its first period');
    assert.deepEqual(nextChargeAfter(start, 1, new Date('2026-03-03T10:00:00.000Z')), monthsAfter(start, 2), 'February 31 is March 3, not after now: March 31 is next');
    assert.deepEqual(nextChargeAfter(start, 12, new Date('2029-05-01T00:00:00.000Z')), monthsAfter(start, 48));
    assert.deepEqual(nextChargeAfter(start, 1, new Date('2026-02-15T00:00:00.000Z'), 3), monthsAfter(start, 1));
    assert.equal(nextChargeAfter(start, 1, new Date('2026-04-15T00:00:00.000Z'), 3), null, 'the third payment was due on March 31');
    // Against a plain walk, over many starts and nows.
    for (let i = 0; i < 500; i++) {
      const s = new Date(Date.UTC(2020, 0, 1) + Math.floor(i * 7.3 * DAY_MS));
      const now = new Date(Date.UTC(2026, 5, 1) + (i % 40) * DAY_MS);
      const period = [1, 3, 12][i % 3]!;
      let k = 1;
      while (monthsAfter(s, k * period) <= now) k++;
      assert.deepEqual(nextChargeAfter(s, period, now), monthsAfter(s, k * period));
    }
  });
});

for (const dialect of DIALECTS) {
  describe(`migration 0010_sandbox fills purchases.next_charge_at [${dialect}]`, () => {
    const config = databaseConfig(dialect);
    const schema = dialect === 'postgres' ? `test_${randomBytes(6).toString('hex')}` : undefined;
    // Close to real time: the migration schedules from the moment it runs.
    const clock = new TestClock(new Date());
    const realStart = Date.now();
    let handle: DatabaseHandle;
    let b: Builders;
    let siteId: number;
    const ids: Record<string, number> = {};
    const starts: Record<string, Date> = {};
    let versionBefore = 0;

    const version = async () =>
      Number((await handle.db.selectFrom('site_counters').select('value').where('site_id', '=', siteId).where('counter', '=', 'version').executeTakeFirstOrThrow()).value);

    before(async () => {
      handle = await connectDatabase(config, schema ? { schema, poolSize: 2 } : {});
      const earlier = MIGRATIONS.slice(0, MIGRATIONS.findIndex((m) => m.name === '0010_sandbox'));
      const migrator = new Migrator({ db: handle.db, provider: migrationProvider(handle.traits, earlier), ...(schema ? { migrationTableSchema: schema } : {}) });
      const { error } = await migrator.migrateToLatest();
      if (error) throw error;

      const accountId = await createAccount(handle, { name: 'Before 0010' }, clock);
      siteId = await createSite(handle, { accountId, title: 'Old shop', subdomain: `old-${randomBytes(4).toString('hex')}` }, clock);
      b = builders({ handle, clock, tenant: { siteId } });
      const monthly = await b.offer({ payment_type: 'subscription', price_description: '$49.00/month' });
      const yearly = await b.offer({ payment_type: 'subscription', price_description: '$490.00/year' });
      const plan = await b.offer({ payment_type: 'multipay', price_description: '3 payments of $100.00' });
      const oneTime = await b.offer();
      const customer = await b.customer();
      const buy = async (name: string, offerId: number, daysAgo: number, extra: Record<string, unknown> = {}) => {
        starts[name] = new Date(clock.now().getTime() - daysAgo * DAY_MS);
        ids[name] = await b.purchase({ customerId: customer.id, offerId, created_at: starts[name], ...extra });
      };
      await buy('monthly', monthly, 40, { payment_type: 'subscription', subscription_status: 'active' });
      await buy('yearly', yearly, 400, { payment_type: 'subscription', subscription_status: 'active' });
      await buy('canceled', monthly, 40, { payment_type: 'subscription', subscription_status: 'canceled', subscription_canceled_at: clock.now() });
      await buy('deactivated', monthly, 40, { payment_type: 'subscription', subscription_status: 'active', deactivated: true });
      await buy('plan', plan, 10, { payment_type: 'multipay', multipay_payments_made: 1 });
      await buy('paid plan', plan, 70, { payment_type: 'multipay', multipay_payments_made: 3 });
      await buy('overdue plan', plan, 150, { payment_type: 'multipay', multipay_payments_made: 2 });
      await buy('one-time', oneTime, 5);
      // Created long ago, started (effective_start_at) 20 days ago: scheduled from the start.
      starts.started = new Date(clock.now().getTime() - 20 * DAY_MS);
      ids.started = await b.purchase({
        customerId: customer.id,
        offerId: monthly,
        created_at: new Date(clock.now().getTime() - 300 * DAY_MS),
        effective_start_at: starts.started,
        payment_type: 'subscription',
        subscription_status: 'active',
      });
      versionBefore = await version();
      await migrateToLatest(handle);
    });
    after(async () => {
      await handle.close();
      if (schema) await dropSchema(config, schema);
    });

    const nextChargeOf = async (name: string) => {
      const row = await handle.db.selectFrom('purchases').select('next_charge_at').where('id', '=', ids[name]!).executeTakeFirstOrThrow();
      const text = handle.traits.decodeTimestamp(row.next_charge_at);
      return text === null ? null : new Date(text);
    };
    /** The first charge after the migration ran (real time, between the test's start and now). */
    const firstAfter = (start: Date, period: number) => {
      let k = 1;
      while (monthsAfter(start, k * period).getTime() <= realStart) k++;
      return monthsAfter(start, k * period);
    };

    it('active subscriptions: the first renewal after now, monthly or yearly, from effective_start_at when there is one', async () => {
      assert.deepEqual(await nextChargeOf('monthly'), firstAfter(starts.monthly!, 1));
      assert.deepEqual(await nextChargeOf('monthly'), monthsAfter(starts.monthly!, 2), '40 days in: the second renewal');
      assert.deepEqual(await nextChargeOf('yearly'), monthsAfter(starts.yearly!, 24));
      assert.deepEqual(await nextChargeOf('started'), monthsAfter(starts.started!, 1));
    });

    it('payment plans with installments to come: the next installment; none once paid or past the schedule', async () => {
      assert.deepEqual(await nextChargeOf('plan'), monthsAfter(starts.plan!, 1));
      assert.equal(await nextChargeOf('paid plan'), null);
      assert.equal(await nextChargeOf('overdue plan'), null);
    });

    it('canceled, deactivated and one-time purchases have none; the site\'s data version moved on', async () => {
      for (const name of ['canceled', 'deactivated', 'one-time']) assert.equal(await nextChargeOf(name), null, name);
      assert.ok((await version()) > versionBefore, 'cached answers of the site are retired');
      const counted = await handle.db.selectFrom('site_counters').select('value').where('site_id', '=', siteId).where('counter', '=', 'rows:purchases').executeTakeFirstOrThrow();
      assert.equal(Number(counted.value), Object.keys(ids).length);
    });

    it('the demo seed fills next_charge_at for a new database: every active subscription has one, in the future', async () => {
      const accountId = await createAccount(handle, { name: 'Demo' }, clock);
      const demoSite = await createSite(handle, { accountId, title: 'Demo', subdomain: `demo-${randomBytes(4).toString('hex')}` }, clock);
      await seedDemoData(handle, { accountId, siteId: demoSite }, clock);
      const rows = await handle.db
        .selectFrom('purchases')
        .select(['id', 'next_charge_at', 'subscription_status', 'deactivated_at'])
        .where('site_id', '=', demoSite)
        .execute();
      const active = rows.filter((r) => r.subscription_status === 'active' && r.deactivated_at === null);
      assert.ok(active.length > 0);
      for (const r of active) {
        const at = handle.traits.decodeTimestamp(r.next_charge_at);
        assert.ok(at !== null && Date.parse(at) > clock.now().getTime(), `purchase ${r.id} renews in the future`);
      }
    });
  });
}
