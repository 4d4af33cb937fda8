// Stage 2: a ParsedQuery is resolved against the registry into a plan. Every name is checked
// here (sort keys, fields, include paths, filters, page numbers) so that execution only ever sees
// allow-listed identifiers and coerced values. Nothing here touches the database.
import { sql, type SqlBool } from 'kysely';
import type { Principal } from '../auth/principal.js';
import type { DialectTraits } from '../db/dialect-traits.js';
import type { CursorCodec, CursorPosition } from './cursors.js';
import { forbidden, invalidParameter, notFound } from './errors.js';
import { parseBoolean, parsePredicateValue, parseTimestamp, predicateCondition, SUFFIXES_LONGEST_FIRST } from './predicates.js';
import { splitList, type ParsedQuery } from './query-parser.js';
import { parseSortValue, type Registry } from './registry.js';
import { queryContext } from './resource.js';
import type {
  AnyEB,
  AttributeDef,
  Condition,
  FilterValueKind,
  NamedFilterDef,
  ProbeScope,
  QueryContext,
  RelationshipDef,
  ResourceDefinition,
} from './resource.js';

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;
const MAX_INCLUDE_DEPTH = 3;

export type ConditionBuilder = (eb: AnyEB) => Condition;

export interface IncludeNode {
  /** Dotted path from the primary resource, e.g. `lessons.media`. */
  path: string;
  name: string;
  relationship: RelationshipDef;
  target: ResourceDefinition;
  children: IncludeNode[];
  /** Show only: a search and a page applied to this edge's records. */
  narrowing?: { conditions: ConditionBuilder[]; limit?: number; offset?: number };
}

export interface PlanOptions {
  registry: Registry;
  traits: DialectTraits;
  /** The request's "now", read on demand (see RequestTime). */
  readonly now: Date;
  principal: Principal;
  ignoreUnknownFilters: boolean;
  /** Related-records lists: only these ids of the resource (already within the tenancy). */
  onlyIds?: readonly number[];
  /** Related-records lists: only records meeting this condition (their key names the parent). */
  within?: ConditionBuilder;
  /** Reads and checks `page[after]` and `page[before]`. */
  cursors: CursorCodec;
}

/** A filter's question to the database (NamedFilterDef.probe), with what identifies its answer. */
export interface PlannedProbe {
  /** The filter and value: with the sites and their data version, the answer's cache key. */
  key: string;
  ask(scope: ProbeScope): Promise<unknown>;
  /** Hands the answer to the filter's condition. */
  answer(value: unknown): void;
}

export interface PagePlan {
  /** 1 for cursor pages. */
  number: number;
  size: number;
  /**
   * Cursor paging (`page[after]` / `page[before]`): the records after (or before) a position;
   * `from: null` is the start (after) or the end (before) of the list.
   */
  cursor?: { direction: 'after' | 'before'; from: CursorPosition | null };
}

/** What both list and show need: sparse fields, includes and the tenant scope. */
export interface ReadPlan {
  resource: ResourceDefinition;
  /** Attribute names to render per type; a type absent from the map renders every attribute. */
  fields: Map<string, ReadonlySet<string>>;
  includes: IncludeNode[];
  /** Site ids the request may see, applied to the primary data and to every include. */
  siteIds: readonly number[];
  accountId: number;
  /** The reader's user and role (a tenancy's visibleTo narrows by them). */
  userId: number;
  role: string;
  /** The key's permissions: with the sites, which records exist for the request (recordPermissions). */
  permissions: ReadonlySet<string>;
  /** Render only what the upstream API has (UPSTREAM_STRICT; Principal.upstreamOnly). */
  upstreamOnly: boolean;
  ctx: QueryContext;
  registry: Registry;
}

export interface ListPlan extends ReadPlan {
  conditions: ConditionBuilder[];
  /** Ids named in filter values that must exist within the request's sites (else 404). */
  references: Array<{ parameter: string; table: string; ids: number[] }>;
  /** Filters' questions to the database, asked before the conditions are built (NamedFilterDef.probe). */
  probes: PlannedProbe[];
  sort: { name: string; descending: boolean };
  page: PagePlan;
}

