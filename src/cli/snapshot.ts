// `sitebiz reset` and `sitebiz snapshot save|restore|list|delete <name>` (docs/sandbox.md "Reset
// and snapshots"): the test helpers of POST /v1/test_helpers/reset and /v1/test_helpers/snapshots,
// run by the same code (src/domain/snapshots.ts) straight on the database of a running server. The
// server's caches see the change: a restore moves every site's data version forward.
import { cliActor } from '../audit/audit-events.js';
import type { DatabaseHandle } from '../db/connect.js';
import { AdminError } from '../domain/accounts.js';
import {
  checkSnapshotName,
  deleteSnapshot,
  listSnapshots,
  resetAccount,
  restoreSnapshot,
  saveSnapshot,
  SnapshotProblem,
  type RestoreResult,
  type SnapshotSummary,
} from '../domain/snapshots.js';
import { ApiError } from '../jsonapi/errors.js';
import { chooseAccount } from './account-principal.js';
import { configFrom, report, UsageError, withDatabase, type Command } from './command.js';

type Values = Record<string, string | boolean | undefined>;

const ACCOUNT_HELP = '  --account ID   the account (default: the only account of the database, or else the demo account)';

/** Runs a snapshot operation on the account; a refusal is the CLI's "rejected" failure (exit 1). */
async function onAccount<T>(values: Values, run: (handle: DatabaseHandle, accountId: number) => Promise<T>): Promise<{ accountId: number; result: T }> {
  const config = configFrom(values);
  // As /v1/test_helpers answers 404 in production mode, its commands refuse to run there.
  if (config.mode !== 'sandbox') throw new AdminError('snapshots and reset are sandbox tools: they run in sandbox mode only (MODE=sandbox)');
  return withDatabase(config, async (handle) => {
    const accountId = await chooseAccount(handle, values);
    try {
      return { accountId, result: await run(handle, accountId) };
    } catch (error) {
      // A refusal, or the account held past the wait's bound by a server's action (account_busy).
      if (error instanceof SnapshotProblem) throw new AdminError(error.message);
      if (error instanceof ApiError) throw new AdminError(error.errors.map((e) => e.detail).join('; '));
      throw error;
    }
  });
}

function nameOf(positionals: string[], usage: string): string {
  const name = positionals[0];
  if (name === undefined) throw new UsageError(`name the snapshot: ${usage}`);
  return name;
}

const snapshotJson = (s: SnapshotSummary) => ({
  name: s.name,
  created_at: s.createdAt.toISOString(),
  clock_offset_seconds: s.clockOffsetMs / 1000,
  reserved: s.reserved,
  row_counts: s.rowCounts,
  total_rows: s.totalRows,
});

function reportRestore(values: Values, accountId: number, restored: RestoreResult, what: string): void {
  report(
    values,
    { account_id: String(accountId), snapshot: snapshotJson(restored.snapshot), restored_rows: restored.restoredRows, milliseconds: restored.milliseconds },
    [
      `${what} account ${accountId}: ${restored.restoredRows.toLocaleString('en-US')} rows restored in ${restored.milliseconds} ms.`,
      `Its clock is ${restored.snapshot.clockOffsetMs === 0 ? 'real time again' : `${restored.snapshot.clockOffsetMs / 1000} s ahead of real time, as when the snapshot was saved`}.`,
    ],
  );
}

const options = { account: { type: 'string' as const } };

export const resetCommand: Command = {
  usage: 'sitebiz reset [--account ID] [--json] [config flags]',
  details: [
    ACCOUNT_HELP,
    'Restores the `seed` snapshot, saved when the account was seeded, and sets the account\'s clock back to it.',
    '--json: {account_id, snapshot, restored_rows, milliseconds}.',
  ],
  options,
  async run(values) {
    const { accountId, result } = await onAccount(values, (handle, id) => resetAccount(handle, id, new Date(), cliActor()));
    reportRestore(values, accountId, result, 'Reset');
  },
};

export const snapshotSaveCommand: Command = {
  usage: 'sitebiz snapshot save <name> [--account ID] [--json] [config flags]',
  details: [ACCOUNT_HELP, 'Names: 1 to 64 characters, a letter or digit then letters, digits, ".", "_" or "-"; "seed" is reserved.', '--json: {account_id, snapshot}.'],
  options,
  async run(values, positionals) {
    const name = nameOf(positionals, snapshotSaveCommand.usage);
    const { accountId, result } = await onAccount(values, (handle, id) => saveSnapshot(handle, id, checkSnapshotName(name), new Date(), { actor: cliActor() }));
    report(values, { account_id: String(accountId), snapshot: snapshotJson(result) }, [
      `Saved snapshot ${result.name} of account ${accountId}: ${result.totalRows.toLocaleString('en-US')} rows.`,
    ]);
  },
};

export const snapshotRestoreCommand: Command = {
  usage: 'sitebiz snapshot restore <name> [--account ID] [--json] [config flags]',
  details: [ACCOUNT_HELP, '--json: {account_id, snapshot, restored_rows, milliseconds}.'],
  options,
  async run(values, positionals) {
    const name = nameOf(positionals, snapshotRestoreCommand.usage);
    const { accountId, result } = await onAccount(values, (handle, id) => restoreSnapshot(handle, id, name, new Date(), cliActor()));
    reportRestore(values, accountId, result, `Restored ${name} to`);
  },
};

export const snapshotListCommand: Command = {
  usage: 'sitebiz snapshot list [--account ID] [--json] [config flags]',
  details: [ACCOUNT_HELP, '--json: {account_id, snapshots: [{name, created_at, clock_offset_seconds, reserved, row_counts, total_rows}]}.'],
  options,
  async run(values) {
    const { accountId, result } = await onAccount(values, (handle, id) => listSnapshots(handle, id));
    report(
      values,
      { account_id: String(accountId), snapshots: result.map(snapshotJson) },
      result.length === 0
        ? [`Account ${accountId} has no snapshots.`]
        : result.map((s) => `${s.name.padEnd(24)} ${s.createdAt.toISOString()}  ${s.totalRows.toLocaleString('en-US').padStart(12)} rows${s.reserved ? '  (seed: what reset restores)' : ''}`),
    );
  },
};

export const snapshotDeleteCommand: Command = {
  usage: 'sitebiz snapshot delete <name> [--account ID] [--json] [config flags]',
  details: [ACCOUNT_HELP, '--json: {account_id, deleted}.'],
  options,
  async run(values, positionals) {
    const name = nameOf(positionals, snapshotDeleteCommand.usage);
    const { accountId } = await onAccount(values, (handle, id) => deleteSnapshot(handle, id, name, new Date(), cliActor()));
    report(values, { account_id: String(accountId), deleted: name }, [`Deleted snapshot ${name} of account ${accountId}.`]);
  },
};
