// Where sitebiz's answers knowingly differ from the upstream schemas, as rewrites of a body
// before it is validated. Each entry is one divergence listed in docs/upstream-divergences.md;
// a check that applies them validates everything else strictly. Add an entry only with a reason
// (the seed says otherwise, or JSON:API requires it), never to make a real mistake pass.
import { withoutNullToOne, withoutSeedOnlyAttributes } from './catalogue-fixtures.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

export interface Divergence {
  /** The heading of its entry in docs/upstream-divergences.md. */
  name: string;
  /** Rewrites a response body (a clone) so that the divergence is not reported. */
  adjust: (body: Json) => Json;
}

export const DIVERGENCES: readonly Divergence[] = [
  {
    // JSON:API renders an empty to-one as `{"data": null}`; upstream types its data as an object.
    name: 'An empty to-one relationship is {"data": null}',
    adjust: withoutNullToOne({ contacts: ['customer'], forms: ['offer'], transactions: ['offer'] }),
  },
  {
    // The seed lists `description` among these records' fields; upstream's schemas do not.
    name: 'Attributes the seed adds',
    adjust: withoutSeedOnlyAttributes({
      courses: ['description'],
      modules: ['description'],
      offers: ['description'],
      products: ['description'],
      podcasts: ['description'],
      forms: ['description'],
    }),
  },
  {
    // sitebiz's extensions of a hook: disabled_at (a hook whose deliveries failed for 5 days) and
    // failing_since (when its current run of failures began).
    name: 'Attributes sitebiz adds to hooks',
    adjust: withoutSeedOnlyAttributes({ hooks: ['disabled_at', 'failing_since'] }),
  },
  {
    // The seed: `prev` and `next` are null when there is no such page; upstream's podcast list
    // alone types them as strings.
    name: 'Paging links are null where there is no such page',
    adjust: (body) => {
      for (const key of ['prev', 'next']) if (body?.links && body.links[key] === null) delete body.links[key];
      return body;
    },
  },
  {
    // Upstream's purchase webhook schema types a purchase's products linkage as `offers`; real
    // purchase events (sandbox checkouts) link products. Their identifiers are not checked there.
    name: "A purchase's products in a purchase webhook",
    adjust: (body) => {
      if (Array.isArray(body?.data)) {
        for (const r of body.data) if (r?.type === 'purchases' && Array.isArray(r.relationships?.products?.data)) r.relationships.products.data = [];
      }
      return body;
    },
  },
  {
    // Upstream documents include=lessons.media on a course, but its `included` schema has no
    // branch for media (its prose names only `duration_in_minutes`): included media are not checked.
    name: 'Included media of a course',
    adjust: (body) => {
      if (Array.isArray(body?.included)) body.included = body.included.filter((r: { type?: string }) => r?.type !== 'media');
      return body;
    },
  },
];

/** Every divergence applied to a clone of the body. */
export function withoutDivergences(body: Json): Json {
  return DIVERGENCES.reduce((b, d) => d.adjust(b), structuredClone(body));
}
