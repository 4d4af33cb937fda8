// A source record (a JSON:API resource object) as the rows of this database, read off its
// resource's declaration: each attribute goes back to its column (a computed one through its
// `store`, when it has one; values computed in SQL, such as a contact's external_user_id, are
// someone else's columns and are skipped), each to-one linkage to its foreign key, and each
// to-many-through linkage to join rows. What the API never shows is filled by HIDDEN_COLUMNS
// below (docs/import.md lists it).
import type { DialectTraits } from '../db/dialect-traits.js';
import { HOOK_EVENTS } from '../domain/hooks.js';
import { newSigningSecret } from '../domain/hooks.js';
import type { AttributeDef, ResourceDefinition } from '../jsonapi/resource.js';
import { JOIN_TABLES_WITH_IDS, resourceOf, writesJoinTo } from './import-plan.js';
import type { Linkage, UpstreamRecord } from './upstream-client.js';

/** Source ids → ids here: each table's ids moved by its offset (0 everywhere: ids kept). */
export class IdMap {
  constructor(readonly offsets: Readonly<Record<string, number>>) {}

  map(table: string, sourceId: string | number): number {
    const id = Number(sourceId);
    if (!Number.isSafeInteger(id)) throw new Error(`import: ${table} id ${JSON.stringify(sourceId)} is not a whole number`);
    return id + (this.offsets[table] ?? 0);
  }
}

export interface RowContext {
  traits: DialectTraits;
  ids: IdMap;
  accountId: number;
  /** The site of the list being walked (mapped), when it is walked per site. */
  siteId: number | undefined;
  /** The only site, when there is one: the site of records that do not name theirs. */
  soleSiteId: number | undefined;
  /** When the API shows no creation time: the import's start (encoded). */
  fallbackTime: string;
  /** The record's place in its list (0-based), for order columns the API does not show. */
  position: number;
  /** Each table's columns: a value without a column (an updated_at a table lacks) is left out. */
  columns: ReadonlyMap<string, ReadonlySet<string>>;
}

/** Rows of one table to upsert by id, and join rows to replace per parent. */
export interface PageRows {
  rows: Map<string, Record<string, unknown>[]>;
  /** Placeholders: written only where no row has the id yet. */
  placeholders: Map<string, Record<string, unknown>[]>;
  joins: Map<string, { parentKey: string; parents: unknown[]; rows: Record<string, unknown>[] }>;
}

export function emptyPageRows(): PageRows {
  return { rows: new Map(), placeholders: new Map(), joins: new Map() };
}

const push = <T>(map: Map<string, T[]>, key: string, value: T) => {
  let list = map.get(key);
  if (!list) map.set(key, (list = []));
  list.push(value);
};

function encode(def: AttributeDef, value: unknown, traits: DialectTraits): unknown {
  if (value === null || value === undefined) return null;
  switch (def.type) {
    case 'datetime':
      return traits.encodeTimestamp(new Date(String(value)));
    case 'boolean':
      return traits.encodeBoolean(Boolean(value));
    case 'json':
      return traits.encodeJson(value);
    case 'id':
      return Number(value);
    default:
      return value;
  }
}

const tableOf = (type: string): string => resourceOf(type).table;

const one = (linkage: Linkage | Linkage[] | null | undefined): Linkage | null | undefined => (Array.isArray(linkage) ? undefined : linkage);

/**
 * Columns the API never shows that have no default, by table: what the import writes there.
 * `row` is the row so far (attributes and foreign keys), `record` the source's object.
 */
const HIDDEN_COLUMNS: Readonly<Record<string, (row: Record<string, unknown>, ctx: RowContext) => Record<string, unknown>>> = {
  sites: (_row, ctx) => ({ account_id: ctx.accountId }),
  // Which course or podcast product a course or podcast is: matched by title afterwards
  // (importer.ts, matchProducts); the first product of the site until then.
  products: (row) => ({ productizable_type: productizableType(String(row.product_type_name ?? '')) }),
  contacts: (_row, ctx) => ({ hidden: ctx.traits.encodeBoolean(false) }),
  courses: () => ({ publish_status: 'published' }),
  forms: (_row, ctx) => ({ double_opt_in: ctx.traits.encodeBoolean(false) }),
  form_fields: (_row, ctx) => ({ position: ctx.position + 1 }),
  // A new secret: the source's is never shown.
  hooks: () => ({ signing_secret: newSigningSecret() }),
};

/** Products::Course for "Course": the kind's class name as the platform spells it. */
function productizableType(name: string): string {
  const words = name.replace(/[^A-Za-z0-9 ]/g, '').split(/\s+/).filter(Boolean).map((w) => w[0]!.toUpperCase() + w.slice(1));
  const kind = words.join('') || 'Product';
  return `${kind}s::${kind}`;
}