export function planShow(resource: ResourceDefinition, query: ParsedQuery, options: PlanOptions): ReadPlan {
  for (const key of ['page[number]', 'page[size]', 'page[after]', 'page[before]', 'sort'] as const) {
    if (query.pairs.some(([k]) => k === key)) {
      throw invalidParameter(key, `${key} applies to lists only`);
    }
  }
  // filter[site_id] on a show (upstream requires it for payouts) narrows the lookup to that site.
  const siteIds = query.filters.has('site_id') && resource.tenancy.kind === 'site'
    ? siteScopeForList(resource, query, options.principal)
    : accessibleSites(options.principal);
  const plan = planRead(resource, query, options, siteIds);
  applyIncludeNarrowing(resource, query, plan);
  return plan;
}

/** `filter[<relationship>_search|_page|_per]` on a show narrow that relationship's included records. */
function applyIncludeNarrowing(resource: ResourceDefinition, query: ParsedQuery, plan: ReadPlan): void {
  const pending = new Map<string, { search?: string; page?: number; per?: number }>();
  for (const [name, raw] of query.filters) {
    if (name === 'site_id' && resource.tenancy.kind === 'site') continue; // applied by planShow
    const parameter = `filter[${name}]`;
    const match = /^(.+)_(search|page|per)$/.exec(name);
    const relationship = match?.[1];
    const role = match?.[2] as 'search' | 'page' | 'per' | undefined;
    const narrowing = relationship !== undefined ? resource.includeNarrowing[relationship] : undefined;
    if (!match || relationship === undefined || role === undefined || !narrowing || (role === 'search' && !narrowing.search)) {
      const allowed = Object.entries(resource.includeNarrowing).flatMap(([rel, n]) => [
        ...(n.search ? [`filter[${rel}_search]`] : []),
        `filter[${rel}_page]`,
        `filter[${rel}_per]`,
      ]);
      throw invalidParameter(
        parameter,
        allowed.length > 0
          ? `${parameter} is not a parameter of a single ${resource.type} record; it takes ${allowed.join(', ')}`
          : `${parameter} applies to lists only`,
      );
    }
    const entry = pending.get(relationship) ?? {};
    if (role === 'search') {
      if (raw.trim() === '') throw invalidParameter(parameter, `${parameter} needs some text to look for`);
      entry.search = raw;
    } else {
      const max = role === 'per' ? MAX_PAGE_SIZE : 1_000_000;
      if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1 || Number(raw) > max) {
        throw invalidParameter(parameter, `${parameter} must be a whole number from 1 to ${max}, got ${JSON.stringify(raw)}`);
      }
      entry[role] = Number(raw);
    }
    pending.set(relationship, entry);
  }
  for (const [relationship, entry] of pending) {
    // Ignored when the relationship is not included, as upstream documents.
    const node = plan.includes.find((n) => n.name === relationship);
    if (!node) continue;
    const search = resource.includeNarrowing[relationship]?.search;
    const conditions: ConditionBuilder[] = [];
    if (entry.search !== undefined && search) {
      const text = entry.search;
      const ctx = queryContext(plan.ctx, node.target.table);
      conditions.push((eb) => search(eb, text, ctx));
    }
    const paged = entry.page !== undefined || entry.per !== undefined;
    const per = entry.per ?? DEFAULT_PAGE_SIZE;
    node.narrowing = paged ? { conditions, limit: per, offset: ((entry.page ?? 1) - 1) * per } : { conditions };
  }
}

