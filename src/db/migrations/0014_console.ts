// The console (src/console/, docs/console.md): people signing in to /console in a browser.
// - users.password_hash: scrypt, in the PHC-like form of src/console/passwords.ts; null until
//   `sitebiz users set-password` sets one (a user without one signs in with a one-time link).
// - console_sessions: one signed-in browser. The cookie holds a random token; the table keeps its
//   SHA-256 (a leaked table opens no session), the CSRF token of the session's forms, and the
//   times of the idle and absolute expiries.
// - console_sign_in_links: the one-time links `serve` and `init` print on a new database (and
//   `sitebiz users sign-in-link` prints on demand): SHA-256 of the token, an expiry, used once.
// - console_sign_in_failures: failed sign-ins counted per window, per address and per account,
//   in the database so that every process behind a load balancer counts the same failures.
// - api_keys.last_used_at: when the key last got or used a token (the console's key list).
import type { Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import type { AppMigration } from './index.js';

export const consoleMigration: AppMigration = {
  name: '0014_console',
  summary: 'Adds console passwords, API key last use and console sessions.',
  rewritesLargeTable: false,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    await db.schema.alterTable('users').addColumn('password_hash', 'text').execute();
    await db.schema.alterTable('api_keys').addColumn('last_used_at', t.timestampType).execute();

    await t
      .addIdColumn(db.schema.createTable('console_sessions'))
      .addColumn('user_id', t.foreignKeyType, (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('csrf_token', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestampType, (c) => c.notNull())
      .addColumn('last_seen_at', t.timestampType, (c) => c.notNull())
      // The absolute expiry; the idle one is last_seen_at plus the idle timeout.
      .addColumn('expires_at', t.timestampType, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('console_sessions_user_idx').on('console_sessions').column('user_id').execute();

    await t
      .addIdColumn(db.schema.createTable('console_sign_in_links'))
      .addColumn('user_id', t.foreignKeyType, (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', t.timestampType, (c) => c.notNull())
      .addColumn('expires_at', t.timestampType, (c) => c.notNull())
      .addColumn('used_at', t.timestampType)
      .execute();

    await db.schema
      .createTable('console_sign_in_failures')
      // "ip:<address>" or "account:<id>".
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('window_started_at', t.timestampType, (c) => c.notNull())
      .addColumn('failures', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('console_sign_in_failures_pk', ['subject'])
      .execute();
  },
};
