// The declaration language of resources. A resource file is a list of these declarations; the
// engine (planner, executor, renderer, routes, OpenAPI) reads them and never names a resource.
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { DialectTraits } from '../db/dialect-traits.js';
import { PREDICATES_BY_TYPE, type PredicateSuffix } from './predicates.js';

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
  compute: { columns: readonly string[]; value: (row: Record<string, unknown>) => unknown } | undefined;
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
}

function attribute(type: AttributeType, options: AttributeOptions = {}): AttributeDef {
  const all = PREDICATES_BY_TYPE[type];
  let predicates: readonly PredicateSuffix[] = [];
  if (options.filter === true) predicates = all;
  else if (Array.isArray(options.filter)) predicates = options.filter;
  for (const p of predicates) {
    if (!all.includes(p)) throw new Error(`predicate _${p} does not apply to ${type} attributes`);
  }
  return {
    type,
    column: options.column ?? '',
    sortable: options.sort ?? false,
    predicates,
    nullable: options.nullable ?? false,
    description: options.description,
    enumValues: options.enum,
    compute: undefined,
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
    o: { description?: string; nullable?: boolean } = {},
  ): AttributeDef => ({ ...attribute(type, o), column: '', compute: { columns, value } }),
};

export type RelationshipDef =
  | {
      kind: 'to-one';
      type: string;
      /** Column on this resource's table holding the target's id. */
      foreignKey: string;
      links: boolean;
    }
  | {
      kind: 'to-many';
      type: string;
      /** Column on the target's table holding this resource's id. */
      foreignKey: string;
      /** Render `data` linkage even when not included (costs one batched query per page). */
      linkage: boolean;
      links: boolean;
    }
  | {
      kind: 'to-many-through';
      type: string;
      /** Join table, with the column pointing at this resource and the one pointing at the target. */
      through: string;
      sourceKey: string;
      targetKey: string;
      linkage: boolean;
      links: boolean;
    };

interface RelationshipOptions {
  /** Add `links.self` and `links.related` to the relationship object. */
  links?: boolean;
  /** To-many only: whether `data` linkage is rendered when the relationship is not included. */
  linkage?: boolean;
}

export const rel = {
  toOne: (type: string, foreignKey: string, o: RelationshipOptions = {}): RelationshipDef => ({
    kind: 'to-one',
    type,
    foreignKey,
    links: o.links ?? false,
  }),
  toMany: (type: string, foreignKey: string, o: RelationshipOptions = {}): RelationshipDef => ({
    kind: 'to-many',
    type,
    foreignKey,
    linkage: o.linkage ?? true,
    links: o.links ?? false,
  }),
  toManyThrough: (
    type: string,
    through: { table: string; sourceKey: string; targetKey: string },
    o: RelationshipOptions = {},
  ): RelationshipDef => ({
    kind: 'to-many-through',
    type,
    through: through.table,
    sourceKey: through.sourceKey,
    targetKey: through.targetKey,
    linkage: o.linkage ?? true,
    links: o.links ?? false,
  }),
};

/** What filter and scope builders may use besides the expression builder. */
export interface QueryContext {
  traits: DialectTraits;
  now: Date;
  /** The table of the resource being queried, for qualified column names. */
  table: string;
}

export type FilterValueKind = 'string' | 'integer' | 'id' | 'ids' | 'boolean' | 'days' | 'decimal';

export type FilterValue<K extends FilterValueKind> = K extends 'string'
  ? string
  : K extends 'integer'
    ? number
    : K extends 'id'
      ? number
      : K extends 'ids'
        ? number[]
        : K extends 'boolean'
          ? boolean
          : K extends 'days'
            ? { days: number; since: Date }
            : K extends 'decimal'
              ? string
              : never;

export interface NamedFilterDef {
  kind: FilterValueKind;
  description: string;
  where: (eb: AnyEB, value: never, ctx: QueryContext) => Condition;
}

/** A named filter, `filter[<name>]=<value>`; the value is checked and coerced before `where` runs. */
export function namedFilter<K extends FilterValueKind>(
  kind: K,
  description: string,
  where: (eb: AnyEB, value: FilterValue<K>, ctx: QueryContext) => Condition,
): NamedFilterDef {
  return { kind, description, where: where as NamedFilterDef['where'] };
}

/** How records of a resource belong to a tenant. */
export type TenancyDef =
  /** Records carry a site id column; lists honour and may require `filter[site_id]`. */
  | { kind: 'site'; column: string }
  /** Records carry an account id column (sites themselves, users). */
  | { kind: 'account'; column: string; siteColumn?: string };

export interface ResourceDefinition {
  type: string;
  table: string;
  description: string;
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
  /** Which generic routes the engine mounts for this resource. */
  routes: { list: boolean; show: boolean };
}

export type ResourceInput = Pick<ResourceDefinition, 'type' | 'table' | 'description' | 'readPermission' | 'tenancy'> &
  Partial<Omit<ResourceDefinition, 'type' | 'table' | 'description' | 'readPermission' | 'tenancy'>>;

export function defineResource(input: ResourceInput): ResourceDefinition {
  const attributes: Record<string, AttributeDef> = {};
  for (const [name, def] of Object.entries(input.attributes ?? {})) {
    attributes[name] = def.compute || def.column !== '' ? def : { ...def, column: name };
  }
  return {
    defaultSort: 'id',
    relationships: {},
    filters: {},
    sorts: {},
    routes: { list: true, show: true },
    ...input,
    attributes,
  };
}
