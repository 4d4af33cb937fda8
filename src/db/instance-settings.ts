// Settings of one installation that every process serving it must share, kept in the database
// (instance_settings, made by the 0004 migration).
import type { DatabaseHandle } from './connect.js';

/** Signs paging cursors (src/jsonapi/cursors.ts): 32 random bytes, hex. */
export const CURSOR_SIGNING_KEY = 'cursor_signing_key';

export async function loadCursorSigningKey(handle: DatabaseHandle): Promise<Buffer> {
  const row = await handle.db
    .selectFrom('instance_settings')
    .select('value')
    .where('name', '=', CURSOR_SIGNING_KEY)
    .executeTakeFirst();
  if (!row) throw new Error('instance_settings has no cursor signing key: run the migrations (sitebiz migrate)');
  return Buffer.from(row.value, 'hex');
}

/**
 * The base URL of links (PUBLIC_URL, or http://HOST:PORT) of the server that last started on this
 * database. Commands that print links to that server (`init`, `seed`, `users sign-in-link`) use
 * it when they are not given PUBLIC_URL, PORT or HOST themselves: a server started with
 * `PORT=3001 npm start` is then named right by `npm run sitebiz -- users sign-in-link` run in
 * another terminal, where PORT is not set. Several servers on one database give links with one
 * PUBLIC_URL (docs/scaling.md), so one value serves them all; the last start wins.
 */
export const SERVER_PUBLIC_URL = 'server_public_url';

export async function saveServerPublicUrl(handle: DatabaseHandle, url: string): Promise<void> {
  await handle.db
    .insertInto('instance_settings')
    .values({ name: SERVER_PUBLIC_URL, value: url })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value: url }))
    .execute();
}

export async function loadServerPublicUrl(handle: DatabaseHandle): Promise<string | undefined> {
  const row = await handle.db.selectFrom('instance_settings').select('value').where('name', '=', SERVER_PUBLIC_URL).executeTakeFirst();
  return row?.value;
}
