// Demo data: a small, realistic and deterministic data set for `init --demo` (and so for the
// first `npm start`). Each resource issue adds its records here; the same code always produces
// the same rows, so demo ids and examples in the docs stay stable.
import type { DatabaseHandle } from '../db/connect.js';
import { createUser, type Clock } from '../domain/accounts.js';

export const DEMO_ACCOUNT = {
  account: 'Northwind Learning',
  owner: 'Avery Quinn',
  email: 'avery@northwind.example',
  site: 'Northwind Academy',
  subdomain: 'northwind-academy',
};

export async function seedDemoData(handle: DatabaseHandle, target: { accountId: number; siteId: number }, clock: Clock): Promise<void> {
  // A second user who reaches the demo site through explicit site access, so `/v1/me` and the
  // access rules have something to show beside the owner.
  await createUser(
    handle,
    { accountId: target.accountId, name: 'Jordan Blake', email: 'jordan@northwind.example', role: 'assistant', siteIds: [target.siteId] },
    clock,
  );
}
