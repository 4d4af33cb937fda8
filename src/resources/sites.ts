import { attr, containsText, defineResource, namedFilter } from '../jsonapi/resource.js';

export const sites = defineResource({
  type: 'sites',
  table: 'sites',
  description: 'Sites the current user may access. A site is the container of a business: its contacts, offers, products and pages.',
  readPermission: 'view:sites',
  // A site belongs to an account; the token sees only the sites its user may access.
  tenancy: { kind: 'account', column: 'account_id', siteColumn: 'id' },
  defaultSort: 'title',
  attributes: {
    title: attr.string({ sort: true, filter: ['eq', 'cont', 'start', 'end'], upstream: { sort: true, filter: ['cont'] }, description: 'Name of the site' }),
    subdomain: attr.string({ sort: true, filter: ['eq', 'cont'], upstream: { sort: true, filter: ['cont'] }, description: 'Subdomain used to reach the site' }),
    created_at: attr.datetime({ sort: true, filter: ['gt', 'gte', 'lt', 'lte'] }),
    updated_at: attr.datetime({ sort: true, filter: ['gt', 'gte', 'lt', 'lte'] }),
  },
  upstream: { show: ['fields'] },
  filters: {
    search: namedFilter('string', 'Title or subdomain contains the text, ignoring case', (eb, value, ctx) =>
      eb.or([
        containsText(eb, ctx, 'sites.title', value),
        containsText(eb, ctx, 'sites.subdomain', value),
      ]),
      { upstream: false },
    ),
  },
});
