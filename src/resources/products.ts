import { attr, defineResource, namedFilter, rel } from '../jsonapi/resource.js';

export const products = defineResource({
  type: 'products',
  table: 'products',
  description: 'What members get access to: courses, coaching programs, podcasts, communities and more.',
  readPermission: 'view:products',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: 'title',
  attributes: {
    title: attr.string({ sort: true, filter: ['eq', 'cont', 'start'], upstream: { sort: true, filter: ['cont'] } }),
    description: attr.string({ sort: true, nullable: true, filter: ['cont'], upstream: { sort: true, filter: ['cont'] } }),
    created_at: attr.datetime({ sort: true, filter: ['gt', 'gte', 'lt', 'lte'] }),
    status: attr.string({ sort: true, filter: ['eq', 'in'], upstream: { sort: true, filter: ['eq'] }, enum: ['ready', 'processing', 'draft'] }),
    members_aggregate_count: attr.integer({
      description: 'Members with current access (memberships that have not ended)',
      // Kept by triggers on memberships (src/db/site-counters.ts), not counted per request.
      column: 'active_members_count',
    }),
    product_type_name: attr.string({ filter: ['eq'], description: 'Course, Coaching Program, Podcast, Community, ...' }),
    product_type_id: attr.integer({ filter: ['eq'] }),
    publish_status: attr.string({ filter: ['eq'], enum: ['published', 'draft'] }),
    thumbnail_url: attr.string({ nullable: true }),
    url: attr.string({ nullable: true }),
  },
  relationships: { site: rel.toOne('sites', 'site_id') },
  upstream: { show: ['fields'] },
  filters: {
    exclude_product_types: namedFilter(
      'strings',
      'Leave out products of these kinds (fully qualified, e.g. Courses::CohortCourse); repeat filter[exclude_product_types][] or give a comma list',
      (eb, kinds) => eb('products.productizable_type', 'not in', kinds),
    ),
  },
});
