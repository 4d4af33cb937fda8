import { createContactNote, deleteContactNote, updateContactNote } from '../domain/contact-notes.js';
import { attr, defineResource, namedFilter, rel } from '../jsonapi/resource.js';

export const contactNotes = defineResource({
  type: 'contact_notes',
  table: 'contact_notes',
  description: 'Notes the site staff keep about a contact.',
  readPermission: 'view:contacts',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: '-created_at',
  attributes: {
    body: attr.string({ filter: ['cont'], description: 'Text of the note' }),
    created_at: attr.datetime({ sort: true, upstream: { sort: true } }),
    updated_at: attr.datetime({ sort: true, upstream: { sort: true } }),
  },
  relationships: { contact: rel.toOne('contacts', 'contact_id') },
  upstream: { list: ['sort', 'page[number]', 'page[size]'] },
  filters: {
    contact_id: namedFilter('id', 'Notes of one contact', (eb, id) => eb('contact_notes.contact_id', '=', id), { references: 'contacts' }),
  },
  write: {
    permission: 'manage:contacts',
    rules: { writable: ['body'], required: ['body'], relationships: { contact: { required: true } } },
    // A note stays with its contact.
    updateRules: { writable: ['body'] },
    create: createContactNote,
    update: updateContactNote,
    delete: deleteContactNote,
  },
});
