// Snapshots of an account's data and the reset to the seed (docs/sandbox.md "Reset and snapshots"),
// shared by the API (src/sandbox/snapshot-routes.ts), the CLI (src/cli/snapshot.ts) and the seeders.
//
// What is saved: the rows of every data table (src/db/account-data.ts) that belong to the
// account's sites, copied into snapshot_<table> with one INSERT ... SELECT per table, and the
// account's clock offset. A restore, in one transaction holding every site's write lock:
// deletes the sites' rows (children first), inserts the saved rows back (parents first) with their
// ids, and sets the clock back to the snapshot's. Saves, restores and deletes are the account's
// actions (src/domain/account-lock.ts): one at a time, the account locked before its sites.
// Nothing else of the account changes: users, keys, grants, hooks and the delivery log are kept
// (KEPT_TABLES), except the hooks' health (failing_since, disabled_at), which goes back to the
// snapshot's (restoreHookStates): a hook the restored time has not seen fail is not left
// "disabled since" a date that has not come.
//
// The counters kept by triggers (src/db/site-counters.ts) are set from the restored rows at the end
// (withCounterUpkeepSuspended: on PostgreSQL the per-row upkeep is off meanwhile), so row counts
// and products' active members equal the restored rows, and every site's data version moves
// forward, never back: caches keyed by it, in this process or a running server's, never serve an
// answer from before the restore. SQLite's text-search index is kept by its triggers;
// PostgreSQL's is an index.
//
// `seed` is the snapshot taken when the account was seeded (the demo account on a new database,
// `sitebiz seed`): reserved, neither created nor deleted through the API. Reset restores it.
import { recordAuditEvent, SYSTEM_ACTOR, type AuditActor } from '../audit/audit-events.js';
import { sql, type Kysely } from 'kysely';
import type { DatabaseHandle } from '../db/connect.js';
import { ACCOUNT_DATA_TABLES, snapshotTableOf, type AccountDataTable } from '../db/account-data.js';
import { lockSiteWrites, withCounterUpkeepSuspended } from '../db/site-counters.js';
import { lockAccount, withAccountLock } from './account-lock.js';

export const SEED_SNAPSHOT = 'seed';

/** Names: a letter or digit, then letters, digits, `.`, `_` or `-`; 64 characters at most. */
export const SNAPSHOT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface SnapshotSummary {
  name: string;
  /** Real time the snapshot was taken. */
  createdAt: Date;
  /** The account's clock offset then (restore sets the clock back to it). */
  clockOffsetMs: number;
  /** Rows saved per data table (every data table, zero included). */
  rowCounts: Record<string, number>;
  totalRows: number;
  reserved: boolean;
}

export interface RestoreResult {
  snapshot: SnapshotSummary;
  /** Rows put back, every table. */
  restoredRows: number;
  milliseconds: number;
}

