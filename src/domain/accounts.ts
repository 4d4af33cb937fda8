// Administration of tenants and credentials: accounts, users and their site access, sites and
// API keys. Used by the CLI and by tests; the HTTP API itself never creates these.
import type { Selectable } from 'kysely';
import { recordAuditEvent, SYSTEM_ACTOR, type AuditActor } from '../audit/audit-events.js';
import type { DatabaseHandle } from '../db/connect.js';
import type { ApiKeysTable } from '../db/schema.js';
import { PERMISSION_NAMES } from '../auth/permissions.js';
import { isUserRole, reachesEverySite, USER_ROLES } from '../auth/roles.js';
import { newClientId, newClientSecret, sha256Hex } from '../auth/secrets.js';

/** A problem the caller can fix (bad name, duplicate email, unknown id). */
export class AdminError extends Error {
  override name = 'AdminError';
}

/**
 * The named record does not exist, or not in the account the caller is limited to (the console
 * acts for one account: another account's key or user is unknown to it, never touched).
 */
export class UnknownRecordError extends AdminError {
  override name = 'UnknownRecordError';
}

/** Limits an administrative call to one account's records; without an account id, any account's. */
export interface AccountScope {
  accountId?: number;
}

const inAccount = (scope: AccountScope) => (scope.accountId === undefined ? '' : ` in account ${scope.accountId}`);

export interface Clock {
  now: () => Date;
}

const systemClock: Clock = { now: () => new Date() };

function stamp(handle: DatabaseHandle, clock: Clock) {
  const at = handle.traits.encodeTimestamp(clock.now());
  return { created_at: at, updated_at: at };
}

/** Runs `fn` in a transaction, or in the caller's when the handle is already inside one. */
function inTransaction<T>(handle: DatabaseHandle, fn: (trx: DatabaseHandle['db']) => Promise<T>): Promise<T> {
  return handle.db.isTransaction ? fn(handle.db) : handle.db.transaction().execute(fn);
}

async function uniqueOrExplain<T>(handle: DatabaseHandle, what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (handle.traits.isUniqueViolation(error)) throw new AdminError(`${what} is already taken`);
    throw error;
  }
}

