// Who may act on the whole account in the sandbox (docs/permissions.md, "The sandbox and sites").
// Reset, clock advances and snapshots change or save every site of the account at once, so they
// need a principal that reaches every site: the owner, or a user given every site. A user limited
// to some sites is refused (403) rather than narrowed: none of these has a meaning per site (the
// clock is the account's, a snapshot holds every site). The API routes and the console's pages
// call the same check.
import type { Principal } from '../auth/principal.js';
import { reachesEverySite } from '../auth/roles.js';
import type { DatabaseHandle } from '../db/connect.js';
import { ApiError } from '../jsonapi/errors.js';

/**
 * Whether the principal reaches every site of its account: by its role (owners, also for sites
 * created later), or because it was given each site the account has now.
 */
export async function reachesWholeAccount(database: Pick<DatabaseHandle, 'db'>, principal: Pick<Principal, 'accountId' | 'role' | 'siteIds'>): Promise<boolean> {
  if (reachesEverySite(principal.role)) return true;
  let query = database.db.selectFrom('sites').select('id').where('account_id', '=', principal.accountId);
  if (principal.siteIds.length > 0) query = query.where('id', 'not in', [...principal.siteIds]);
  return (await query.limit(1).executeTakeFirst()) === undefined;
}

/**
 * Refuses (403 whole_account_required) an account-wide action of a principal that does not reach
 * every site of the account. `action` says what was asked, as the detail's subject: "Resetting
 * the account".
 */
export async function requireWholeAccount(database: Pick<DatabaseHandle, 'db'>, principal: Principal, action: string): Promise<void> {
  if (await reachesWholeAccount(database, principal)) return;
  const reached = principal.siteIds.length === 0 ? 'no site' : `only site${principal.siteIds.length === 1 ? '' : 's'} ${principal.siteIds.join(', ')}`;
  throw new ApiError(403, [
    {
      code: 'whole_account_required',
      title: 'Forbidden',
      detail: `${action} acts on every site of the account, and this user (${principal.role}) reaches ${reached}; it needs the owner or a user given every site`,
    },
  ]);
}
