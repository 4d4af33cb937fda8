import { attr, defineResource, rel } from '../jsonapi/resource.js';

export const customFields = defineResource({
  type: 'custom_fields',
  table: 'custom_fields',
  description: 'Extra contact fields of a site; a contact carries their values as custom_1, custom_2 and custom_3.',
  readPermission: 'view:contacts',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: 'title',
  attributes: {
    title: attr.string({ sort: true, filter: ['eq', 'cont'], upstream: { sort: true, filter: ['cont'] }, description: 'Label shown to people' }),
    handle: attr.string({ sort: true, filter: ['eq'], upstream: { sort: true }, description: 'Attribute name on contacts: custom_1, custom_2 or custom_3' }),
    type: attr.string({
      column: 'field_type',
      sort: true,
      filter: ['eq', 'in'],
      upstream: { sort: true, filter: ['eq'] },
      enum: ['TextField', 'TextArea', 'SelectField', 'CheckboxField', 'DateField'],
      description: 'Kind of input',
    }),
    required: attr.boolean({ sort: true, filter: ['eq'], upstream: { sort: true, filter: ['eq'] } }),
  },
  relationships: { site: rel.toOne('sites', 'site_id') },
  upstream: { show: ['fields'] },
});
