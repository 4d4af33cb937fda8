import { attr, defineResource, namedFilter, rel } from '../jsonapi/resource.js';

// The seed's suffix table, for every attribute it names; `_null` only where a value can be
// missing (a page never scheduled), since created_at and updated_at are always set.
const SUFFIXES = ['eq', 'not_eq', 'cont', 'not_cont', 'start', 'end', 'gt', 'gte', 'lt', 'lte'] as const;

export const landingPages = defineResource({
  type: 'landing_pages',
  table: 'landing_pages',
  description: 'Landing pages of a site. Published pages have a publish_at in the past.',
  readPermission: 'view:pages',
  tenancy: { kind: 'site', column: 'site_id', siteFilter: 'optional' },
  defaultSort: 'title',
  attributes: {
    title: attr.string({ sort: true, filter: SUFFIXES, upstream: { sort: true, filter: ['cont'] } }),
    url: attr.string(),
    publish_at: attr.datetime({ sort: true, nullable: true, filter: [...SUFFIXES, 'null'], description: 'When the page goes (or went) live; null: never' }),
    created_at: attr.datetime({ sort: true, filter: SUFFIXES }),
    updated_at: attr.datetime({ sort: true, filter: SUFFIXES }),
  },
  relationships: { site: rel.toOne('sites', 'site_id') },
  upstream: { show: ['fields'] },
  filters: {
    published: namedFilter('boolean', 'true: pages whose publish_at has passed; false: drafts and pages scheduled for later', (eb, value, ctx) => {
      const live = eb.and([eb('landing_pages.publish_at', 'is not', null), eb('landing_pages.publish_at', '<=', ctx.traits.encodeTimestamp(ctx.now))]);
      return value ? live : eb.not(live);
    }),
  },
});

export const websitePages = defineResource({
  type: 'website_pages',
  table: 'website_pages',
  description: 'Pages of the site’s website.',
  readPermission: 'view:pages',
  tenancy: { kind: 'site', column: 'site_id', siteFilter: 'optional' },
  defaultSort: '-created_at',
  attributes: {
    title: attr.string({ sort: true, filter: ['eq', 'cont'] }),
    url: attr.string({ nullable: true }),
    created_at: attr.datetime({ sort: true, upstream: { sort: true } }),
    updated_at: attr.datetime({ sort: true }),
  },
  relationships: { site: rel.toOne('sites', 'site_id') },
  upstream: { show: ['fields'] },
});

export const blogs = defineResource({
  type: 'blogs',
  table: 'blogs',
  description: 'The blog a post belongs to. Reached through blog_posts?include=blog.',
  readPermission: 'view:pages',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: 'title',
  routes: { list: false, show: false },
  attributes: { title: attr.string({ sort: true }) },
  relationships: { site: rel.toOne('sites', 'site_id') },
});

export const blogPosts = defineResource({
  type: 'blog_posts',
  table: 'blog_posts',
  description: 'Posts of the site’s blog.',
  readPermission: 'view:pages',
  tenancy: { kind: 'site', column: 'site_id', siteFilter: 'optional' },
  defaultSort: '-published_at',
  attributes: {
    title: attr.string({ sort: true, filter: ['eq', 'cont'], upstream: { sort: true, filter: ['cont'] } }),
    url: attr.string(),
    content: attr.string({ description: 'HTML body' }),
    slug: attr.string({ filter: ['eq'] }),
    page_title: attr.string(),
    page_description: attr.string(),
    published_at: attr.datetime({ sort: true, nullable: true, filter: ['gt', 'gte', 'lt', 'lte', 'null'] }),
    created_at: attr.datetime({ sort: true }),
    updated_at: attr.datetime(),
  },
  // site: a sitebiz extension, so a list spanning sites says each post's site.
  relationships: { blog: rel.toOne('blogs', 'blog_id'), site: rel.toOne('sites', 'site_id', { upstream: false }) },
  upstream: { show: ['fields'] },
});

