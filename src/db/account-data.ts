// Which tables hold "the account's data": what a sandbox snapshot saves and a reset or restore puts
// back (src/sandbox/snapshots.ts, docs/sandbox.md "Reset and snapshots"). Every table of the
// database is in exactly one of the lists below; test/sandbox/account-data.test.ts fails when a
// migration adds a table that is not, so a new table is classified the day it is made.
//
// - ACCOUNT_DATA_TABLES: the records of the account's sites. Restored exactly (same rows, same
//   ids). Listed parents first: a restore deletes in reverse order and inserts in this order, so
//   every foreign key between them holds at each step on both databases.
// - KEPT_TABLES: what belongs to the account but is not its data: who may call the API (users,
//   keys, grants), where events go (hooks) and what was delivered (the delivery log and the events
//   it names). A reset leaves them as they are, so the caller's credentials keep working.
// - INSTANCE_TABLES: the instance's own bookkeeping (migrations, settings, counters kept by
//   triggers, the snapshots themselves).
import { SITE_JOIN_TABLES } from './site-counters.js';

/** A data table: rows with a site_id, or (join tables) rows that belong to a parent row's site. */
export interface AccountDataTable {
  table: string;
  /** Join tables without site_id: the parent that carries it. */
  parent?: { table: string; key: string };
  /** The columns a saved copy is written and read back in order of (the table's key). */
  order: readonly string[];
}

const joinOrder: Record<string, readonly string[]> = {
  contact_taggings: ['contact_id', 'contact_tag_id'],
  offer_products: ['offer_id', 'product_id'],
  form_tags: ['form_id', 'contact_tag_id'],
  form_email_sequences: ['form_id', 'email_sequence_id'],
  purchase_transactions: ['purchase_id', 'transaction_id'],
};

const site = (table: string): AccountDataTable => ({ table, order: ['id'] });
const join = (table: string): AccountDataTable => {
  const spec = SITE_JOIN_TABLES.find((j) => j.table === table);
  if (!spec) throw new Error(`${table} is not a site join table`);
  return { table, parent: { table: spec.parentTable, key: spec.parentKey }, order: joinOrder[table]! };
};

/** The account's data, parents before children. */
export const ACCOUNT_DATA_TABLES: readonly AccountDataTable[] = [
  site('contacts'),
  site('customers'),
  site('contact_tags'),
  join('contact_taggings'),
  site('custom_fields'),
  site('contact_notes'),
  site('products'),
  site('offers'),
  join('offer_products'),
  site('courses'),
  site('modules'),
  site('lessons'),
  site('media'),
  site('podcasts'),
  site('podcast_episodes'),
  site('email_sequences'),
  site('newsletters'),
  site('forms'),
  site('form_fields'),
  join('form_tags'),
  join('form_email_sequences'),
  site('form_submissions'),
  site('landing_pages'),
  site('website_pages'),
  site('blogs'),
  site('blog_posts'),
  site('purchases'),
  site('offer_grants'),
  site('memberships'),
  site('transactions'),
  join('purchase_transactions'),
  site('orders'),
  site('order_items'),
  site('kajabi_payments_payouts'),
  site('events'),
  site('event_registrations'),
  site('assessments'),
  site('assessment_attempts'),
  site('newsletter_subscriptions'),
  site('email_sequence_subscriptions'),
  site('email_broadcasts'),
  site('email_events'),
  // The emails sitebiz would have sent: they name contacts and belong with them.
  site('outgoing_messages'),
];

/** Tables of the account that a reset or restore leaves alone, and why. */
export const KEPT_TABLES: Readonly<Record<string, string>> = {
  accounts: 'the account itself (a restore sets its clock back to the snapshot\'s)',
  users: 'who can sign in',
  user_sites: 'which sites a user reaches',
  sites: 'the sites the data belongs to (the API cannot create or delete them)',
  api_keys: 'the credentials of the caller',
  oauth_grants: 'the tokens of the caller',
  hooks: 'where events go',
  outbox_events: 'the events the delivery log names',
  webhook_deliveries: 'the delivery log',
  webhook_attempts: 'the delivery log',
  request_journal: 'what the caller sent (the request journal), as the delivery log is what was sent to it',
  console_sessions: 'who is signed in to the console',
  console_sign_in_links: 'one-time console sign-in links',
  account_write_positions: 'where the account\'s last write is in the primary\'s WAL (read replicas): going back would let a later read miss a write',
  audit_events: 'the audit log: what was done to the account, a reset and restore included',
  sandbox_faults: 'the faults the caller set up to test its retries, which a reset must not lift by surprise',
};

/** Tables of the instance, not of an account. */
export const INSTANCE_TABLES: readonly string[] = [
  'kysely_migration',
  'kysely_migration_lock',
  'instance_settings',
  // Kept by triggers from the rows (a restore moves them as its deletes and inserts go).
  'site_counters',
  'snapshots',
  // Failed console sign-ins per address or account (throttling), not the account's records.
  'console_sign_in_failures',
  // `sitebiz import`'s checkpoints: how far each import has come (src/import/).
  'import_runs',
  'import_pages',
];

/** Where a data table's saved copies live (0013_snapshots). */
export const snapshotTableOf = (table: string): string => `snapshot_${table}`;
