// The sandbox suite: how long reset and snapshots take (docs/sandbox.md "Reset and snapshots").
// On a scratch database of its own, never kept (a SQLite file in the run's temp dir, or a schema of
// its own in the PostgreSQL database of --postgres-url, dropped at the end and on Ctrl-C):
//
//   - the demo account: seeded with its seed snapshot, 1,000 contacts deleted and one renamed,
//     then reset three times (the target: under 1 s);
//   - an account seeded like `sitebiz seed --contacts N` (its seed snapshot timed as part of the
//     seed), then reset after writes, reset again, a snapshot saved, writes, the snapshot restored
//     and deleted (reported).
//
// The measures run in the bench's own process, straight on the domain code the API and the CLI
// share (src/domain/snapshots.ts), so no HTTP or start-up time is in them.
import { join } from 'node:path';
import { sql } from 'kysely';
import { SYSTEM_ACTOR } from '../src/audit/audit-events.js';
import { parseDatabaseUrl } from '../src/config.js';
import { connectDatabase, dropSchema, migrateToLatest, type DatabaseHandle } from '../src/db/connect.js';
import { seedDemoData } from '../src/demo/seed.js';
import { createAccount, createSite, createUser } from '../src/domain/accounts.js';
import { deleteSnapshot, resetAccount, restoreSnapshot, saveSnapshot } from '../src/domain/snapshots.js';
import { seedAccount } from '../src/seed/seed-account.js';
import type { DatabaseKind } from './datasets.js';
import { registerUndo } from './processes.js';

export interface SandboxOptions {
  /** Contacts of the seeded account. */
  contacts: number;
  seed: number;
  /** Where the SQLite file goes (the run's temp dir, removed at the end). */
  tempDir: string;
  /** PostgreSQL: the scratch schema is made in this URL's database. */
  postgresUrl: string;
}

/** One timed operation: milliseconds, and the rows it wrote (copied, put back or deleted). */
export interface Timing {
  ms: number;
  rows: number;
}

export interface SandboxFigures {
  contacts: number;
  demo: { seed: Timing; resets: Timing[] };
  seeded: {
    /** `sitebiz seed`'s work, its seed snapshot included (rows: the rows it wrote). */
    seed: Timing;
    /** Of the seed, saving the seed snapshot. */
    seedSnapshot: Timing;
    resetAfterWrites: Timing;
    resetAgain: Timing;
    save: Timing;
    restore: Timing;
    delete: Timing;
  };
}

/** Runs `fn` and times it; `rows` reads the row count from its answer. */
async function timed<T>(name: string, fn: () => Promise<T>, rows: (result: T) => number): Promise<Timing & { result: T }> {
  const started = performance.now();
  const result = await fn();
  const timing = { ms: performance.now() - started, rows: rows(result), result };
  console.log(`    ${name.padEnd(36)} ${Math.round(timing.ms).toLocaleString('en-US').padStart(9)} ms  ${timing.rows.toLocaleString('en-US').padStart(10)} rows`);
  return timing;
}

const only = ({ ms, rows }: Timing): Timing => ({ ms, rows });

/** Writes a reset has to undo: a thousand contacts (and what hangs on them) gone, one renamed. */
async function scribble(handle: DatabaseHandle, siteId: number): Promise<void> {
  await sql`delete from contacts where id in (select id from contacts where site_id = ${siteId} order by id limit 1000)`.execute(handle.db);
  await sql`update contacts set name = 'Renamed' where id = (select max(id) from contacts where site_id = ${siteId})`.execute(handle.db);
}

export async function measureSandbox(kind: DatabaseKind, options: SandboxOptions): Promise<SandboxFigures> {
  const url = kind === 'sqlite' ? `sqlite:${join(options.tempDir, 'sandbox.db')}` : options.postgresUrl;
  const database = parseDatabaseUrl(url, 'the sandbox suite', [])!;
  const schema = kind === 'postgres' ? `sitebiz_bench_sandbox_${process.pid}_${Date.now()}` : undefined;
  if (schema) registerUndo(`drop PostgreSQL schema ${schema}`, () => dropSchema(database, schema));
  const handle = await connectDatabase(database, schema ? { schema } : {});
  try {
    await migrateToLatest(handle);
    const clock = { now: () => new Date() };

    const demoAccount = await createAccount(handle, { name: 'Demo' }, clock);
    await createUser(handle, { accountId: demoAccount, name: 'Demo Owner', email: 'demo-owner@bench.example', role: 'owner' }, clock);
    const demoSite = await createSite(handle, { accountId: demoAccount, title: 'Demo', subdomain: `demo-${Date.now()}` }, clock);
    const demoSeed = await timed(
      'demo: seed (with its seed snapshot)',
      () => seedDemoData(handle, { accountId: demoAccount, siteId: demoSite }, clock),
      (summary) => Object.values(summary.rows).reduce((a, b) => a + b, 0),
    );
    await scribble(handle, demoSite);
    const resets: Timing[] = [];
    for (const n of [1, 2, 3]) resets.push(only(await timed(`demo: reset #${n}`, () => resetAccount(handle, demoAccount, new Date()), (r) => r.restoredRows)));

    const n = options.contacts.toLocaleString('en-US');
    const seeded = await timed(
      `${n} contacts: seed`,
      () => seedAccount(handle, database, { contactsPerSite: options.contacts, sites: 1, seed: options.seed, clock }),
      (result) => result.total_rows,
    );
    console.log(`    (of which the seed snapshot: ${seeded.result.snapshot_milliseconds.toLocaleString('en-US')} ms)`);
    const accountId = Number(seeded.result.account_id);
    const siteId = Number(seeded.result.site_ids[0]);
    await scribble(handle, siteId);
    const resetAfterWrites = await timed(`${n} contacts: reset after writes`, () => resetAccount(handle, accountId, new Date()), (r) => r.restoredRows);
    const resetAgain = await timed(`${n} contacts: reset again`, () => resetAccount(handle, accountId, new Date()), (r) => r.restoredRows);
    const save = await timed(`${n} contacts: snapshot save`, () => saveSnapshot(handle, accountId, 'bench', new Date()), (s) => s.totalRows);
    await scribble(handle, siteId);
    const restore = await timed(`${n} contacts: snapshot restore`, () => restoreSnapshot(handle, accountId, 'bench', new Date()), (r) => r.restoredRows);
    const deleted = await timed(`${n} contacts: snapshot delete`, () => deleteSnapshot(handle, accountId, 'bench', new Date(), SYSTEM_ACTOR), () => save.rows);
    return {
      contacts: options.contacts,
      demo: { seed: only(demoSeed), resets },
      seeded: {
        seed: only(seeded),
        seedSnapshot: { ms: seeded.result.snapshot_milliseconds, rows: resetAfterWrites.rows },
        resetAfterWrites: only(resetAfterWrites),
        resetAgain: only(resetAgain),
        save: only(save),
        restore: only(restore),
        delete: only(deleted),
      },
    };
  } finally {
    await handle.close();
    if (schema) await dropSchema(database, schema);
  }
}
