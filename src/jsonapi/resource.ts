// The declaration language of resources. A resource file is a list of these declarations; the
// engine (planner, executor, renderer, routes, OpenAPI) reads them and never names a resource.
import { sql, type AliasableExpression, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import type { Principal } from '../auth/principal.js';
import type { DatabaseHandle } from '../db/connect.js';
import { escapeLike, type DialectTraits } from '../db/dialect-traits.js';
import { probeTrigramCandidates, TRIGRAM_CANDIDATE_CAP, trigramCandidates, trigramCommon, type TrigramIndex, type TrigramProbe } from '../db/text-search.js';
import type { ResourceObject } from './document.js';
import type { Nouns } from './nouns.js';
import { PREDICATES_BY_TYPE, type PredicateSuffix } from './predicates.js';
import type { ResourceWrite, WriteRules } from './write-document.js';

/** The engine queries tables chosen at run time, so it works on untyped builders. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyEB = ExpressionBuilder<any, any>;
export type Condition = Expression<SqlBool>;

export type AttributeType = 'string' | 'integer' | 'number' | 'boolean' | 'datetime' | 'json' | 'id';

export interface AttributeDef {
  type: AttributeType;
  /** Column holding the value; defaults to the attribute name. */
  column: string;
  sortable: boolean;
  /** Suffixes accepted as `filter[<attribute>_<suffix>]`. */
  predicates: readonly PredicateSuffix[];
  nullable: boolean;
  description: string | undefined;
  /** Values the attribute can take, for documentation. */
  enumValues: readonly string[] | undefined;
  /** A value derived from other columns instead of read from `column`. */
  compute:
    | {
        columns: readonly string[];
        value: (row: Record<string, unknown>) => unknown;
        /**
         * The columns an API value comes from, where they are not other attributes: what
         * `sitebiz import` writes back (src/import/). Absent: the value is derived from
         * attributes the record also has (a formatted amount), or cannot be stored.
         */
        store?: (value: unknown) => Record<string, unknown>;
      }
    | undefined;
  /** A value computed by SQL (such as a count over another table); sortable and filterable. */
  sql: ((eb: AnyEB, ctx: QueryContext) => AliasableExpression<unknown>) | undefined;
  /** Writes may also give the whole number as a string of digits (it names a record, and JSON:API ids are strings). */
  acceptsDigitString: boolean;
  /** What the upstream API has of this attribute (docs/upstream-strict.md): the rest is a sitebiz extension. */
  upstream: UpstreamAttribute;
}

/** The upstream's share of an attribute: whether its records show it, and which sorts and filters of it it takes. */
export interface UpstreamAttribute {
  attribute: boolean;
  sort: boolean;
  predicates: readonly PredicateSuffix[];
}

interface AttributeOptions {
  column?: string;
  /** Allow `sort=<name>` and `sort=-<name>`. */
  sort?: boolean;
  /** `true` for every predicate suffix the type supports, or a list of them. */
  filter?: boolean | readonly PredicateSuffix[];
  nullable?: boolean;
  description?: string;
  enum?: readonly string[];
  /** Compute the value in SQL instead of reading a column. */
  sql?: (eb: AnyEB, ctx: QueryContext) => AliasableExpression<unknown>;
  /** Integer attributes naming a record: accept `"123"` as well as `123` in request bodies. */
  acceptsDigitString?: boolean;
  /**
   * What the upstream API has of it. Left out: the attribute, but none of its sorts and filters;
   * `{ sort: true, filter: ['cont'] }`: also `sort=<name>` and `filter[<name>_cont]`; `false`: not
   * even the attribute (a sitebiz extension, left out of answers in UPSTREAM_STRICT mode).
   */
  upstream?: false | { sort?: boolean; filter?: readonly PredicateSuffix[] };
}

