// Stage 3: a plan becomes SQL. Only this file and the declarations' own lambdas build queries.
// Identifiers come from the registry; values are bound parameters.
import { sql, type AliasedExpression, type Expression, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { DatabaseHandle } from '../db/connect.js';
import type { DialectTraits } from '../db/dialect-traits.js';
import { isCountedTable, isSiteJoinTable, rowsCounter, VERSION_COUNTER } from '../db/site-counters.js';
import { cursorValue, type CursorPosition } from './cursors.js';
import { notFound } from './errors.js';
import { AnswerCache, CountCache, PageBoundaryCache, VersionedCache } from './list-caches.js';
import { QueryShapes, type Fragment } from './query-shapes.js';
import type { ConditionBuilder, IncludeNode, ListPlan, ReadPlan } from './planner.js';
import { queryContext, visibleValues, type AnyEB, type Condition, type RelationshipDef, type ResourceDefinition } from './resource.js';
import { parseSortValue } from './registry.js';

export type Row = Record<string, unknown>;

/** To-many linkage loaded for a row: relationship name → target ids, in order. */
export const LINKAGE = Symbol('linkage');
export type LinkedRow = Row & { [LINKAGE]?: Map<string, string[]> };

export interface IncludedRecord {
  resource: ResourceDefinition;
  row: LinkedRow;
}

export interface ReadResult {
  rows: LinkedRow[];
  /** Included records in discovery order, without the primary records. */
  included: IncludedRecord[];
}

export interface ListResult extends ReadResult {
  totalCount: number;
  /** Cursor pages: each row's position, for the cursors of links and meta. */
  positions?: CursorPosition[];
  /** Cursor pages: whether records lie before the first and after the last row. */
  more?: { before: boolean; after: boolean };
}

/** Alias of the parent's key in relationship queries, removed before rendering. */
const PARENT_KEY = '__parent_key';
/** Alias of the sort key's value in list queries (for cursors and page boundaries), removed before rendering. */
const SORT_KEY = '__sort_key';
/** Alias of a deep page's records before they are joined back to their table (see readPage). */
const SKIPPED_PAGE = '__page';

/** Whether a relationship renders `data` even when it is not included. */
function rendersLinkage(relationship: RelationshipDef): boolean {
  if (relationship.kind === 'to-one') return false; // free: the key is on the row
  if (relationship.kind === 'has-one') return true;
  return relationship.linkage;
}

// An IN list of ids is split above this many values (well under both databases' parameter limits).
const IN_CHUNK = 5000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;
/** A column name or an aliased SQL expression, as Kysely's select() takes them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Selection = string | ((eb: AnyEB) => AliasedExpression<any, string>);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnySelect = SelectQueryBuilder<any, any, any>;

/** A list's order, and how to continue it from a position (keyset paging). */
interface SortOrder {
  /** The sort as a parameter would name it (`-created_at`). */
  name: string;
  /** The sort key's expression; undefined when the list is ordered by id alone. */
  key: ((eb: AnyEB) => Expression<unknown>) | undefined;
  apply(q: AnySelect): AnySelect;
  /** The same order over a deep page's SKIPPED_PAGE rows (their id and SORT_KEY). */
  applyAfterSkip(q: AnySelect): AnySelect;
  /** Records strictly after `from` in this order. */
  after(eb: AnyEB, from: CursorPosition): Condition;
  /** A row's position (the row was read with the sort key selected). */
  position(row: Row): CursorPosition;
}

export class Executor {
  private readonly counts = new CountCache();
  private readonly probeAnswers = new VersionedCache<unknown>(500);
  private readonly boundaries = new PageBoundaryCache();
  private readonly tenancyTexts = new Map<string, string>();
  readonly shapes: QueryShapes;
  /** Whole answers read through this executor, by data version (engine.ts). */
  readonly answers: AnswerCache;

  constructor(
    private readonly db: AnyDb,
    private readonly traits: DialectTraits,
    runSelect?: DatabaseHandle['runSelect'],
    /** Bytes of whole answers to keep (ANSWER_CACHE_MB); none by default (a transaction's reader). */
    answerCacheBytes = 0,
  ) {
    this.shapes = new QueryShapes(db, runSelect);
    this.answers = new AnswerCache(answerCacheBytes);
  }

  async list(plan: ListPlan): Promise<ListResult> {
    const { resource, page } = plan;
    await this.checkReferences(plan);
    // Read before anything else: an answer cached under this version was computed from data at
    // least this new (see list-caches.ts).
    const site = await this.siteSnapshot(plan);
    // The filters' questions to the database; their answers, like counts, hold until the sites change.
    for (const probe of plan.probes) {
      const key = `${probe.key}\u0000${plan.siteIds.join(',')}`;
      let answer = site ? this.probeAnswers.get(key, site.version) : undefined;
      if (answer === undefined) {
        answer = await probe.ask({ db: this.db, traits: this.traits, siteIds: plan.siteIds });
        if (site && answer !== undefined) this.probeAnswers.set(key, site.version, answer);
      }
      probe.answer(answer);
    }
    const filtered = (): AnySelect => {
      let q: AnySelect = this.db.selectFrom(resource.table);
      q = q.where(this.tenancyCondition(resource, plan));
      for (const condition of plan.conditions) q = q.where(condition);
      return q;
    };
    const order = this.sortOrder(resource, plan.sort.name, plan.sort.descending, plan);
    const select = (q: AnySelect): AnySelect => {
      q = q.select(this.columnsFor(resource, plan.fields.get(resource.type), plan));
      return order.key ? q.select((eb: AnyEB) => sql`${order.key!(eb)}`.as(SORT_KEY)) : q;
    };
    // The WHERE clause as text and values: the shape of every query of this list, and with the
    // values the identity of the list for the caches.
    const where = [this.tenancyFragment(resource, plan), ...plan.conditions.map((c) => this.shapes.fragment(c))];
    const whereSql = where.map((f) => f.sql).join(' and ');
    const whereValues = where.flatMap((f) => f.parameters);
    const listKey = `${resource.table}\u0000${whereSql}\u0000${JSON.stringify(whereValues)}`;
    const count = async (): Promise<number> => {
      // The site's row counter counts every record; records the key may not see are not in it.
      if (site && plan.conditions.length === 0 && !resource.recordPermissions) return site.rows;
      const cached = site ? this.counts.get(listKey, site.version) : undefined;
      if (cached !== undefined) return cached;
      const [counted] = await this.shapes.run<{ count: unknown }>(`count\u0000${resource.table}\u0000${whereSql}`, whereValues, () =>
        filtered().select((eb) => eb.fn.countAll().as('count')),
      );
      const total = Number(counted?.count ?? 0);
      if (site) this.counts.set(listKey, site.version, total);
      return total;
    };
    const fieldsKey = [...(plan.fields.get(resource.type) ?? ['*'])].join(',');
    /** One page: `walk` order, from a position (exclusive), skipping `offset` records. */
    const readPage = (walk: SortOrder, from: CursorPosition | null, limit: number, offset: number | undefined) => {
      const seek = from ? this.shapes.fragment((eb) => walk.after(eb, from)) : undefined;
      if (resource.tenancy.kind === 'site' && plan.siteIds.length > 1) {
        return this.readPageAcrossSites(plan, walk, where.slice(1), seek, fieldsKey, from, limit, offset);
      }
      const key = ['page', resource.type, fieldsKey, walk.name, whereSql, seek?.sql ?? '', offset === undefined ? '' : 'offset'].join('\u0000');
      const values = [...whereValues, ...(seek?.parameters ?? []), limit, ...(offset === undefined ? [] : [offset])];
      return this.shapes.run<LinkedRow>(key, values, () => {
        let q = filtered();
        if (from) q = q.where((eb: AnyEB) => walk.after(eb, from));
        if (offset === undefined) return walk.apply(select(q)).limit(limit);
        // Skipping records: they are read as narrowly as possible (id and sort key, which an index
        // can cover), and only the page's own records are joined back for their columns. Selected
        // in one query, every skipped record would be fetched and its select-list subqueries
        // (contacts' external_user_id) run, to be thrown away: 112-172 ms instead of 5-7 for a
        // page 41,500 records deep at 1,000,000 contacts on PostgreSQL (docs/scaling.md).
        let skipped = q.select(`${resource.table}.id`);
        if (walk.key) skipped = skipped.select((eb: AnyEB) => sql`${walk.key!(eb)}`.as(SORT_KEY));
        skipped = walk.apply(skipped).limit(limit).offset(offset);
        const page = this.db
          .selectFrom(skipped.as(SKIPPED_PAGE))
          .innerJoin(resource.table, `${resource.table}.id`, `${SKIPPED_PAGE}.id`)
          .select(this.columnsFor(resource, plan.fields.get(resource.type), plan));
        return walk.applyAfterSkip(walk.key ? page.select(`${SKIPPED_PAGE}.${SORT_KEY}`) : page);
      });
    };

    let rows: LinkedRow[];
    // Counted (when it must be) while the related records load: neither needs the other.
    let totalCount: number | Promise<number>;
    let more: ListResult['more'];
    if (page.cursor) {
      const { direction, from } = page.cursor;
      // page[before] reads backwards from the position, then turns the page the right way round.
      const backwards = direction === 'before';
      const walk = backwards ? this.sortOrder(resource, plan.sort.name, !plan.sort.descending, plan) : order;
      rows = await readPage(walk, from, page.size + 1, undefined);
      const beyond = rows.length > page.size;
      if (beyond) rows.pop();
      if (backwards) rows.reverse();
      // Coming from a position means there is something on the side we came from (records there
      // may have gone since, which the next request will simply find empty).
      more = backwards ? { before: beyond, after: from !== null } : { before: from !== null, after: beyond };
      totalCount = count();
    } else {
      const offset = (page.number - 1) * page.size;
      const boundaryKey = site ? `${listKey}\u0000${order.name}\u0000${page.size}` : undefined;
      const start = boundaryKey && site ? this.boundaries.nearest(boundaryKey, site.version, page.number) : { page: 1, after: null };
      const skip = (page.number - start.page) * page.size;
      // Skipping: read one record more at the front, the last one before this page, so the next
      // request for this page seeks straight to it.
      rows = await readPage(order, start.after, skip > 0 ? page.size + 1 : page.size, skip > 0 ? skip - 1 : undefined);
      if (skip > 0) {
        const before = rows.shift();
        if (boundaryKey && site && before) this.boundaries.remember(boundaryKey, site.version, page.number, order.position(before));
      }
      const last = rows[rows.length - 1];
      if (boundaryKey && site && last && rows.length === page.size) {
        this.boundaries.remember(boundaryKey, site.version, page.number + 1, order.position(last));
      }
      // The page itself often tells the total: a short, non-empty page is the last one, and a short
      // first page is everything.
      if (rows.length > 0 && rows.length < page.size) totalCount = offset + rows.length;
      else if (rows.length === 0 && page.number === 1) totalCount = 0;
      else totalCount = count();
    }
    const positions = page.cursor ? rows.map((row) => order.position(row)) : undefined;
    for (const row of rows) delete row[SORT_KEY];
    const [total, included] = await Promise.all([totalCount, this.loadRelated(plan, resource, rows)]);
    return { rows, totalCount: total, included, ...(positions ? { positions } : {}), ...(more ? { more } : {}) };
  }

  /**
   * A page of a list spanning several sites (tenancy `siteFilter: 'optional'` without
   * filter[site_id]). Each site is read as its own index range, as far as the page reaches
   * (offset + limit of that site's records at most), and the branches are merged: the database
   * sorts at most sites x (offset + limit) keys, never every record of every site, so page 1 costs
   * what one site's page 1 costs, per site. An IN over the sites would read them all and sort.
   */
  private readPageAcrossSites(
    plan: ListPlan,
    walk: SortOrder,
    conditions: readonly Fragment[],
    seek: Fragment | undefined,
    fieldsKey: string,
    from: CursorPosition | null,
    limit: number,
    offset: number | undefined,
  ): Promise<LinkedRow[]> {
    const { resource } = plan;
    const reach = limit + (offset ?? 0);
    const perSite = plan.siteIds.map((siteId) => ({ ...plan, siteIds: [siteId] }));
    const tenancies = perSite.map((one) => this.tenancyFragment(resource, one));
    const conditionSql = conditions.map((f) => f.sql).join(' and ');
    const conditionValues = conditions.flatMap((f) => f.parameters);
    const key = ['sites page', resource.type, fieldsKey, walk.name, plan.siteIds.length, tenancies[0]!.sql, conditionSql, seek?.sql ?? '', offset === undefined ? '' : 'offset'].join('\u0000');
    const values = [
      ...tenancies.flatMap((t) => [...t.parameters, ...conditionValues, ...(seek?.parameters ?? []), reach]),
      limit,
      ...(offset === undefined ? [] : [offset]),
    ];
    return this.shapes.run<LinkedRow>(key, values, () => {
      const branches = perSite.map((one, i) => {
        let q: AnySelect = this.db.selectFrom(resource.table).where(this.tenancyCondition(resource, one));
        for (const condition of plan.conditions) q = q.where(condition);
        if (from) q = q.where((eb: AnyEB) => walk.after(eb, from));
        q = q.select(`${resource.table}.id`);
        if (walk.key) q = q.select((eb: AnyEB) => sql`${walk.key!(eb)}`.as(SORT_KEY));
        // Wrapped: SQLite takes no ORDER BY or LIMIT in a branch of a compound select.
        return this.db.selectFrom(walk.apply(q).limit(reach).as(`${SKIPPED_PAGE}_${i}`)).selectAll();
      });
      const merged = branches.slice(1).reduce((all, branch) => all.unionAll(branch), branches[0]!);
      // The merged keys in page order (the same alias one level down: applyAfterSkip orders by it).
      let chosen: AnySelect = this.db.selectFrom(merged.as(SKIPPED_PAGE)).select(`${SKIPPED_PAGE}.id`);
      if (walk.key) chosen = chosen.select(`${SKIPPED_PAGE}.${SORT_KEY}`);
      chosen = walk.applyAfterSkip(chosen).limit(limit);
      if (offset !== undefined) chosen = chosen.offset(offset);
      const page = this.db
        .selectFrom(chosen.as(SKIPPED_PAGE))
        .innerJoin(resource.table, `${resource.table}.id`, `${SKIPPED_PAGE}.id`)
        .select(this.columnsFor(resource, plan.fields.get(resource.type), plan));
      return walk.applyAfterSkip(walk.key ? page.select(`${SKIPPED_PAGE}.${SORT_KEY}`) : page);
    });
  }

  /**
   * The data version and row count of the request's sites, from the counters the database keeps
   * (src/db/site-counters.ts); undefined for resources without them.
   */
  private async siteSnapshot(plan: ListPlan): Promise<{ version: string; rows: number } | undefined> {
    const { resource, siteIds } = plan;
    // Only tables whose writes move the version (their triggers) may have answers cached.
    if (resource.tenancy.kind !== 'site' || siteIds.length === 0 || !isCountedTable(resource.table)) return undefined;
    const rowsName = rowsCounter(resource.table);
    const found = await this.shapes.run<{ site_id: unknown; counter: string; value: unknown }>(
      `site_counters\u0000${siteIds.length}`,
      [...siteIds, VERSION_COUNTER, rowsName],
      () =>
        this.db
          .selectFrom('site_counters')
          .select(['site_id', 'counter', 'value'])
          .where('site_id', 'in', siteIds)
          .where('counter', 'in', [VERSION_COUNTER, rowsName]),
    );
    const versions = new Map<number, string>();
    let rows = 0;
    for (const r of found) {
      if (r.counter === VERSION_COUNTER) versions.set(Number(r.site_id), String(r.value));
      else rows += Number(r.value);
    }
    const version = versionText(siteIds, versions);
    return version === undefined ? undefined : { version, rows };
  }

  /**
   * The data version of these sites, as read through this executor (undefined when a site has no
   * counters): what an answer read through it next is at least as new as.
   */
  async dataVersion(siteIds: readonly number[]): Promise<string | undefined> {
    if (siteIds.length === 0) return undefined;
    const found = await this.shapes.run<{ site_id: unknown; value: unknown }>(`site_versions\u0000${siteIds.length}`, [...siteIds, VERSION_COUNTER], () =>
      this.db.selectFrom('site_counters').select(['site_id', 'value']).where('site_id', 'in', siteIds).where('counter', '=', VERSION_COUNTER),
    );
    const versions = new Map(found.map((r) => [Number(r.site_id), String(r.value)]));
    return versionText(siteIds, versions);
  }

  async show(plan: ReadPlan, id: number): Promise<ReadResult | undefined> {
    const { resource } = plan;
    const tenancy = this.tenancyFragment(resource, plan);
    const fieldsKey = [...(plan.fields.get(resource.type) ?? ['*'])].join(',');
    const [row] = await this.shapes.run<LinkedRow>(['show', resource.type, fieldsKey, tenancy.sql].join('\u0000'), [id, ...tenancy.parameters], () =>
      this.db
        .selectFrom(resource.table)
        .select(this.columnsFor(resource, plan.fields.get(resource.type), plan))
        .where(`${resource.table}.id`, '=', id)
        .where(this.tenancyCondition(resource, plan)),
    );
    if (!row) return undefined;
    const included = await this.loadRelated(plan, resource, [row]);
    return { rows: [row], included };
  }

  /**
   * The linkage of one relationship of one record (`GET .../relationships/<name>`), or undefined
   * when the record is outside the request's tenancy or does not exist.
   */
  async relationshipIds(plan: ReadPlan, id: number, name: string): Promise<string[] | undefined> {
    const result = await this.show(plan, id);
    const row = result?.rows[0];
    const relationship = plan.resource.relationships[name];
    if (!row || !relationship) return undefined;
    if (relationship.kind === 'to-one') {
      const fk = row[relationship.foreignKey];
      return fk === null || fk === undefined ? [] : [String(fk)];
    }
    if (!row[LINKAGE]?.has(name)) await this.loadEdge(plan, name, relationship, [row], 'ids');
    return row[LINKAGE]?.get(name) ?? [];
  }

  /** Ids named in filter values must exist within the request's sites: one query per filter. */
  private async checkReferences(plan: ListPlan): Promise<void> {
    for (const { parameter, table, ids } of plan.references) {
      const wanted = [...new Set(ids)];
      const found = plan.siteIds.length === 0
        ? []
        : await this.db.selectFrom(table).select('id').where('id', 'in', wanted).where('site_id', 'in', plan.siteIds).execute();
      const present = new Set(found.map((r) => Number(r.id)));
      const missing = wanted.filter((id) => !present.has(id));
      if (missing.length > 0) {
        throw notFound(`${parameter} names ${missing.length === 1 ? 'a record' : 'records'} that do not exist: ${missing.join(', ')}`, { parameter });
      }
    }
  }

  /**
   * The tenancy condition as a fragment: its text depends only on the table and how many sites, so
   * it is compiled once per such pair and only its values are new per request (the order in which
   * tenancyCondition binds them).
   */
  private tenancyFragment(resource: ResourceDefinition, plan: ReadPlan): Fragment {
    const { tenancy, table } = resource;
    // A reader-dependent condition binds what its declaration binds: compiled each time (these
    // are the sandbox's small tables), its text still naming the shape.
    if (tenancy.kind === 'account' && tenancy.visibleTo) return this.shapes.fragment(this.tenancyCondition(resource, plan));
    const values: unknown[] = tenancy.kind === 'account' ? [plan.accountId] : [];
    if (tenancy.kind === 'site' || tenancy.siteColumn !== undefined) values.push(...plan.siteIds);
    const visible = visibleValues(resource, plan.permissions);
    if (visible) values.push(...visible);
    const key = `${table}\u0000${plan.siteIds.length}\u0000${visible?.length ?? ''}`;
    let text = this.tenancyTexts.get(key);
    if (text === undefined) {
      const compiled = this.shapes.fragment(this.tenancyCondition(resource, plan));
      // Checked once: values in another order would bind the wrong site (and then the shape's own
      // check would send every query of it through a full build anyway).
      if (JSON.stringify(compiled.parameters) !== JSON.stringify(values)) throw new Error(`tenancy of ${table} binds ${JSON.stringify(compiled.parameters)}`);
      this.tenancyTexts.set(key, (text = compiled.sql));
    }
    return { sql: text, parameters: values };
  }

  /**
   * The tenant boundary: records outside it do not exist for this request. Besides the sites (or
   * the account), it holds the records the key's permissions let it see (recordPermissions).
   */
  tenancyCondition(resource: ResourceDefinition, plan: ReadPlan): ConditionBuilder {
    const { tenancy, table } = resource;
    const siteIds = plan.siteIds;
    const visible = visibleValues(resource, plan.permissions);
    const visibility = (eb: AnyEB): Condition =>
      visible!.length === 0 ? sql<boolean>`1 = 0` : eb(`${table}.${resource.recordPermissions!.column}`, 'in', visible!);
    const tenant = (eb: AnyEB): Condition => {
      if (tenancy.kind === 'site') {
        return siteIds.length === 0 ? sql<boolean>`1 = 0` : eb(`${table}.${tenancy.column}`, 'in', siteIds);
      }
      const sameAccount = eb(`${table}.${tenancy.column}`, '=', plan.accountId);
      const narrowed = tenancy.visibleTo?.(eb, { accountId: plan.accountId, userId: plan.userId, role: plan.role, siteIds });
      const conditions = narrowed ? [sameAccount, narrowed] : [sameAccount];
      if (tenancy.siteColumn !== undefined) {
        conditions.push(siteIds.length === 0 ? sql<boolean>`1 = 0` : eb(`${table}.${tenancy.siteColumn}`, 'in', siteIds));
      }
      return conditions.length === 1 ? sameAccount : eb.and(conditions);
    };
    return visible ? (eb) => eb.and([tenant(eb), visibility(eb)]) : tenant;
  }

  /** Columns needed to render the given attributes plus every relationship key. */
  private columnsFor(resource: ResourceDefinition, fields: ReadonlySet<string> | undefined, plan: ReadPlan): Selection[] {
    const columns = new Set<string>(['id']);
    const computed: Selection[] = [];
    for (const [name, a] of Object.entries(resource.attributes)) {
      if (fields && !fields.has(name)) continue;
      if (a.compute) for (const c of a.compute.columns) columns.add(c);
      else if (a.sql) {
        const build = a.sql;
        const ctx = queryContext(plan.ctx, resource.table);
        computed.push((eb: AnyEB) => build(eb, ctx).as(a.column));
      } else columns.add(a.column);
    }
    for (const r of Object.values(resource.relationships)) {
      if (r.kind === 'to-one') columns.add(r.foreignKey);
      if (r.kind === 'to-many-through') columns.add(r.sourceColumn);
    }
    return [...[...columns].map((c) => `${resource.table}.${c}`), ...computed];
  }

  private applySort(q: AnySelect, resource: ResourceDefinition, name: string, descending: boolean, plan: ReadPlan): AnySelect {
    return this.sortOrder(resource, name, descending, plan).apply(q);
  }

  /**
   * The order of a list: the sort key (nulls as if larger than every value, on both databases,
   * which is PostgreSQL's own rule) then id in the same direction, so pages never overlap or skip
   * records with equal sort values.
   */
  sortOrder(resource: ResourceDefinition, name: string, descending: boolean, plan: ReadPlan): SortOrder {
    const direction = descending ? 'desc' : 'asc';
    const id = `${resource.table}.id`;
    const idAfter = (eb: AnyEB, from: CursorPosition): Condition => eb(id, descending ? '<' : '>', from.id);
    const sortName = `${descending ? '-' : ''}${name}`;
    if (name === 'id') {
      return {
        name: sortName,
        key: undefined,
        apply: (q) => q.orderBy(id, direction),
        applyAfterSkip: (q) => q.orderBy(`${SKIPPED_PAGE}.id`, direction),
        after: idAfter,
        position: (row) => ({ value: null, id: Number(row.id) }),
      };
    }
    // A declared sort wins over an attribute of the same name (customers sort net_revenue by
    // its cents column, while the attribute renders text).
    const custom = resource.sorts[name];
    const attribute = custom ? undefined : resource.attributes[name];
    const ctx = queryContext(plan.ctx, resource.table);
    const key = (eb: AnyEB): Expression<unknown> =>
      attribute?.sql ? attribute.sql(eb, ctx) : attribute ? eb.ref(`${resource.table}.${attribute.column}`) : custom!(eb, ctx);
    const nullable = attribute ? attribute.nullable : true;
    const before = descending ? '<' : '>';
    const ordered = (q: AnySelect, sortKey: (eb: AnyEB) => Expression<unknown>, idColumn: string): AnySelect =>
      q
        .orderBy(sortKey, (ob) => {
          const directed = descending ? ob.desc() : ob.asc();
          return nullable ? (descending ? directed.nullsFirst() : directed.nullsLast()) : directed;
        })
        .orderBy(idColumn, direction);
    return {
      name: sortName,
      key,
      apply: (q) => ordered(q, key, id),
      applyAfterSkip: (q) => ordered(q, (eb) => eb.ref(`${SKIPPED_PAGE}.${SORT_KEY}`), `${SKIPPED_PAGE}.id`),
      after: (eb, from) => {
        const k = key(eb);
        const v = from.value;
        if (!nullable || v !== null) {
          // (key, id) past the position, as a row-value comparison both databases read as one
          // index range; a nullable key's nulls come last ascending, first descending.
          const past = sql<SqlBool>`(${k}, ${sql.ref(id)}) ${sql.raw(before)} (${v}, ${from.id})`;
          return nullable && !descending ? eb.or([past, eb(k, 'is', null)]) : past;
        }
        // The position is on a null key: nulls end an ascending list and open a descending one.
        const pastAmongNulls = eb.and([eb(k, 'is', null), idAfter(eb, from)]);
        return descending ? eb.or([pastAmongNulls, eb(k, 'is not', null)]) : pastAmongNulls;
      },
      position: (row) => ({ value: cursorValue(row[SORT_KEY]), id: Number(row.id) }),
    };
  }

  /** Loads includes (one query per edge) and the linkage the primary records render. */
  private async loadRelated(plan: ReadPlan, resource: ResourceDefinition, rows: LinkedRow[]): Promise<IncludedRecord[]> {
    if (rows.length === 0) return [];
    const store = new IncludedStore();
    store.addPrimary(resource, rows);
    // Linkage of relationships that were not included but render `data` anyway: each edge its own
    // query, run at once with the others and with the includes (on PostgreSQL, round trips on
    // several connections instead of one after the other; each sets only its own linkage).
    const includedNames = new Set(plan.includes.map((n) => n.name));
    const linkage = Object.entries(resource.relationships)
      .filter(([name, relationship]) => !includedNames.has(name) && rendersLinkage(relationship))
      .map(([name, relationship]) => this.loadEdge(plan, name, relationship, rows, 'ids'));
    await Promise.all([this.loadIncludeLevel(plan, rows, plan.includes, store), ...linkage]);
    return store.included();
  }

  private async loadIncludeLevel(
    plan: ReadPlan,
    parents: LinkedRow[],
    nodes: IncludeNode[],
    store: IncludedStore,
  ): Promise<void> {
    for (const node of nodes) {
      const rows = await this.loadEdge(plan, node.name, node.relationship, parents, 'records', node.narrowing);
      const children = store.add(node.target, rows);
      if (node.children.length > 0 && children.length > 0) {
        await this.loadIncludeLevel(plan, children, node.children, store);
      }
    }
  }

  /**
   * One relationship edge for a set of parents: one query over all the parents' keys (never one
   * per parent), grouped in memory. Sets the linkage on each parent and returns the related rows
   * (`records`: the target's columns for rendering; `ids`: only ids, for linkage).
   */
  private async loadEdge(
    plan: ReadPlan,
    name: string,
    relationship: RelationshipDef,
    parents: LinkedRow[],
    shape: 'records' | 'ids',
    narrowing?: IncludeNode['narrowing'],
  ): Promise<Row[]> {
    const target = plan.registry.get(relationship.type);
    const columns: Selection[] = shape === 'records' ? this.columnsFor(target, plan.fields.get(target.type), plan) : [`${target.table}.id`];
    const tenancy = this.tenancyCondition(target, plan);
    const where = relationship.where;
    const whereOfTarget = where ? (eb: AnyEB) => where(eb, queryContext(plan.ctx, target.table)) : undefined;
    // Shape key and values of this edge's query for a chunk of keys (see query-shapes.ts). Paged or
    // searched includes (a show's narrowing) are rare and built in full.
    const tenancyFragment = this.tenancyFragment(target, plan);
    const whereFragment = whereOfTarget ? this.shapes.fragment(whereOfTarget) : undefined;
    const fieldsKey = shape === 'records' ? [...(plan.fields.get(target.type) ?? ['*'])].join(',') : 'ids';
    const shaped = (chunk: unknown[], build: () => AnySelect): Promise<Row[]> => {
      if (narrowing) return build().execute();
      const key = ['edge', edgeIdentity(relationship), name, fieldsKey, chunk.length, tenancyFragment.sql, whereFragment?.sql ?? ''].join('\u0000');
      return this.shapes.run<Row>(key, [...chunk, ...tenancyFragment.parameters, ...(whereFragment?.parameters ?? [])], build);
    };

    if (relationship.kind === 'to-one') {
      // The key is on the parent: linkage is already known; only the records need a query.
      const ids = unique(parents.map((p) => p[relationship.foreignKey]).filter((v) => v !== null && v !== undefined));
      if (ids.length === 0 || shape === 'ids') return [];
      const found = await this.inChunks(ids, (chunk) =>
        shaped(chunk, () => {
          const q: AnySelect = this.db.selectFrom(target.table).select(columns).where(`${target.table}.id`, 'in', chunk).where(tenancy);
          return whereOfTarget ? q.where(whereOfTarget) : q;
        }),
      );
      // In id order, whatever order the plan read them in (PostgreSQL's may change with its
      // statistics): `included` is the same for the same data, byte for byte.
      return found.sort((a, b) => Number(a.id) - Number(b.id));
    }

    const parentKey = relationship.kind === 'to-many-through' ? relationship.sourceColumn : 'id';
    const keys = unique(parents.map((p) => p[parentKey]).filter((v) => v !== null && v !== undefined));
    let rows: Row[] = [];
    if (keys.length > 0) {
      rows = await this.inChunks(keys, (chunk) => {
        if (relationship.kind === 'to-many-through' && narrowing?.limit !== undefined && chunk.length === 1) {
          // A paged include (a show's filter[<name>_page]): page the related records, not the join
          // rows, which may link the same record twice (an offer granted twice).
          const through = relationship.through;
          let q: AnySelect = this.db
            .selectFrom(target.table)
            .select(columns)
            .select(sql.lit(String(chunk[0])).as(PARENT_KEY))
            .where((eb: AnyEB) => {
              let sub = eb
                .selectFrom(through)
                .select(sql.lit(1).as('one'))
                .whereRef(`${through}.${relationship.targetKey}`, '=', `${target.table}.id`)
                .where(`${through}.${relationship.sourceKey}`, '=', chunk[0]);
              if (whereOfTarget) sub = sub.where(whereOfTarget);
              return eb.exists(sub);
            });
          q = q.where(tenancy);
          for (const condition of narrowing.conditions) q = q.where(condition);
          return this.sortedByDefault(q, target, plan).limit(narrowing.limit).offset(narrowing.offset ?? 0).execute();
        }
        return shaped(chunk, () => {
          let q: AnySelect;
          if (relationship.kind === 'to-many-through') {
            const source = `${relationship.through}.${relationship.sourceKey}`;
            // The join rows of these parents drive the query (a cross join with the condition in
            // WHERE: SQLite keeps the written order, PostgreSQL plans freely): the cost follows the
            // rows linked to this page, not the size of the target table (a site's tags).
            q = this.db
              .selectFrom(relationship.through)
              .crossJoin(target.table)
              .select(columns)
              .select(`${source} as ${PARENT_KEY}`)
              .where(source, 'in', chunk)
              .whereRef(`${relationship.through}.${relationship.targetKey}`, '=', `${target.table}.id`);
          } else {
            const fk = `${target.table}.${relationship.foreignKey}`;
            q = this.db.selectFrom(target.table).select(columns).select(`${fk} as ${PARENT_KEY}`).where(fk, 'in', chunk);
          }
          q = q.where(tenancy);
          if (whereOfTarget) q = q.where(whereOfTarget);
          for (const condition of narrowing?.conditions ?? []) q = q.where(condition);
          q = this.sortedByDefault(q, target, plan);
          // Paging an include is for a single parent (a show), so LIMIT applies to its records.
          if (narrowing?.limit !== undefined) q = q.limit(narrowing.limit).offset(narrowing.offset ?? 0);
          return q;
        });
      });
    }
    const byParent = new Map<string, string[]>();
    const distinct: Row[] = [];
    const seen = new Set<string>();
    for (const row of rows) {
      const key = String(row[PARENT_KEY]);
      const id = String(row.id);
      delete row[PARENT_KEY];
      // Two join rows can link the same pair (an offer granted twice): list it once.
      if (seen.has(`${key}:${id}`)) continue;
      seen.add(`${key}:${id}`);
      distinct.push(row);
      let ids = byParent.get(key);
      if (!ids) byParent.set(key, (ids = []));
      ids.push(id);
    }
    for (const parent of parents) setLinkage(parent, name, byParent.get(String(parent[parentKey])) ?? []);
    return distinct;
  }

  private sortedByDefault(q: AnySelect, target: ResourceDefinition, plan: ReadPlan): AnySelect {
    const { name, descending } = parseSortValue(target.defaultSort);
    return this.applySort(q, target, name, descending, plan);
  }

  private async inChunks(values: unknown[], run: (chunk: unknown[]) => Promise<Row[]>): Promise<Row[]> {
    if (values.length <= IN_CHUNK) return run(values);
    const out: Row[] = [];
    for (let i = 0; i < values.length; i += IN_CHUNK) out.push(...(await run(values.slice(i, i + IN_CHUNK))));
    return out;
  }

  get dialect(): DialectTraits {
    return this.traits;
  }
}

/**
 * The data version of a request's sites as one text (`site:version,...`), the key every cache of
 * answers uses; undefined when a site has no counters (made while they were suspended), which
 * leaves nothing cacheable.
 */
export function versionText(siteIds: readonly number[], versions: ReadonlyMap<number, string>): string | undefined {
  let text = '';
  for (const id of siteIds) {
    const version = versions.get(id);
    if (version === undefined) return undefined;
    text += `${text === '' ? '' : ','}${id}:${version}`;
  }
  return text;
}

/**
 * Whether every table an answer reads moves its sites' data version when written: the listed
 * table, the targets (and join tables) of the linkage it renders and of its includes, each a
 * counted table of a site or a join table counted through its parent (src/db/site-counters.ts).
 * Only such answers may be cached by version. (Select-list subqueries of attributes read counted
 * tables of the same site, or a site's subdomain, which never changes.)
 */
export function answerFollowsVersions(resource: ResourceDefinition, includes: readonly IncludeNode[], registry: ReadPlan['registry']): boolean {
  if (resource.tenancy.kind !== 'site' || !isCountedTable(resource.table)) return false;
  const versioned = (relationship: RelationshipDef): boolean =>
    isCountedTable(registry.get(relationship.type).table) &&
    (relationship.kind !== 'to-many-through' || isCountedTable(relationship.through) || isSiteJoinTable(relationship.through));
  for (const relationship of Object.values(resource.relationships)) if (rendersLinkage(relationship) && !versioned(relationship)) return false;
  return includes.every((node) => versioned(node.relationship) && answerFollowsVersions(node.target, node.children, registry));
}

/**
 * Distinct keys, as the driver returned them. Not converted to numbers: a key may be text (a
 * through relationship's `sourceColumn`), and pg's bigint strings keep their full precision.
 */
function unique(values: unknown[]): unknown[] {
  return [...new Set(values)];
}

const edgeIdentities = new WeakMap<RelationshipDef, number>();
let edgesSeen = 0;
/** A number per declared relationship: two relationships never share the shape of their queries. */
function edgeIdentity(relationship: RelationshipDef): number {
  let id = edgeIdentities.get(relationship);
  if (id === undefined) {
    id = ++edgesSeen;
    edgeIdentities.set(relationship, id);
  }
  return id;
}

function setLinkage(row: LinkedRow, name: string, ids: string[]): void {
  let map = row[LINKAGE];
  if (!map) row[LINKAGE] = map = new Map();
  map.set(name, ids);
}

/**
 * The `included` member: each record once, never a primary record. When a record is reached
 * twice, the first row object stays canonical so linkage set on it later is not lost.
 */
class IncludedStore {
  private readonly records = new Map<string, IncludedRecord & { primary: boolean }>();

  addPrimary(resource: ResourceDefinition, rows: LinkedRow[]): void {
    for (const row of rows) this.records.set(`${resource.type}:${String(row.id)}`, { resource, row, primary: true });
  }

  /** Adds rows and returns their canonical objects. */
  add(resource: ResourceDefinition, rows: Row[]): LinkedRow[] {
    return rows.map((row) => {
      const key = `${resource.type}:${String(row.id)}`;
      const existing = this.records.get(key);
      if (existing) return existing.row;
      this.records.set(key, { resource, row, primary: false });
      return row;
    });
  }

  included(): IncludedRecord[] {
    const out: IncludedRecord[] = [];
    for (const r of this.records.values()) if (!r.primary) out.push({ resource: r.resource, row: r.row });
    return out;
  }
}
