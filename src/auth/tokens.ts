// OAuth grants: issuing, refreshing, revoking and checking tokens. Tokens are opaque random
// strings; the database keeps only their SHA-256, so a leaked table grants nothing. Every check
// reads the database, so a revocation or key rotation takes effect at once in every process.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { DatabaseHandle } from '../db/connect.js';
import { ReusableQuery } from '../db/reusable-query.js';
import { VERSION_COUNTER } from '../db/site-counters.js';
import type { Principal } from './principal.js';
import { reachesEverySite, ROLES_REACHING_EVERY_SITE } from './roles.js';
import { newAccessToken, newRefreshToken, secretMatches, sha256Hex } from './secrets.js';

export interface TokenSettings {
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  now: () => Date;
  /** Told when a key's last_used_at could not be written (it is an aid: the request goes on). */
  onTouchError?: (error: unknown) => void;
}

/**
 * api_keys.last_used_at is written when a key gets a token, and when a token of it is used only
 * once it is older than this: most requests read it in the query they make anyway, and write
 * nothing.
 */
export const LAST_USED_PRECISION_MS = 60_000;

export interface IssuedTokens {
  access_token: string;
  refresh_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

/** An API key as client authentication finds it. */
export interface ApiKeyIdentity {
  id: number;
  accountId: number;
  clientId: string;
  /** The key's user (the request journal records whose request it was). */
  userId: number;
}

/** Tokens just issued, and the API key they were issued to. */
export interface IssuedGrant {
  key: ApiKeyIdentity;
  tokens: IssuedTokens;
}

export class TokenService {
  private readonly queries: ReturnType<typeof authenticationQueries>;
  /**
   * When this process last wrote each key's last_used_at: a request whose read came before that
   * write landed (a burst, racing it) does not write it again.
   */
  private readonly touchedAt = new Map<number, number>();
  /** last_used_at writes in flight. */
  private readonly touching = new Set<Promise<void>>();

  constructor(
    private readonly handle: DatabaseHandle,
    private readonly settings: TokenSettings,
  ) {
    this.queries = authenticationQueries(handle);
  }

  /** client_credentials: the key's id and secret. Undefined when they do not match a key. */
  async grantForClient(clientId: string, clientSecret: string): Promise<IssuedGrant | undefined> {
    const key = await this.clientKey(clientId, clientSecret);
    // Each client_credentials grant starts a family of its own; its refreshes inherit it.
    return key === undefined ? undefined : { key, tokens: await this.issue(key.id, randomUUID()) };
  }

  /** The API key with this client id and secret (client authentication); undefined when none matches. */
  async clientKey(clientId: string, clientSecret: string): Promise<ApiKeyIdentity | undefined> {
    // No client id holds a NUL, and PostgreSQL rejects text parameters that do: such a client is unknown.
    const key = clientId.includes('\0')
      ? undefined
      : await this.handle.db
          .selectFrom('api_keys')
          .select(['id', 'secret_hash', 'account_id', 'client_id', 'user_id'])
          .where('client_id', '=', clientId)
          .executeTakeFirst();
    // Hash the presented secret even when the client is unknown, so timing does not tell.
    const matches = secretMatches(clientSecret, key?.secret_hash ?? '0'.repeat(64));
    if (!key || !matches) return undefined;
    return { id: Number(key.id), accountId: Number(key.account_id), clientId: key.client_id, userId: Number(key.user_id) };
  }

