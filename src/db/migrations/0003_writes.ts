// What writes leave behind besides the records themselves: the transactional outbox (events the
// webhook delivery will announce, written in the same transaction as the change) and the emails
// sitebiz would send (recorded, never dropped, so a sandbox view can show them).
import type { Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import type { AppMigration } from './index.js';

export const writes: AppMigration = {
  name: '0003_writes',
  summary: 'Creates the outbox (events for webhooks) and the record of sent emails.',
  rewritesLargeTable: false,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    await t
      .addIdColumn(db.schema.createTable('outbox_events'))
      .addColumn('site_id', t.foreignKeyType, (c) => c.notNull().references('sites.id').onDelete('cascade'))
      // Upstream webhook event names, such as form_submission or purchase.
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('payload', t.jsonType, (c) => c.notNull())
      .addColumn('created_at', t.timestampType, (c) => c.notNull())
      // Null until the delivery worker has handed the event to every hook.
      .addColumn('delivered_at', t.timestampType)
      .execute();
    await db.schema.createIndex('outbox_events_pending_idx').on('outbox_events').columns(['delivered_at', 'id']).execute();
    await db.schema.createIndex('outbox_events_site_idx').on('outbox_events').columns(['site_id', 'created_at', 'id']).execute();

    await t
      .addIdColumn(db.schema.createTable('outgoing_messages'))
      .addColumn('site_id', t.foreignKeyType, (c) => c.notNull().references('sites.id').onDelete('cascade'))
      // Kept when the contact is deleted: the message was sent (or would have been).
      .addColumn('contact_id', t.foreignKeyType, (c) => c.references('contacts.id').onDelete('set null'))
      // welcome_email, double_opt_in, ...
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('to_email', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestampType, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('outgoing_messages_site_idx').on('outgoing_messages').columns(['site_id', 'created_at', 'id']).execute();
  },
};