export async function createAccount(handle: DatabaseHandle, input: { name: string }, clock = systemClock): Promise<number> {
  const name = input.name.trim();
  if (name === '') throw new AdminError('an account needs a name');
  const row = await handle.db
    .insertInto('accounts')
    .values({ name, ...stamp(handle, clock) })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

export async function createSite(
  handle: DatabaseHandle,
  input: { accountId: number; title: string; subdomain: string },
  clock = systemClock,
): Promise<number> {
  const title = input.title.trim();
  const subdomain = input.subdomain.trim().toLowerCase();
  if (title === '') throw new AdminError('a site needs a title');
  if (!/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(subdomain)) {
    throw new AdminError(`subdomain ${JSON.stringify(input.subdomain)} must be letters, digits and inner hyphens`);
  }
  await requireAccount(handle, input.accountId);
  return uniqueOrExplain(handle, `subdomain ${subdomain}`, async () => {
    const row = await handle.db
      .insertInto('sites')
      .values({ account_id: input.accountId, title, subdomain, ...stamp(handle, clock) })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  });
}

export async function createUser(
  handle: DatabaseHandle,
  input: { accountId: number; name: string; email: string; role: string; siteIds?: number[] },
  clock = systemClock,
): Promise<number> {
  const name = input.name.trim();
  const email = normalizedEmail(input.email);
  if (name === '') throw new AdminError('a user needs a name');
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new AdminError(`${JSON.stringify(input.email)} is not an email address`);
  if (!isUserRole(input.role)) throw new AdminError(`role must be one of ${USER_ROLES.join(', ')}`);
  await requireAccount(handle, input.accountId);
  const siteIds = input.siteIds ?? [];
  if (siteIds.length > 0) {
    const found = await handle.db
      .selectFrom('sites')
      .select('id')
      .where('account_id', '=', input.accountId)
      .where('id', 'in', siteIds)
      .execute();
    const foundIds = new Set(found.map((s) => Number(s.id)));
    const missing = siteIds.filter((id) => !foundIds.has(id));
    if (missing.length > 0) throw new AdminError(`no site ${missing.join(', ')} in account ${input.accountId}`);
  }
  return uniqueOrExplain(handle, `email ${email}`, () =>
    inTransaction(handle, async (trx) => {
      const row = await trx
        .insertInto('users')
        .values({ account_id: input.accountId, name, email, role: input.role, ...stamp(handle, clock) })
        .returning('id')
        .executeTakeFirstOrThrow();
      const userId = Number(row.id);
      if (!reachesEverySite(input.role) && siteIds.length > 0) {
        const created_at = handle.traits.encodeTimestamp(clock.now());
        await trx
          .insertInto('user_sites')
          .values(siteIds.map((site_id) => ({ user_id: userId, site_id, created_at })))
          .execute();
      }
      return userId;
    }),
  );
}

export interface CreatedApiKey {
  id: number;
  name: string;
  userId: number;
  accountId: number;
  clientId: string;
  /** Shown once; only its hash is stored. */
  clientSecret: string;
  permissions: string[];
}

/**
 * A new key of a user; with `accountId`, the user must be of that account (else UnknownRecordError,
 * and nothing is written). The audit log names `actor` (default: sitebiz itself, for seeding,
 * `init` and imports).
 */
export async function createApiKey(
  handle: DatabaseHandle,
  input: { userId: number; name: string; permissions: readonly string[]; accountId?: number; actor?: AuditActor },
  clock = systemClock,
): Promise<CreatedApiKey> {
  const name = input.name.trim();
  if (name === '') throw new AdminError('an API key needs a name');
  const unknown = input.permissions.filter((p) => !PERMISSION_NAMES.includes(p));
  if (unknown.length > 0) throw new AdminError(`unknown permission(s) ${unknown.join(', ')}`);
  let userQuery = handle.db.selectFrom('users').select(['id', 'account_id']).where('id', '=', input.userId);
  if (input.accountId !== undefined) userQuery = userQuery.where('account_id', '=', input.accountId);
  const user = await userQuery.executeTakeFirst();
  if (!user) throw new UnknownRecordError(`no user ${input.userId}${inAccount(input)}`);
  const clientId = newClientId();
  const clientSecret = newClientSecret();
  const permissions = [...new Set(input.permissions)].sort();
  const row = await inTransaction(handle, async (trx) => {
    const inserted = await trx
      .insertInto('api_keys')
      .values({
        account_id: user.account_id,
        user_id: input.userId,
        name,
        client_id: clientId,
        secret_hash: sha256Hex(clientSecret),
        permissions: JSON.stringify(permissions),
        rotated_at: null,
        ...stamp(handle, clock),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await recordAuditEvent(
      { db: trx, traits: handle.traits },
      {
        accountId: Number(user.account_id),
        action: 'api_key.created',
        actor: input.actor ?? SYSTEM_ACTOR,
        target: { type: 'api_keys', id: Number(inserted.id) },
        details: { name, client_id: clientId, user_id: input.userId, permissions },
        at: clock.now(),
      },
    );
    return inserted;
  });
  return {
    id: Number(row.id),
    name,
    userId: input.userId,
    accountId: Number(user.account_id),
    clientId,
    clientSecret,
    permissions,
  };
}

/**
 * Whom a command acts for when the caller names no user: the first owner of the only account.
 * With no account or several there is no obvious answer, and the caller must name the user with
 * `option`, the command's way to (`--user <id>` for a key, `--email <email>` for a sign-in link).
 */
export async function soleAccountOwner(handle: DatabaseHandle, option = '--user <id>', whose = "the key's user"): Promise<number> {
  const accounts = await handle.db.selectFrom('accounts').select('id').orderBy('id').limit(2).execute();
  if (accounts.length === 0) throw new AdminError(`there is no account yet: run sitebiz init first, or name ${whose} with ${option}`);
  if (accounts.length > 1) throw new AdminError(`the database has several accounts: name ${whose} with ${option}`);
  const owner = await handle.db
    .selectFrom('users')
    .select('id')
    .where('account_id', '=', accounts[0]!.id)
    .where('role', '=', 'owner')
    .orderBy('id')
    .executeTakeFirst();
  if (!owner) throw new AdminError(`account ${accounts[0]!.id} has no owner: name the key's user with --user <id>`);
  return Number(owner.id);
}

export interface ApiKeySummary {
  id: number;
  name: string;
  client_id: string;
  user_id: number;
  account_id: number;
  permissions: string[];
  created_at: string;
  rotated_at: string | null;
  /** When the key last got a token, or one of its tokens was last used (to the minute); null: never. */
  last_used_at: string | null;
}

function apiKeysQuery(handle: DatabaseHandle, scope: AccountScope) {
  let q = handle.db
    .selectFrom('api_keys')
    .select(['id', 'name', 'client_id', 'user_id', 'account_id', 'permissions', 'created_at', 'rotated_at', 'last_used_at'])
    .orderBy('id');
  if (scope.accountId !== undefined) q = q.where('account_id', '=', scope.accountId);
  return q;
}

function apiKeySummary(handle: DatabaseHandle, r: Omit<Selectable<ApiKeysTable>, 'secret_hash' | 'updated_at'>): ApiKeySummary {
  return {
    id: Number(r.id),
    name: r.name,
    client_id: r.client_id,
    user_id: Number(r.user_id),
    account_id: Number(r.account_id),
    permissions: JSON.parse(r.permissions) as string[],
    created_at: handle.traits.decodeTimestamp(r.created_at) ?? '',
    rotated_at: handle.traits.decodeTimestamp(r.rotated_at),
    last_used_at: handle.traits.decodeTimestamp(r.last_used_at),
  };
}

export async function listApiKeys(handle: DatabaseHandle, filter: AccountScope = {}): Promise<ApiKeySummary[]> {
  const rows = await apiKeysQuery(handle, filter).execute();
  return rows.map((r) => apiKeySummary(handle, r));
}

/** One key by numeric id or client_id (within the scope's account), or undefined. */
export async function findApiKey(handle: DatabaseHandle, ref: string, scope: AccountScope = {}): Promise<ApiKeySummary | undefined> {
  const byId = /^\d+$/.test(ref);
  const row = await apiKeysQuery(handle, scope)
    .where(byId ? 'id' : 'client_id', '=', byId ? Number(ref) : ref)
    .executeTakeFirst();
  return row ? apiKeySummary(handle, row) : undefined;
}

/** Finds a key by numeric id or client_id (within the scope's account). */
async function requireKey(handle: DatabaseHandle, ref: string, scope: AccountScope): Promise<ApiKeySummary> {
  const key = await findApiKey(handle, ref, scope);
  if (!key) throw new UnknownRecordError(`no API key ${ref}${inAccount(scope)}`);
  return key;
}

/** The audit row of a key's rotation or deletion. */
function keyAuditEvent(key: ApiKeySummary, action: 'api_key.rotated' | 'api_key.deleted', actor: AuditActor, at: Date) {
  return {
    accountId: key.account_id,
    action,
    actor,
    target: { type: 'api_keys', id: key.id },
    details: { name: key.name, client_id: key.client_id, user_id: key.user_id },
    at,
  };
}

/**
 * Gives the key a new secret and revokes every token granted with the old one, in one
 * transaction. With `scope.accountId`, a key of another account is unknown (UnknownRecordError).
 */
export async function rotateApiKey(
  handle: DatabaseHandle,
  ref: string,
  clock = systemClock,
  scope: AccountScope = {},
  actor: AuditActor = SYSTEM_ACTOR,
): Promise<{ id: number; clientId: string; clientSecret: string }> {
  const key = await requireKey(handle, ref, scope);
  const clientSecret = newClientSecret();
  const at = handle.traits.encodeTimestamp(clock.now());
  await inTransaction(handle, async (trx) => {
    const updated = await trx
      .updateTable('api_keys')
      .set({ secret_hash: sha256Hex(clientSecret), rotated_at: at, updated_at: at })
      .where('id', '=', key.id)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) throw new UnknownRecordError(`no API key ${ref}${inAccount(scope)}`);
    await trx.updateTable('oauth_grants').set({ revoked_at: at }).where('api_key_id', '=', key.id).where('revoked_at', 'is', null).execute();
    await recordAuditEvent({ db: trx, traits: handle.traits }, keyAuditEvent(key, 'api_key.rotated', actor, clock.now()));
  });
  return { id: key.id, clientId: key.client_id, clientSecret };
}

/**
 * Deletes the key; its grants go with it, so its tokens stop at once. With `scope.accountId`, a
 * key of another account is unknown (UnknownRecordError).
 */
export async function deleteApiKey(
  handle: DatabaseHandle,
  ref: string,
  scope: AccountScope = {},
  actor: AuditActor = SYSTEM_ACTOR,
  clock = systemClock,
): Promise<{ id: number; clientId: string }> {
  const key = await requireKey(handle, ref, scope);
  await inTransaction(handle, async (trx) => {
    await trx.deleteFrom('oauth_grants').where('api_key_id', '=', key.id).execute();
    const deleted = await trx.deleteFrom('api_keys').where('id', '=', key.id).executeTakeFirst();
    // Deleted meanwhile by someone else: their row says so, this one records nothing.
    if (Number(deleted.numDeletedRows) === 0) throw new UnknownRecordError(`no API key ${ref}${inAccount(scope)}`);
    await recordAuditEvent({ db: trx, traits: handle.traits }, keyAuditEvent(key, 'api_key.deleted', actor, clock.now()));
  });
  return { id: key.id, clientId: key.client_id };
}

/** Emails are kept trimmed and in lower case: a user is found by any spelling of theirs. */
const normalizedEmail = (email: string): string => email.trim().toLowerCase();

/** The user with this email (in any case), with their console password hash; undefined when none. */
export async function findUserByEmail(
  handle: DatabaseHandle,
  email: string,
): Promise<{ id: number; accountId: number; email: string; passwordHash: string | null } | undefined> {
  const row = await handle.db
    .selectFrom('users')
    .select(['id', 'account_id', 'email', 'password_hash'])
    .where('email', '=', normalizedEmail(email))
    .executeTakeFirst();
  return row && { id: Number(row.id), accountId: Number(row.account_id), email: row.email, passwordHash: row.password_hash };
}

export interface UserSummary {
  id: number;
  name: string;
  email: string;
  role: string;
}

/** The users of an account, by name (whom a key can be made for). */
export async function listUsers(handle: DatabaseHandle, accountId: number): Promise<UserSummary[]> {
  const rows = await handle.db
    .selectFrom('users')
    .select(['id', 'name', 'email', 'role'])
    .where('account_id', '=', accountId)
    .orderBy('name')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ id: Number(r.id), name: r.name, email: r.email, role: r.role }));
}

async function requireAccount(handle: DatabaseHandle, accountId: number): Promise<void> {
  const found = await handle.db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
  if (!found) throw new AdminError(`no account ${accountId}`);
}
