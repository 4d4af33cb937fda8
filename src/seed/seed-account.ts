// `sitebiz seed`: an account with sites full of generated people, at any size. The people are the
// demo's (src/demo: plans, stories, commerce, email history), drawn from `seed` instead of the
// demo's fixed seed, with each email reaching a sample of its audience (people-generator.ts) so a
// contact costs about fourteen rows rather than thirty-four. A worker thread generates batch n+1
// while this thread writes batch n through the bulk path of src/db/bulk-insert.ts; one batch at
// a time in each, so memory stays flat whatever the size. After the load, the counters are
// recounted, then the indexes are built while the snapshot copies the rows (finishLoad).
//
// Deterministic: the same seed, clock and starting database give the same rows, ids included.
import type { DatabaseConfig } from '../config.js';
import { PERMISSION_NAMES } from '../auth/permissions.js';
import { openBulkLoader, type BulkLoader } from '../db/bulk-insert.js';
import type { DatabaseHandle } from '../db/connect.js';
import { rebuildDerivedData, suspendDerivedData } from '../db/derived-data.js';
import { ARCHETYPES } from '../demo/archetypes.js';
import { CATALOGUE_TABLES } from '../demo/catalogue.js';
import { seedOf } from '../demo/random.js';
import { RowSet, TABLES_WITHOUT_ID } from '../demo/rows.js';
import { newWriteStats, writeRows } from '../demo/writer.js';
import { saveSnapshot, SEED_SNAPSHOT } from '../domain/snapshots.js';
import { AdminError, createAccount, createApiKey, createSite, createUser, type Clock } from '../domain/accounts.js';
import { GeneratorThread } from './generator-thread.js';
import { bulkBatchOf } from './people-batch.js';
import { siteCatalogue, type SiteJob } from './people-generator.js';

/** Fewest contacts per site: the demo's stories (archetypes) each need a person. */
export const MIN_SEED_CONTACTS = ARCHETYPES.length;

/** People generated and written per transaction. */
const DEFAULT_BATCH_SIZE = 2_500;

export interface SeedOptions {
  contactsPerSite: number;
  sites: number;
  seed: number;
  /** Add the sites to this account (its first owner gets the key); absent: a new account. */
  accountId?: number;
  /**
   * Save the account's data as its `seed` snapshot afterwards, which a reset goes back to (default
   * true; it costs a copy of every row).
   */
  snapshot?: boolean;
  batchSize?: number;
  clock: Clock;
  onProgress?: (progress: SeedProgress) => void;
}

export interface SeedProgress {
  /** Contacts written so far, over every site, and the total to write. */
  contactsDone: number;
  contactsTotal: number;
  /** Rows written so far, every table. */
  rows: number;
  /** The site being filled, 1-based. */
  site: number;
  sites: number;
}

export interface SeedResult {
  account_id: string;
  site_ids: string[];
  user_id: string;
  client_id: string;
  client_secret: string;
  /** Rows written per table (catalogue and people; not the account, sites and key). */
  rows: Record<string, number>;
  total_rows: number;
  milliseconds: number;
  /** Of those, saving the seed snapshot (0 with snapshot: false). */
  snapshot_milliseconds: number;
}

