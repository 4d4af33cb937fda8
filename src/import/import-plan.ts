// What `sitebiz import` reads, in which order. The resource declarations (src/resources) say
// everything about a type: its table, attributes, relationships and whether its upstream list
// takes filter[site_id] (tenancy.siteFilter 'optional' means it does not). This list adds only
// what they cannot say: the order (a record's parents are written before it, so foreign keys hold
// at every commit), the lists that take no page[size] upstream, and the show requests whose
// include brings records that have no list of their own.
import { RESOURCES } from '../resources/index.js';
import type { ResourceDefinition } from '../jsonapi/resource.js';

export interface ImportStep {
  resource: ResourceDefinition;
  /** Whether the list is walked once per site with filter[site_id] (else once, across sites). */
  perSite: boolean;
  /** Whether the upstream list takes page[size] (payouts do not: their default size is used). */
  pageSize: boolean;
  /**
   * A show per record, for what only an include brings (a course's modules, lessons and media;
   * a form's fields): one request per record, since the upstream lists take no include.
   */
  show?: { include: string };
  /** A key that may not read it skips it (hooks: "if readable"); any other step's 403 stops the import. */
  optional: boolean;
}

interface StepSpec {
  type: string;
  pageSize?: false;
  show?: { include: string };
  optional?: true;
}

/** Parents first. Sites come before all of them (src/import/importer.ts). */
const ORDER: readonly StepSpec[] = [
  { type: 'contact_tags' },
  { type: 'custom_fields' },
  { type: 'contacts' },
  { type: 'products' },
  { type: 'offers' },
  { type: 'customers' },
  { type: 'contact_notes' },
  { type: 'courses', show: { include: 'modules,lessons,lessons.media' } },
  { type: 'podcasts' },
  { type: 'forms', show: { include: 'fields' } },
  { type: 'form_submissions' },
  { type: 'landing_pages' },
  { type: 'website_pages' },
  { type: 'blog_posts' },
  { type: 'purchases' },
  { type: 'transactions' },
  { type: 'orders' },
  { type: 'order_items' },
  { type: 'kajabi_payments_payouts', pageSize: false },
  { type: 'hooks', optional: true },
];

export const RESOURCES_BY_TYPE: ReadonlyMap<string, ResourceDefinition> = new Map(RESOURCES.map((r) => [r.type, r]));

export function resourceOf(type: string): ResourceDefinition {
  const resource = RESOURCES_BY_TYPE.get(type);
  if (!resource) throw new Error(`import: no resource ${type}`);
  return resource;
}

export const SITES_STEP: ImportStep = { resource: resourceOf('sites'), perSite: false, pageSize: true, optional: false };

export const IMPORT_STEPS: readonly ImportStep[] = ORDER.map((spec) => {
  const resource = resourceOf(spec.type);
  const perSite = resource.tenancy.kind === 'site' && resource.tenancy.siteFilter !== 'optional';
  return { resource, perSite, pageSize: spec.pageSize !== false, optional: spec.optional === true, ...(spec.show ? { show: spec.show } : {}) };
});

/** Position of each type's step: a join table is written by the later of the two sides. */
const POSITION = new Map<string, number>([['sites', -1], ...IMPORT_STEPS.map((s, i) => [s.resource.type, i] as [string, number])]);

/** Whether a record of `type` writes the join rows of a relationship to `target` (the target came first). */
export function writesJoinTo(type: string, target: string): boolean {
  const mine = POSITION.get(type);
  const theirs = POSITION.get(target);
  return mine !== undefined && theirs !== undefined && theirs < mine;
}

/** Every table the import writes records with ids to (the remapping's offsets are per table). */
export function importedTables(): string[] {
  const tables = new Set<string>([SITES_STEP.resource.table]);
  for (const step of IMPORT_STEPS) {
    tables.add(step.resource.table);
    for (const rel of Object.values(step.resource.relationships)) {
      if (rel.kind === 'to-one' || (step.show && rel.kind === 'to-many')) {
        const target = RESOURCES_BY_TYPE.get(rel.type);
        if (target) tables.add(target.table);
      }
    }
  }
  // Included records of included records (a lesson's media).
  for (const step of IMPORT_STEPS) {
    for (const path of step.show?.include.split(',') ?? []) {
      let resource = step.resource;
      for (const name of path.split('.')) {
        const rel = resource.relationships[name];
        if (!rel) break;
        resource = resourceOf(rel.type);
        tables.add(resource.table);
      }
    }
  }
  return [...tables].sort();
}

/** Join tables with ids of their own, written from linkage (a customer's offers and products). */
export const JOIN_TABLES_WITH_IDS: readonly string[] = ['offer_grants', 'memberships'];
