import { attr, defineResource, rel } from '../jsonapi/resource.js';

export const contactTags = defineResource({
  type: 'contact_tags',
  table: 'contact_tags',
  description: 'Tags of a site, applied to contacts to segment them.',
  readPermission: 'view:contacts',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: 'name',
  attributes: {
    name: attr.string({ sort: true, filter: ['eq', 'cont', 'start', 'end'], upstream: { sort: true, filter: ['cont'] }, description: 'Tag name, unique within the site' }),
  },
  relationships: { site: rel.toOne('sites', 'site_id') },
  upstream: { show: [] },
});