/** Why a snapshot operation was refused; the API and the CLI each render it their way. */
export class SnapshotProblem extends Error {
  constructor(
    readonly kind: 'invalid_name' | 'reserved_name' | 'exists' | 'not_found' | 'no_seed_snapshot' | 'reserved_snapshot',
    message: string,
  ) {
    super(message);
    this.name = 'SnapshotProblem';
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * Runs `fn` as one of the account's actions (account-lock.ts): in its turn, in a transaction that
 * first locks the account; or in the caller's transaction when the handle is inside one already
 * (seeding), where the account is locked first all the same.
 */
async function inAccountTransaction<T>(handle: DatabaseHandle, accountId: number, fn: (db: AnyDb) => Promise<T>): Promise<T> {
  const locked = async (db: AnyDb, waitMs?: number) => {
    await lockAccount(db, handle.traits, accountId, waitMs);
    return fn(db);
  };
  if (handle.db.isTransaction) return locked(handle.db);
  return withAccountLock(handle, accountId, (waitLeftMs) => handle.db.transaction().execute((trx) => locked(trx, waitLeftMs)));
}

/**
 * The account's sites, each write-locked to the end of the transaction, ascending, after the
 * account's own lock (the order of account-lock.ts: no deadlocks).
 */
async function lockAccountSites(handle: DatabaseHandle, db: AnyDb, accountId: number): Promise<number[]> {
  const rows = await db.selectFrom('sites').select('id').where('account_id', '=', accountId).orderBy('id').execute();
  const siteIds = rows.map((r: { id: number | string }) => Number(r.id));
  for (const siteId of siteIds) await lockSiteWrites(db, handle.traits, siteId);
  return siteIds;
}

/** `site_id in (...)`, or for a join table `<parent key> in (select id from <parent> where ...)`. */
function rowsOfSites(table: AccountDataTable, siteIds: readonly number[], prefix = ''): string {
  const list = siteIds.length > 0 ? siteIds.map((id) => String(Math.trunc(id))).join(', ') : 'null';
  return table.parent
    ? `${prefix}${table.parent.key} in (select id from ${table.parent.table} where site_id in (${list}))`
    : `${prefix}site_id in (${list})`;
}

/** The columns saved of a data table: those of its copy (a column added later restores to its default). */
async function savedColumns(handle: DatabaseHandle, db: AnyDb, table: string): Promise<string[]> {
  const columns = await handle.traits.tableColumns(db, snapshotTableOf(table));
  if (columns.length === 0) throw new Error(`no snapshot table for ${table}: a migration must create ${snapshotTableOf(table)}`);
  return columns.filter((c) => c !== 'snapshot_id');
}

const affected = (result: { numAffectedRows?: bigint }): number => Number(result.numAffectedRows ?? 0n);

function summaryOf(row: { name: string; created_at: unknown; clock_offset_ms: unknown; row_counts: string }): SnapshotSummary {
  const rowCounts = JSON.parse(row.row_counts) as Record<string, number>;
  return {
    name: row.name,
    createdAt: row.created_at instanceof Date ? row.created_at : new Date(String(row.created_at)),
    clockOffsetMs: Number(row.clock_offset_ms),
    rowCounts,
    totalRows: Object.values(rowCounts).reduce((a, b) => a + b, 0),
    reserved: row.name === SEED_SNAPSHOT,
  };
}

interface SnapshotRow {
  id: number | string;
  name: string;
  created_at: unknown;
  clock_offset_ms: unknown;
  row_counts: string;
  hook_states: string | null;
}

async function findSnapshot(db: AnyDb, accountId: number, name: string) {
  return db
    .selectFrom('snapshots')
    .select(['id', 'name', 'created_at', 'clock_offset_ms', 'row_counts', 'hook_states'])
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .executeTakeFirst() as Promise<SnapshotRow | undefined>;
}

/** A hook's health as a snapshot keeps it (snapshots.hook_states), timestamps as ISO strings. */
interface HookState {
  id: number;
  failing_since: string | null;
  disabled_at: string | null;
  updated_at: string | null;
}

async function hookStatesOf(handle: DatabaseHandle, db: AnyDb, siteIds: readonly number[]): Promise<HookState[]> {
  if (siteIds.length === 0) return [];
  const rows = await db.selectFrom('hooks').select(['id', 'failing_since', 'disabled_at', 'updated_at']).where('site_id', 'in', siteIds).orderBy('id').execute();
  const decode = (value: unknown) => handle.traits.decodeTimestamp(value);
  return rows.map((r: Record<string, unknown>) => ({
    id: Number(r.id),
    failing_since: decode(r.failing_since),
    disabled_at: decode(r.disabled_at),
    updated_at: decode(r.updated_at),
  }));
}

/**
 * Puts each hook's health back as the snapshot saw it. A hook made since (or every hook, for a
 * snapshot taken before snapshots kept hooks) loses the health stamped after the restored account
 * time: its failures have not happened yet in the time the account is back to. Hooks themselves,
 * their targets and secrets, are never restored (KEPT_TABLES: the integration's configuration).
 */
async function restoreHookStates(handle: DatabaseHandle, db: AnyDb, siteIds: readonly number[], saved: string | null, restoredNow: Date): Promise<void> {
  const savedById = new Map<number, HookState>();
  for (const state of saved ? (JSON.parse(saved) as HookState[]) : []) savedById.set(state.id, state);
  const encode = (iso: string | null) => (iso === null ? null : handle.traits.encodeTimestamp(new Date(iso)));
  const notYet = (iso: string | null) => iso !== null && new Date(iso).getTime() > restoredNow.getTime();
  for (const current of await hookStatesOf(handle, db, siteIds)) {
    const then = savedById.get(current.id);
    let next: HookState;
    if (then) next = then;
    else if (notYet(current.disabled_at) || notYet(current.failing_since)) {
      // Disabled or failing only after the restored time: it has not failed yet. Its earlier
      // health, if any, stays (a hook disabled before the restored time stays disabled).
      const disabledLater = notYet(current.disabled_at);
      next = {
        ...current,
        disabled_at: disabledLater ? null : current.disabled_at,
        failing_since: disabledLater || notYet(current.failing_since) ? null : current.failing_since,
      };
    } else continue;
    if (next.failing_since === current.failing_since && next.disabled_at === current.disabled_at) continue;
    await db
      .updateTable('hooks')
      .set({ failing_since: encode(next.failing_since), disabled_at: encode(next.disabled_at), updated_at: encode(next.updated_at ?? current.updated_at) })
      .where('id', '=', current.id)
      .execute();
  }
}

async function dropSnapshotRows(db: AnyDb, snapshotId: number): Promise<void> {
  for (const table of ACCOUNT_DATA_TABLES) {
    await sql.raw(`delete from ${snapshotTableOf(table.table)} where snapshot_id = ${snapshotId}`).execute(db);
  }
  await db.deleteFrom('snapshots').where('id', '=', snapshotId).execute();
}

/** Checks a name the API or the CLI was given (the seed's is reserved). */
export function checkSnapshotName(name: unknown): string {
  if (typeof name !== 'string' || !SNAPSHOT_NAME.test(name)) {
    throw new SnapshotProblem(
      'invalid_name',
      'name must be 1 to 64 characters: a letter or digit, then letters, digits, ".", "_" or "-"',
    );
  }
  if (name === SEED_SNAPSHOT) {
    throw new SnapshotProblem('reserved_name', `"${SEED_SNAPSHOT}" is reserved for the snapshot taken when the account was seeded (POST /v1/test_helpers/reset restores it)`);
  }
  return name;
}

/**
 * Saves the account's data under `name`. A name in use is refused unless `replace` (the seed
 * snapshot is retaken each time the account is seeded). A save someone asked for (the API, the
 * console, the CLI) names its `actor` and is in the audit log; the seed snapshot that seeding,
 * the demo and imports take is part of those and has no row of its own.
 */
export async function saveSnapshot(
  handle: DatabaseHandle,
  accountId: number,
  name: string,
  realNow: Date,
  options: { replace?: boolean; actor?: AuditActor } = {},
): Promise<SnapshotSummary> {
  return inAccountTransaction(handle, accountId, async (db) => {
    const siteIds = await lockAccountSites(handle, db, accountId);
    const existing = await findSnapshot(db, accountId, name);
    if (existing && !options.replace) throw new SnapshotProblem('exists', `This account already has a snapshot named ${JSON.stringify(name)}; delete it first or choose another name`);
    if (existing) await dropSnapshotRows(db, Number(existing.id));
    const account = await db.selectFrom('accounts').select('clock_offset_ms').where('id', '=', accountId).executeTakeFirstOrThrow();
    const inserted = await db
      .insertInto('snapshots')
      .values({
        account_id: accountId,
        name,
        clock_offset_ms: account.clock_offset_ms,
        row_counts: '{}',
        hook_states: JSON.stringify(await hookStatesOf(handle, db, siteIds)),
        created_at: handle.traits.encodeTimestamp(realNow),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const snapshotId = Number(inserted.id);
    const rowCounts: Record<string, number> = {};
    for (const table of ACCOUNT_DATA_TABLES) {
      const columns = (await savedColumns(handle, db, table.table)).join(', ');
      const result = await sql
        .raw(
          `insert into ${snapshotTableOf(table.table)} (snapshot_id, ${columns})
           select ${snapshotId}, ${columns} from ${table.table} where ${rowsOfSites(table, siteIds)} order by ${table.order.join(', ')}`,
        )
        .execute(db);
      rowCounts[table.table] = affected(result);
    }
    await db.updateTable('snapshots').set({ row_counts: JSON.stringify(rowCounts) }).where('id', '=', snapshotId).execute();
    if (options.actor) {
      await recordAuditEvent(
        { db, traits: handle.traits },
        {
          accountId,
          action: 'sandbox.snapshot_saved',
          actor: options.actor,
          target: { type: 'snapshots', id: name },
          details: { saved_rows: Object.values(rowCounts).reduce((sum, n) => sum + n, 0), replaced: Boolean(existing) },
          at: realNow,
        },
      );
    }
    const saved = await findSnapshot(db, accountId, name);
    return summaryOf(saved!);
  });
}

export async function listSnapshots(handle: DatabaseHandle, accountId: number): Promise<SnapshotSummary[]> {
  const rows = await handle.db
    .selectFrom('snapshots')
    .select(['name', 'created_at', 'clock_offset_ms', 'row_counts'])
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(summaryOf);
}

/** Deletes the snapshot `name` (never the seed snapshot), with the audit log's row naming `actor`. */
export async function deleteSnapshot(handle: DatabaseHandle, accountId: number, name: string, realNow: Date, actor: AuditActor): Promise<void> {
  await inAccountTransaction(handle, accountId, async (db) => {
    const existing = await findSnapshot(db, accountId, name);
    if (!existing) throw new SnapshotProblem('not_found', `This account has no snapshot named ${JSON.stringify(name)}`);
    if (name === SEED_SNAPSHOT) {
      throw new SnapshotProblem('reserved_snapshot', `The ${SEED_SNAPSHOT} snapshot is what POST /v1/test_helpers/reset goes back to; it cannot be deleted`);
    }
    await dropSnapshotRows(db, Number(existing.id));
    await recordAuditEvent({ db, traits: handle.traits }, { accountId, action: 'sandbox.snapshot_deleted', actor, target: { type: 'snapshots', id: name }, at: realNow });
  });
}

/**
 * Puts the account's data back as the snapshot saved it, its hooks' health too, and its clock
 * where it was then. The audit log names `actor` (a reset when the snapshot is the seed).
 */
export async function restoreSnapshot(handle: DatabaseHandle, accountId: number, name: string, realNow: Date, actor: AuditActor = SYSTEM_ACTOR): Promise<RestoreResult> {
  // From the account's turn: the wait for it is not the restore's time.
  let started = 0;
  const result = await inAccountTransaction(handle, accountId, async (db) => {
    started = performance.now();
    const siteIds = await lockAccountSites(handle, db, accountId);
    const snapshot = await findSnapshot(db, accountId, name);
    if (!snapshot) {
      throw name === SEED_SNAPSHOT
        ? new SnapshotProblem(
            'no_seed_snapshot',
            'This account has no seed snapshot to reset to: only accounts seeded by this version (the demo account of a new database, `sitebiz seed`) have one. Save a snapshot and restore it instead.',
          )
        : new SnapshotProblem('not_found', `This account has no snapshot named ${JSON.stringify(name)}`);
    }
    const snapshotId = Number(snapshot.id);
    const restoredRows = await withCounterUpkeepSuspended(db, handle.traits.name, siteIds, async () => {
      for (const table of [...ACCOUNT_DATA_TABLES].reverse()) {
        await sql.raw(`delete from ${table.table} where ${rowsOfSites(table, siteIds)}`).execute(db);
      }
      let rows = 0;
      for (const table of ACCOUNT_DATA_TABLES) {
        const columns = (await savedColumns(handle, db, table.table)).join(', ');
        const result = await sql
          .raw(
            `insert into ${table.table} (${columns})
             select ${columns} from ${snapshotTableOf(table.table)} where snapshot_id = ${snapshotId} order by ${table.order.join(', ')}`,
          )
          .execute(db);
        rows += affected(result);
      }
      return rows;
    });
    await db.updateTable('accounts').set({ clock_offset_ms: snapshot.clock_offset_ms }).where('id', '=', accountId).execute();
    await restoreHookStates(handle, db, siteIds, snapshot.hook_states, new Date(realNow.getTime() + Number(snapshot.clock_offset_ms)));
    await recordAuditEvent(
      { db, traits: handle.traits },
      {
        accountId,
        action: name === SEED_SNAPSHOT ? 'sandbox.reset' : 'sandbox.snapshot_restored',
        actor,
        target: { type: 'snapshots', id: name },
        details: { restored_rows: restoredRows },
        at: realNow,
      },
    );
    return { snapshot: summaryOf(snapshot), restoredRows };
  });
  return { ...result, milliseconds: Math.round(performance.now() - started) };
}

/** POST /v1/test_helpers/reset and `sitebiz reset`: back to the seed snapshot. */
export function resetAccount(handle: DatabaseHandle, accountId: number, realNow: Date, actor: AuditActor = SYSTEM_ACTOR): Promise<RestoreResult> {
  return restoreSnapshot(handle, accountId, SEED_SNAPSHOT, realNow, actor);
}
