// Hooks can be created, rotated and deleted (docs/webhooks.md):
// - signing_secret: the Standard Webhooks secret (`whsec_` + base64), stored as given because the
//   delivery worker signs with it (an HMAC needs the secret itself, unlike API key secrets, which
//   are kept as hashes). Null for hooks made before this migration: rotate_secret gives them one.
// - previous_signing_secret and previous_secret_expires_at: the secret a rotation replaced, with
//   which deliveries are also signed until it expires (24 hours after the rotation).
// A deleted hook's row is deleted; its deliveries (a later migration) keep the hook's id, event
// and target_url themselves, with no foreign key to hooks, so they stay in the log.
import type { Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import type { AppMigration } from './index.js';

export const hooksMigration: AppMigration = {
  name: '0008_hooks',
  summary: 'Adds signing secrets and their rotation to hooks.',
  rewritesLargeTable: false,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    await db.schema.alterTable('hooks').addColumn('signing_secret', 'text').execute();
    await db.schema.alterTable('hooks').addColumn('previous_signing_secret', 'text').execute();
    await db.schema.alterTable('hooks').addColumn('previous_secret_expires_at', t.timestampType).execute();
  },
};
