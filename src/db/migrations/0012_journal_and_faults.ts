// The sandbox's views and faults (docs/sandbox.md):
// - request_journal: the last requests of each account's keys (GET /v1/test_helpers/requests),
//   written in batches by each process (src/sandbox/request-journal.ts) and trimmed per account to
//   REQUEST_JOURNAL_SIZE. Bodies are kept redacted and cut at 4 KB; headers are never kept.
// - sandbox_faults: answers or delays injected into matching requests of an account's keys
//   (POST /v1/test_helpers/faults). `remaining` counts a `times` fault down, one conditional UPDATE
//   per hit, so processes sharing the database spend it exactly once per hit.
// - accounts.faults_version: goes up with every fault created or deleted. Authentication reads it
//   with the principal (no query of its own), so a process knows when its copy of an account's
//   faults is out of date, and an account that never had faults costs nothing.
// - outgoing_messages.confirmation_token and confirmed_at: a double opt-in message's link
//   (GET /v1/test_helpers/confirm/<token>) confirms the subscription once.
import type { Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import type { AppMigration } from './index.js';

export const journalAndFaults: AppMigration = {
  name: '0012_journal_and_faults',
  summary: "Creates the sandbox's request journal and fault table.",
  rewritesLargeTable: false,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    await t
      .addIdColumn(db.schema.createTable('request_journal'))
      .addColumn('account_id', t.foreignKeyType, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      // The key's client id, kept as text: the entry outlives a deleted key.
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('method', 'text', (c) => c.notNull())
      // Path and query string, as requested (secrets in the query redacted).
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('status', 'integer', (c) => c.notNull())
      .addColumn('duration_ms', 'real', (c) => c.notNull())
      .addColumn('request_body', 'text')
      .addColumn('response_body', 'text')
      // Real time: when the request arrived, whatever the account's sandbox clock says.
      .addColumn('created_at', t.timestampType, (c) => c.notNull())
      .execute();
    // Newest first per account; trimming keeps each account's highest ids.
    await db.schema.createIndex('request_journal_account_idx').on('request_journal').columns(['account_id', 'created_at', 'id']).execute();
    await db.schema.createIndex('request_journal_account_id_idx').on('request_journal').columns(['account_id', 'id']).execute();

    await t
      .addIdColumn(db.schema.createTable('sandbox_faults'))
      .addColumn('account_id', t.foreignKeyType, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      // An HTTP method, or null for any.
      .addColumn('method', 'text')
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('status', 'integer')
      .addColumn('latency_ms', 'integer')
      .addColumn('times', 'integer')
      .addColumn('remaining', 'integer')
      .addColumn('rate', 'real')
      .addColumn('hits', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', t.timestampType, (c) => c.notNull())
      .execute();
    await db.schema.alterTable('accounts').addColumn('faults_version', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema.createIndex('sandbox_faults_account_idx').on('sandbox_faults').columns(['account_id', 'id']).execute();

    await db.schema.alterTable('outgoing_messages').addColumn('confirmation_token', 'text').execute();
    await db.schema.alterTable('outgoing_messages').addColumn('confirmed_at', t.timestampType).execute();
    await db.schema.createIndex('outgoing_messages_confirmation_idx').on('outgoing_messages').column('confirmation_token').unique().execute();
  },
};
