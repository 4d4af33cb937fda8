// What of each /v1 route the upstream API has (docs/upstream-strict.md): computed once per route
// from the declarations (resource.ts's `upstream` flags), kept in the route's config, and read
// per request by the classifier (upstream-check.ts). Nothing here names a resource.
import { filterNames } from './planner.js';
import type { Registry } from './registry.js';
import type { ActionDef, ResourceDefinition, UpstreamListParameter, UpstreamShowParameter } from './resource.js';
import type { WriteRules } from './write-document.js';

/**
 * The words of one route's query string: its parameters by name, and the values of `sort`,
 * `include` and `fields[...]` (undefined: the route takes no such parameter).
 */
export interface QueryVocabulary {
  parameters: ReadonlySet<string>;
  sorts: ReadonlySet<string> | undefined;
  includes: ReadonlySet<string> | undefined;
  /** `fields[<name>]` → the attributes it may list. */
  fields: ReadonlyMap<string, ReadonlySet<string>> | undefined;
}

/** The attributes and relationships of one route's request document. */
export interface BodyVocabulary {
  attributes: ReadonlySet<string>;
  relationships: ReadonlySet<string>;
}

/**
 * A route's place in the upstream API, as `config.upstream` of the route:
 * - `upstream`: an upstream operation; what the upstream takes of its query and body, and what
 *   sitebiz takes (`served`), which tells a sitebiz extension from a word neither knows;
 * - `extension`: a route the upstream lacks (refused in UPSTREAM_STRICT mode);
 * - `exempt`: a sitebiz extension that stays available in UPSTREAM_STRICT mode (the sandbox's test
 *   helpers) and is journaled as not upstream.
 * A /v1 route without one (the 405 answers, a route nobody classified) counts as not upstream.
 */
export type RouteUpstream = UpstreamOperation | { kind: 'extension' } | { kind: 'exempt'; reason: string };

export interface UpstreamOperation {
  kind: 'upstream';
  /** Undefined: the query string is not checked (the OAuth routes: form bodies). */
  query?: { upstream: QueryVocabulary; served: QueryVocabulary };
  body?: { upstream: BodyVocabulary; served: BodyVocabulary };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's place in the upstream API; set on every /v1 route. */
    upstream?: RouteUpstream;
  }
}

const EMPTY: ReadonlySet<string> = new Set();
const NO_PARAMETERS: QueryVocabulary = { parameters: EMPTY, sorts: undefined, includes: undefined, fields: undefined };

/** An upstream operation that takes no query parameters (upstream or sitebiz): me, version, writes. */
export const UPSTREAM_WITHOUT_QUERY: UpstreamOperation = { kind: 'upstream', query: { upstream: NO_PARAMETERS, served: NO_PARAMETERS } };
/** An upstream operation whose query string is not checked (the OAuth routes). */
export const UPSTREAM_UNCHECKED: RouteUpstream = { kind: 'upstream' };
export const EXTENSION_ROUTE: RouteUpstream = { kind: 'extension' };

const DEFAULT_LIST: readonly UpstreamListParameter[] = ['sort', 'page[number]', 'page[size]', 'fields'];
const DEFAULT_SHOW: readonly UpstreamShowParameter[] = ['fields', 'include'];
const MAX_INCLUDE_DEPTH = 3;

/** Whether the upstream has the resource's own routes. */
const isUpstream = (r: ResourceDefinition) => r.upstream !== false;

/** The attributes of a resource, or those the upstream has. */
function attributeNames(r: ResourceDefinition, upstreamOnly: boolean): Set<string> {
  return new Set(Object.entries(r.attributes).filter(([, a]) => !upstreamOnly || a.upstream.attribute).map(([n]) => n));
}

/**
 * Include paths from `r` (dotted, up to the engine's depth), with each one's target type; only
 * through upstream relationships when `upstreamOnly`.
 */
function includePaths(registry: Registry, r: ResourceDefinition, upstreamOnly: boolean, prefix = '', depth = 1, out = new Map<string, ResourceDefinition>()) {
  if (depth > MAX_INCLUDE_DEPTH) return out;
  for (const [name, rel] of Object.entries(r.relationships)) {
    if (upstreamOnly && !rel.upstream) continue;
    const target = registry.get(rel.type);
    const path = `${prefix}${name}`;
    out.set(path, target);
    includePaths(registry, target, upstreamOnly, `${path}.`, depth + 1, out);
  }
  return out;
}

/**
 * `fields[<name>]` of a read: the primary type, and with includes each included type under its
 * type, its singular and its relationship name (as the planner reads them).
 */
function fieldsOf(r: ResourceDefinition, includes: Map<string, ResourceDefinition> | undefined, upstreamOnly: boolean): Map<string, ReadonlySet<string>> {
  const fields = new Map<string, ReadonlySet<string>>();
  for (const [path, target] of includes ?? []) {
    const names = attributeNames(target, upstreamOnly);
    const relationship = path.slice(path.lastIndexOf('.') + 1);
    for (const alias of [relationship, target.type.replace(/s$/, ''), target.type]) fields.set(alias, names);
  }
  fields.set(r.type, attributeNames(r, upstreamOnly));
  return fields;
}

function sortNames(registry: Registry, r: ResourceDefinition, upstreamOnly: boolean): Set<string> {
  if (!upstreamOnly) return new Set(['id', ...registry.sortableNames(r)]);
  const declared = r.upstream === false ? [] : (r.upstream.sorts ?? []);
  return new Set([...Object.entries(r.attributes).filter(([, a]) => a.upstream.sort).map(([n]) => n), ...declared]);
}

