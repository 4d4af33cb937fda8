// The served OpenAPI document declares repeated parameters and responses once, under
// components.parameters and components.responses (src/jsonapi/schema-names.ts). Tests that read an
// operation's parameters and responses, or look a response schema up by JSON pointer, read the
// document with those references put back in place; schema references ($ref into
// components.schemas) stay, and resolve against the same document.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const SHARED = /^#\/components\/(parameters|responses)\/(.+)$/;

/** A copy of `doc` in which every shared parameter and response is written out where it is used. */
export function withSharedPartsInline<T>(doc: T): T {
  const components = (doc as Json).components ?? {};
  const visit = (node: Json): Json => {
    if (Array.isArray(node)) return node.map(visit);
    if (typeof node !== 'object' || node === null) return node;
    const match = typeof node.$ref === 'string' ? SHARED.exec(node.$ref) : null;
    if (match) {
      const target = components[match[1]!]?.[match[2]!];
      if (target === undefined) throw new Error(`unresolvable ${node.$ref}`);
      return visit(target);
    }
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, visit(value)]));
  };
  return visit(doc);
}

/** `node`, or what its `$ref` (a local one, followed as far as it leads) points at in `doc`. */
export function dereferenced(doc: Json, node: Json): Json {
  let at = node;
  for (let hops = 0; typeof at?.$ref === 'string'; hops++) {
    if (hops > 20) throw new Error(`a $ref cycle at ${node.$ref}`);
    at = (at.$ref as string)
      .slice(2)
      .split('/')
      .reduce((parent: Json, part: string) => parent?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    if (at === undefined) throw new Error(`unresolvable $ref ${node.$ref}`);
  }
  return at;
}