export function planList(resource: ResourceDefinition, query: ParsedQuery, options: PlanOptions): ListPlan {
  const { principal, traits } = options;
  // A related-records list is scoped by its parent record, so it needs no filter[site_id].
  const siteIds = options.onlyIds || options.within ? principal.siteIds : siteScopeForList(resource, query, principal);
  const base = planRead(resource, query, options, siteIds);
  const ctx = base.ctx;
  const conditions: ConditionBuilder[] = [];
  const onlyIds = options.onlyIds;
  if (onlyIds) {
    conditions.push((eb) => (onlyIds.length === 0 ? sql<SqlBool>`1 = 0` : eb(`${resource.table}.id`, 'in', onlyIds)));
  }
  if (options.within) conditions.push(options.within);
  const references: ListPlan['references'] = [];
  const probes: ListPlan['probes'] = [];

  for (const [name, raw] of query.filters) {
    if (name === 'site_id' && resource.tenancy.kind === 'site') continue; // applied through siteIds
    const parameter = `filter[${name}]`;
    const named = resource.filters[name];
    if (named) {
      const value = coerceFilterValue(named, raw, parameter, options);
      const probe = named.probe;
      if (probe) {
        const answer: { value?: unknown } = {};
        probes.push({
          key: `${resource.type}\u0000${name}\u0000${JSON.stringify(value)}`,
          ask: (scope) => probe(value as never, scope),
          answer: (v) => {
            answer.value = v;
          },
        });
        conditions.push((eb) => named.where(eb, value as never, queryContext(ctx, ctx.table, answer.value)));
      } else {
        conditions.push((eb) => named.where(eb, value as never, ctx));
      }
      if (named.references !== undefined) {
        references.push({ parameter, table: named.references, ids: Array.isArray(value) ? (value as number[]) : [value as number] });
      }
      continue;
    }
    const predicate = resolvePredicate(resource, name);
    if (predicate) {
      const { attribute, suffix } = predicate;
      const value = parsePredicateValue(attribute.type, suffix, raw, parameter, traits);
      const computed = attribute.sql;
      const column = `${resource.table}.${attribute.column}`;
      conditions.push((eb) => predicateCondition(eb, computed ? computed(eb, ctx) : column, attribute.type, suffix, value, traits));
      continue;
    }
    if (options.ignoreUnknownFilters) continue;
    throw invalidParameter(parameter, `Unknown filter ${parameter}. Filters of ${resource.type}: ${filterNames(resource).join(', ')}`);
  }

  const sortValue = query.sort ?? resource.defaultSort;
  if (query.sort !== undefined) {
    if (sortValue.includes(',')) throw invalidParameter('sort', 'sort takes one field; prefix it with - for descending order');
  }
  const sort = parseSortValue(sortValue.trim());
  if (!options.registry.isSortable(resource, sort.name)) {
    throw invalidParameter(
      'sort',
      `Unknown sort field ${JSON.stringify(sort.name)} for ${resource.type}; use one of ${options.registry.sortableNames(resource).join(', ')} (prefix - for descending)`,
    );
  }

  const page = parsePage(query);
  if (query.page.after !== undefined || query.page.before !== undefined) {
    page.cursor = parseCursor(query, options.cursors, { type: resource.type, sort: sortValue.trim(), siteIds });
  }
  return { ...base, conditions, references, probes, sort, page };
}

function planRead(
  resource: ResourceDefinition,
  query: ParsedQuery,
  options: PlanOptions,
  siteIds: readonly number[],
): ReadPlan {
  requirePermission(options.principal, resource);
  const includes = parseIncludes(resource, query.include, options);
  const reachable = new Set<string>([resource.type]);
  // Included relationship names and their types; a name that leads to two types names neither.
  const typeOfRelationship = new Map<string, string | null>();
  const collect = (nodes: IncludeNode[]) => {
    for (const n of nodes) {
      reachable.add(n.target.type);
      const known = typeOfRelationship.get(n.name);
      typeOfRelationship.set(n.name, known === undefined || known === n.target.type ? n.target.type : null);
      collect(n.children);
    }
  };
  collect(includes);

  const fields = new Map<string, ReadonlySet<string>>();
  for (const [given, raw] of query.fields) {
    const parameter = `fields[${given}]`;
    // Upstream documents `fields[product]` beside `fields[products]` (a singular names its
    // plural), and `fields[fields]` with include=fields (an included relationship names its type).
    const type = reachable.has(given)
      ? given
      : reachable.has(`${given}s`)
        ? `${given}s`
        : (typeOfRelationship.get(given) ?? given);
    const target = options.registry.find(type);
    if (!target || !reachable.has(type)) {
      throw invalidParameter(
        parameter,
        `${parameter} names a type that is not in this response; types here: ${[...reachable].join(', ')}`,
      );
    }
    const names = splitList(raw);
    for (const n of names) {
      if (!(n in target.attributes)) {
        throw invalidParameter(parameter, `Unknown field ${JSON.stringify(n)} of ${type}; fields: ${Object.keys(target.attributes).join(', ')}`);
      }
    }
    if (fields.has(type)) throw invalidParameter(parameter, `${parameter} repeats fields[${type}]`);
    fields.set(type, new Set(names));
  }
  return {
    resource,
    fields,
    includes,
    siteIds,
    accountId: options.principal.accountId,
    userId: options.principal.userId,
    role: options.principal.role,
    permissions: options.principal.permissions,
    upstreamOnly: options.principal.upstreamOnly === true,
    registry: options.registry,
    ctx: queryContext(options, resource.table),
  };
}

