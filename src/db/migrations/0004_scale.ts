// What keeps list requests at flat cost on a site of a million contacts:
// - site_counters (src/db/site-counters.ts): per-site row counts and a data version, kept by
//   triggers, so an unfiltered list never runs COUNT(*) and caches know when a site changed;
// - products.active_members_count, kept by triggers on memberships, instead of counting a
//   product's members on every request;
// - an index (site_id, <sort column>, id) for every sort of every list that has none, so a page in
//   any declared order is an index range read, never a sort of the whole site;
// - instance_settings: the key that signs paging cursors, the same for every process.
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { CURSOR_SIGNING_KEY } from '../instance-settings.js';
import type { DialectTraits } from '../dialect-traits.js';
import { analyzeTables, createCounterTriggers, recountSiteCounters } from '../site-counters.js';
import type { AppMigration } from './index.js';

/** [table, column] of every declared sort on a plain column without an index that leads with it. */
const SORT_INDEXES: ReadonlyArray<readonly [string, string]> = [
  ['contacts', 'name'],
  ['customers', 'name'],
  ['customers', 'last_request_at'],
  ['customers', 'net_revenue_cents'],
  ['custom_fields', 'title'],
  ['custom_fields', 'handle'],
  ['custom_fields', 'field_type'],
  ['custom_fields', 'required'],
  ['contact_notes', 'updated_at'],
  ['offers', 'title'],
  ['offers', 'price_in_cents'],
  ['products', 'title'],
  ['products', 'description'],
  ['products', 'status'],
  ['courses', 'title'],
  ['podcasts', 'title'],
  ['podcasts', 'status'],
  ['podcasts', 'updated_at'],
  ['forms', 'title'],
  ['form_submissions', 'name'],
  ['form_submissions', 'email'],
  ['landing_pages', 'title'],
  ['landing_pages', 'publish_at'],
  ['landing_pages', 'updated_at'],
  ['website_pages', 'title'],
  ['website_pages', 'updated_at'],
  ['blog_posts', 'title'],
  ['blog_posts', 'published_at'],
  ['purchases', 'updated_at'],
  ['transactions', 'amount_in_cents'],
  ['orders', 'fulfilled_at'],
  ['order_items', 'quantity'],
  ['order_items', 'fulfilled_at'],
  ['kajabi_payments_payouts', 'initiated_at'],
  ['kajabi_payments_payouts', 'estimated_arrival_at'],
];

export const scale: AppMigration = {
  name: '0004_scale',
  summary: "Adds per-site counters kept by triggers (backfilled by counting every site table) and a sort index on every list's table.",
  rewritesLargeTable: true,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    await db.schema
      .createTable('site_counters')
      .addColumn('site_id', t.foreignKeyType, (c) => c.notNull().references('sites.id').onDelete('cascade'))
      .addColumn('counter', 'text', (c) => c.notNull())
      .addColumn('value', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('site_counters_pk', ['site_id', 'counter'])
      .execute();
    await db.schema
      .alterTable('products')
      .addColumn('active_members_count', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();

    // Replaced by (site_id, name, id): the id tiebreak of every page is part of the order.
    await db.schema.dropIndex('contacts_site_name_idx').execute();
    await db.schema.dropIndex('customers_site_net_revenue_idx').execute();
    for (const [table, column] of SORT_INDEXES) {
      await db.schema.createIndex(`${table}_site_${column}_idx`).on(table).columns(['site_id', column, 'id']).execute();
    }
    // A customer's orders (the customer filters and the foreign key's cascade) had no index.
    await db.schema.createIndex('orders_customer_idx').on('orders').columns(['customer_id']).execute();

    // Secrets of this installation, shared by every process that serves it.
    await db.schema
      .createTable('instance_settings')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();
    await sql`insert into instance_settings (name, value) values (${CURSOR_SIGNING_KEY}, ${randomBytes(32).toString('hex')})`.execute(db);

    await createCounterTriggers(db, t.name);
    await recountSiteCounters(db);
    // A database that already holds large sites gets statistics that show it.
    await analyzeTables(db);
  },
};