function attribute(type: AttributeType, options: AttributeOptions = {}): AttributeDef {
  const all = PREDICATES_BY_TYPE[type];
  let predicates: readonly PredicateSuffix[] = [];
  if (options.filter === true) predicates = all;
  else if (Array.isArray(options.filter)) predicates = options.filter;
  for (const p of predicates) {
    if (!all.includes(p)) throw new Error(`predicate _${p} does not apply to ${type} attributes`);
  }
  const upstream = options.upstream;
  for (const p of (upstream && upstream.filter) || []) {
    if (!predicates.includes(p)) throw new Error(`upstream predicate _${p} is not one the attribute takes`);
  }
  if (upstream && upstream.sort && !options.sort) throw new Error('an upstream sort needs sort: true');
  return {
    type,
    column: options.column ?? '',
    sortable: options.sort ?? false,
    predicates,
    nullable: options.nullable ?? false,
    description: options.description,
    enumValues: options.enum,
    compute: undefined,
    sql: options.sql,
    acceptsDigitString: options.acceptsDigitString ?? false,
    upstream: { attribute: upstream !== false, sort: (upstream && upstream.sort) === true, predicates: (upstream && upstream.filter) || [] },
  };
}

export const attr = {
  string: (o?: AttributeOptions) => attribute('string', o),
  integer: (o?: AttributeOptions) => attribute('integer', o),
  number: (o?: AttributeOptions) => attribute('number', o),
  boolean: (o?: AttributeOptions) => attribute('boolean', o),
  datetime: (o?: AttributeOptions) => attribute('datetime', o),
  json: (o?: AttributeOptions) => attribute('json', o),
  /** A reference to another record's id, rendered as a string. */
  id: (o?: AttributeOptions) => attribute('id', o),
  /** A read-only value computed from columns of the row. */
  computed: (
    type: AttributeType,
    columns: readonly string[],
    value: (row: Record<string, unknown>) => unknown,
    o: { description?: string; nullable?: boolean; upstream?: false; store?: (value: unknown) => Record<string, unknown> } = {},
  ): AttributeDef => ({
    ...attribute(type, o),
    column: '',
    compute: { columns, value, ...(o.store ? { store: o.store } : {}) },
    sql: undefined,
  }),
};

interface RelationshipBase {
  /** Resource type of the related records. */
  type: string;
  /**
   * Give the relationship object `links.self` and `links.related`, served at
   * `GET /v1/<type>/<id>/relationships/<name>` (linkage) and `GET /v1/<type>/<id>/<name>`
   * (the related records, as a list).
   */
  links: boolean;
  /** To-one and has-one: also put the related record's URL in the resource object's `links.<name>`. */
  resourceLink: boolean;
  /** Only related records (or join rows) meeting this condition count, e.g. active grants. */
  where: ((eb: AnyEB, ctx: QueryContext) => Condition) | undefined;
  /** POST, PATCH and DELETE on `/v1/<type>/<id>/relationships/<name>` (to-many only). */
  write: RelationshipWriteDef | undefined;
  /**
   * Whether the upstream API has it: in its records, as an include path, and (with `links`) its
   * relationship routes. False: a sitebiz extension (docs/upstream-strict.md).
   */
  upstream: boolean;
}

export type RelationshipDef =
  | (RelationshipBase & {
      kind: 'to-one';
      /** Column on this resource's table holding the target's id. */
      foreignKey: string;
    })
  | (RelationshipBase & {
      /** The target holds this resource's id (a contact's customer). */
      kind: 'has-one';
      /** Column on the target's table holding this resource's id. */
      foreignKey: string;
    })
  | (RelationshipBase & {
      kind: 'to-many';
      /** Column on the target's table holding this resource's id. */
      foreignKey: string;
      /** Render `data` linkage even when not included (costs one batched query per page). */
      linkage: boolean;
    })
  | (RelationshipBase & {
      kind: 'to-many-through';
      /** Join table, with the column pointing at this resource and the one pointing at the target. */
      through: string;
      sourceKey: string;
      targetKey: string;
      /** Column of this resource matched against `sourceKey`; usually `id`. */
      sourceColumn: string;
      linkage: boolean;
    });

interface RelationshipOptions {
  /** Add `links.self` and `links.related` to the relationship object and serve both endpoints. */
  links?: boolean;
  /** To-many only: whether `data` linkage is rendered when the relationship is not included. */
  linkage?: boolean;
  /** To-one and has-one: add the related record's URL to the resource object's links. */
  resourceLink?: boolean;
  /** A condition on the related records or the join table (qualify its columns). */
  where?: (eb: AnyEB, ctx: QueryContext) => Condition;
  /** Writes of the relationship endpoint (to-many only). */
  write?: RelationshipWriteDef;
  /** false: the upstream API lacks this relationship (a sitebiz extension). */
  upstream?: false;
}

