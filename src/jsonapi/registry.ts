// The set of declared resources, checked once at start-up so that a wrong declaration fails
// the boot, not a request.
import { hasPrototypeFreeMaps, type ResourceDefinition } from './resource.js';

export interface SortKey {
  name: string;
  descending: boolean;
}

export function parseSortValue(value: string): SortKey {
  return value.startsWith('-') ? { name: value.slice(1), descending: true } : { name: value, descending: false };
}

export class Registry {
  private readonly byType = new Map<string, ResourceDefinition>();

  constructor(resources: readonly ResourceDefinition[]) {
    for (const r of resources) {
      if (this.byType.has(r.type)) throw new Error(`resource type ${r.type} is declared twice`);
      this.byType.set(r.type, r);
    }
    for (const r of resources) this.check(r);
  }

  get(type: string): ResourceDefinition {
    const r = this.byType.get(type);
    if (!r) throw new Error(`no resource of type ${type}`);
    return r;
  }

  find(type: string): ResourceDefinition | undefined {
    return this.byType.get(type);
  }

  all(): ResourceDefinition[] {
    return [...this.byType.values()];
  }

  /** Whether `name` is a sort key of the resource (a sortable attribute, an extra sort, or `id`). */
  isSortable(r: ResourceDefinition, name: string): boolean {
    return name === 'id' || r.attributes[name]?.sortable === true || name in r.sorts;
  }

  sortableNames(r: ResourceDefinition): string[] {
    const names = Object.entries(r.attributes)
      .filter(([, a]) => a.sortable)
      .map(([n]) => n);
    return [...names, ...Object.keys(r.sorts)];
  }

  private check(r: ResourceDefinition): void {
    const where = `resource ${r.type}`;
    if (!hasPrototypeFreeMaps(r)) throw new Error(`${where}: declare it with defineResource, whose maps have no prototype for request names to reach`);
    for (const [name, rel] of Object.entries(r.relationships)) {
      if (!this.byType.has(rel.type)) throw new Error(`${where}: relationship ${name} points at unknown type ${rel.type}`);
      if (name in r.attributes) throw new Error(`${where}: ${name} is both an attribute and a relationship`);
      // The renderer writes such links as /v1/<type>/<id>; a prefixed target is elsewhere.
      if (rel.resourceLink && this.byType.get(rel.type)!.pathPrefix) throw new Error(`${where}: relationship ${name} links to ${rel.type}, which is served under a path prefix`);
    }
    for (const [name, a] of Object.entries(r.attributes)) {
      if (a.compute && (a.sortable || a.predicates.length > 0)) {
        throw new Error(`${where}: computed attribute ${name} cannot be sorted or filtered`);
      }
      // JSON:API reserves `type` too, but upstream has `type` attributes (custom fields, form
      // fields) that existing clients read, so only `id` is refused.
      if (name === 'id') throw new Error(`${where}: ${name} cannot be an attribute`);
      if (a.sortable && name in r.sorts) throw new Error(`${where}: ${name} is both a sortable attribute and a declared sort`);
    }
    this.checkUpstream(r);
    const { name } = parseSortValue(r.defaultSort);
    if (!this.isSortable(r, name)) throw new Error(`${where}: default sort ${r.defaultSort} is not a sort key`);
    if (r.filters.site_id) throw new Error(`${where}: filter site_id is provided by the engine`);
  }

  /** The upstream flags name declared things, and what the upstream has leads only to what it has. */
  private checkUpstream(r: ResourceDefinition): void {
    const where = `resource ${r.type}`;
    if (r.upstream === false) return;
    for (const sort of r.upstream.sorts ?? []) {
      if (!(sort in r.sorts)) throw new Error(`${where}: upstream sort ${sort} is not one of its sorts`);
    }
    for (const [name, rel] of Object.entries(r.relationships)) {
      if (rel.upstream && this.byType.get(rel.type)!.upstream === false) {
        throw new Error(`${where}: relationship ${name} is flagged upstream but leads to ${rel.type}, which the upstream lacks`);
      }
    }
    for (const [name, a] of Object.entries(r.attributes)) {
      if (!a.upstream.attribute && (a.upstream.sort || a.upstream.predicates.length > 0)) {
        throw new Error(`${where}: attribute ${name} is a sitebiz extension, so its sorts and filters are too`);
      }
    }
  }
}