/** The upstream's filters of a list: named filters, predicates and filter[site_id] it has. */
function upstreamFilters(r: ResourceDefinition): string[] {
  const names = r.tenancy.kind === 'site' && r.tenancy.siteFilter !== 'optional' ? ['site_id'] : [];
  for (const [name, f] of Object.entries(r.filters)) if (f.upstream) names.push(name);
  for (const [name, a] of Object.entries(r.attributes)) for (const suffix of a.upstream.predicates) names.push(`${name}_${suffix}`);
  return names;
}

const filterParameters = (names: readonly string[]) => names.map((n) => `filter[${n}]`);

/** `GET /v1/<type>`. */
export function listUpstream(registry: Registry, r: ResourceDefinition): RouteUpstream {
  if (!isUpstream(r)) return EXTENSION_ROUTE;
  const taken = (r.upstream !== false && r.upstream.list) || DEFAULT_LIST;
  const upstream: QueryVocabulary = {
    parameters: new Set([...taken.filter((p) => p.startsWith('page[')), ...filterParameters(upstreamFilters(r))]),
    sorts: taken.includes('sort') ? sortNames(registry, r, true) : undefined,
    includes: undefined,
    fields: taken.includes('fields') ? fieldsOf(r, undefined, true) : undefined,
  };
  return { kind: 'upstream', query: { upstream, served: servedList(registry, r) } };
}

function servedList(registry: Registry, r: ResourceDefinition): QueryVocabulary {
  const includes = includePaths(registry, r, false);
  return {
    parameters: new Set(['page[number]', 'page[size]', 'page[after]', 'page[before]', ...filterParameters(filterNames(r))]),
    sorts: sortNames(registry, r, false),
    includes: new Set(includes.keys()),
    fields: fieldsOf(r, includes, false),
  };
}

/** `filter[<relationship>_search|_page|_per]` of a show (includeNarrowing). */
function narrowingParameters(r: ResourceDefinition, upstreamOnly: boolean): string[] {
  return Object.entries(r.includeNarrowing)
    .filter(([name]) => !upstreamOnly || r.relationships[name]?.upstream === true)
    .flatMap(([name, n]) => [...(n.search ? [`filter[${name}_search]`] : []), `filter[${name}_page]`, `filter[${name}_per]`]);
}

/** `GET /v1/<type>/<id>`. */
export function showUpstream(registry: Registry, r: ResourceDefinition): RouteUpstream {
  if (!isUpstream(r)) return EXTENSION_ROUTE;
  const taken = (r.upstream !== false && r.upstream.show) || DEFAULT_SHOW;
  const includes = taken.includes('include') ? includePaths(registry, r, true) : undefined;
  const upstream: QueryVocabulary = {
    parameters: new Set([...(taken.includes('filter[site_id]') ? ['filter[site_id]'] : []), ...(includes ? narrowingParameters(r, true) : [])]),
    sorts: undefined,
    includes: includes && new Set(includes.keys()),
    fields: taken.includes('fields') ? fieldsOf(r, includes, true) : undefined,
  };
  return { kind: 'upstream', query: { upstream, served: servedShow(registry, r) } };
}

function servedShow(registry: Registry, r: ResourceDefinition): QueryVocabulary {
  const includes = includePaths(registry, r, false);
  return {
    parameters: new Set([...(r.tenancy.kind === 'site' ? ['filter[site_id]'] : []), ...narrowingParameters(r, false)]),
    sorts: undefined,
    includes: new Set(includes.keys()),
    fields: fieldsOf(r, includes, false),
  };
}

/** A record the upstream shows without query parameters where sitebiz takes a show's (GET /v1/me). */
export function showWithoutQueryUpstream(registry: Registry, r: ResourceDefinition): RouteUpstream {
  return { kind: 'upstream', query: { upstream: NO_PARAMETERS, served: servedShow(registry, r) } };
}

/** `GET /v1/<type>/<id>/relationships/<name>` and its writes. */
export function relationshipUpstream(r: ResourceDefinition, name: string): RouteUpstream {
  return isUpstream(r) && r.relationships[name]?.upstream ? UPSTREAM_WITHOUT_QUERY : EXTENSION_ROUTE;
}

/** A write (create, update) or an action whose body is a document of `r` checked with `rules`. */
function bodyUpstream(r: ResourceDefinition, rules: WriteRules): RouteUpstream {
  const vocabulary = (upstreamOnly: boolean): BodyVocabulary => ({
    attributes: new Set([
      ...rules.writable.filter((n) => !upstreamOnly || r.attributes[n]?.upstream.attribute !== false),
      ...Object.keys(rules.extraAttributes ?? {}),
    ]),
    relationships: new Set(Object.keys(rules.relationships ?? {}).filter((n) => !upstreamOnly || r.relationships[n]?.upstream === true)),
  });
  return { ...UPSTREAM_WITHOUT_QUERY, body: { upstream: vocabulary(true), served: vocabulary(false) } };
}

/** `POST /v1/<type>` and `PATCH /v1/<type>/<id>`. */
export function writeUpstream(r: ResourceDefinition, rules: WriteRules): RouteUpstream {
  return isUpstream(r) ? bodyUpstream(r, rules) : EXTENSION_ROUTE;
}

/** `DELETE /v1/<type>/<id>`. */
export function deleteUpstream(r: ResourceDefinition): RouteUpstream {
  return isUpstream(r) ? UPSTREAM_WITHOUT_QUERY : EXTENSION_ROUTE;
}

/** `POST /v1/<type>/<id>/<action>`. */
export function actionUpstream(registry: Registry, r: ResourceDefinition, action: ActionDef): RouteUpstream {
  if (!isUpstream(r) || action.upstream === false) return EXTENSION_ROUTE;
  return action.body ? bodyUpstream(registry.get(action.body.type), action.body.rules) : UPSTREAM_WITHOUT_QUERY;
}
