// Demo data: a realistic and deterministic data set for `init --demo` (and so for the first
// `npm start`). The same code always produces the same rows, in the same order, so demo ids and
// the examples in the docs stay stable; timestamps are relative to the clock, so windows such as
// "created in the last 30 days" keep their meaning whenever it runs.
//
// The catalogue (catalogue.ts) is fixed; the people (people.ts, person-rows.ts) grow with
// `contacts`. People are generated and written in batches, each a few multi-row INSERTs per
// table, all in one transaction: memory stays flat whatever the size.
import type { DatabaseHandle } from '../db/connect.js';
import { createUser, type Clock } from '../domain/accounts.js';
import { saveSnapshot, SEED_SNAPSHOT } from '../domain/snapshots.js';
import type { EventKey, FormKey, OfferKey } from './catalogue-content.js';
import { buildCatalogue, CATALOGUE_TABLES, type Catalogue } from './catalogue.js';
import { DEFAULT_DEMO_CONTACTS, PeoplePlanner, type PlanContext } from './people.js';
import { addPerson, PEOPLE_TABLES } from './person-rows.js';
import { DEMO_SEED, Rng, seedOf } from './random.js';
import { RowSet, type TableName } from './rows.js';
import { Timeline } from './timeline.js';
import { newWriteStats, writeRows } from './writer.js';

export { DEMO_ACCOUNT } from './demo-account.js';

export interface DemoOptions {
  /** How many contacts (people); the default is a small demo. About a third become customers. */
  contacts?: number;
  /** People generated and written per batch. */
  batchSize?: number;
}

export interface DemoSummary {
  rows: Record<string, number>;
  statements: number;
  milliseconds: number;
}

const DEFAULT_BATCH_SIZE = 1_000;

export async function seedDemoData(
  handle: DatabaseHandle,
  target: { accountId: number; siteId: number },
  clock: Clock,
  options: DemoOptions = {},
): Promise<DemoSummary> {
  const started = performance.now();
  const contacts = options.contacts ?? DEFAULT_DEMO_CONTACTS;
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const t = new Timeline(clock.now());
  const stats = newWriteStats();

  await inTransaction(handle, async (tx) => {
    // A second user who reaches the demo site through explicit site access, so `/v1/me` and the
    // access rules have something to show beside the owner.
    await createUser(
      tx,
      { accountId: target.accountId, name: 'Jordan Blake', email: 'jordan@northwind.example', role: 'assistant', siteIds: [target.siteId] },
      clock,
    );
    const site = await tx.db.selectFrom('sites').select('subdomain').where('id', '=', target.siteId).executeTakeFirstOrThrow();

    const set = new RowSet();
    const catalogue = buildCatalogue(set, { id: target.siteId, subdomain: site.subdomain }, t, new Rng(seedOf(DEMO_SEED, 'catalogue')));
    await writeRows(tx.db, tx.traits, set, CATALOGUE_TABLES, stats);

    const planner = new PeoplePlanner(contacts, planContext(catalogue, t));
    const ctx = { set, catalogue, t, orderNumbers: { next: 1001 } };
    for (let start = 0; start < contacts; start += batchSize) {
      set.clear();
      for (let i = start; i < Math.min(contacts, start + batchSize); i++) {
        addPerson(ctx, planner.plan(i), new Rng(seedOf(DEMO_SEED, 'rows', i)));
      }
      await writeRows(tx.db, tx.traits, set, PEOPLE_TABLES, stats);
    }
    // What POST /v1/test_helpers/reset goes back to (src/domain/snapshots.ts).
    await saveSnapshot(tx, target.accountId, SEED_SNAPSHOT, clock.now(), { replace: true });
  });

  const rows: Record<string, number> = {};
  for (const [table, count] of [...stats.rows].sort(([a], [b]) => a.localeCompare(b))) rows[table as TableName] = count;
  return { rows, statements: stats.statements, milliseconds: Math.round(performance.now() - started) };
}

/** Runs `fn` in a transaction, or in the caller's when the handle is already inside one. */
async function inTransaction(handle: DatabaseHandle, fn: (tx: DatabaseHandle) => Promise<void>): Promise<void> {
  if (handle.db.isTransaction) return fn(handle);
  await handle.db.transaction().execute((trx) => fn({ ...handle, db: trx }));
}

/** What the people planner needs to know of a site's catalogue (also used by `sitebiz seed`). */
export function planContext(catalogue: Catalogue, t: Timeline): PlanContext {
  const daysAgo = <K extends string>(entries: Record<K, Date>) =>
    Object.fromEntries(Object.entries(entries).map(([k, d]) => [k, t.daysAgoOf(d as Date)])) as Record<K, number>;
  const map = <K extends string, V>(record: Record<K, V>, pick: (v: V) => Date) =>
    Object.fromEntries(Object.entries(record).map(([k, v]) => [k, pick(v as V)])) as Record<K, Date>;
  return {
    broadcastDaysAgo: catalogue.broadcasts.map((b) => t.daysAgoOf(b.sentAt)),
    formCreatedDaysAgo: daysAgo<FormKey>(map(catalogue.forms, (f) => f.createdAt)),
    offerCreatedDaysAgo: daysAgo<OfferKey>(map(catalogue.offers, (o) => o.createdAt)),
    eventDaysAgo: daysAgo<EventKey>(map(catalogue.events, (e) => e.startsAt)),
  };
}
