// Stage 4: rows become JSON:API documents. Attribute values pass through the codecs; links are
// full URLs from PUBLIC_URL.
import type { DialectTraits } from '../db/dialect-traits.js';
import { decoderFor, type Decoder } from './codecs.js';
import { LINKAGE, type IncludedRecord, type LinkedRow } from './executor.js';
import type { ResourceDefinition } from './resource.js';

export interface ResourceIdentifier {
  type: string;
  id: string;
}

export interface ResourceObject {
  id: string;
  type: string;
  attributes: Record<string, unknown>;
  relationships?: Record<string, { data?: ResourceIdentifier | ResourceIdentifier[] | null; links?: Record<string, string> }>;
  links?: Record<string, string>;
  /** Set by writes that answer something once (a new hook's signing secret). */
  meta?: Record<string, unknown>;
}

/** Where a resource's routes are, below `/v1/`: its type, after its path prefix if it has one. */
export function resourcePath(resource: Pick<ResourceDefinition, 'type' | 'pathPrefix'>): string {
  return resource.pathPrefix ? `${resource.pathPrefix}/${resource.type}` : resource.type;
}

type AttributeRenderer = Array<[name: string, read: (row: LinkedRow) => unknown]>;

export class DocumentRenderer {
  /** Attribute readers per type and sparse fieldset, built once and reused by every request. */
  private readonly renderers = new Map<string, AttributeRenderer>();

  constructor(
    private readonly baseUrl: string,
    private readonly traits: DialectTraits,
  ) {}

  resourceUrl(resource: ResourceDefinition, id: string): string {
    return `${this.baseUrl}/v1/${resourcePath(resource)}/${id}`;
  }

  /** `upstreamOnly`: leave out the attributes, relationships and links the upstream API lacks (UPSTREAM_STRICT). */
  resourceObject(resource: ResourceDefinition, row: LinkedRow, fields: ReadonlySet<string> | undefined, upstreamOnly = false): ResourceObject {
    const id = String(row.id);
    const attributes: Record<string, unknown> = {};
    for (const [name, read] of this.attributeRenderer(resource, fields, upstreamOnly)) attributes[name] = read(row);
    const object: ResourceObject = { id, type: resource.type, attributes };

    const linkage = row[LINKAGE];
    let relationships: ResourceObject['relationships'];
    let links: Record<string, string> | undefined;
    for (const [name, relationship] of Object.entries(resource.relationships)) {
      if (upstreamOnly && !relationship.upstream) continue;
      let member: NonNullable<ResourceObject['relationships']>[string] | undefined;
      if (relationship.kind === 'to-one') {
        const fk = row[relationship.foreignKey];
        member = { data: fk === null || fk === undefined ? null : { type: relationship.type, id: String(fk) } };
      } else if (relationship.kind === 'has-one') {
        const ids = linkage?.get(name);
        if (ids) member = { data: ids[0] === undefined ? null : { type: relationship.type, id: ids[0] } };
      } else {
        const ids = linkage?.get(name);
        if (ids) member = { data: ids.map((target) => ({ type: relationship.type, id: target })) };
      }
      if (relationship.links) {
        const self = this.resourceUrl(resource, id);
        // `related` is the related-records route, a sitebiz extension (left out when upstreamOnly).
        const toMany = relationship.kind === 'to-many' || relationship.kind === 'to-many-through';
        member = { ...member, links: toMany && !upstreamOnly ? { self: `${self}/relationships/${name}`, related: `${self}/${name}` } : { self: `${self}/relationships/${name}` } };
      }
      if (member) (relationships ??= {})[name] = member;
      if (relationship.resourceLink) {
        const target =
          relationship.kind === 'to-one' ? row[relationship.foreignKey] : relationship.kind === 'has-one' ? linkage?.get(name)?.[0] : undefined;
        if (target !== null && target !== undefined) (links ??= {})[name] = `${this.baseUrl}/v1/${relationship.type}/${String(target)}`;
      }
    }
    if (relationships) object.relationships = relationships;
    if (resource.routes.show) (links ??= {}).self = this.resourceUrl(resource, id);
    if (links) object.links = links;
    return object;
  }

  includedObjects(included: IncludedRecord[], fieldsByType: Map<string, ReadonlySet<string>>, upstreamOnly = false): ResourceObject[] {
    return included.map(({ resource, row }) => this.resourceObject(resource, row, fieldsByType.get(resource.type), upstreamOnly));
  }

  private attributeRenderer(resource: ResourceDefinition, fields: ReadonlySet<string> | undefined, upstreamOnly: boolean): AttributeRenderer {
    const key = `${upstreamOnly ? 'upstream|' : ''}${fields ? `${resource.type}|${[...fields].join(',')}` : resource.type}`;
    let renderer = this.renderers.get(key);
    if (renderer) return renderer;
    renderer = [];
    for (const [name, a] of Object.entries(resource.attributes)) {
      if ((fields && !fields.has(name)) || (upstreamOnly && !a.upstream.attribute)) continue;
      if (a.compute) {
        const compute = a.compute.value;
        renderer.push([name, (row) => compute(row)]);
      } else {
        const decode: Decoder = decoderFor(a.type, this.traits);
        const column = a.column;
        renderer.push([name, (row) => decode(row[column])]);
      }
    }
    // Sparse fieldsets come from clients: keep the cache from growing without bound.
    if (this.renderers.size < 1000) this.renderers.set(key, renderer);
    return renderer;
  }
}