const base = (type: string, o: RelationshipOptions): RelationshipBase => ({
  type,
  links: o.links ?? false,
  resourceLink: o.resourceLink ?? false,
  where: o.where,
  write: o.write,
  upstream: o.upstream !== false,
});

export const rel = {
  toOne: (type: string, foreignKey: string, o: RelationshipOptions = {}): RelationshipDef => ({
    ...base(type, o),
    kind: 'to-one',
    foreignKey,
  }),
  hasOne: (type: string, foreignKey: string, o: RelationshipOptions = {}): RelationshipDef => ({
    ...base(type, o),
    kind: 'has-one',
    foreignKey,
  }),
  toMany: (type: string, foreignKey: string, o: RelationshipOptions = {}): RelationshipDef => ({
    ...base(type, o),
    kind: 'to-many',
    foreignKey,
    linkage: o.linkage ?? true,
  }),
  toManyThrough: (
    type: string,
    through: { table: string; sourceKey: string; targetKey: string; sourceColumn?: string },
    o: RelationshipOptions = {},
  ): RelationshipDef => ({
    ...base(type, o),
    kind: 'to-many-through',
    through: through.table,
    sourceKey: through.sourceKey,
    targetKey: through.targetKey,
    sourceColumn: through.sourceColumn ?? 'id',
    linkage: o.linkage ?? true,
  }),
};

/** What filter and scope builders may use besides the expression builder. */
export interface QueryContext {
  traits: DialectTraits;
  /** The request's "now" (its account's clock); reading it makes the answer time-dependent (RequestTime). */
  readonly now: Date;
  /** The table of the resource being queried, for qualified column names. */
  table: string;
  /** A named filter's `where`: what its `probe` answered for this request. */
  probe?: unknown;
}

/**
 * "Now" of one request, read on demand. Whether anything read it says whether the answer depends
 * on the time as well as on the data: such an answer is never cached (engine.ts, AnswerCache),
 * since the same request a moment later may mean other records (filter[published], "days ago").
 */
export class RequestTime {
  private wasRead = false;
  constructor(private readonly at: Date) {}

  get now(): Date {
    this.wasRead = true;
    return this.at;
  }

  get read(): boolean {
    return this.wasRead;
  }
}

/**
 * The query context of a request for `table` (and a probe's answer): `now` stays a getter, read
 * only by the builders that use it, so that RequestTime knows. Spreading a context (`{...ctx}`)
 * would read it, hence this.
 */
export function queryContext(base: { traits: DialectTraits; readonly now: Date }, table: string, probe?: unknown): QueryContext {
  return {
    traits: base.traits,
    table,
    ...(probe !== undefined ? { probe } : {}),
    get now() {
      return base.now;
    },
  };
}

/** What a filter's probe may look at: the database and the request's sites. */
export interface ProbeScope {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  db: Kysely<any>;
  traits: DialectTraits;
  siteIds: readonly number[];
}

export interface DateValue {
  at: Date;
  dateOnly: boolean;
}

/**
 * The exclusive upper bound of an inclusive "on or before" date filter: a date alone includes
 * its whole UTC day; a date-time includes exactly that moment.
 */
export function exclusiveEnd(value: DateValue): Date {
  return new Date(value.at.getTime() + (value.dateOnly ? 86_400_000 : 1));
}

/** What each kind of named filter hands its `where` after checking the raw text. */
interface FilterValues {
  string: string;
  /** A comma list, or a repeated `filter[name][]`. */
  strings: string[];
  integer: number;
  id: number;
  ids: number[];
  boolean: boolean;
  /** A number of days, and the moment that many days before now. */
  days: { days: number; since: Date };
  /** A money amount such as 25 or 25.50, as a string. */
  decimal: string;
  /** An ISO 8601 date or date-time, and whether it was a date alone (a whole UTC day). */
  date: DateValue;
}

export type FilterValueKind = keyof FilterValues;
export type FilterValue<K extends FilterValueKind> = FilterValues[K];