function requirePermission(principal: Principal, resource: ResourceDefinition, parameter?: string): void {
  if (resource.readPermission === null || principal.permissions.has(resource.readPermission)) return;
  const via = parameter ? ` (asked for by ${parameter})` : '';
  throw forbidden(`Reading ${resource.type}${via} needs the ${resource.readPermission} permission, which this API key does not have`);
}

function accessibleSites(principal: Principal): readonly number[] {
  return principal.siteIds;
}

/** `filter[site_id]` narrows to one accessible site; without it, several sites are ambiguous. */
function siteScopeForList(resource: ResourceDefinition, query: ParsedQuery, principal: Principal): readonly number[] {
  if (resource.tenancy.kind !== 'site') return principal.siteIds;
  const raw = query.filters.get('site_id');
  if (raw === undefined) {
    if (resource.tenancy.siteFilter === 'required') {
      throw invalidParameter('filter[site_id]', `filter[site_id] is required when listing ${resource.type}`);
    }
    if (principal.siteIds.length > 1 && resource.tenancy.siteFilter !== 'optional') {
      throw invalidParameter(
        'filter[site_id]',
        `filter[site_id] is required: this user can access ${principal.siteIds.length} sites (${principal.siteIds.join(', ')}); name one`,
      );
    }
    return principal.siteIds;
  }
  const id = parseIdValue(raw);
  if (id === undefined || !principal.siteIds.includes(id)) {
    throw notFound(`Site ${JSON.stringify(raw)} not found`, { parameter: 'filter[site_id]' });
  }
  return [id];
}

export function parseIdValue(raw: string): number | undefined {
  const t = raw.trim();
  if (!/^\d{1,15}$/.test(t)) return undefined;
  return Number(t);
}

/** `page[after]` or `page[before]` (one of them, without `page[number]`); empty means an end of the list. */
function parseCursor(query: ParsedQuery, cursors: CursorCodec, scope: Parameters<CursorCodec['decode']>[2]): NonNullable<PagePlan['cursor']> {
  const { after, before, number } = query.page;
  if (after !== undefined && before !== undefined) {
    throw invalidParameter('page[before]', 'Give page[after] or page[before], not both');
  }
  const direction = after !== undefined ? 'after' : 'before';
  const parameter = `page[${direction}]`;
  if (number !== undefined) throw invalidParameter('page[number]', `page[number] and ${parameter} do not go together: a cursor page has no number`);
  const raw = (after ?? before ?? '').trim();
  return { direction, from: raw === '' ? null : cursors.decode(parameter, raw, scope) };
}

function parsePage(query: ParsedQuery): PagePlan {
  const read = (key: 'number' | 'size', fallback: number, max: number): number => {
    const raw = query.page[key];
    if (raw === undefined) return fallback;
    const parameter = `page[${key}]`;
    if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1 || Number(raw) > max) {
      throw invalidParameter(parameter, `${parameter} must be a whole number from 1 to ${max}, got ${JSON.stringify(raw)}`);
    }
    return Number(raw);
  };
  // A size above the maximum is served as the maximum, not refused: clients of the upstream API
  // ask for more (page[size]=500) and follow the links, which carry the size used (docs/paging.md).
  const size = Math.min(read('size', DEFAULT_PAGE_SIZE, Number.MAX_SAFE_INTEGER), MAX_PAGE_SIZE);
  return { number: read('number', 1, 1_000_000), size };
}