/** The row of a record of `resource`, and its join rows, added to `out`. */
export function addRecordRows(resource: ResourceDefinition, record: UpstreamRecord, ctx: RowContext, out: PageRows): Record<string, unknown> {
  const row: Record<string, unknown> = { id: ctx.ids.map(resource.table, record.id) };
  const attributes = record.attributes ?? {};
  for (const [name, def] of Object.entries(resource.attributes)) {
    if (!(name in attributes) || def.sql) continue;
    const value = attributes[name];
    if (def.compute) {
      if (def.compute.store) Object.assign(row, def.compute.store(value));
      continue;
    }
    row[def.column || name] = encode(def, value, ctx.traits);
  }
  const relationships = record.relationships ?? {};
  for (const [name, rel] of Object.entries(resource.relationships)) {
    if (rel.kind !== 'to-one') continue;
    const linkage = one(relationships[name]?.data);
    if (linkage === undefined) continue;
    row[rel.foreignKey] = linkage === null ? null : ctx.ids.map(tableOf(rel.type), linkage.id);
  }
  if (resource.tenancy.kind === 'site' && row[resource.tenancy.column] === undefined) {
    const site = ctx.siteId ?? ctx.soleSiteId;
    if (site === undefined) throw new Error(`import: a ${resource.type} record (${record.id}) names no site, and the key reaches several`);
    row[resource.tenancy.column] = site;
  }
  Object.assign(row, HIDDEN_COLUMNS[resource.table]?.(row, ctx));
  if (resource.type === 'hooks' && row.resource_id !== null && row.resource_id !== undefined) {
    const target = HOOK_EVENTS[String(row.event)]?.resource.table;
    if (target) row.resource_id = ctx.ids.map(target, row.resource_id as number);
  }
  row.created_at ??= ctx.fallbackTime;
  row.updated_at ??= row.created_at;
  if (resource.type === 'kajabi_payments_payouts') {
    // No creation time is shown: the payout's initiation stands in for it.
    row.created_at = row.initiated_at ?? row.created_at;
    row.updated_at = row.created_at;
  }
  const columns = ctx.columns.get(resource.table);
  if (columns) for (const column of Object.keys(row)) if (!columns.has(column)) delete row[column];
  push(out.rows, resource.table, row);
  addPlaceholders(resource, row, ctx, out);
  addJoinRows(resource, record, row, ctx, out);
  return row;
}

/** To-one targets the API has no list or include for (a post's blog): a row with what is known. */
function addPlaceholders(resource: ResourceDefinition, row: Record<string, unknown>, ctx: RowContext, out: PageRows): void {
  for (const rel of Object.values(resource.relationships)) {
    if (rel.kind !== 'to-one') continue;
    const target = resourceOf(rel.type);
    if (target.routes.list || row[rel.foreignKey] === null || row[rel.foreignKey] === undefined) continue;
    if (target.type !== 'blogs') continue;
    push(out.placeholders, target.table, {
      id: row[rel.foreignKey],
      site_id: row.site_id ?? ctx.siteId ?? ctx.soleSiteId,
      title: 'Blog',
      created_at: ctx.fallbackTime,
      updated_at: ctx.fallbackTime,
    });
  }
}

/** Join tables whose rows carry more than the two keys: those columns, from the parent's row. */
const JOIN_ROW_TIMES = ['created_at', 'updated_at', 'granted_at', 'started_at'];

function addJoinRows(resource: ResourceDefinition, record: UpstreamRecord, row: Record<string, unknown>, ctx: RowContext, out: PageRows): void {
  for (const [name, rel] of Object.entries(resource.relationships)) {
    if (rel.kind !== 'to-many-through' || !writesJoinTo(resource.type, rel.type)) continue;
    const data = record.relationships?.[name]?.data;
    if (!Array.isArray(data)) continue;
    const parent = rel.sourceColumn === 'id' ? row.id : row[rel.sourceColumn];
    // A customer without a contact has no grants to show; a course's product is not shown.
    if (parent === null || parent === undefined) continue;
    let join = out.joins.get(rel.through);
    if (!join) out.joins.set(rel.through, (join = { parentKey: rel.sourceKey, parents: [], rows: [] }));
    // Several records may share a parent (purchases of one offer list its products): once.
    if (join.parentKey !== rel.sourceKey || join.parents.includes(parent)) continue;
    join.parents.push(parent);
    const targetTable = tableOf(rel.type);
    for (const linkage of data) {
      const joinRow: Record<string, unknown> = { [rel.sourceKey]: parent, [rel.targetKey]: ctx.ids.map(targetTable, linkage.id) };
      if (rel.through === 'contact_taggings') joinRow.created_at = row.created_at;
      if (JOIN_TABLES_WITH_IDS.includes(rel.through)) {
        joinRow.site_id = row.site_id;
        const columns = ctx.columns.get(rel.through);
        for (const column of JOIN_ROW_TIMES) if (columns?.has(column)) joinRow[column] = row.created_at;
      }
      join.rows.push(joinRow);
    }
  }
}
