// Counters the database keeps per site, so that a list never has to count a million rows:
//
// - `rows:<table>`: how many rows of the table belong to the site. An unfiltered list's
//   `meta.total_count` is this number (one primary-key read instead of COUNT(*)).
// - `version`: goes up with every insert, update and delete of any row of the site, including the
//   join tables that belong to it through a parent row. Caches of derived answers (filtered counts,
//   deep-page boundaries) are keyed by it, so a cached answer is never used after a write that
//   could change it, in this process or any other.
// - `products.active_members_count`: a product's memberships that have not ended (the
//   `members_aggregate_count` attribute), instead of counting memberships per product per request.
//
// Triggers keep all of them in the same transaction as the write, so they are exact for every
// writer (the API, the CLI, the demo data). A bulk load suspends the triggers and rebuilds the
// counters afterwards (src/db/derived-data.ts).
//
// Locking: every trigger bumps the site's `version` row first. On PostgreSQL that row lock is
// held to the end of the writing transaction, so writes to one site are serialised from their first
// row change on, and two transactions can never take counter rows in opposite orders (no
// deadlocks between counters). Writes to different sites never wait for each other.
//
// A request's write takes that same row lock before it reads anything (lockSiteWrites, called by
// the engine): otherwise it would take it only at its first row change, after checking what
// exists, and two requests could both decide to make the same grant, or one would hold a row or
// a unique-index entry while waiting for the version row that the other holds while waiting for
// that entry (a deadlock). Taken first, the lock makes a site's write requests run one after the
// other on PostgreSQL as every write transaction does on SQLite (begin immediate).
import { sql, type Kysely } from 'kysely';
import type { DatabaseHandle } from './connect.js';
import type { DialectName, DialectTraits } from './dialect-traits.js';
import { DERIVED_DATA } from './derived-data.js';

/** Tables with a site_id column whose rows are counted per site (every list table of a site). */
export const COUNTED_TABLES = [
  'contacts',
  'customers',
  'contact_tags',
  'custom_fields',
  'contact_notes',
  'products',
  'offers',
  'courses',
  'modules',
  'lessons',
  'media',
  'podcasts',
  'podcast_episodes',
  'email_sequences',
  'newsletters',
  'forms',
  'form_fields',
  'form_submissions',
  'landing_pages',
  'website_pages',
  'blogs',
  'blog_posts',
  'purchases',
  'offer_grants',
  'memberships',
  'transactions',
  'orders',
  'order_items',
  'kajabi_payments_payouts',
  'hooks',
  'events',
  'event_registrations',
  'assessments',
  'assessment_attempts',
  'newsletter_subscriptions',
  'email_sequence_subscriptions',
  'email_broadcasts',
  'email_events',
] as const;

const COUNTED = new Set<string>(COUNTED_TABLES);

/** Join tables without a site_id: they belong to the site of the parent row. */
export const SITE_JOIN_TABLES = [
  { table: 'contact_taggings', parentKey: 'contact_id', parentTable: 'contacts' },
  { table: 'offer_products', parentKey: 'offer_id', parentTable: 'offers' },
  { table: 'form_tags', parentKey: 'form_id', parentTable: 'forms' },
  { table: 'form_email_sequences', parentKey: 'form_id', parentTable: 'forms' },
  { table: 'purchase_transactions', parentKey: 'purchase_id', parentTable: 'purchases' },
] as const;

export const VERSION_COUNTER = 'version';
export const rowsCounter = (table: string): string => `rows:${table}`;
export const isCountedTable = (table: string): boolean => COUNTED.has(table);
const JOINED = new Set<string>(SITE_JOIN_TABLES.map((j) => j.table));
/** A join table whose writes move the version of its parent row's site. */
export const isSiteJoinTable = (table: string): boolean => JOINED.has(table);

type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const counterNames = (): string[] => [VERSION_COUNTER, ...COUNTED_TABLES.map(rowsCounter)];
const quoted = (names: readonly string[]) => names.map((n) => `'${n}'`).join(', ');

/**
 * The trigger DDL of each database. SQLite triggers hold their statements inline; PostgreSQL
 * triggers call one function per kind of upkeep, created once per schema.
 */
interface TriggerDialect {
  /** Statements that (re)create every upkeep trigger. */
  create(): string[];
  /** Statements that drop them (functions stay). */
  drop(): string[];
  /**
   * Statements that stop and restart, within one transaction, the per-row version bump of updates
   * of a counted table (see updateManyRows). Empty where the bump costs nothing to keep.
   */
  pauseUpdates(table: string): string[];
  resumeUpdates(table: string): string[];
}