export interface NamedFilterDef {
  kind: FilterValueKind;
  description: string;
  where: (eb: AnyEB, value: never, ctx: QueryContext) => Condition;
  /**
   * For id and ids filters: the site-owned table the ids name. An id that does not exist there
   * within the request's sites answers 404 (naming the parameter), so records of other accounts
   * are indistinguishable from missing ones.
   */
  references: string | undefined;
  /**
   * Asks the database something before the query is built (how many rows an index proposes for
   * this value, say), so that `where` can choose between query plans; the answer reaches `where` as
   * `ctx.probe`. Runs once per request, after the value is checked.
   */
  probe: ((value: never, scope: ProbeScope) => Promise<unknown>) | undefined;
  /** Whether the upstream's list takes it; false: a sitebiz extension (docs/upstream-strict.md). */
  upstream: boolean;
}

/** A named filter, `filter[<name>]=<value>`; the value is checked and coerced before `where` runs. */
export function namedFilter<K extends FilterValueKind>(
  kind: K,
  description: string,
  where: (eb: AnyEB, value: FilterValue<K>, ctx: QueryContext) => Condition,
  options: {
    references?: K extends 'id' | 'ids' ? string : never;
    probe?: (value: FilterValue<K>, scope: ProbeScope) => Promise<unknown>;
    /** false: the upstream API has no such filter (a sitebiz extension). */
    upstream?: false;
  } = {},
): NamedFilterDef {
  return {
    kind,
    description,
    where: where as NamedFilterDef['where'],
    references: options.references,
    probe: options.probe as NamedFilterDef['probe'],
    upstream: options.upstream !== false,
  };
}

/**
 * `column` contains `text`, ignoring ASCII case, with LIKE wildcards in `text` matched literally:
 * the building block of every "contains" filter and search. On its own it reads every row the
 * rest of the query leaves; for columns of large tables, see `trigramNarrowed`.
 */
export function containsText(eb: AnyEB, ctx: QueryContext, column: string, text: string): Condition {
  return ctx.traits.likeInsensitive(eb, eb.ref(column), `%${escapeLike(text)}%`);
}

/** Which trigram index serves a contains condition, and over what (see `trigramNarrowed`). */
export interface TrigramUse {
  /** The index over the searched columns (src/db/text-search.ts). */
  index: TrigramIndex;
  /** The expression holding the indexed table's id in this query: `contacts.id`, `customers.contact_id`. */
  rowId: string;
  /** The searched columns of the indexed table, unqualified: a text may be in any of them. */
  columns: readonly string[];
  /** Every text must be found. */
  texts: readonly string[];
}

/**
 * `exact` (made of containsText conditions over `use.columns` and `use.texts`), served by the
 * trigram index: the index proposes the candidate rows and `exact` decides, so the records are
 * exactly those of `exact` alone, and a text too short for the index falls back to `exact`.
 * `probe` is what `probeTrigram` answered (the filter's probe): when the index proposes more rows
 * than are worth reading and sorting, the list is read in its own order and `exact` checks each
 * row instead; below that, the candidates lead (PostgreSQL is handed their ids, since its planner
 * would otherwise read the list in order looking for matches that are not there).
 */
export function trigramNarrowed(eb: AnyEB, ctx: QueryContext, use: TrigramUse, exact: Condition, probe?: unknown): Condition {
  const answer = probe as TrigramProbe | undefined;
  if (answer && answer.candidates >= TRIGRAM_CANDIDATE_CAP) return trigramCommon(ctx.traits.name, exact);
  if (answer?.ids) return eb.and([sql<SqlBool>`${eb.ref(use.rowId)} = any(${answer.ids})`, exact]);
  const narrowing = trigramCandidates(eb, ctx.traits.name, use.index, use.rowId, use.columns, use.texts);
  return narrowing ? eb.and([narrowing, exact]) : exact;
}

/** A named filter's probe for `trigramNarrowed`: what the index proposes in the request's sites. */
export function probeTrigram(use: Omit<TrigramUse, 'rowId'>, scope: ProbeScope): Promise<TrigramProbe | undefined> {
  return probeTrigramCandidates(scope.db, scope.traits.name, use.index, use.columns, use.texts, scope.siteIds);
}

