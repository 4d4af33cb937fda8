// `sitebiz init`: make sure there is an account with an owner and a site, then hand out a new
// API key with every permission. Also what `serve` runs on a database with no account.
import type { DatabaseHandle } from '../db/connect.js';
import { PERMISSION_NAMES } from '../auth/permissions.js';
import { DEMO_ACCOUNT } from '../demo/demo-account.js';
import { seedDemoData } from '../demo/seed.js';
import { analyzeTables } from '../db/site-counters.js';
import { ConsoleSessions, consoleSignInUrl } from '../console/sessions.js';
import { createAccount, createApiKey, createSite, createUser, type Clock } from './accounts.js';

const EMPTY_ACCOUNT = { account: 'My Account', owner: 'Account Owner', email: 'owner@example.com', site: 'My Site', subdomain: 'my-site' };

export interface InitResult {
  account_id: string;
  user_id: string;
  site_id: string;
  client_id: string;
  client_secret: string;
  base_url: string;
  /** Whether this run created the account (false: it existed and only a key was added). */
  created: boolean;
  /**
   * A one-time console sign-in link for the owner, made when this run created the account
   * (a new database); `sitebiz users sign-in-link` makes others.
   */
  sign_in_url?: string;
}

export async function initialize(
  handle: DatabaseHandle,
  options: { demo: boolean; baseUrl: string; clock?: Clock; demoContacts?: number },
): Promise<InitResult> {
  const clock = options.clock ?? { now: () => new Date() };
  const { db } = handle;
  let created = false;
  let account = await db.selectFrom('accounts').select('id').orderBy('id').executeTakeFirst();
  if (!account) {
    try {
      // One transaction, so a half-made account never exists. Two processes starting together
      // on an empty database race here: the loser hits a unique constraint (the owner's email)
      // or a busy lock, rolls back, and uses the winner's account.
      account = await db.transaction().execute(async (trx) => {
        const tx: DatabaseHandle = { ...handle, db: trx };
        const names = options.demo ? DEMO_ACCOUNT : EMPTY_ACCOUNT;
        const newAccountId = await createAccount(tx, { name: names.account }, clock);
        await createUser(tx, { accountId: newAccountId, name: names.owner, email: names.email, role: 'owner' }, clock);
        const siteId = await createSite(tx, { accountId: newAccountId, title: names.site, subdomain: names.subdomain }, clock);
        if (options.demo) {
          await seedDemoData(tx, { accountId: newAccountId, siteId }, clock, options.demoContacts ? { contacts: options.demoContacts } : {});
        }
        return { id: newAccountId };
      });
      created = true;
      // Planner statistics that match the data just written (a large demo site otherwise gets
      // plans chosen for empty tables).
      if (options.demo) await analyzeTables(db);
    } catch (error) {
      account = await db.selectFrom('accounts').select('id').orderBy('id').executeTakeFirst();
      if (!account) throw error;
    }
  }
  const accountId = Number(account.id);
  const owner = await db
    .selectFrom('users')
    .select('id')
    .where('account_id', '=', accountId)
    .where('role', '=', 'owner')
    .orderBy('id')
    .executeTakeFirstOrThrow();
  const site = await db.selectFrom('sites').select('id').where('account_id', '=', accountId).orderBy('id').executeTakeFirstOrThrow();
  const key = await createApiKey(
    handle,
    { userId: Number(owner.id), name: `init ${clock.now().toISOString()}`, permissions: PERMISSION_NAMES },
    clock,
  );
  const signInUrl = created ? consoleSignInUrl(options.baseUrl, await new ConsoleSessions(handle, clock.now).createSignInLink(Number(owner.id))) : undefined;
  return {
    account_id: String(accountId),
    user_id: String(owner.id),
    site_id: String(site.id),
    client_id: key.clientId,
    client_secret: key.clientSecret,
    base_url: options.baseUrl,
    created,
    ...(signInUrl ? { sign_in_url: signInUrl } : {}),
  };
}