function parseIncludes(resource: ResourceDefinition, raw: string | undefined, options: PlanOptions): IncludeNode[] {
  if (raw === undefined) return [];
  const roots: IncludeNode[] = [];
  for (const path of splitList(raw)) {
    const segments = path.split('.');
    if (segments.length > MAX_INCLUDE_DEPTH) {
      throw invalidParameter('include', `Include path ${path} is deeper than ${MAX_INCLUDE_DEPTH} relationships`);
    }
    let owner = resource;
    let level = roots;
    let walked = '';
    for (const name of segments) {
      walked = walked ? `${walked}.${name}` : name;
      const relationship = owner.relationships[name];
      if (!relationship) {
        const known = Object.keys(owner.relationships);
        throw invalidParameter(
          'include',
          `Unknown include path ${JSON.stringify(path)}: ${owner.type} has no relationship ${JSON.stringify(name)}${known.length ? `; relationships: ${known.join(', ')}` : ''}`,
        );
      }
      const target = options.registry.get(relationship.type);
      requirePermission(options.principal, target, 'include');
      let node = level.find((n) => n.name === name);
      if (!node) {
        node = { path: walked, name, relationship, target, children: [] };
        level.push(node);
      }
      owner = target;
      level = node.children;
    }
  }
  return roots;
}

function resolvePredicate(
  resource: ResourceDefinition,
  name: string,
): { attribute: AttributeDef; suffix: (typeof SUFFIXES_LONGEST_FIRST)[number] } | undefined {
  for (const suffix of SUFFIXES_LONGEST_FIRST) {
    if (!name.endsWith(`_${suffix}`)) continue;
    const attribute = resource.attributes[name.slice(0, -(suffix.length + 1))];
    if (attribute && attribute.predicates.includes(suffix)) return { attribute, suffix };
  }
  return undefined;
}

export function filterNames(resource: ResourceDefinition): string[] {
  const names = resource.tenancy.kind === 'site' ? ['site_id'] : [];
  names.push(...Object.keys(resource.filters));
  for (const [attrName, a] of Object.entries(resource.attributes)) {
    for (const suffix of a.predicates) names.push(`${attrName}_${suffix}`);
  }
  return names;
}

function coerceFilterValue(filter: NamedFilterDef, raw: string, parameter: string, time: { readonly now: Date }): unknown {
  const kind: FilterValueKind = filter.kind;
  const trimmed = raw.trim();
  switch (kind) {
    case 'string':
      if (trimmed === '') throw invalidParameter(parameter, `${parameter} needs a value`);
      return raw;
    case 'strings': {
      const items = splitList(raw);
      if (items.length === 0 || items.length > 100) throw invalidParameter(parameter, `${parameter} takes 1 to 100 values`);
      return items;
    }
    case 'date': {
      const date = parseTimestamp(raw);
      if (!date) throw invalidParameter(parameter, `${parameter} must be an ISO 8601 date or date-time, got ${JSON.stringify(raw)}`);
      return { at: date, dateOnly: /^\d{4}-\d{2}-\d{2}$/.test(trimmed) };
    }
    case 'boolean':
      return parseBoolean(raw, parameter);
    case 'integer':
      if (!/^\d{1,15}$/.test(trimmed)) throw invalidParameter(parameter, `${parameter} must be a whole number, got ${JSON.stringify(raw)}`);
      return Number(trimmed);
    case 'id': {
      const id = parseIdValue(raw);
      if (id === undefined) throw invalidParameter(parameter, `${parameter} must be an id (digits), got ${JSON.stringify(raw)}`);
      return id;
    }
    case 'ids': {
      const items = splitList(raw);
      if (items.length === 0 || items.length > 500) throw invalidParameter(parameter, `${parameter} takes 1 to 500 comma-separated ids`);
      return items.map((item) => {
        const id = parseIdValue(item);
        if (id === undefined) throw invalidParameter(parameter, `${parameter} must list ids (digits), got ${JSON.stringify(item)}`);
        return id;
      });
    }
    case 'days': {
      if (!/^\d{1,6}$/.test(trimmed) || Number(trimmed) < 1) {
        throw invalidParameter(parameter, `${parameter} must be a number of days from 1 to 999999, got ${JSON.stringify(raw)}`);
      }
      const days = Number(trimmed);
      return { days, since: new Date(time.now.getTime() - days * 86_400_000) };
    }
    case 'decimal':
      if (!/^-?\d{1,12}(\.\d{1,2})?$/.test(trimmed)) {
        throw invalidParameter(parameter, `${parameter} must be an amount such as 25 or 25.50, got ${JSON.stringify(raw)}`);
      }
      return trimmed;
  }
}

