// Console sessions, sign-in links and the sign-in throttle, all in the database so that several
// sitebiz processes behind a load balancer share them (docs/console.md "Signing in").
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { recordAuditEvent, type AuditActor } from '../audit/audit-events.js';
import { PERMISSION_NAMES } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { sha256Hex } from '../auth/secrets.js';
import type { TokenService } from '../auth/tokens.js';
import type { DatabaseHandle } from '../db/connect.js';

/** A session ends after this long without a request... */
export const SESSION_IDLE_MS = 30 * 60_000;
/** ...and this long after sign-in, whatever happens. */
export const SESSION_ABSOLUTE_MS = 12 * 3_600_000;
/** last_seen_at is written at most this often per session (a page load is not a write). */
const TOUCH_EVERY_MS = 60_000;
/** A printed sign-in link works this long, once. */
export const SIGN_IN_LINK_TTL_MS = 15 * 60_000;

/** Failed sign-ins allowed per window, per address and per account, before sign-in waits. */
export const SIGN_IN_FAILURE_LIMITS = { perAddress: 20, perAccount: 10, windowMs: 15 * 60_000 } as const;

export interface ConsoleUser {
  id: number;
  accountId: number;
  accountName: string;
  name: string;
  email: string;
  role: string;
}

export interface ConsoleSession {
  id: number;
  user: ConsoleUser;
  csrfToken: string;
  /** The API's view of this user: every permission, the user's sites, the account's clock. */
  principal: Principal;
}

/** Where a sign-in link's token is used (src/console/sign-in.ts). */
export const consoleSignInUrl = (baseUrl: string, token: string): string => `${baseUrl}/console/link/${token}`;

const newToken = () => randomBytes(32).toString('base64url');

export class ConsoleSessions {
  constructor(
    private readonly handle: DatabaseHandle,
    private readonly now: () => Date = () => new Date(),
    /**
     * The API's rule for the sites a user reaches (TokenService.reachableSiteIds), so a session
     * sees what a key of the same user would. Needed to load sessions; making sign-in links
     * (the CLI, init) does without.
     */
    private readonly reachableSiteIds?: TokenService['reachableSiteIds'],
  ) {}

  private get db() {
    return this.handle.db;
  }

  private at(date: Date): string {
    return this.handle.traits.encodeTimestamp(date);
  }

  private time(value: unknown): number {
    return Date.parse(this.handle.traits.decodeTimestamp(value) ?? '');
  }

  /**
   * Starts a session for the user, signed in by `method` from `address`; returns the cookie's
   * token. The audit log's console.signed_in row is written with the session, in one transaction.
   */
  async create(userId: number, signIn: { method: 'password' | 'link'; address: string }): Promise<string> {
    const token = newToken();
    const now = this.now();
    await this.db.transaction().execute(async (trx) => {
      const user = await trx.selectFrom('users').select(['account_id', 'email']).where('id', '=', userId).executeTakeFirstOrThrow();
      await trx
        .insertInto('console_sessions')
        .values({
          user_id: userId,
          token_hash: sha256Hex(token),
          csrf_token: newToken(),
          created_at: this.at(now),
          last_seen_at: this.at(now),
          expires_at: this.at(new Date(now.getTime() + SESSION_ABSOLUTE_MS)),
        })
        .execute();
      await recordAuditEvent(
        { db: trx, traits: this.handle.traits },
        {
          accountId: Number(user.account_id),
          action: 'console.signed_in',
          actor: { kind: 'console_user', userId, label: user.email, address: signIn.address },
          target: { type: 'users', id: userId },
          details: { method: signIn.method },
          at: now,
        },
      );
    });
    return token;
  }

  /**
   * A wrong password for a known user's email: the audit log's console.sign_in_failed row, the one
   * row written without an action beside it. (An email of no user has no account to log it in.)
   */
  async signInFailed(user: { id: number; accountId: number; email: string }, address: string): Promise<void> {
    await recordAuditEvent(this.handle, {
      accountId: user.accountId,
      action: 'console.sign_in_failed',
      actor: { kind: 'console_user', userId: user.id, label: user.email, address },
      target: { type: 'users', id: user.id },
      details: { method: 'password' },
      at: this.now(),
    });
  }