/** How records of a resource belong to a tenant. */
export type TenancyDef =
  /**
   * Records carry a site id column; lists honour `filter[site_id]`. By default it is required
   * when the reader reaches several sites. `siteFilter: 'required'`: always required.
   * `siteFilter: 'optional'`: the upstream's list takes no filter[site_id], so without one the
   * list spans every site the reader reaches (each record names its site), read per site and
   * merged (executor.ts) so a page costs what one site's page costs.
   */
  | { kind: 'site'; column: string; siteFilter?: 'required' | 'optional' }
  /**
   * Records carry an account id column (sites themselves, users). `visibleTo` narrows them per
   * reader when the records are about sites of the account without belonging to one (the
   * sandbox's request journal and faults): a condition, or undefined for every record.
   */
  | { kind: 'account'; column: string; siteColumn?: string; visibleTo?: (eb: AnyEB, viewer: TenantViewer) => Condition | undefined };

/** Who reads, as a tenancy's `visibleTo` sees it. */
export interface TenantViewer {
  accountId: number;
  userId: number;
  role: string;
  /** The sites the reader reaches, ascending. */
  siteIds: readonly number[];
}

export interface ResourceDefinition {
  type: string;
  table: string;
  description: string;
  /** What the reference calls one record and several, when the type does not say it (nouns.ts). */
  nouns?: Nouns;
  /** Permission needed to read (list, show, include); null: any valid token may read. */
  readPermission: string | null;
  tenancy: TenancyDef;
  /** `sort` value used when the request has none, such as `-created_at`. */
  defaultSort: string;
  attributes: Record<string, AttributeDef>;
  relationships: Record<string, RelationshipDef>;
  filters: Record<string, NamedFilterDef>;
  /** Extra sort keys that are not attributes: name → SQL expression. */
  sorts: Record<string, (eb: AnyEB, ctx: QueryContext) => Expression<unknown>>;
  /**
   * Show-only parameters that narrow an included to-many relationship, by relationship name:
   * `filter[<name>_search]` (with `search`), `filter[<name>_page]` and `filter[<name>_per]`. They
   * are ignored when the relationship is not included, as upstream documents.
   */
  includeNarrowing: Record<string, { search?: (eb: AnyEB, text: string, ctx: QueryContext) => Condition }>;
  /** Which generic routes the engine mounts for this resource. */
  routes: { list: boolean; show: boolean };
  /**
   * Path segments between `/v1/` and the type, for a resource an extension serves under its own
   * prefix (`test_helpers`: the sandbox's). Its routes are mounted by whoever mounts that prefix
   * (resourceRoutes(engine, pathPrefix)), and its links say `/v1/<pathPrefix>/<type>/<id>`.
   */
  pathPrefix?: string;
  /** The reference's tag for its operations, when it joins a tag described elsewhere (default: from the nouns). */
  tag?: string;
  /** Mounts POST, PATCH and DELETE when present (see WriteDef). */
  write: WriteDef | undefined;
  /** Mounts `POST /v1/<type>/<id>/<name>` for each (see ActionDef). */
  actions: Record<string, ActionDef>;
  /**
   * What of this resource's routes and query parameters the upstream API has (docs/upstream-strict.md;
   * attributes, relationships and filters say it of themselves); `false`: none, the whole
   * resource is a sitebiz extension.
   */
  upstream: UpstreamResource | false;
  /**
   * Records that a key sees, within its sites, only with further permissions, chosen by the value
   * of one column: a record whose `column` holds a value listed in `permissions` is seen by keys
   * holding every permission listed for that value, a record with any other value by none. Lists,
   * shows, includes, related lists and writes treat a record the key may not see as missing, as
   * they treat records of other sites. (Events: each event type needs the read permissions of the
   * records its payload shows.)
   */
  recordPermissions?: RecordPermissionsDef;
}

/** Query parameters of the upstream's list operation, beside its filters. */
export type UpstreamListParameter = 'sort' | 'page[number]' | 'page[size]' | 'fields';
/** Query parameters of the upstream's show operation. */
export type UpstreamShowParameter = 'fields' | 'include' | 'filter[site_id]';

/**
 * The upstream's operations of a resource, where they differ from what most of them take. Every
 * list, show and write the resource declares is an upstream operation, and so is every action
 * unless its ActionDef says `upstream: false`.
 */
