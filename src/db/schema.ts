// Row types of every table, as Kysely sees them. Ids come back as numbers (SQLite) or strings
// (PostgreSQL bigint); timestamps as ISO strings (SQLite) or Dates (PostgreSQL); booleans as 0/1 or
// true/false. The codecs in dialect-traits.ts and jsonapi/codecs.ts turn them into API values.
import type { Generated } from 'kysely';

export type DbId = number | string;
export type DbTimestamp = string | Date;
export type DbBoolean = number | boolean;

export interface AccountsTable {
  id: Generated<DbId>;
  name: string;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
}

export interface UsersTable {
  id: Generated<DbId>;
  account_id: DbId;
  name: string;
  email: string;
  /** One of USER_ROLES (auth/roles.ts). Owners and administrators reach every site of the account. */
  role: string;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
}

export interface SitesTable {
  id: Generated<DbId>;
  account_id: DbId;
  title: string;
  subdomain: string;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
}

/** Sites a user with a restricted role may access. */
export interface UserSitesTable {
  user_id: DbId;
  site_id: DbId;
  created_at: DbTimestamp;
}

export interface ApiKeysTable {
  id: Generated<DbId>;
  account_id: DbId;
  user_id: DbId;
  name: string;
  client_id: string;
  /** SHA-256 of the client secret, hex. The secret itself is shown once and never stored. */
  secret_hash: string;
  /** JSON array of permission names. */
  permissions: string;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
  rotated_at: DbTimestamp | null;
}

/** One OAuth grant: an access token and its refresh token, revoked together. */
export interface OauthGrantsTable {
  id: Generated<DbId>;
  api_key_id: DbId;
  access_token_hash: string;
  refresh_token_hash: string;
  access_expires_at: DbTimestamp;
  refresh_expires_at: DbTimestamp;
  revoked_at: DbTimestamp | null;
  created_at: DbTimestamp;
}

export interface Database {
  accounts: AccountsTable;
  users: UsersTable;
  sites: SitesTable;
  user_sites: UserSitesTable;
  api_keys: ApiKeysTable;
  oauth_grants: OauthGrantsTable;
}
