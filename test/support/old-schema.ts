// Fixtures on a database held at an older migration (the upgrade and migration tests): rows
// written as the older version wrote them, where this version's domain code would also write
// tables the old schema lacks (createApiKey writes the audit log, 0020).
import { newClientId, newClientSecret, sha256Hex } from '../../src/auth/secrets.js';
import type { DatabaseHandle } from '../../src/db/connect.js';

/** An API key's row, without the audit event this version adds; its credentials. */
export async function insertKeyAsOldVersion(
  handle: DatabaseHandle,
  key: { accountId: number; userId: number; name: string; permissions: readonly string[]; at?: Date },
): Promise<{ clientId: string; clientSecret: string }> {
  const credentials = { clientId: newClientId(), clientSecret: newClientSecret() };
  const at = handle.traits.encodeTimestamp(key.at ?? new Date());
  await handle.db
    .insertInto('api_keys')
    .values({
      account_id: key.accountId,
      user_id: key.userId,
      name: key.name,
      client_id: credentials.clientId,
      secret_hash: sha256Hex(credentials.clientSecret),
      permissions: JSON.stringify([...new Set(key.permissions)].sort()),
      created_at: at,
      updated_at: at,
      rotated_at: null,
    })
    .execute();
  return credentials;
}
