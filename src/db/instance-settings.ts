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
