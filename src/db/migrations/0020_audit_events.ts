// The audit log (src/audit/, docs/operations.md "Audit log"): one row per administrative action
// (API keys, hooks, passwords, console sign-ins, snapshot restores and resets), written in the
// same transaction as the action. The actor's key and user ids carry no foreign key: the row must
// outlive the key or user it names (a deleted key is exactly what an audit is asked about).
// Indexes: the list (an account's rows, newest first), the action filter, and the retention's
// cross-account sweep by age.
import type { Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import type { AppMigration } from './index.js';

export const auditEvents: AppMigration = {
  name: '0020_audit_events',
  summary: 'Creates audit_events (the audit log of administrative actions) with its three indexes.',
  rewritesLargeTable: false,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    await t
      .addIdColumn(db.schema.createTable('audit_events'))
      .addColumn('account_id', t.foreignKeyType, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('action', 'text', (c) => c.notNull())
      /** api_key, console_user, cli or system. */
      .addColumn('actor_kind', 'text', (c) => c.notNull())
      .addColumn('actor_api_key_id', t.foreignKeyType)
      .addColumn('actor_user_id', t.foreignKeyType)
      /** A key's client id, a user's email, user@host for the CLI. */
      .addColumn('actor_label', 'text', (c) => c.notNull())
      .addColumn('target_type', 'text')
      /** Text: a snapshot's target is its name. */
      .addColumn('target_id', 'text')
      /** A small JSON object (a key's name and permissions), never a secret. */
      .addColumn('details', t.jsonType, (c) => c.notNull())
      .addColumn('source_address', 'text')
      .addColumn('created_at', t.timestampType, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('audit_events_list_idx').on('audit_events').columns(['account_id', 'created_at', 'id']).execute();
    await db.schema.createIndex('audit_events_action_idx').on('audit_events').columns(['account_id', 'action', 'created_at']).execute();
    await db.schema.createIndex('audit_events_age_idx').on('audit_events').columns(['created_at', 'id']).execute();
  },
};
