// Webhook delivery (docs/webhooks.md):
// - outbox_events.resource_id: the record that triggered the event (the `id` of a delivery's
//   body). Events written from now on hold their rendered payload (the JSON:API resources of the
//   event) in `payload`; older rows keep the ids they were written with and have no resource_id.
// - webhook_deliveries: one per event and matching hook, made in the transaction that writes the
//   event, so a hook receives exactly the events committed while it existed. A delivery keeps the
//   hook's id, event and target URL itself, with no foreign key to hooks: deleting a hook cancels
//   its pending deliveries and leaves them in the log. `next_attempt_at` is when a worker may
//   next attempt it (null once it is finished); a worker claiming it moves it to the end of a lease,
//   so a delivery whose worker died is attempted again when the lease expires.
// - webhook_attempts: every attempt with the receiver's answer (status, headers, the first 2 KB
//   of the body) or the error.
// - hooks.disabled_at and hooks.failing_since: a hook whose every delivery failed for 5 days is
//   disabled (POST /v1/hooks/{id}/enable turns it on again); failing_since is the first failure
//   after the last success.
// None of these tables is counted per site (site-counters.ts): a delivery's progress must not move
// the site's data version, which every write of the site takes and every list cache is keyed by.
import { sql, type Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import type { AppMigration } from './index.js';

export const webhookDeliveries: AppMigration = {
  name: '0009_webhook_deliveries',
  summary: 'Adds webhook deliveries and attempts; indexes outbox_events by site, type and time.',
  rewritesLargeTable: true,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    await db.schema.alterTable('outbox_events').addColumn('resource_id', t.foreignKeyType).execute();
    // GET /v1/events: newest first per site, also by event type.
    await db.schema.createIndex('outbox_events_site_type_idx').on('outbox_events').columns(['site_id', 'event_type', 'created_at', 'id']).execute();

    await db.schema.alterTable('hooks').addColumn('disabled_at', t.timestampType).execute();
    await db.schema.alterTable('hooks').addColumn('failing_since', t.timestampType).execute();
    // Matching an event to its site's hooks, in the writing transaction.
    await db.schema.createIndex('hooks_site_event_idx').on('hooks').columns(['site_id', 'event']).execute();

    await t
      .addIdColumn(db.schema.createTable('webhook_deliveries'))
      .addColumn('site_id', t.foreignKeyType, (c) => c.notNull().references('sites.id').onDelete('cascade'))
      .addColumn('hook_id', t.foreignKeyType, (c) => c.notNull())
      .addColumn('event_id', t.foreignKeyType, (c) => c.notNull().references('outbox_events.id').onDelete('cascade'))
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('resource_id', t.foreignKeyType)
      .addColumn('target_url', 'text', (c) => c.notNull())
      // Standard Webhooks `webhook-id`: the same on every attempt, so receivers can deduplicate.
      .addColumn('webhook_id', 'text', (c) => c.notNull().unique())
      // pending, retrying, succeeded, failed, cancelled
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
      // Failed attempts since the delivery was (re)queued: the step of the retry schedule.
      .addColumn('failures_in_round', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', t.timestampType)
      .addColumn('last_attempt_at', t.timestampType)
      .addColumn('last_response_status', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('created_at', t.timestampType, (c) => c.notNull())
      .addColumn('updated_at', t.timestampType, (c) => c.notNull())
      .execute();
    // What workers claim: due deliveries, soonest first; finished ones are not in it. hook_id
    // makes it covering for the claim that passes over hooks at their share of the slots.
    await db.schema
      .createIndex('webhook_deliveries_due_idx')
      .on('webhook_deliveries')
      .columns(['next_attempt_at', 'id', 'hook_id'])
      .where(sql.ref('next_attempt_at'), 'is not', null)
      .execute();
    // A hook's log, newest first; cancelling a deleted hook's pending deliveries.
    await db.schema.createIndex('webhook_deliveries_hook_idx').on('webhook_deliveries').columns(['hook_id', 'created_at', 'id']).execute();
    await db.schema.createIndex('webhook_deliveries_site_idx').on('webhook_deliveries').columns(['site_id', 'created_at', 'id']).execute();
    await db.schema.createIndex('webhook_deliveries_event_idx').on('webhook_deliveries').columns(['event_id']).execute();

    await t
      .addIdColumn(db.schema.createTable('webhook_attempts'))
      .addColumn('site_id', t.foreignKeyType, (c) => c.notNull().references('sites.id').onDelete('cascade'))
      .addColumn('delivery_id', t.foreignKeyType, (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
      .addColumn('attempt_number', 'integer', (c) => c.notNull())
      .addColumn('started_at', t.timestampType, (c) => c.notNull())
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addColumn('response_status', 'integer')
      .addColumn('response_headers', t.jsonType)
      // The first 2 KB of the receiver's answer.
      .addColumn('response_body', 'text')
      .addColumn('error', 'text')
      .addColumn('created_at', t.timestampType, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('webhook_attempts_delivery_idx').on('webhook_attempts').columns(['delivery_id', 'id']).execute();
  },
};
