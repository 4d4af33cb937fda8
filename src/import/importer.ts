// `sitebiz import`: every site a key of another Site Business Service API can read, copied
// through that API's public routes into this database as a new account (docs/import.md).
//
// 1. The source's sites are read first: a key the source refuses stops the import before anything
//    is written.
// 2. A new run (import_runs) gets a new account and its owner, or an unfinished run of the same
//    source continues. Ids are kept (every table's offset 0) when the target holds none of the
//    imported tables' rows; otherwise only with --remap-ids, each table's ids moved past its largest.
// 3. The derived data's upkeep is suspended, as for `seed`, and each step (importer-plan.ts) walks
//    its list per site or across sites, each page upserted with its checkpoint in one transaction.
// 4. At the end: the derived data rebuilt (counters, text search), PostgreSQL's id sequences moved
//    past the ids written, the `seed` snapshot saved (what a reset returns to), the run marked
//    done, and a key with every permission made for the new account.
import { writeFile } from 'node:fs/promises';
import { PERMISSION_NAMES } from '../auth/permissions.js';
import { analyzeGrowingTables, replaceJoinRows, syncIdSequences, upsertRows } from '../db/bulk-upsert.js';
import { ACCOUNT_DATA_TABLES } from '../db/account-data.js';
import type { DatabaseHandle } from '../db/connect.js';
import { rebuildDerivedData, suspendDerivedData } from '../db/derived-data.js';
import { createAccount, createApiKey, createUser, type Clock } from '../domain/accounts.js';
import { saveSnapshot, SEED_SNAPSHOT } from '../domain/snapshots.js';
import { checkPage, checkStep, finishRun, isStepDone, recordsOf, sourceKey, startRun, unfinishedRun, writtenPages, type ImportRun } from './checkpoints.js';
import { IMPORT_STEPS, importedTables, JOIN_TABLES_WITH_IDS, resourceOf, SITES_STEP, type ImportStep } from './import-plan.js';
import { fetchListPage, PAGE_SIZE, walkList } from './page-walker.js';
import { addRecordRows, emptyPageRows, IdMap, type PageRows, type RowContext } from './record-rows.js';
import { ImportError, UpstreamClient, type UpstreamDocument, type UpstreamRecord } from './upstream-client.js';

export interface ImportOptions {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  concurrency: number;
  /** Write the old → new id mapping here; allows importing into a database that has data. */
  remapIdsFile?: string;
  dryRun?: boolean;
  signal?: AbortSignal;
  clock: Clock;
  onProgress?: (progress: ImportProgress) => void;
  /** Tries per request and the longest backoff (tests shorten them). */
  maxAttempts?: number;
  maxDelayMs?: number;
}

export interface ImportProgress {
  /** The step, as `contacts` or `contacts (site 2 of 3)`. */
  step: string;
  /** Records of the step written (or counted) so far, and how many its list has. */
  done: number;
  total: number | undefined;
  /** Records of every step so far. */
  records: number;
}

export interface ImportResult {
  account_id: string | null;
  site_ids: string[];
  /** Records per type: written (rows of the new account), or counted with --dry-run. */
  counts: Record<string, number>;
  requests: number;
  retries: number;
  /** Of the requests, shows of single records (a course's modules, a form's fields). */
  show_requests: number;
  seconds: number;
  resumed: boolean;
  dry_run: boolean;
  /** With --remap-ids: where the mapping was written. */
  remap_ids_file?: string;
  /** Optional types the key may not read, left out (hooks). */
  skipped?: string[];
  /** A key of the new account with every permission (shown once). */
  client_id?: string;
  client_secret?: string;
}

/** Tables whose rows the import writes, parents first (a page's rows are written in this order). */
const WRITE_ORDER = ['sites', ...ACCOUNT_DATA_TABLES.map((t) => t.table), 'hooks'];
const writeRank = (table: string): number => {
  const i = WRITE_ORDER.indexOf(table);
  return i < 0 ? WRITE_ORDER.length : i;
};