  /**
   * refresh_token: the grant is replaced by a new one of the same family (refresh token
   * rotation), so a refresh token works once. Undefined when the token is unknown, expired or
   * revoked.
   *
   * A refresh token whose grant is already revoked is a replay: it was exchanged before (or its
   * family was revoked already), so one copy of it is in other hands. As the OAuth 2.0 Security
   * BCP (RFC 9700, 4.14.2) asks, every grant of its family is revoked in the same transaction: the
   * tokens the legitimate client or a thief got from it stop working at once. The loser of two
   * simultaneous refreshes with one token is such a replay too: exactly one of them gets new
   * tokens, and the other's refusal then revokes those as well (a client refreshes once per token;
   * with its client credentials it can always start a new grant).
   */
  async refresh(refreshToken: string): Promise<IssuedGrant | undefined> {
    const now = this.settings.now();
    const { db, traits } = this.handle;
    return db.transaction().execute(async (trx) => {
      const grant = await trx
        .selectFrom('oauth_grants')
        .innerJoin('api_keys', 'api_keys.id', 'oauth_grants.api_key_id')
        .select([
          'oauth_grants.id',
          'oauth_grants.api_key_id',
          'oauth_grants.family_id',
          'oauth_grants.refresh_expires_at',
          'oauth_grants.revoked_at',
          'api_keys.account_id',
          'api_keys.client_id',
          'api_keys.user_id',
        ])
        .where('oauth_grants.refresh_token_hash', '=', sha256Hex(refreshToken))
        .executeTakeFirst();
      if (!grant) return undefined;
      const revokeFamily = async () => {
        await trx
          .updateTable('oauth_grants')
          .set({ revoked_at: traits.encodeTimestamp(now) })
          .where('family_id', '=', grant.family_id)
          .where('revoked_at', 'is', null)
          .execute();
        return undefined;
      };
      if (grant.revoked_at !== null) return revokeFamily();
      const expires = traits.decodeTimestamp(grant.refresh_expires_at);
      if (expires === null || Date.parse(expires) <= now.getTime()) return undefined;
      // The update only succeeds once, so two racing refreshes cannot both win; the loser (its
      // read came before the winner's commit) is a replay like any other.
      const revoked = await trx
        .updateTable('oauth_grants')
        .set({ revoked_at: traits.encodeTimestamp(now) })
        .where('id', '=', grant.id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (Number(revoked.numUpdatedRows) !== 1) return revokeFamily();
      const key = { id: Number(grant.api_key_id), accountId: Number(grant.account_id), clientId: grant.client_id, userId: Number(grant.user_id) };
      return { key, tokens: await this.issue(key.id, grant.family_id, trx) };
    });
  }

  /** Revokes the grant holding this access or refresh token, if it belongs to the same key. */
  async revoke(token: string, apiKeyId: number): Promise<void> {
    const hash = sha256Hex(token);
    const { db, traits } = this.handle;
    await db
      .updateTable('oauth_grants')
      .set({ revoked_at: traits.encodeTimestamp(this.settings.now()) })
      .where('api_key_id', '=', apiKeyId)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('access_token_hash', '=', hash), eb('refresh_token_hash', '=', hash)]))
      .execute();
  }

  /**
   * The principal of a Bearer access token, or why there is none. `readOnly`: the request only
   * reads (GET, HEAD), so its reads may go to a read replica that has the account's last write.
   */
  async authenticate(accessToken: string, options: { readOnly?: boolean } = {}): Promise<Principal | 'unknown' | 'expired' | 'revoked'> {
    const { traits } = this.handle;
    // One row per site the user reaches (one with a null site when none), in site order.
    const rows = await this.queries.grantByAccessToken.execute([sha256Hex(accessToken)]);
    const row = rows[0];
    if (!row) return 'unknown';
    if (row.revoked_at !== null) return 'revoked';
    const now = this.settings.now();
    const expires = traits.decodeTimestamp(row.access_expires_at);
    if (expires === null || Date.parse(expires) <= now.getTime()) return 'expired';
    const lastUsed = traits.decodeTimestamp(row.last_used_at);
    if (lastUsed === null || now.getTime() - Date.parse(lastUsed) > LAST_USED_PRECISION_MS) this.touch(Number(row.api_key_id), now);

    const accountId = Number(row.account_id);
    const userId = Number(row.user_id);
    const siteIds: number[] = [];
    const siteVersions = new Map<number, string>();
    for (const { site_id, site_version } of rows) {
      if (site_id === null) continue;
      siteIds.push(Number(site_id));
      if (site_version !== null) siteVersions.set(Number(site_id), String(site_version));
    }
    return {
      accountId,
      userId,
      apiKeyId: Number(row.api_key_id),
      grantId: Number(row.grant_id),
      role: row.role,
      permissions: new Set(JSON.parse(row.permissions) as string[]),
      siteIds,
      clockOffsetMs: Number(row.clock_offset_ms),
      clientId: row.client_id,
      faultsVersion: Number(row.faults_version),
      ...(options.readOnly ? { replicaReadsAfter: Number(row.wal_position ?? 0), siteVersions } : {}),
    };
  }

  /**
   * The sites of its account a user reaches, ascending: every one for an owner, else those given
   * to the user. The one rule for a token's principal and a console session's.
   */
  async reachableSiteIds(user: { userId: number; accountId: number; role: string }): Promise<number[]> {
    const rows = reachesEverySite(user.role)
      ? await this.queries.sitesOfAccount.execute([user.accountId])
      : await this.queries.sitesOfUser.execute([user.userId, user.accountId]);
    return rows.map((s) => Number(s.id));
  }

  /**
   * Writes the key's last_used_at in the background: the request that found it stale does not
   * wait. The condition keeps several processes (or a burst of requests) from writing it more
   * than once a minute.
   */
  private touch(apiKeyId: number, now: Date): void {
    const touched = this.touchedAt.get(apiKeyId);
    if (touched !== undefined && now.getTime() - touched <= LAST_USED_PRECISION_MS) return;
    this.touchedAt.set(apiKeyId, now.getTime());
    const { db, traits } = this.handle;
    const written = db
      .updateTable('api_keys')
      .set({ last_used_at: traits.encodeTimestamp(now) })
      .where('id', '=', apiKeyId)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', traits.encodeTimestamp(new Date(now.getTime() - LAST_USED_PRECISION_MS)))]))
      .execute()
      .then(
        () => undefined,
        (error: unknown) => this.settings.onTouchError?.(error),
      )
      .finally(() => this.touching.delete(written));
    this.touching.add(written);
  }

  /** Resolves once the last_used_at writes under way are done (before the database closes, and in tests). */
  async settle(): Promise<void> {
    await Promise.all(this.touching.values());
  }

  /** A new grant of the key; `familyId` is a new one for client_credentials, the replaced grant's for a refresh. */
  private async issue(apiKeyId: number, familyId: string, trx = this.handle.db): Promise<IssuedTokens> {
    const now = this.settings.now();
    const { traits } = this.handle;
    const access = newAccessToken();
    const refresh = newRefreshToken();
    // Getting a token is using the key (the console's key list shows when).
    await trx.updateTable('api_keys').set({ last_used_at: traits.encodeTimestamp(now) }).where('id', '=', apiKeyId).execute();
    await trx
      .insertInto('oauth_grants')
      .values({
        api_key_id: apiKeyId,
        access_token_hash: sha256Hex(access),
        refresh_token_hash: sha256Hex(refresh),
        access_expires_at: traits.encodeTimestamp(new Date(now.getTime() + this.settings.accessTokenTtlSeconds * 1000)),
        refresh_expires_at: traits.encodeTimestamp(new Date(now.getTime() + this.settings.refreshTokenTtlSeconds * 1000)),
        revoked_at: null,
        created_at: traits.encodeTimestamp(now),
        family_id: familyId,
      })
      .execute();
    return {
      access_token: access,
      refresh_token: refresh,
      token_type: 'Bearer',
      expires_in: this.settings.accessTokenTtlSeconds,
    };
  }
}

