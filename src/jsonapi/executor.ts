// Stage 3: a plan becomes SQL. Only this file and the declarations' own lambdas build queries.
// Identifiers come from the registry; values are bound parameters.
import { sql, type AliasedExpression, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { DialectTraits } from '../db/dialect-traits.js';
import { notFound } from './errors.js';
import type { ConditionBuilder, IncludeNode, ListPlan, ReadPlan } from './planner.js';
import type { AnyEB, Condition, RelationshipDef, ResourceDefinition } from './resource.js';
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
}

/** Alias of the parent's key in relationship queries, removed before rendering. */
const PARENT_KEY = '__parent_key';

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

export class Executor {
  constructor(
    private readonly db: AnyDb,
    private readonly traits: DialectTraits,
  ) {}

  async list(plan: ListPlan): Promise<ListResult> {
    const { resource, page } = plan;
    await this.checkReferences(plan);
    const filtered = (): AnySelect => {
      let q: AnySelect = this.db.selectFrom(resource.table);
      q = q.where(this.tenancyCondition(resource, plan));
      for (const condition of plan.conditions) q = q.where(condition);
      return q;
    };
    const offset = (page.number - 1) * page.size;
    let q = filtered().select(this.columnsFor(resource, plan.fields.get(resource.type), plan));
    q = this.applySort(q, resource, plan.sort.name, plan.sort.descending, plan);
    const rows = (await q.limit(page.size).offset(offset).execute()) as LinkedRow[];

    // The page itself often tells the total: a short, non-empty page is the last one, and a short
    // first page is everything. Only a full page or an empty page past the first needs COUNT(*).
    let totalCount: number;
    if (rows.length > 0 && rows.length < page.size) totalCount = offset + rows.length;
    else if (rows.length === 0 && page.number === 1) totalCount = 0;
    else {
      const counted = await filtered()
        .select((eb) => eb.fn.countAll().as('count'))
        .executeTakeFirstOrThrow();
      totalCount = Number(counted.count);
    }
    const included = await this.loadRelated(plan, resource, rows);
    return { rows, totalCount, included };
  }