export async function seedAccount(handle: DatabaseHandle, database: DatabaseConfig, options: SeedOptions): Promise<SeedResult> {
  const started = performance.now();
  const { clock, seed } = options;
  if (!Number.isInteger(options.contactsPerSite) || options.contactsPerSite < MIN_SEED_CONTACTS) {
    throw new AdminError(`a seeded site needs at least ${MIN_SEED_CONTACTS} contacts`);
  }
  if (!Number.isInteger(options.sites) || options.sites < 1) throw new AdminError('seed at least one site');

  const { accountId, ownerId } = options.accountId === undefined ? await newAccount(handle, seed, clock) : await existingAccount(handle, options.accountId);
  const existingSites = await handle.db.selectFrom('sites').select('id').where('account_id', '=', accountId).execute();
  const siteIds: number[] = [];
  const subdomains: string[] = [];
  for (let s = 0; s < options.sites; s++) {
    const n = existingSites.length + s + 1;
    subdomains.push(`seed-a${accountId}-s${n}`);
    siteIds.push(await createSite(handle, { accountId, title: `Seeded Site ${n}`, subdomain: subdomains[s]! }, clock));
  }
  const key = await createApiKey(handle, { userId: ownerId, name: `seed ${seed}`, permissions: PERMISSION_NAMES }, clock);

  const rows = new Map<string, number>();
  let rowsDone = 0;
  const count = (table: string, n: number) => {
    rows.set(table, (rows.get(table) ?? 0) + n);
    rowsDone += n;
  };
  const contactsTotal = options.contactsPerSite * siteIds.length;
  let contactsDone = 0;

  await suspendDerivedData(handle);
  let loaded = false;
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const loader = await openBulkLoader(handle, database, { batches: siteIds.length * Math.ceil(options.contactsPerSite / batchSize) });
  try {
    for (const [s, siteId] of siteIds.entries()) {
      const job: SiteJob = {
        dialect: handle.traits.name,
        siteId,
        subdomain: subdomains[s]!,
        siteSeed: seedOf(seed, 'site', s),
        nowMs: clock.now().getTime(),
        contacts: options.contactsPerSite,
        batchSize,
        catalogueIds: {},
      };
      // The catalogue: a few hundred rows, written the ordinary way (ids from RETURNING); the
      // generator rebuilds the same rows and takes their ids from the job.
      const set = new RowSet();
      siteCatalogue(job, set);
      const stats = await handle.db.transaction().execute((trx) => writeRows(trx, handle.traits, set, CATALOGUE_TABLES, newWriteStats()));
      for (const [table, n] of stats.rows) count(table, n);
      for (const table of set.tables()) {
        if (!TABLES_WITHOUT_ID.has(table)) job.catalogueIds[table] = set.rows(table).map((r) => r.id!);
      }

      const generator = new GeneratorThread(job);
      try {
        let pending = generator.next();
        for (;;) {
          const result = await pending;
          if (result === null) break;
          pending = generator.next();
          await loader.writeBatch(bulkBatchOf(result.batch));
          for (const [table, n] of Object.entries(result.batch.rowCounts)) count(table, n);
          contactsDone += result.contacts;
          options.onProgress?.({ contactsDone, contactsTotal, rows: rowsDone, site: s + 1, sites: siteIds.length });
        }
      } finally {
        await generator.stop();
      }
    }
    loaded = true;
  } finally {
    // A load that failed: put back what it suspended and dropped.
    if (!loaded) {
      await loader.close();
      await rebuildDerivedData(handle);
    }
  }
  let snapshotMilliseconds = 0;
  // What POST /v1/test_helpers/reset goes back to: the whole account as seeded now.
  const snapshot = async () => {
    const snapshotStarted = performance.now();
    await saveSnapshot(handle, accountId, SEED_SNAPSHOT, clock.now(), { replace: true });
    snapshotMilliseconds = Math.round(performance.now() - snapshotStarted);
  };
  await finishLoad(handle, loader, options.snapshot !== false ? snapshot : undefined);

  const sorted = Object.fromEntries([...rows].sort(([a], [b]) => a.localeCompare(b)));
  return {
    account_id: String(accountId),
    site_ids: siteIds.map(String),
    user_id: String(ownerId),
    client_id: key.clientId,
    client_secret: key.clientSecret,
    rows: sorted,
    total_rows: rowsDone,
    milliseconds: Math.round(performance.now() - started),
    snapshot_milliseconds: snapshotMilliseconds,
  };
}

/**
 * After a load: the counters first (the snapshot saves what they rewrite, products' active
 * members), then the indexes (the plain ones the loader deferred, the trigram index) built while
 * the snapshot copies the rows. None of them waits for another's locks (index builds take SHARE
 * locks, the snapshot reads). On PostgreSQL each runs in a session of its own, so they share the
 * cores: at 1,000,000 contacts the trigram index alone takes about a minute, and so does the
 * snapshot. SQLite writes one transaction at a time, so there they follow each other.
 */
async function finishLoad(handle: DatabaseHandle, loader: BulkLoader, snapshot: (() => Promise<void>) | undefined): Promise<void> {
  // The indexes are built again (and the loader's session closed) even when the recount failed;
  // only the snapshot, which would save wrong counters, waits for it.
  const tasks: Array<() => Promise<void>> = [() => loader.close(), () => rebuildDerivedData(handle, ['index'])];
  try {
    await rebuildDerivedData(handle, ['rows']);
    if (snapshot) tasks.push(snapshot);
  } finally {
    if (handle.traits.writeTransactionsSerialized) {
      for (const task of tasks) await task();
    } else {
      // Every task runs to its end before an error is thrown: none is left running unawaited.
      const settled = await Promise.allSettled(tasks.map((task) => task()));
      const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) throw failed.reason;
    }
  }
}

async function newAccount(handle: DatabaseHandle, seed: number, clock: Clock): Promise<{ accountId: number; ownerId: number }> {
  return handle.db.transaction().execute(async (trx) => {
    const tx: DatabaseHandle = { ...handle, db: trx };
    const accountId = await createAccount(tx, { name: `Seeded Account (seed ${seed})` }, clock);
    // users.email is unique across accounts: the account id makes it so.
    const ownerId = await createUser(tx, { accountId, name: 'Seed Owner', email: `owner-${accountId}@seed.example.com`, role: 'owner' }, clock);
    return { accountId, ownerId };
  });
}

async function existingAccount(handle: DatabaseHandle, accountId: number): Promise<{ accountId: number; ownerId: number }> {
  const account = await handle.db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
  if (!account) throw new AdminError(`no account ${accountId}`);
  const owner = await handle.db
    .selectFrom('users')
    .select('id')
    .where('account_id', '=', accountId)
    .where('role', '=', 'owner')
    .orderBy('id')
    .executeTakeFirst();
  if (!owner) throw new AdminError(`account ${accountId} has no owner to hold the seed's API key`);
  return { accountId, ownerId: Number(owner.id) };
}
