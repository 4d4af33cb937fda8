// The account a sandbox command acts on, and the Principal it acts as: the commands that change an
// account's data (trigger, listen, clock, reset, snapshot) work on the database directly, as the
// account's owner would through the API with a key holding every permission, so their writes go
// through the same engine and domain code as a request's (src/engine.ts createEngine).
import { cliActor } from '../audit/audit-events.js';
import { PERMISSION_NAMES } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import type { DatabaseHandle } from '../db/connect.js';
import { AdminError } from '../domain/accounts.js';
import { DEMO_ACCOUNT } from '../demo/demo-account.js';
import { UsageError } from './command.js';

export interface AccountTarget {
  principal: Principal;
  /** The site the command acts on: the one named, else the account's first (the demo site after `npm start`). */
  siteId: number;
}

/** `--<name> <id>` as a number, or undefined when absent (a usage error when it is not a number). */
export function idOption(values: Record<string, string | boolean | undefined>, name: string, what = 'an id'): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^\d{1,15}$/.test(raw)) throw new UsageError(`--${name} takes ${what} (a number)`);
  return Number(raw);
}

/** `--site <id>` as a number, or undefined when absent. */
export const siteOption = (values: Record<string, string | boolean | undefined>): number | undefined => idOption(values, 'site', 'a site id');

/**
 * The account a sandbox command acts on: --account, else the database's only account, else the
 * demo account (the one holding the demo site).
 */
export async function chooseAccount(handle: DatabaseHandle, values: Record<string, string | boolean | undefined>): Promise<number> {
  const { db } = handle;
  const named = idOption(values, 'account', 'an account id');
  if (named !== undefined) {
    const found = await db.selectFrom('accounts').select('id').where('id', '=', named).executeTakeFirst();
    if (!found) throw new AdminError(`there is no account ${values.account}`);
    return Number(found.id);
  }
  const accounts = await db.selectFrom('accounts').select('id').orderBy('id').limit(2).execute();
  if (accounts.length === 0) throw new AdminError('there is no account yet: run sitebiz init --demo (or npm start) first');
  if (accounts.length === 1) return Number(accounts[0]!.id);
  const demo = await db.selectFrom('sites').select('account_id').where('subdomain', '=', DEMO_ACCOUNT.subdomain).executeTakeFirst();
  if (demo) return Number(demo.account_id);
  throw new UsageError('the database has several accounts and no demo account: name one with --account <id>');
}

/**
 * The account acting for itself, as its owner (its first user when it has no owner, user 0 when
 * it has no user yet), with every permission and every site, at the account's sandbox clock. API
 * key and grant ids are 0: no key is involved.
 */
export async function ownerPrincipal(handle: DatabaseHandle, accountId: number): Promise<Principal> {
  const { db } = handle;
  const owner = await db
    .selectFrom('users')
    .select(['id', 'role'])
    .where('account_id', '=', accountId)
    .orderBy((eb) => eb.case().when('role', '=', 'owner').then(0).else(1).end())
    .orderBy('id')
    .executeTakeFirst();
  const account = await db.selectFrom('accounts').select('clock_offset_ms').where('id', '=', accountId).executeTakeFirstOrThrow();
  const sites = await db.selectFrom('sites').select('id').where('account_id', '=', accountId).orderBy('id').execute();
  return {
    accountId,
    userId: owner ? Number(owner.id) : 0,
    apiKeyId: 0,
    grantId: 0,
    role: owner?.role ?? 'owner',
    permissions: new Set(PERMISSION_NAMES),
    siteIds: sites.map((s) => Number(s.id)),
    clockOffsetMs: Number(account.clock_offset_ms),
    // The audit log names the CLI, not the owner it acts as (`sitebiz listen`'s hooks).
    actor: cliActor(),
  };
}

/**
 * The owner of the account of `siteId` (or, with no site named, of the account chooseAccount
 * picks) and the site to act on: the one named, else the account's first.
 */
export async function accountPrincipal(handle: DatabaseHandle, options: { siteId?: number } = {}): Promise<AccountTarget> {
  let accountId: number;
  if (options.siteId !== undefined) {
    const site = await handle.db.selectFrom('sites').select('account_id').where('id', '=', options.siteId).executeTakeFirst();
    if (!site) throw new AdminError(`there is no site ${options.siteId}`);
    accountId = Number(site.account_id);
  } else {
    accountId = await chooseAccount(handle, {});
  }
  const principal = await ownerPrincipal(handle, accountId);
  const siteId = options.siteId ?? principal.siteIds[0];
  if (siteId === undefined) throw new AdminError(`account ${accountId} has no site`);
  return { principal, siteId };
}