export async function runImport(handle: DatabaseHandle, options: ImportOptions): Promise<ImportResult> {
  const started = performance.now();
  const client = new UpstreamClient({
    baseUrl: options.baseUrl,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    concurrency: options.concurrency,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
    ...(options.maxDelayMs ? { maxDelayMs: options.maxDelayMs } : {}),
  });
  const importer = new Importer(handle, client, options);
  const sites = await importer.readSites();
  await importer.probe(sites);
  const result = options.dryRun ? await importer.count(sites) : await importer.write(sites);
  return {
    ...result,
    requests: client.stats.requests,
    retries: client.stats.retries,
    show_requests: importer.showRequests,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    dry_run: options.dryRun === true,
    ...(importer.skipped.size > 0 ? { skipped: [...importer.skipped] } : {}),
  };
}

type Partial = Omit<ImportResult, 'requests' | 'retries' | 'show_requests' | 'seconds' | 'dry_run' | 'skipped'>;

class Importer {
  showRequests = 0;
  private records = 0;
  private columns: ReadonlyMap<string, ReadonlySet<string>> = new Map();

  constructor(
    private readonly handle: DatabaseHandle,
    private readonly client: UpstreamClient,
    private readonly options: ImportOptions,
  ) {}

  /** Every site the key reads (a handful: read whole, before anything is written). */
  async readSites(): Promise<UpstreamRecord[]> {
    const sites: UpstreamRecord[] = [];
    await walkList({
      client: this.client,
      path: 'sites',
      params: {},
      pageSize: true,
      written: new Set(),
      window: this.options.concurrency,
      write: async (_page, records) => void sites.push(...records),
    });
    return sites.sort((a, b) => Number(a.id) - Number(b.id));
  }

  /** Steps skipped because the key may not read them (optional ones: hooks). */
  readonly skipped = new Set<string>();

  /**
   * One small page of every list the import walks, before anything is written: a permission the
   * key lacks stops the import here (its 403 names it), not half-way through.
   */
  async probe(sites: UpstreamRecord[]): Promise<void> {
    const first = sites[0];
    await Promise.all(
      IMPORT_STEPS.map(async (step) => {
        const params: Record<string, string> = step.perSite && first ? { 'filter[site_id]': first.id } : {};
        try {
          await this.client.get(step.resource.type, { ...params, 'page[number]': '1', ...(step.pageSize ? { 'page[size]': '1' } : {}) });
        } catch (error) {
          if (step.optional && error instanceof ImportError && error.code === 'forbidden') this.skipped.add(step.resource.type);
          else throw error;
        }
      }),
    );
  }

  /** --dry-run: every list walked and counted, nothing written. */
  async count(sites: UpstreamRecord[]): Promise<Partial> {
    const counts: Record<string, number> = { sites: sites.length };
    const walks = [...this.walks(sites)];
    for (const [i, { step, site, label, name }] of walks.entries()) {
      this.askAhead(walks, i + 1);
      let done = 0;
      await this.walk(step, site, label, new Set(), async (_page, records) => {
        done += records.length;
        counts[step.resource.type] = (counts[step.resource.type] ?? 0) + records.length;
        for (const doc of await this.shows(step, records)) {
          for (const included of doc) counts[included.type] = (counts[included.type] ?? 0) + 1;
        }
        this.progress(label, done, undefined, records.length);
      }, name);
    }
    return { account_id: null, site_ids: sites.map((s) => s.id), counts, resumed: false };
  }

