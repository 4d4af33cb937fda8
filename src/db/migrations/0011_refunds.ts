// Refunds name the charge they give money back from (docs/sandbox.md, "Commerce"):
// transactions.refunded_transaction_id is set on a `refund` transaction made by
// POST /v1/test_helpers/transactions/{id}/refund, so that partial refunds of one charge add up and
// never exceed it. Refunds written before (the demo's) leave it null. No foreign key: a refund and
// its charge belong to the same site and go together when the site's data does.
import { sql, type Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import type { AppMigration } from './index.js';

export const refunds: AppMigration = {
  name: '0011_refunds',
  summary: 'Adds transactions.refunded_transaction_id (a nullable column: no rewrite).',
  rewritesLargeTable: false,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    await db.schema.alterTable('transactions').addColumn('refunded_transaction_id', t.foreignKeyType).execute();
    await db.schema
      .createIndex('transactions_refunded_idx')
      .on('transactions')
      .column('refunded_transaction_id')
      .where(sql.ref('refunded_transaction_id'), 'is not', null)
      .execute();
  },
};