  /** The live session of a cookie's token, or null (unknown, idle too long, or past its end). */
  async load(token: string | undefined): Promise<ConsoleSession | null> {
    if (!token || token.length > 100) return null;
    const row = await this.db
      .selectFrom('console_sessions as s')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .innerJoin('accounts as a', 'a.id', 'u.account_id')
      .select(['s.id', 's.csrf_token', 's.last_seen_at', 's.expires_at', 'u.id as user_id', 'u.account_id', 'u.name', 'u.email', 'u.role', 'a.name as account_name', 'a.clock_offset_ms'])
      .where('s.token_hash', '=', sha256Hex(token))
      .executeTakeFirst();
    if (!row) return null;
    const now = this.now().getTime();
    const lastSeen = this.time(row.last_seen_at);
    if (now >= this.time(row.expires_at) || now >= lastSeen + SESSION_IDLE_MS) {
      await this.db.deleteFrom('console_sessions').where('id', '=', row.id).execute();
      return null;
    }
    if (now - lastSeen >= TOUCH_EVERY_MS) {
      await this.db.updateTable('console_sessions').set({ last_seen_at: this.at(new Date(now)) }).where('id', '=', row.id).execute();
    }
    const user: ConsoleUser = {
      id: Number(row.user_id),
      accountId: Number(row.account_id),
      accountName: row.account_name,
      name: row.name,
      email: row.email,
      role: row.role,
    };
    return { id: Number(row.id), user, csrfToken: row.csrf_token, principal: await this.principalOf(user, Number(row.clock_offset_ms)) };
  }

  /** What the user may reach through the API's rules: every permission, the sites its role reaches. */
  private async principalOf(user: ConsoleUser, clockOffsetMs: number): Promise<Principal> {
    if (!this.reachableSiteIds) throw new Error('ConsoleSessions needs the API\'s site rule (TokenService.reachableSiteIds) to load sessions');
    return {
      accountId: user.accountId,
      userId: user.id,
      // No API key or grant is involved: the console acts as the signed-in user.
      apiKeyId: 0,
      grantId: 0,
      role: user.role,
      permissions: new Set(PERMISSION_NAMES),
      siteIds: await this.reachableSiteIds({ userId: user.id, accountId: user.accountId, role: user.role }),
      clockOffsetMs,
    };
  }

