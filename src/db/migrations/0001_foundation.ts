// Accounts, users and their site access, sites, API keys and OAuth grants.
import type { Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import type { AppMigration } from './index.js';

export const foundation: AppMigration = {
  name: '0001_foundation',
  summary: 'Creates accounts, users, site access, sites, API keys and OAuth grants.',
  rewritesLargeTable: false,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    await t
      .addIdColumn(db.schema.createTable('accounts'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestampType, (c) => c.notNull())
      .addColumn('updated_at', t.timestampType, (c) => c.notNull())
      .execute();

    await t
      .addIdColumn(db.schema.createTable('users'))
      .addColumn('account_id', t.foreignKeyType, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestampType, (c) => c.notNull())
      .addColumn('updated_at', t.timestampType, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('users_account_id_idx').on('users').column('account_id').execute();

    await t
      .addIdColumn(db.schema.createTable('sites'))
      .addColumn('account_id', t.foreignKeyType, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('subdomain', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', t.timestampType, (c) => c.notNull())
      .addColumn('updated_at', t.timestampType, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('sites_account_id_idx').on('sites').column('account_id').execute();

    await db.schema
      .createTable('user_sites')
      .addColumn('user_id', t.foreignKeyType, (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('site_id', t.foreignKeyType, (c) => c.notNull().references('sites.id').onDelete('cascade'))
      .addColumn('created_at', t.timestampType, (c) => c.notNull())
      .addPrimaryKeyConstraint('user_sites_pk', ['user_id', 'site_id'])
      .execute();
    await db.schema.createIndex('user_sites_site_id_idx').on('user_sites').column('site_id').execute();

    await t
      .addIdColumn(db.schema.createTable('api_keys'))
      .addColumn('account_id', t.foreignKeyType, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('user_id', t.foreignKeyType, (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull().unique())
      .addColumn('secret_hash', 'text', (c) => c.notNull())
      .addColumn('permissions', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestampType, (c) => c.notNull())
      .addColumn('updated_at', t.timestampType, (c) => c.notNull())
      .addColumn('rotated_at', t.timestampType)
      .execute();
    await db.schema.createIndex('api_keys_user_id_idx').on('api_keys').column('user_id').execute();

    await t
      .addIdColumn(db.schema.createTable('oauth_grants'))
      .addColumn('api_key_id', t.foreignKeyType, (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
      .addColumn('access_token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('refresh_token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('access_expires_at', t.timestampType, (c) => c.notNull())
      .addColumn('refresh_expires_at', t.timestampType, (c) => c.notNull())
      .addColumn('revoked_at', t.timestampType)
      .addColumn('created_at', t.timestampType, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('oauth_grants_api_key_id_idx').on('oauth_grants').column('api_key_id').execute();
  },
};