  async write(sites: UpstreamRecord[]): Promise<Partial> {
    const source = sourceKey(this.options.baseUrl, this.options.clientId);
    let run = await unfinishedRun(this.handle, source);
    const resumed = run !== undefined;
    run ??= await this.newRun(source);
    const ids = new IdMap(run.offsets);
    const siteIds = sites.map((s) => ids.map('sites', s.id));
    this.columns = await tableColumns(this.handle);

    await suspendDerivedData(this.handle);
    let rebuilt = false;
    try {
      await this.writeSites(run, sites);
      const walks = [...this.walks(sites)];
      const done = new Set<string>();
      for (const walk of walks) if (isStepDone(await writtenPages(this.handle, run.id, walk.name))) done.add(walk.name);
      const pending = walks.filter((w) => !done.has(w.name));
      for (const [i, { step, site, label, name }] of walks.entries()) {
        const pages = await writtenPages(this.handle, run.id, name);
        if (isStepDone(pages)) {
          this.records += recordsOf(pages);
          continue;
        }
        this.askAhead(pending, pending.findIndex((w) => w.name === name) + 1);
        let written = recordsOf(pages);
        let pagesWritten = 0;
        const products = step.resource.type === 'courses' || step.resource.type === 'podcasts' ? await this.productsOf(siteIds) : undefined;
        await this.walk(step, site, label, new Set(pages.keys()), async (page, records) => {
          const shows = await this.shows(step, records);
          const out = emptyPageRows();
          const base: Omit<RowContext, 'position'> = {
            traits: this.handle.traits,
            ids,
            accountId: run.accountId,
            siteId: site === undefined ? undefined : ids.map('sites', site.id),
            soleSiteId: siteIds.length === 1 ? siteIds[0] : undefined,
            fallbackTime: this.handle.traits.encodeTimestamp(run.startedAt),
            columns: this.columns,
          };
          records.forEach((record, i) => {
            const position = (page - 1) * (step.pageSize ? PAGE_SIZE : records.length) + i;
            const row = addRecordRows(step.resource, record, { ...base, position }, out);
            if (products) row.product_id = products.match(Number(row.site_id), String(row.title ?? ''), step.resource.type);
            if (step.resource.type === 'form_submissions' && !record.attributes?.created_at) {
              // Not shown, yet the list's order: kept by creation times a millisecond apart.
              row.created_at = this.handle.traits.encodeTimestamp(new Date(run.startedAt.getTime() - 1000 - position));
            }
            for (const included of shows[i] ?? []) {
              const order = positionsIn(record, shows[i]!);
              addRecordRows(resourceOf(included.type), included, { ...base, siteId: Number(row.site_id), position: order.get(`${included.type}:${included.id}`) ?? 0 }, out);
            }
          });
          await this.handle.db.transaction().execute(async (trx) => {
            await writePageRows(trx, out);
            await checkPage(trx, run.id, name, page, records.length);
          });
          pagesWritten++;
          if ((pagesWritten & (pagesWritten - 1)) === 0) await analyzeGrowingTables(this.handle.db, [...out.rows.keys(), ...out.joins.keys()]);
          written += records.length;
          this.progress(label, written, undefined, records.length);
        }, name);
        await checkStep(this.handle, run.id, name);
      }
      await this.matchMemberCounts(sites, ids);
      rebuilt = true;
      await rebuildDerivedData(this.handle);
    } finally {
      // An interrupted import puts back what it suspended; running it again goes on from here.
      if (!rebuilt) await rebuildDerivedData(this.handle);
    }
    await syncIdSequences(this.handle, [...importedTables(), ...JOIN_TABLES_WITH_IDS]);
    await saveSnapshot(this.handle, run.accountId, SEED_SNAPSHOT, this.options.clock.now(), { replace: true });
    await finishRun(this.handle, run.id, this.options.clock.now());
    const owner = await this.handle.db.selectFrom('users').select('id').where('account_id', '=', run.accountId).where('role', '=', 'owner').orderBy('id').executeTakeFirstOrThrow();
    const key = await createApiKey(this.handle, { userId: Number(owner.id), name: 'import', permissions: PERMISSION_NAMES }, this.options.clock);
    const counts = await this.countRows(siteIds);
    if (this.options.remapIdsFile) await writeFile(this.options.remapIdsFile, `${JSON.stringify(await this.idMapping(run, siteIds), null, 2)}\n`);
    return {
      account_id: String(run.accountId),
      site_ids: siteIds.map(String),
      counts,
      resumed,
      ...(this.options.remapIdsFile ? { remap_ids_file: this.options.remapIdsFile } : {}),
      client_id: key.clientId,
      client_secret: key.clientSecret,
    };
  }

