// How long reset and snapshots take (docs/sandbox.md "Reset and snapshots"): the demo account, and
// an account seeded by `sitebiz seed` with --contacts contacts (default 100,000), on a scratch
// database: a SQLite file under the system's temp folder, or a schema of its own in the PostgreSQL
// database given (dropped at the end).
//
//   node --import tsx bench/snapshots.ts [--database-url sqlite|postgres://...] [--contacts N]
//
// Prints one line per measure and, last, one JSON object with every figure (milliseconds).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { parseDatabaseUrl } from '../src/config.js';
import { connectDatabase, dropSchema, migrateToLatest, type DatabaseHandle } from '../src/db/connect.js';
import { seedDemoData } from '../src/demo/seed.js';
import { createAccount, createSite, createUser } from '../src/domain/accounts.js';
import { deleteSnapshot, resetAccount, restoreSnapshot, saveSnapshot } from '../src/domain/snapshots.js';
import { seedAccount } from '../src/seed/seed-account.js';

const { values } = parseArgs({ options: { 'database-url': { type: 'string', default: 'sqlite' }, contacts: { type: 'string', default: '100000' } } });
const contacts = Number(values.contacts);
const given = values['database-url']!;
const dir = given === 'sqlite' ? mkdtempSync(join(tmpdir(), 'sitebiz-snapshot-bench-')) : undefined;
const url = dir ? `sqlite:${join(dir, 'bench.db')}` : given;
const database = parseDatabaseUrl(url, '--database-url', [])!;
const schema = database.dialect === 'postgres' ? `snapshot_bench_${Date.now()}` : undefined;
const figures: Record<string, number> = {};

async function timed<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await fn();
  figures[name] = Math.round(performance.now() - started);
  console.log(`${name.padEnd(40)} ${String(figures[name]).padStart(8)} ms`);
  return result;
}

/** Writes a reset has to undo: a thousand contacts (and what hangs on them) gone, one renamed. */
async function scribble(handle: DatabaseHandle, siteId: number): Promise<void> {
  await sql`delete from contacts where id in (select id from contacts where site_id = ${siteId} order by id limit 1000)`.execute(handle.db);
  await sql`update contacts set name = 'Renamed' where id = (select max(id) from contacts where site_id = ${siteId})`.execute(handle.db);
}

const handle = await connectDatabase(database, schema ? { schema } : {});
try {
  await migrateToLatest(handle);
  const clock = { now: () => new Date() };

  // The demo account.
  const demoAccount = await createAccount(handle, { name: 'Demo' }, clock);
  await createUser(handle, { accountId: demoAccount, name: 'Demo Owner', email: 'demo-owner@bench.example', role: 'owner' }, clock);
  const demoSite = await createSite(handle, { accountId: demoAccount, title: 'Demo', subdomain: `demo-${Date.now()}` }, clock);
  await timed('demo: seed (with its seed snapshot)', () => seedDemoData(handle, { accountId: demoAccount, siteId: demoSite }, clock));
  await scribble(handle, demoSite);
  for (const n of [1, 2, 3]) await timed(`demo: reset #${n}`, () => resetAccount(handle, demoAccount));

  // The seeded account.
  const seeded = await timed(`${contacts} contacts: sitebiz seed`, () =>
    seedAccount(handle, database, { contactsPerSite: contacts, sites: 1, seed: 1, clock }),
  );
  figures[`${contacts} contacts: seed snapshot (part of the seed)`] = seeded.snapshot_milliseconds;
  console.log(`${contacts} contacts: ${seeded.total_rows} rows; the seed snapshot took ${seeded.snapshot_milliseconds} ms of the seed`);
  const accountId = Number(seeded.account_id);
  const siteId = Number(seeded.site_ids[0]);
  await scribble(handle, siteId);
  await timed(`${contacts} contacts: reset after writes`, () => resetAccount(handle, accountId));
  await timed(`${contacts} contacts: reset again`, () => resetAccount(handle, accountId));
  await timed(`${contacts} contacts: snapshot save`, () => saveSnapshot(handle, accountId, 'bench', new Date()));
  await scribble(handle, siteId);
  await timed(`${contacts} contacts: snapshot restore`, () => restoreSnapshot(handle, accountId, 'bench'));
  await timed(`${contacts} contacts: snapshot delete`, () => deleteSnapshot(handle, accountId, 'bench'));
  console.log(JSON.stringify({ dialect: database.dialect, contacts, rows: seeded.total_rows, milliseconds: figures }));
} finally {
  await handle.close();
  if (schema) await dropSchema(database, schema);
  if (dir) rmSync(dir, { recursive: true, force: true });
}