  /** Ends the session at the user's request, with the audit log's console.signed_out row. */
  async signOut(session: ConsoleSession, address: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const ended = await trx.deleteFrom('console_sessions').where('id', '=', session.id).executeTakeFirst();
      // A session already gone (signed out in another tab, or by a password change) ends nothing.
      if (Number(ended.numDeletedRows) === 0) return;
      await recordAuditEvent(
        { db: trx, traits: this.handle.traits },
        {
          accountId: session.user.accountId,
          action: 'console.signed_out',
          actor: { kind: 'console_user', userId: session.user.id, label: session.user.email, address },
          target: { type: 'users', id: session.user.id },
          at: this.now(),
        },
      );
    });
  }

  /**
   * Sets the user's password (a hash from passwords.ts) and ends the sessions signed in before,
   * together, with the audit log's row naming `actor`.
   */
  async setPassword(userId: number, passwordHash: string, actor: AuditActor): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const user = await trx.selectFrom('users').select(['account_id', 'email']).where('id', '=', userId).executeTakeFirstOrThrow();
      await trx.updateTable('users').set({ password_hash: passwordHash, updated_at: this.at(this.now()) }).where('id', '=', userId).execute();
      const ended = await trx.deleteFrom('console_sessions').where('user_id', '=', userId).executeTakeFirst();
      await recordAuditEvent(
        { db: trx, traits: this.handle.traits },
        {
          accountId: Number(user.account_id),
          action: 'user.password_set',
          actor,
          target: { type: 'users', id: userId },
          details: { email: user.email, sessions_ended: Number(ended.numDeletedRows) },
          at: this.now(),
        },
      );
    });
  }

  /** A new one-time sign-in link's token for the user. */
  async createSignInLink(userId: number): Promise<string> {
    const token = newToken();
    const now = this.now();
    await this.db
      .insertInto('console_sign_in_links')
      .values({ user_id: userId, token_hash: sha256Hex(token), created_at: this.at(now), expires_at: this.at(new Date(now.getTime() + SIGN_IN_LINK_TTL_MS)), used_at: null })
      .execute();
    return token;
  }

  /**
   * Spends a sign-in link: the user it signs in, or null when it is unknown, used or expired. The
   * conditional UPDATE lets exactly one of two racing uses win.
   */
  async useSignInLink(token: string): Promise<number | null> {
    if (token.length > 100) return null;
    const now = this.now();
    const row = await this.db
      .updateTable('console_sign_in_links')
      .set({ used_at: this.at(now) })
      .where('token_hash', '=', sha256Hex(token))
      .where('used_at', 'is', null)
      .where('expires_at', '>', this.at(now))
      .returning('user_id')
      .executeTakeFirst();
    return row ? Number(row.user_id) : null;
  }

  /**
   * Takes one attempt from every subject's allowance ("ip:..." and "account:...") before the
   * password is checked: all or none, in one transaction, so that concurrent sign-ins queue on the
   * subjects' rows (PostgreSQL's row locks; SQLite's write lock, as every write transaction begins
   * immediate there) and at most the limit are ever checked, whatever the number in flight. Null
   * when taken; otherwise when sign-in may be tried again, and nothing is counted. The allowance
   * counts failures: a right password gives its attempt back (signInSucceeded).
   */
  async takeSignInAttempt(subjects: readonly string[]): Promise<Date | null> {
    if (subjects.length === 0) return null;
    const now = this.now();
    const windowStart = this.at(new Date(now.getTime() - SIGN_IN_FAILURE_LIMITS.windowMs));
    try {
      await this.db.transaction().execute(async (trx) => {
        let until = 0;
        // One order for every request, so that two transactions never wait on each other's rows.
        for (const subject of [...new Set(subjects)].sort()) {
          const row = await trx
            .insertInto('console_sign_in_failures')
            .values({ subject, window_started_at: this.at(now), failures: 1 })
            .onConflict((oc) =>
              oc.column('subject').doUpdateSet((eb) => ({
                // An expired window starts again at this attempt.
                failures: eb.case().when('console_sign_in_failures.window_started_at', '<=', windowStart).then(1).else(eb('console_sign_in_failures.failures', '+', 1)).end(),
                window_started_at: eb
                  .case()
                  .when('console_sign_in_failures.window_started_at', '<=', windowStart)
                  .then(this.at(now))
                  .else(eb.ref('console_sign_in_failures.window_started_at'))
                  .end(),
              })),
            )
            .returning(['failures', 'window_started_at'])
            .executeTakeFirstOrThrow();
          if (Number(row.failures) > limitOf(subject)) until = Math.max(until, this.time(row.window_started_at) + SIGN_IN_FAILURE_LIMITS.windowMs);
        }
        // Rolls the counts back: a refused attempt is not a failure.
        if (until > 0) throw new SignInRefused(new Date(until));
      });
      return null;
    } catch (error) {
      if (error instanceof SignInRefused) return error.until;
      throw error;
    }
  }

  /**
   * A right password: the account's count starts again, and the address gets back the attempt it
   * took (the address keeps its failures).
   */
  async signInSucceeded(accountSubject: string, addressSubject: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('console_sign_in_failures').where('subject', '=', accountSubject).execute();
      await trx
        .updateTable('console_sign_in_failures')
        .set((eb) => ({ failures: eb('failures', '-', 1) }))
        .where('subject', '=', addressSubject)
        .where('failures', '>', 0)
        .execute();
    });
  }
}

/** Ends takeSignInAttempt's transaction without a write. */
class SignInRefused extends Error {
  constructor(readonly until: Date) {
    super('sign-in attempts exhausted');
  }
}

const limitOf = (subject: string) => (subject.startsWith('account:') ? SIGN_IN_FAILURE_LIMITS.perAccount : SIGN_IN_FAILURE_LIMITS.perAddress);

/** Compares a presented CSRF token with the session's in constant time. */
export function csrfTokenMatches(presented: unknown, expected: string): boolean {
  if (typeof presented !== 'string' || presented.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(presented), Buffer.from(expected));
}