  /** Each step's lists: per site where the list takes filter[site_id], else once. */
  private *walks(sites: UpstreamRecord[]): Generator<{ step: ImportStep; site: UpstreamRecord | undefined; label: string; name: string }> {
    for (const step of IMPORT_STEPS) {
      if (this.skipped.has(step.resource.type)) continue;
      if (!step.perSite) {
        yield { step, site: undefined, label: step.resource.type, name: step.resource.type };
        continue;
      }
      for (const [i, site] of sites.entries()) {
        yield { step, site, label: `${step.resource.type} (site ${i + 1} of ${sites.length})`, name: `${step.resource.type}@site:${site.id}` };
      }
    }
  }

  /**
   * The first pages of the next lists, asked for while this one is walked (most lists are one
   * page, so an import of many small lists waits on round trips, not on the source).
   */
  private readonly ahead = new Map<string, Promise<UpstreamDocument>>();

  private listOf(step: ImportStep, site: UpstreamRecord | undefined): { path: string; params: Record<string, string>; pageSize: boolean } {
    const params: Record<string, string> = site ? { 'filter[site_id]': site.id } : {};
    return { path: step.resource.type, params, pageSize: step.pageSize };
  }

  private askAhead(walks: ReadonlyArray<{ step: ImportStep; site: UpstreamRecord | undefined; name: string }>, from: number): void {
    for (const next of walks.slice(from, from + this.options.concurrency)) {
      if (this.ahead.has(next.name)) continue;
      const page = fetchListPage(this.client, this.listOf(next.step, next.site), 1);
      page.catch(() => {}); // awaited (and its failure thrown) when its list is walked
      this.ahead.set(next.name, page);
    }
  }

  private walk(step: ImportStep, site: UpstreamRecord | undefined, label: string, written: Set<number>, write: (page: number, records: UpstreamRecord[]) => Promise<void>, name?: string): Promise<void> {
    let total: number | undefined;
    const first = name === undefined ? undefined : this.ahead.get(name);
    if (name !== undefined) this.ahead.delete(name);
    return walkList({
      client: this.client,
      ...this.listOf(step, site),
      ...(first ? { first } : {}),
      written,
      window: this.options.concurrency * 2,
      onTotal: (records) => {
        total = records;
        this.progress(label, 0, total, 0);
      },
      write: async (page, records) => {
        this.total = total;
        await write(page, records);
      },
    });
  }

  private total: number | undefined;

  private progress(step: string, done: number, total: number | undefined, added: number): void {
    this.records += added;
    this.options.onProgress?.({ step, done, total: total ?? this.total, records: this.records });
  }

  /** The included records of each record's show, for steps that need one (one request each). */
  private async shows(step: ImportStep, records: UpstreamRecord[]): Promise<UpstreamRecord[][]> {
    if (!step.show) return [];
    const include = step.show.include;
    return Promise.all(
      records.map(async (record) => {
        this.showRequests++;
        const doc = await this.client.get(`${step.resource.type}/${encodeURIComponent(record.id)}`, { include });
        return doc.included ?? [];
      }),
    );
  }

  private async newRun(source: string): Promise<ImportRun> {
    const tables = importedTables();
    const occupied: string[] = [];
    const offsets: Record<string, number> = {};
    for (const table of tables) {
      const row = await this.handle.db.selectFrom(table as 'sites').select((eb) => eb.fn.max('id').as('max')).executeTakeFirst();
      const max = Number(row?.max ?? 0);
      if (max > 0) occupied.push(table);
      offsets[table] = this.options.remapIdsFile ? max : 0;
    }
    if (occupied.length > 0 && !this.options.remapIdsFile) {
      throw new ImportError(
        'conflict',
        `The target database already has data (${occupied.join(', ')}), so the source's ids cannot be kept. ` +
          'Import into an empty database, or give --remap-ids <file> to import with new ids and write the old → new mapping there.',
      );
    }
    const clock = this.options.clock;
    const host = new URL(this.options.baseUrl).host;
    return this.handle.db.transaction().execute(async (trx) => {
      const tx: DatabaseHandle = { ...this.handle, db: trx };
      const accountId = await createAccount(tx, { name: `Imported from ${host}` }, clock);
      await createUser(tx, { accountId, name: 'Import Owner', email: `owner-${accountId}@import.sitebiz.invalid`, role: 'owner' }, clock);
      return startRun(trx, this.handle, { source, accountId, offsets, startedAt: clock.now() });
    });
  }