/** The queries of every authenticated request, compiled once (see ReusableQuery). */
function authenticationQueries(handle: DatabaseHandle) {
  const db = handle.db;
  const runSelect = handle.runSelect;
  return {
    grantByAccessToken: ReusableQuery.compile(
      db,
      'sitebiz_grant_by_access_token',
      runSelect,
      db
        .selectFrom('oauth_grants as g')
        .innerJoin('api_keys as k', 'k.id', 'g.api_key_id')
        .innerJoin('users as u', 'u.id', 'k.user_id')
        .innerJoin('accounts as a', 'a.id', 'u.account_id')
        .leftJoin('account_write_positions as w', 'w.account_id', 'a.id')
        // The sites the user reaches (reachableSiteIds' rule) and their data versions, in the same
        // statement: one round trip per request instead of two.
        .leftJoin('sites as s', (join) =>
          join
            .onRef('s.account_id', '=', 'u.account_id')
            .on((eb) =>
              eb.or([
                eb('u.role', 'in', ROLES_REACHING_EVERY_SITE.map((role) => sql.lit(role))),
                eb.exists(eb.selectFrom('user_sites as us').select('us.site_id').whereRef('us.user_id', '=', 'u.id').whereRef('us.site_id', '=', 's.id')),
              ]),
            ),
        )
        .leftJoin('site_counters as v', (join) => join.onRef('v.site_id', '=', 's.id').on('v.counter', '=', sql.lit(VERSION_COUNTER)))
        .select([
          'g.id as grant_id',
          'g.access_expires_at',
          'g.revoked_at',
          'k.id as api_key_id',
          'k.permissions',
          'u.id as user_id',
          'u.role',
          'u.account_id',
          'a.clock_offset_ms',
          'k.client_id',
          'a.faults_version',
          'k.last_used_at',
          'w.wal_position',
          's.id as site_id',
          'v.value as site_version',
        ])
        .where('g.access_token_hash', '=', 'access token hash')
        .orderBy('s.id'),
    ),
    sitesOfAccount: ReusableQuery.compile(
      db,
      'sitebiz_sites_of_account',
      runSelect,
      db.selectFrom('sites').select('id').where('account_id', '=', 0).orderBy('id'),
    ),
    sitesOfUser: ReusableQuery.compile(
      db,
      'sitebiz_sites_of_user',
      runSelect,
      db
        .selectFrom('user_sites')
        .innerJoin('sites', 'sites.id', 'user_sites.site_id')
        .select('sites.id as id')
        .where('user_sites.user_id', '=', 0) // user id
        .where('sites.account_id', '=', 0) // account id
        .orderBy('sites.id'),
    ),
  };
}