export interface UpstreamResource {
  /** Parameters of its list besides filters (default: sort, page[number], page[size], fields). */
  list?: readonly UpstreamListParameter[];
  /** Parameters of its show (default: fields, include). */
  show?: readonly UpstreamShowParameter[];
  /** The `sorts` (sort keys that are not attributes) its list takes. */
  sorts?: readonly string[];
}

export interface RecordPermissionsDef {
  /** Column of the resource's table whose value decides (unqualified). */
  column: string;
  /** Value → the permissions a key needs to see records holding it. */
  permissions: Readonly<Record<string, readonly string[]>>;
}

/**
 * The values of `recordPermissions.column` whose records a key with `permissions` sees, in the
 * declaration's order; undefined when the resource declares no record permissions.
 */
export function visibleValues(resource: ResourceDefinition, permissions: ReadonlySet<string>): string[] | undefined {
  const declared = resource.recordPermissions;
  if (!declared) return undefined;
  return Object.entries(declared.permissions)
    .filter(([, needed]) => needed.every((p) => permissions.has(p)))
    .map(([value]) => value);
}

/** What a domain write function gets: everything it does runs in the request's one transaction. */
export interface WriteContext {
  /** The database handle, its db bound to the request's transaction. */
  handle: DatabaseHandle;
  principal: Principal;
  now: Date;
  /**
   * A record of the principal's sites as `GET /v1/<type>/<id>` renders it, read inside this
   * transaction (so it shows the transaction's own changes), whatever the key may read: webhook
   * payloads show what the event is about (src/domain/outbox.ts). Undefined when there is none.
   */
  render(type: string, id: number): Promise<ResourceObject | undefined>;
  /** Runs `fn` once the transaction has committed; never when it rolls back. */
  afterCommit(fn: () => void): void;
}

/**
 * What the application hands the engine for writes beyond the database: policies that depend on
 * the configuration or reach outside the process (which webhook targets production mode refuses,
 * and the DNS lookup that decides it). Empty here: a module that provides a service declares it by
 * merging into this interface (as Fastify's decorators do), and buildApp supplies it, so the
 * engine carries services without naming one.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface WriteServices {}

/**
 * What a write's `beforeTransaction` step gets: no database, since it runs before the write's
 * transaction begins.
 */
export interface PreWriteContext {
  principal: Principal;
  now: Date;
  services: WriteServices;
}

/** A record the principal may reach: its id and the site it belongs to. */
export interface WriteTarget {
  id: number;
  siteId: number;
}

/** A checked request document, with every to-one relationship target found in the principal's sites. */
export interface WriteInput extends ResourceWrite {
  targets: Record<string, WriteTarget>;
}

/**
 * The writes of a resource. The engine checks the permission, reads the body against the rules,
 * finds the record and the relationship targets in the principal's sites (others are 404), runs
 * the domain function in one transaction and answers with the record as `show` renders it.
 */
export interface WriteDef {
  /** Permission needed for every write (the read permission is needed too, for the response). */
  permission: string;
  /** Rules of a create; of an update too unless updateRules is given. */
  rules: WriteRules;
  updateRules?: WriteRules;
  /**
   * `POST /v1/<type>`: returns the new record's id, or the id and a `meta` object the answer
   * carries in `data.meta` this once (a hook's signing secret).
   */
  create?: (ctx: WriteContext, input: WriteInput) => Promise<number | { id: number; meta: Record<string, unknown> }>;
  /**
   * Runs on a create's checked document before its transaction begins: checks that wait on
   * something outside the database (a DNS lookup) and must not hold the transaction's locks
   * meanwhile (on SQLite the database's one write lock). Throws to refuse the write.
   */
  beforeTransaction?: (ctx: PreWriteContext, input: ResourceWrite) => Promise<void>;
  /** Members a create (or an action) may put in `data.meta`, name → description, for the OpenAPI document. */
  answerMeta?: Record<string, string>;
  /** What a delete answers: `{"data": {}}` with 200 (the default, as most upstream deletes), or 204 and no body. */
  deleteAnswer?: 'empty-document' | 'no-content';
  /** `PATCH /v1/<type>/<id>`. */
  update?: (ctx: WriteContext, record: WriteTarget, input: WriteInput) => Promise<void>;
  /** `DELETE /v1/<type>/<id>`. */
  delete?: (ctx: WriteContext, record: WriteTarget) => Promise<void>;
}