  private async writeSites(run: ImportRun, sites: UpstreamRecord[]): Promise<void> {
    const ids = new IdMap(run.offsets);
    const out = emptyPageRows();
    const base = {
      traits: this.handle.traits,
      ids,
      accountId: run.accountId,
      siteId: undefined,
      soleSiteId: undefined,
      fallbackTime: this.handle.traits.encodeTimestamp(run.startedAt),
      columns: this.columns,
    };
    sites.forEach((site, position) => addRecordRows(SITES_STEP.resource, site, { ...base, position }, out));
    await this.handle.db.transaction().execute((trx) => writePageRows(trx, out));
    this.progress('sites', sites.length, sites.length, sites.length);
  }

  /**
   * A product's members_aggregate_count counts its memberships that have not ended, and a
   * customer's `products` lists each product once, however many memberships give it (two offers
   * with the same product). The API shows no memberships one by one, so the ones it hides are
   * written again as copies of a shown membership of that product, until the counter the rebuild
   * makes equals the source's. Products read again for it: one small list per site, and idempotent
   * (it counts what is there). A product with members but no customer showing it stays short.
   */
  private async matchMemberCounts(sites: UpstreamRecord[], ids: IdMap): Promise<void> {
    const counts = new Map<number, number>();
    const step = IMPORT_STEPS.find((s) => s.resource.type === 'products')!;
    for (const site of sites) {
      await this.walk(step, site, 'products (members)', new Set(), async (_page, records) => {
        for (const record of records) counts.set(ids.map('products', record.id), Number(record.attributes?.members_aggregate_count ?? 0));
      });
    }
    await this.handle.db.transaction().execute(async (trx) => {
      for (const [productId, wanted] of counts) {
        const shown = await trx
          .selectFrom('memberships')
          .select(['site_id', 'contact_id', 'product_id', 'offer_grant_id', 'started_at', 'suspended_at', 'created_at', 'updated_at'])
          .where('product_id', '=', productId)
          .where('ended_at', 'is', null)
          .orderBy('id')
          .execute();
        const copies = shown.length === 0 ? [] : Array.from({ length: Math.max(0, wanted - shown.length) }, (_, i) => shown[i % shown.length]!);
        if (copies.length > 0) await trx.insertInto('memberships').values(copies).execute();
      }
    });
  }

  /** The products of the sites, to tell which one a course or podcast is (the API does not say). */
  private async productsOf(siteIds: number[]): Promise<ProductMatcher> {
    const rows = await this.handle.db.selectFrom('products').select(['id', 'site_id', 'title', 'product_type_name']).where('site_id', 'in', siteIds).orderBy('id').execute();
    return new ProductMatcher(rows.map((r) => ({ id: Number(r.id), siteId: Number(r.site_id), title: r.title, kind: r.product_type_name })));
  }

  /** Rows per type in the new account's sites. */
  private async countRows(siteIds: number[]): Promise<Record<string, number>> {
    const counts: Record<string, number> = { sites: siteIds.length };
    for (const table of importedTables()) {
      if (table === 'sites') continue;
      const row = await this.handle.db.selectFrom(table as 'contacts').select((eb) => eb.fn.countAll().as('n')).where('site_id', 'in', siteIds).executeTakeFirst();
      counts[table] = Number(row?.n ?? 0);
    }
    return counts;
  }