const sqliteTriggers: TriggerDialect = {
  // SQLite updates the version row in place: a bump per row costs a row write.
  pauseUpdates: () => [],
  resumeUpdates: () => [],
  create() {
    const out: string[] = [];
    const bumpVersion = (site: string) => `update site_counters set value = value + 1 where site_id = ${site} and counter = '${VERSION_COUNTER}';`;
    const addRows = (site: string, table: string, delta: number) =>
      `update site_counters set value = value + (${delta}) where site_id = ${site} and counter = '${rowsCounter(table)}';`;
    out.push(
      `create trigger site_counters_new_site after insert on sites begin
         insert into site_counters (site_id, counter, value)
         select new.id, name, 0 from (${counterNames().map((n) => `select '${n}' as name`).join(' union all ')}) as names;
       end`,
    );
    for (const table of COUNTED_TABLES) {
      out.push(`create trigger ${table}_count_insert after insert on ${table} begin ${bumpVersion('new.site_id')} ${addRows('new.site_id', table, 1)} end`);
      out.push(`create trigger ${table}_count_delete after delete on ${table} begin ${bumpVersion('old.site_id')} ${addRows('old.site_id', table, -1)} end`);
      out.push(`create trigger ${table}_count_update after update on ${table} begin ${bumpVersion('new.site_id')} end`);
    }
    for (const { table, parentKey, parentTable } of SITE_JOIN_TABLES) {
      const site = (row: 'new' | 'old') => `(select site_id from ${parentTable} where id = ${row}.${parentKey})`;
      out.push(`create trigger ${table}_version_insert after insert on ${table} begin ${bumpVersion(site('new'))} end`);
      out.push(`create trigger ${table}_version_delete after delete on ${table} begin ${bumpVersion(site('old'))} end`);
      out.push(`create trigger ${table}_version_update after update on ${table} begin ${bumpVersion(site('new'))} end`);
    }
    out.push(
      `create trigger memberships_active_insert after insert on memberships when new.ended_at is null begin
         update products set active_members_count = active_members_count + 1 where id = new.product_id; end`,
      `create trigger memberships_active_delete after delete on memberships when old.ended_at is null begin
         update products set active_members_count = active_members_count - 1 where id = old.product_id; end`,
      `create trigger memberships_active_update after update of ended_at, product_id on memberships begin
         update products set active_members_count = active_members_count - (old.ended_at is null) where id = old.product_id;
         update products set active_members_count = active_members_count + (new.ended_at is null) where id = new.product_id; end`,
    );
    return out;
  },
  drop() {
    const names = ['site_counters_new_site', 'memberships_active_insert', 'memberships_active_delete', 'memberships_active_update'];
    for (const table of COUNTED_TABLES) names.push(`${table}_count_insert`, `${table}_count_delete`, `${table}_count_update`);
    for (const { table } of SITE_JOIN_TABLES) names.push(`${table}_version_insert`, `${table}_version_delete`, `${table}_version_update`);
    return names.map((n) => `drop trigger if exists ${n}`);
  },
};