/**
 * Writes of a to-many relationship endpoint. The engine checks the permissions, reads the
 * `{"data": [identifiers]}` document, finds every target in the principal's sites (404 naming
 * `/data/<i>/id` otherwise), runs the function in one transaction and answers with the
 * relationship's linkage after it.
 */
export interface RelationshipWriteDef {
  permission: string;
  /** What the writes do beyond the linkage (other records they change, other permissions they need); shown in the OpenAPI document. */
  description?: string;
  /** POST: add these targets (already present ones are left as they are). */
  add?: (ctx: WriteContext, record: WriteTarget, targets: WriteTarget[], meta: Record<string, unknown>) => Promise<void>;
  /** PATCH: make the set exactly these targets. */
  replace?: (ctx: WriteContext, record: WriteTarget, targets: WriteTarget[], meta: Record<string, unknown>) => Promise<void>;
  /** DELETE: remove these targets (absent ones are ignored). */
  remove?: (ctx: WriteContext, record: WriteTarget, targets: WriteTarget[], meta: Record<string, unknown>) => Promise<void>;
}

/**
 * `POST /v1/<type>/<id>/<name>`: an operation on one record that is not a plain update
 * (deactivate a purchase, submit a form). Runs in one transaction; answers with a record.
 */
export interface ActionDef {
  /** Permission needed (the read permission of the answered type is needed too). */
  permission: string;
  description: string;
  /** The request body, if any: a resource document of `type`, checked with `rules`. */
  body?: { type: string; rules: WriteRules };
  /**
   * Does the work. Returns the record to answer with (default: the acted-on record, 200); a
   * created record answers 201.
   */
  run: (
    ctx: WriteContext,
    record: WriteTarget,
    input: WriteInput | undefined,
  ) => Promise<{ type: string; id: number; created: boolean; meta?: Record<string, unknown> } | void>;
  /** Members the answer may carry in `data.meta`, name → description, for the OpenAPI document. */
  answerMeta?: Record<string, string>;
  /**
   * Answer 202 Accepted instead of 200: the action starts work that finishes later (a webhook
   * redelivery, made by the delivery worker). The body is still the acted-on record, as it is now.
   */
  accepted?: boolean;
  /** false: the upstream API has no such action (a sitebiz extension). */
  upstream?: false;
}

export type ResourceInput = Pick<ResourceDefinition, 'type' | 'table' | 'description' | 'readPermission' | 'tenancy'> &
  Partial<Omit<ResourceDefinition, 'type' | 'table' | 'description' | 'readPermission' | 'tenancy'>>;

/**
 * A declaration map without a prototype: requests name its members (`include=`, `sort=`,
 * `filter[...]`, attributes in bodies), and a name such as `toString` or `__proto__` must find
 * only what was declared, not what every object inherits.
 */
export function declarations<T>(members: Record<string, T> = {}): Record<string, T> {
  const map: Record<string, T> = Object.create(null);
  for (const [name, member] of Object.entries(members)) map[name] = member;
  return map;
}

/** Whether every declaration map of a resource is one that `declarations` made. */
export function hasPrototypeFreeMaps(r: ResourceDefinition): boolean {
  return [r.attributes, r.relationships, r.filters, r.sorts, r.includeNarrowing, r.actions].every((map) => Object.getPrototypeOf(map) === null);
}

export function defineResource(input: ResourceInput): ResourceDefinition {
  const attributes = declarations<AttributeDef>();
  for (const [name, def] of Object.entries(input.attributes ?? {})) {
    // A computed attribute reads its value from the alias of its SQL, which is its name.
    attributes[name] = def.compute || (def.column !== '' && !def.sql) ? def : { ...def, column: name };
  }
  return {
    defaultSort: 'id',
    routes: { list: true, show: true },
    write: undefined,
    upstream: {},
    ...input,
    attributes,
    relationships: declarations(input.relationships),
    filters: declarations(input.filters),
    sorts: declarations(input.sorts),
    includeNarrowing: declarations(input.includeNarrowing),
    actions: declarations(input.actions),
  };
}
