// The account a sandbox command acts on, and the Principal it acts as: the commands that change an
// account's data (trigger, listen, clock, reset, snapshot) work on the database directly, as the
// account's owner would through the API with a key holding every permission, so their writes go
// through the same engine and domain code as a request's (src/app.ts createEngine).
import { PERMISSION_NAMES } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import type { DatabaseHandle } from '../db/connect.js';
import { AdminError } from '../domain/accounts.js';
import { UsageError } from './command.js';

export interface AccountTarget {
  principal: Principal;
  /** The site the command acts on: the one named, else the account's first (the demo site after `npm start`). */
  siteId: number;
}

/** `--site <id>` as a number, or undefined when absent (a usage error when it is not a number). */
export function siteOption(values: Record<string, string | boolean | undefined>): number | undefined {
  const raw = values.site;
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^\d{1,15}$/.test(raw)) throw new UsageError('--site takes a site id (a number)');
  return Number(raw);
}

/**
 * The owner of the account of `siteId` (or, with no site named, of the first account: the one
 * `sitebiz init` and the first `serve` make), with every permission and every site of the account,
 * at the account's sandbox clock. API key and grant ids are 0: no key is involved.
 */
export async function accountPrincipal(handle: DatabaseHandle, options: { siteId?: number } = {}): Promise<AccountTarget> {
  const { db } = handle;
  let accountId: number;
  if (options.siteId !== undefined) {
    const site = await db.selectFrom('sites').select('account_id').where('id', '=', options.siteId).executeTakeFirst();
    if (!site) throw new AdminError(`there is no site ${options.siteId}`);
    accountId = Number(site.account_id);
  } else {
    const first = await db.selectFrom('accounts').select('id').orderBy('id').executeTakeFirst();
    if (!first) throw new AdminError('there is no account yet: run sitebiz init (or start the server once) first');
    accountId = Number(first.id);
  }
  const account = await db.selectFrom('accounts').select('clock_offset_ms').where('id', '=', accountId).executeTakeFirstOrThrow();
  const owner = await db.selectFrom('users').select('id').where('account_id', '=', accountId).where('role', '=', 'owner').orderBy('id').executeTakeFirst();
  if (!owner) throw new AdminError(`account ${accountId} has no owner to act as`);
  const sites = await db.selectFrom('sites').select('id').where('account_id', '=', accountId).orderBy('id').execute();
  const siteIds = sites.map((s) => Number(s.id));
  const siteId = options.siteId ?? siteIds[0];
  if (siteId === undefined) throw new AdminError(`account ${accountId} has no site`);
  return {
    principal: {
      accountId,
      userId: Number(owner.id),
      apiKeyId: 0,
      grantId: 0,
      role: 'owner',
      permissions: new Set(PERMISSION_NAMES),
      siteIds,
      clockOffsetMs: Number(account.clock_offset_ms),
    },
    siteId,
  };
}