  async show(plan: ReadPlan, id: number): Promise<ReadResult | undefined> {
    const { resource } = plan;
    const row = (await this.db
      .selectFrom(resource.table)
      .select(this.columnsFor(resource, plan.fields.get(resource.type), plan))
      .where(`${resource.table}.id`, '=', id)
      .where(this.tenancyCondition(resource, plan))
      .executeTakeFirst()) as LinkedRow | undefined;
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

  /** The tenant boundary: records outside it do not exist for this request. */
  tenancyCondition(resource: ResourceDefinition, plan: ReadPlan): ConditionBuilder {
    const { tenancy, table } = resource;
    const siteIds = plan.siteIds;
    return (eb: AnyEB): Condition => {
      if (tenancy.kind === 'site') {
        return siteIds.length === 0 ? sql<boolean>`1 = 0` : eb(`${table}.${tenancy.column}`, 'in', siteIds);
      }
      const sameAccount = eb(`${table}.${tenancy.column}`, '=', plan.accountId);
      if (tenancy.siteColumn === undefined) return sameAccount;
      const site =
        siteIds.length === 0 ? sql<boolean>`1 = 0` : eb(`${table}.${tenancy.siteColumn}`, 'in', siteIds);
      return eb.and([sameAccount, site]);
    };
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
        const ctx = { ...plan.ctx, table: resource.table };
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
    const direction = descending ? 'desc' : 'asc';
    if (name !== 'id') {
      // A declared sort wins over an attribute of the same name (customers sort net_revenue by
      // its cents column, while the attribute renders text).
      const custom = resource.sorts[name];
      const attribute = custom ? undefined : resource.attributes[name];
      const ctx = { ...plan.ctx, table: resource.table };
      const expression = attribute?.sql
        ? (eb: AnyEB) => attribute.sql!(eb, ctx)
        : attribute
          ? sql.ref(`${resource.table}.${attribute.column}`)
          : (eb: AnyEB) => custom!(eb, ctx);
      const nullable = attribute ? attribute.nullable : true;
      // Nulls sort as if larger than every value on both databases (PostgreSQL's own rule).
      q = q.orderBy(expression, (ob) => {
        const directed = descending ? ob.desc() : ob.asc();
        return nullable ? (descending ? directed.nullsFirst() : directed.nullsLast()) : directed;
      });
    }
    // The id tiebreaker keeps pages from overlapping or skipping records with equal sort values.
    return q.orderBy(`${resource.table}.id`, direction);
  }

  /** Loads includes (one query per edge) and the linkage the primary records render. */
  private async loadRelated(plan: ReadPlan, resource: ResourceDefinition, rows: LinkedRow[]): Promise<IncludedRecord[]> {
    if (rows.length === 0) return [];
    const store = new IncludedStore();
    store.addPrimary(resource, rows);
    await this.loadIncludeLevel(plan, rows, plan.includes, store);
    // Linkage of relationships that were not included but render `data` anyway.
    const includedNames = new Set(plan.includes.map((n) => n.name));
    for (const [name, relationship] of Object.entries(resource.relationships)) {
      if (includedNames.has(name) || !rendersLinkage(relationship)) continue;
      await this.loadEdge(plan, name, relationship, rows, 'ids');
    }
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

    if (relationship.kind === 'to-one') {
      // The key is on the parent: linkage is already known; only the records need a query.
      const ids = unique(parents.map((p) => p[relationship.foreignKey]).filter((v) => v !== null && v !== undefined));
      if (ids.length === 0 || shape === 'ids') return [];
      return this.inChunks(ids, (chunk) => {
        let q: AnySelect = this.db.selectFrom(target.table).select(columns).where(`${target.table}.id`, 'in', chunk).where(tenancy);
        const where = relationship.where;
        if (where) q = q.where((eb: AnyEB) => where(eb, { ...plan.ctx, table: target.table }));
        return q.execute();
      });
    }

    const parentKey = relationship.kind === 'to-many-through' ? relationship.sourceColumn : 'id';
    const keys = unique(parents.map((p) => p[parentKey]).filter((v) => v !== null && v !== undefined));
    let rows: Row[] = [];
    if (keys.length > 0) {
      rows = await this.inChunks(keys, (chunk) => {
        let q: AnySelect;
        if (relationship.kind === 'to-many-through' && narrowing?.limit !== undefined && chunk.length === 1) {
          // A paged include (a show's filter[<name>_page]): page the related records, not the join
          // rows, which may link the same record twice (an offer granted twice).
          const through = relationship.through;
          const where = relationship.where;
          q = this.db
            .selectFrom(target.table)
            .select(columns)
            .select(sql.lit(String(chunk[0])).as(PARENT_KEY))
            .where((eb: AnyEB) => {
              let sub = eb
                .selectFrom(through)
                .select(sql.lit(1).as('one'))
                .whereRef(`${through}.${relationship.targetKey}`, '=', `${target.table}.id`)
                .where(`${through}.${relationship.sourceKey}`, '=', chunk[0]);
              if (where) sub = sub.where((w: AnyEB) => where(w, { ...plan.ctx, table: target.table }));
              return eb.exists(sub);
            });
          q = q.where(tenancy);
          for (const condition of narrowing.conditions) q = q.where(condition);
          return this.sortedByDefault(q, target, plan).limit(narrowing.limit).offset(narrowing.offset ?? 0).execute();
        }
        if (relationship.kind === 'to-many-through') {
          const source = `${relationship.through}.${relationship.sourceKey}`;
          q = this.db
            .selectFrom(target.table)
            .innerJoin(relationship.through, `${relationship.through}.${relationship.targetKey}`, `${target.table}.id`)
            .select(columns)
            .select(`${source} as ${PARENT_KEY}`)
            .where(source, 'in', chunk);
        } else {
          const fk = `${target.table}.${relationship.foreignKey}`;
          q = this.db.selectFrom(target.table).select(columns).select(`${fk} as ${PARENT_KEY}`).where(fk, 'in', chunk);
        }
        q = q.where(tenancy);
        const where = relationship.where;
        if (where) q = q.where((eb: AnyEB) => where(eb, { ...plan.ctx, table: target.table }));
        for (const condition of narrowing?.conditions ?? []) q = q.where(condition);
        q = this.sortedByDefault(q, target, plan);
        // Paging an include is for a single parent (a show), so LIMIT applies to its records.
        if (narrowing?.limit !== undefined) q = q.limit(narrowing.limit).offset(narrowing.offset ?? 0);
        return q.execute();
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
 * Distinct keys, as the driver returned them. Not converted to numbers: a key may be text (a
 * through relationship's `sourceColumn`), and pg's bigint strings keep their full precision.
 */
function unique(values: unknown[]): unknown[] {
  return [...new Set(values)];
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
