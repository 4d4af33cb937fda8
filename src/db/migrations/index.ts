// The one append-only list of migrations, run in this order on both databases.
// Never edit a migration that has shipped: add a new one at the end.
import type { Kysely, Migration, MigrationProvider } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import { foundation } from './0001_foundation.js';
import { platform } from './0002_platform.js';
import { writes } from './0003_writes.js';
import { scale } from './0004_scale.js';
import { textSearch } from './0005_text_search.js';
import { writeRaces } from './0006_write_races.js';
import { financialRecords } from './0007_financial_records.js';
import { hooksMigration } from './0008_hooks.js';
import { webhookDeliveries } from './0009_webhook_deliveries.js';
import { sandbox } from './0010_sandbox.js';
import { refunds } from './0011_refunds.js';
import { journalAndFaults } from './0012_journal_and_faults.js';
import { snapshots } from './0013_snapshots.js';
import { consoleMigration } from './0014_console.js';
import { readReplicas } from './0015_read_replicas.js';
import { sandboxSiteScope } from './0016_sandbox_site_scope.js';
import { hookStatesAndLogOrder } from './0017_hook_states_and_log_order.js';
import { journalUpstream } from './0018_journal_upstream.js';
import { importCheckpoints } from './0019_import_checkpoints.js';
import { auditEvents } from './0020_audit_events.js';
import { traceContext } from './0021_trace_context.js';

export interface AppMigration {
  name: string;
  /** One line for `sitebiz migrate --status`: what it changes, in an operator's words. */
  summary: string;
  /**
   * Whether it rewrites, backfills or indexes a table that grows with the data (contacts, purchases,
   * the outbox...): on a large database it takes time and locks the table; `migrate --status` says so.
   */
  rewritesLargeTable: boolean;
  up(db: Kysely<unknown>, traits: DialectTraits): Promise<void>;
}

export const MIGRATIONS: readonly AppMigration[] = [foundation, platform, writes, scale, textSearch, writeRaces, financialRecords, hooksMigration, webhookDeliveries, sandbox, refunds, journalAndFaults, snapshots, consoleMigration, readReplicas, sandboxSiteScope, hookStatesAndLogOrder, journalUpstream, importCheckpoints, auditEvents, traceContext];

/** Hands the list to Kysely's Migrator, binding each migration to the dialect's traits. */
export function migrationProvider(traits: DialectTraits, migrations = MIGRATIONS): MigrationProvider {
  return {
    async getMigrations() {
      const byName: Record<string, Migration> = {};
      for (const m of migrations) byName[m.name] = { up: (db) => m.up(db, traits) };
      return byName;
    },
  };
}
