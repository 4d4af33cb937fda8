// Read replicas (src/db/replicas.ts, docs/scaling.md "Read replicas"):
// - account_write_positions: per account, the primary's WAL position (in bytes from 0/0) after the
//   account's last write through the API or the console. A request's reads go to a replica only
//   once it has replayed past this position, so a client sees its own writes on its next request,
//   whichever process serves it. Only written while DATABASE_REPLICA_URL is set (so never on SQLite).
import type { Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import type { AppMigration } from './index.js';

export const readReplicas: AppMigration = {
  name: '0015_read_replicas',
  summary: 'Creates account_write_positions for read replicas.',
  rewritesLargeTable: false,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    await db.schema
      .createTable('account_write_positions')
      .addColumn('account_id', t.foreignKeyType, (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
      .addColumn('wal_position', 'bigint', (c) => c.notNull())
      .execute();
  },
};
