// Migration 0007_financial_records on a database that already holds money: every row, id and
// counter survives the rebuild of customers, purchases, transactions and orders (SQLite) or the
// constraint swap (PostgreSQL); the indexes and counter triggers keep working; the new foreign key
// actions hold; and existing OAuth grants start a family each.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Migrator, sql } from 'kysely';
import { parseDatabaseUrl, type DatabaseConfig } from '../src/config.js';
import { connectDatabase, dropSchema, migrateToLatest, type DatabaseHandle } from '../src/db/connect.js';
import { MIGRATIONS, migrationProvider } from '../src/db/migrations/index.js';
import { createAccount, createSite, createUser } from '../src/domain/accounts.js';
import { insertKeyAsOldVersion } from './support/old-schema.js';
import { builders, type Builders } from './support/builders.js';
import { DIALECTS, TestClock, type DialectName } from './support/harness.js';

const REBUILT = ['customers', 'purchases', 'transactions', 'orders'] as const;
const KEPT = [...REBUILT, 'purchase_transactions', 'offer_grants', 'memberships', 'site_counters'] as const;

function databaseConfig(dialect: DialectName): DatabaseConfig {
  const problems: string[] = [];
  const config = parseDatabaseUrl(dialect === 'sqlite' ? 'sqlite::memory:' : process.env.TEST_DATABASE_URL!, 'test database', problems);
  if (!config) throw new Error(problems.join('; '));
  return config;
}

/** Names of the indexes of a table (the only per-database query of this suite). */
async function indexesOf(handle: DatabaseHandle, table: string): Promise<string[]> {
  const rows =
    handle.traits.name === 'sqlite'
      ? (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = ${table} and sql is not null`.execute(handle.db)).rows
      : (await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = current_schema() and tablename = ${table}`.execute(handle.db)).rows;
  return rows.map((r) => r.name).sort();
}