const postgresTriggers: TriggerDialect = {
  pauseUpdates: (table) => [`alter table ${table} disable trigger ${table}_counters`],
  resumeUpdates: (table) => [`alter table ${table} enable trigger ${table}_counters`],
  create() {
    const out: string[] = [
      // TG_ARGV[0]: the counter of the table's rows, or '' for a table that only moves the version.
      `create or replace function sitebiz_site_upkeep() returns trigger language plpgsql as $$
       declare
         site bigint;
       begin
         if current_setting('${SUSPENDED_SETTING}', true) = 'on' then return null; end if;
         if tg_argv[1] <> '' and tg_op = 'DELETE' then
           execute format('select site_id from %I where id = ($1).%I', tg_argv[1], tg_argv[2]) into site using old;
         elsif tg_argv[1] <> '' then
           execute format('select site_id from %I where id = ($1).%I', tg_argv[1], tg_argv[2]) into site using new;
         elsif tg_op = 'DELETE' then site := old.site_id;
         else site := new.site_id;
         end if;
         update site_counters set value = value + 1 where site_id = site and counter = '${VERSION_COUNTER}';
         if tg_argv[0] <> '' and tg_op <> 'UPDATE' then
           update site_counters set value = value + (case when tg_op = 'INSERT' then 1 else -1 end)
             where site_id = site and counter = tg_argv[0];
         end if;
         return null;
       end $$`,
      `create or replace function sitebiz_new_site_counters() returns trigger language plpgsql as $$
       begin
         insert into site_counters (site_id, counter, value)
           select new.id, name, 0 from unnest(array[${quoted(counterNames())}]) as name;
         return null;
       end $$`,
      `create or replace function sitebiz_active_members() returns trigger language plpgsql as $$
       begin
         if current_setting('${SUSPENDED_SETTING}', true) = 'on' then return null; end if;
         if tg_op in ('UPDATE', 'DELETE') and old.ended_at is null then
           update products set active_members_count = active_members_count - 1 where id = old.product_id;
         end if;
         if tg_op in ('UPDATE', 'INSERT') and new.ended_at is null then
           update products set active_members_count = active_members_count + 1 where id = new.product_id;
         end if;
         return null;
       end $$`,
      `create trigger site_counters_new_site after insert on sites for each row execute function sitebiz_new_site_counters()`,
      `create trigger memberships_active after insert or delete or update of ended_at, product_id on memberships
         for each row execute function sitebiz_active_members()`,
    ];
    for (const table of COUNTED_TABLES) {
      out.push(
        `create trigger ${table}_counters after insert or update or delete on ${table}
           for each row execute function sitebiz_site_upkeep('${rowsCounter(table)}', '', '')`,
      );
    }
    for (const { table, parentKey, parentTable } of SITE_JOIN_TABLES) {
      out.push(
        `create trigger ${table}_counters after insert or update or delete on ${table}
           for each row execute function sitebiz_site_upkeep('', '${parentTable}', '${parentKey}')`,
      );
    }
    return out;
  },
  drop() {
    const out = ['drop trigger if exists site_counters_new_site on sites', 'drop trigger if exists memberships_active on memberships'];
    for (const table of COUNTED_TABLES) out.push(`drop trigger if exists ${table}_counters on ${table}`);
    for (const { table } of SITE_JOIN_TABLES) out.push(`drop trigger if exists ${table}_counters on ${table}`);
    return out;
  },
};

const TRIGGERS: Record<DialectName, TriggerDialect> = { sqlite: sqliteTriggers, postgres: postgresTriggers };

/**
 * PostgreSQL: a transaction-local setting that makes the upkeep functions skip their work (see
 * withCounterUpkeepSuspended).
 */
const SUSPENDED_SETTING = 'sitebiz.counter_upkeep_suspended';

/**
 * Runs `fn` (which rewrites many rows of the given sites in the caller's transaction), then sets
 * those sites' row counts and products' active members from the rows and moves each site's version
 * forward once more.
 *
 * On PostgreSQL the upkeep triggers are switched off for the transaction meanwhile: every row's
 * trigger updates the site's one version row, and a row updated N times in one transaction leaves
 * N versions of it that no one can prune yet, so each update walks a longer chain (a restore of a
 * few thousand rows took seconds). The site write locks the caller holds keep other writers out.
 * SQLite: the triggers are dropped and made again inside the transaction (its schema changes are
 * transactional, and the transaction holds the database's one write lock, so no other write can
 * miss them; readers see the schema and rows of before until the commit). Its text-search
 * triggers stay: they keep the index of the rows the caller rewrites.
 */
export async function withCounterUpkeepSuspended<T>(db: AnyDb, dialect: DialectName, siteIds: readonly number[], fn: () => Promise<T>): Promise<T> {
  if (!db.isTransaction) throw new Error('withCounterUpkeepSuspended runs inside a transaction');
  if (dialect === 'postgres') await sql`select set_config(${SUSPENDED_SETTING}, 'on', true)`.execute(db);
  else await run(db, TRIGGERS.sqlite.drop());
  const result = await fn();
  if (dialect === 'postgres') await sql`select set_config(${SUSPENDED_SETTING}, 'off', true)`.execute(db);
  else await run(db, TRIGGERS.sqlite.create());
  if (siteIds.length === 0) return result;
  const list = siteIds.map((id) => String(Math.trunc(id))).join(', ');
  for (const table of COUNTED_TABLES) {
    await sql
      .raw(
        `update site_counters set value = (select count(*) from ${table} where ${table}.site_id = site_counters.site_id)
         where counter = '${rowsCounter(table)}' and site_id in (${list})`,
      )
      .execute(db);
  }
  await sql
    .raw(
      `update products set active_members_count =
         (select count(*) from memberships where memberships.product_id = products.id and memberships.ended_at is null)
       where site_id in (${list})`,
    )
    .execute(db);
  await sql.raw(`update site_counters set value = value + 1 where counter = '${VERSION_COUNTER}' and site_id in (${list})`).execute(db);
  return result;
}

async function run(db: AnyDb, statements: string[]): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