  /** Per table: source id → id here, for --remap-ids. */
  private async idMapping(run: ImportRun, siteIds: number[]): Promise<Record<string, Record<string, number>>> {
    const mapping: Record<string, Record<string, number>> = {};
    for (const table of importedTables()) {
      const offset = run.offsets[table] ?? 0;
      const query = this.handle.db.selectFrom(table as 'contacts').select('id');
      const rows = await (table === 'sites' ? query.where('id', 'in', siteIds) : query.where('site_id', 'in', siteIds)).orderBy('id').execute();
      mapping[table] = Object.fromEntries(rows.map((r) => [String(Number(r.id) - offset), Number(r.id)]));
    }
    return mapping;
  }
}

async function tableColumns(handle: DatabaseHandle): Promise<Map<string, Set<string>>> {
  const columns = new Map<string, Set<string>>();
  for (const table of [...importedTables(), ...JOIN_TABLES_WITH_IDS]) columns.set(table, new Set(await handle.traits.tableColumns(handle.db, table)));
  return columns;
}

/**
 * Values unique across every account (a site's subdomain, an offer's checkout token): a copy of a
 * source already imported once (with --remap-ids) finds them taken, and gets `-<new id>` added.
 */
const UNIQUE_EVERYWHERE: Readonly<Record<string, string>> = { sites: 'subdomain', offers: 'token' };

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function freeUniqueValues(db: any, table: string, rows: Record<string, unknown>[]): Promise<void> {
  const column = UNIQUE_EVERYWHERE[table];
  if (!column || rows.length === 0) return;
  const taken = (await db
    .selectFrom(table)
    .select(['id', column])
    .where(column, 'in', rows.map((r) => r[column]))
    .execute()) as Array<Record<string, unknown>>;
  const owner = new Map(taken.map((r) => [String(r[column]), Number(r.id)]));
  for (const row of rows) {
    const holder = owner.get(String(row[column]));
    if (holder !== undefined && holder !== Number(row.id)) row[column] = `${String(row[column])}-${String(row.id)}`;
  }
}

/** A page's rows: placeholders, then each table's rows parents first, then the join rows. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function writePageRows(db: any, out: PageRows): Promise<void> {
  for (const [table, rows] of out.placeholders) await upsertRows(db, table, rows, { keepExisting: true });
  const tables = [...out.rows.keys()].sort((a, b) => writeRank(a) - writeRank(b));
  for (const table of tables) {
    await freeUniqueValues(db, table, out.rows.get(table)!);
    await upsertRows(db, table, out.rows.get(table)!);
  }
  for (const [table, join] of out.joins) await replaceJoinRows(db, table, join.parentKey, join.parents, join.rows);
}

/** Positions of included records in their parent's to-many linkage (a form's fields, in order). */
function positionsIn(record: UpstreamRecord, included: UpstreamRecord[]): Map<string, number> {
  const positions = new Map<string, number>();
  const lists = [record, ...included].flatMap((r) => Object.values(r.relationships ?? {}).map((rel) => rel.data));
  for (const data of lists) {
    if (!Array.isArray(data)) continue;
    data.forEach((linkage, i) => {
      const key = `${linkage.type}:${linkage.id}`;
      if (!positions.has(key)) positions.set(key, i);
    });
  }
  return positions;
}

/** Which product a course or podcast is: the site's product of the same title, else of its kind, else its first. */
class ProductMatcher {
  constructor(private readonly products: Array<{ id: number; siteId: number; title: string; kind: string }>) {}

  match(siteId: number, title: string, type: string): number {
    const ofSite = this.products.filter((p) => p.siteId === siteId);
    const kind = type === 'courses' ? /course/i : /podcast/i;
    const found = ofSite.find((p) => p.title === title && kind.test(p.kind)) ?? ofSite.find((p) => p.title === title) ?? ofSite.find((p) => kind.test(p.kind)) ?? ofSite[0];
    if (!found) throw new ImportError('refused', `Site ${siteId} has a ${type === 'courses' ? 'course' : 'podcast'} (${title}) but no product it could belong to`);
    return found.id;
  }
}