for (const dialect of DIALECTS) {
  describe(`migration 0007_financial_records on existing data [${dialect}]`, () => {
    const config = databaseConfig(dialect);
    const schema = dialect === 'postgres' ? `test_${randomBytes(6).toString('hex')}` : undefined;
    const clock = new TestClock();
    let handle: DatabaseHandle;
    let b: Builders;
    let siteId: number;
    let buyer: { id: number; contactId: number };
    let other: { id: number; contactId: number };
    let deletedPurchase: number;
    const before0007: Record<string, unknown[]> = {};
    const after0007: Record<string, unknown[]> = {};
    const indexesAfter0007: Record<string, unknown> = {};
    const indexes: Record<string, string[]> = {};

    const rowsOf = (table: string) =>
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      (handle.db as any).selectFrom(table).selectAll().orderBy(table === 'site_counters' ? ['site_id', 'counter'] : table === 'purchase_transactions' ? ['purchase_id', 'transaction_id'] : 'id').execute();
    const counter = async (name: string) =>
      Number((await handle.db.selectFrom('site_counters').select('value').where('site_id', '=', siteId).where('counter', '=', name).executeTakeFirstOrThrow()).value);

    before(async () => {
      handle = await connectDatabase(config, schema ? { schema, poolSize: 2 } : {});
      const earlier = MIGRATIONS.slice(0, MIGRATIONS.findIndex((m) => m.name === '0007_financial_records'));
      const migrator = new Migrator({
        db: handle.db,
        provider: migrationProvider(handle.traits, earlier),
        ...(schema ? { migrationTableSchema: schema } : {}),
      });
      const { error } = await migrator.migrateToLatest();
      if (error) throw error;

      const accountId = await createAccount(handle, { name: 'Money' }, clock);
      siteId = await createSite(handle, { accountId, title: 'Shop', subdomain: `shop-${randomBytes(4).toString('hex')}` }, clock);
      const ownerId = await createUser(handle, { accountId, name: 'Owner', email: `owner-${randomBytes(4).toString('hex')}@example.com`, role: 'owner' }, clock);
      await insertKeyAsOldVersion(handle, { accountId, userId: ownerId, name: 'all', permissions: ['view:sites'], at: clock.now() });
      b = builders({ handle, clock, tenant: { siteId } });
      const offer = await b.offer();
      buyer = await b.customer({ email: 'buyer@example.com' });
      other = await b.customer({ email: 'other@example.com' });
      const purchase = await b.purchase({ customerId: buyer.id, offerId: offer, amount_in_cents: 4900 });
      await b.grant({ contactId: buyer.contactId, offerId: offer, purchaseId: purchase });
      await b.transaction({ customerId: buyer.id, offerId: offer, amount_in_cents: 4900, purchaseIds: [purchase] });
      await b.purchase({ customerId: other.id, offerId: offer });
      // The highest purchase id is deleted: the rebuilt table must never give it out again.
      deletedPurchase = await b.purchase({ customerId: other.id, offerId: offer });
      await handle.db.deleteFrom('purchases').where('id', '=', deletedPurchase).execute();
      const at = handle.traits.encodeTimestamp(clock.now());
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      await (handle.db as any)
        .insertInto('orders')
        .values({
          site_id: siteId,
          customer_id: buyer.id,
          order_number: 1,
          currency_code: 'USD',
          total_price_in_cents: 4900,
          subtotal_in_cents: 4900,
          sales_tax_amount_in_cents: 0,
          discount_amount_in_cents: 0,
          created_at: at,
          updated_at: at,
        })
        .execute();
      // A grant as 0001 made them, without a family.
      const key = await handle.db.selectFrom('api_keys').select('id').executeTakeFirstOrThrow();
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      await (handle.db as any)
        .insertInto('oauth_grants')
        .values({
          api_key_id: key.id,
          access_token_hash: randomBytes(32).toString('hex'),
          refresh_token_hash: randomBytes(32).toString('hex'),
          access_expires_at: at,
          refresh_expires_at: at,
          revoked_at: null,
          created_at: at,
        })
        .execute();

      for (const table of KEPT) before0007[table] = await rowsOf(table);
      for (const table of REBUILT) indexes[table] = await indexesOf(handle, table);
      const through0007 = new Migrator({
        db: handle.db,
        provider: migrationProvider(handle.traits, MIGRATIONS.slice(0, MIGRATIONS.findIndex((m) => m.name === '0007_financial_records') + 1)),
        ...(schema ? { migrationTableSchema: schema } : {}),
      });
      const migrated = await through0007.migrateToLatest();
      if (migrated.error) throw migrated.error;
      assert.deepEqual(migrated.results?.map((r) => r.migrationName), ['0007_financial_records']);
      // As 0007 left them: later migrations add columns and indexes of their own.
      for (const table of KEPT) after0007[table] = await rowsOf(table);
      for (const table of REBUILT) indexesAfter0007[table] = await indexesOf(handle, table);
      await migrateToLatest(handle);
    });
    after(async () => {
      await handle.close();
      if (schema) await dropSchema(config, schema);
    });

    it('keeps every row, id and counter, and every index of the rebuilt tables', async () => {
      for (const table of KEPT) assert.deepEqual(after0007[table], before0007[table], `${table} unchanged`);
      for (const table of REBUILT) assert.deepEqual(indexesAfter0007[table], indexes[table], `indexes of ${table}`);
    });

    it('the counter triggers and the id sequence work on the rebuilt tables', async () => {
      const rows = await counter('rows:purchases');
      const version = await counter('version');
      const id = await b.purchase({ customerId: other.id, offerId: await b.offer() });
      assert.ok(id > deletedPurchase, `new purchase id ${id} is past the deleted ${deletedPurchase}`);
      assert.equal(await counter('rows:purchases'), rows + 1);
      assert.ok((await counter('version')) > version);
      await b.transaction({ customerId: other.id, amount_in_cents: 100 });
      assert.equal(await counter('rows:transactions'), (before0007.transactions as unknown[]).length + 1);
    });

    it('deleting a contact detaches its customer and keeps its money; a customer with money cannot be deleted', async () => {
      await handle.db.deleteFrom('contacts').where('id', '=', buyer.contactId).execute();
      const customer = await handle.db.selectFrom('customers').select(['contact_id', 'net_revenue_cents']).where('id', '=', buyer.id).executeTakeFirstOrThrow();
      assert.equal(customer.contact_id, null);
      assert.equal(Number(customer.net_revenue_cents), 4900);
      for (const table of ['purchases', 'transactions', 'orders'] as const) {
        const kept = await handle.db.selectFrom(table).select('id').where('customer_id', '=', buyer.id).execute();
        assert.equal(kept.length, 1, `${table} of the customer stay`);
      }
      await assert.rejects(handle.db.deleteFrom('customers').where('id', '=', other.id).execute());
      assert.equal(await counter('rows:customers'), 2);
    });

    it('existing grants start a family each', async () => {
      const grants = await handle.db.selectFrom('oauth_grants').select(['id', 'family_id']).execute();
      assert.ok(grants.length > 0);
      for (const g of grants) assert.equal(g.family_id, String(g.id));
    });
  });
}
