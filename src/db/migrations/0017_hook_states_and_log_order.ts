// Hooks across a reset, and the logs a reset keeps in the order they were made (docs/sandbox.md
// "Reset and snapshots", docs/webhooks.md "Delivery log"):
// - snapshots.hook_states: JSON, each hook of the account when the snapshot was taken, with its
//   health (failing_since, disabled_at), so that a restore puts a hook's health back as it was
//   instead of leaving it "disabled since" a date the restored clock has not reached. Null for
//   snapshots taken before this migration (a restore then only clears health stamped after the
//   restored clock).
// - Indexes for the delivery log's and the events' default order, newest first by id (the order
//   they were made in real time; their created_at is account time, which a reset moves back).
import type { Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import type { AppMigration } from './index.js';

export const hookStatesAndLogOrder: AppMigration = {
  name: '0017_hook_states_and_log_order',
  summary: 'Adds snapshots.hook_states and indexes webhook_deliveries and outbox_events by site and id.',
  rewritesLargeTable: true,
  async up(db: Kysely<unknown>, _t: DialectTraits) {
    await db.schema.alterTable('snapshots').addColumn('hook_states', 'text').execute();
    await db.schema.createIndex('webhook_deliveries_site_id_idx').on('webhook_deliveries').columns(['site_id', 'id']).execute();
    await db.schema.createIndex('webhook_deliveries_hook_id_idx').on('webhook_deliveries').columns(['hook_id', 'id']).execute();
    await db.schema.createIndex('outbox_events_site_id_idx').on('outbox_events').columns(['site_id', 'id']).execute();
    await db.schema.createIndex('outbox_events_site_type_id_idx').on('outbox_events').columns(['site_id', 'event_type', 'id']).execute();
  },
};