/**
 * Waits for, and holds to the end of the transaction, the write lock of a site: its version
 * counter row (see "Locking" above). `db` must be the write's transaction.
 */
export async function lockSiteWrites(db: AnyDb, traits: DialectTraits, siteId: number): Promise<void> {
  // SQLite: the transaction already holds the database's one write lock.
  if (traits.writeTransactionsSerialized) return;
  await traits
    .lockingRows(db.selectFrom('site_counters').select('value').where('site_id', '=', siteId).where('counter', '=', VERSION_COUNTER))
    .execute();
}

/**
 * Runs `update`, which changes many rows of a counted table without inserting or deleting any (a
 * backfill in a migration), with the per-row version bump paused, then moves on the version of
 * each site it names once. PostgreSQL keeps every version of a row that a transaction updates until
 * the transaction ends, and finding the current one walks them all: a site's version row bumped
 * once per changed row costs time quadratic in the rows (100,000 rows: minutes). Takes the table's
 * trigger lock (ALTER TABLE) until the transaction ends: for migrations, not for requests.
 */
export async function updateManyRows(db: AnyDb, dialect: DialectName, table: (typeof COUNTED_TABLES)[number], update: () => Promise<Iterable<number>>): Promise<void> {
  await run(db, TRIGGERS[dialect].pauseUpdates(table));
  const siteIds = [...new Set(await update())];
  await run(db, TRIGGERS[dialect].resumeUpdates(table));
  for (let i = 0; i < siteIds.length; i += 1000) {
    await db
      .updateTable('site_counters')
      .set((eb) => ({ value: eb('value', '+', 1) }))
      .where('counter', '=', VERSION_COUNTER)
      .where('site_id', 'in', siteIds.slice(i, i + 1000))
      .execute();
  }
}

/** Creates the counter table's upkeep triggers (the 0004 migration, and after a bulk load). */
export async function createCounterTriggers(db: AnyDb, dialect: DialectName): Promise<void> {
  await dropCounterTriggers(db, dialect);
  await run(db, TRIGGERS[dialect].create());
}

/**
 * Drops them: before a table rebuild (SQLite checks every trigger that names a table when one is
 * renamed), which then calls createCounterTriggers in the same transaction.
 */
export async function dropCounterTriggers(db: AnyDb, dialect: DialectName): Promise<void> {
  await run(db, TRIGGERS[dialect].drop());
}

/**
 * Sets every counter from the rows: missing counter rows are added, row counts recounted, active
 * members recounted, and every site's version moved on (never back: another process may hold
 * answers cached under the old version).
 */
export async function recountSiteCounters(db: AnyDb): Promise<void> {
  const names = counterNames().map((n) => `select '${n}' as name`).join(' union all ');
  await sql
    .raw(
      `insert into site_counters (site_id, counter, value)
       select sites.id, names.name, 0 from sites cross join (${names}) as names
       where not exists (select 1 from site_counters c where c.site_id = sites.id and c.counter = names.name)`,
    )
    .execute(db);
  for (const table of COUNTED_TABLES) {
    await sql
      .raw(
        `update site_counters set value = (select count(*) from ${table} where ${table}.site_id = site_counters.site_id)
         where counter = '${rowsCounter(table)}'`,
      )
      .execute(db);
  }
  await sql.raw(`update site_counters set value = value + 1 where counter = '${VERSION_COUNTER}'`).execute(db);
  await sql
    .raw(
      `update products set active_members_count =
         (select count(*) from memberships where memberships.product_id = products.id and memberships.ended_at is null)`,
    )
    .execute(db);
}

/** Query-planner statistics of every counted and join table. */
export async function analyzeTables(db: AnyDb): Promise<void> {
  for (const table of [...COUNTED_TABLES, ...SITE_JOIN_TABLES.map((j) => j.table)]) await sql.raw(`analyze ${table}`).execute(db);
}

DERIVED_DATA.push({
  name: 'site counters',
  kind: 'rows',
  async suspend(handle: DatabaseHandle) {
    await run(handle.db, TRIGGERS[handle.traits.name].drop());
  },
  async rebuild(handle: DatabaseHandle) {
    // Triggers back first, then the recount, in one transaction: no write can slip between them.
    await handle.db.transaction().execute(async (trx) => {
      await createCounterTriggers(trx, handle.traits.name);
      await recountSiteCounters(trx);
    });
    // Fresh statistics, so the query planners know how many rows each site has now (table by
    // table: a bare ANALYZE on PostgreSQL would visit every schema of the database).
    await analyzeTables(handle.db);
  },
});
