import { addContactTags, removeContactTags, replaceContactTags } from '../domain/contact-tags.js';
import { createContact, CUSTOM_FIELDS, deleteContact, PLAIN, updateContact } from '../domain/contacts.js';
import { contactOfferGrants } from '../domain/offer-grants.js';
import { attr, defineResource, rel } from '../jsonapi/resource.js';
import { contactFilterFamily } from './contact-filters.js';

const text = (description: string) => attr.string({ nullable: true, description });

const WRITABLE = ['name', 'email', ...PLAIN, 'subscribed', 'external_user_id', ...CUSTOM_FIELDS];

export const contacts = defineResource({
  type: 'contacts',
  table: 'contacts',
  description:
    'People known to a site: leads, subscribers and members. A contact who becomes a member (an offer grant or a purchase) also has a customer record. Deleting a contact removes what is only about the person (tags, notes, grants, memberships, form submissions, email activity) and never money: its customer record stays, detached, with its purchases, transactions, orders and net revenue.',
  readPermission: 'view:contacts',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: '-created_at',
  attributes: {
    name: attr.string({ sort: true, description: 'Full name', upstream: { sort: true } }),
    email: attr.string({ sort: true, description: 'Email address, lower-cased', upstream: { sort: true } }),
    address_line_1: text('Street address'),
    address_line_2: text('Apartment, suite or unit'),
    address_city: text('City'),
    address_state: text('State or region'),
    address_country: text('Country'),
    address_zip: text('Postal code'),
    phone_number: text('Phone number'),
    business_number: text('Business phone or registration number'),
    subscribed: attr.boolean({ description: 'Subscribed to marketing email' }),
    external_user_id: attr.string({
      nullable: true,
      description: "The customer's external_user_id; null for contacts without a customer record",
      sql: (eb) =>
        eb.selectFrom('customers as contact_customer').select('contact_customer.external_user_id').whereRef('contact_customer.contact_id', '=', 'contacts.id'),
    }),
    custom_1: text('Value of the custom field with handle custom_1'),
    custom_2: text('Value of the custom field with handle custom_2'),
    custom_3: text('Value of the custom field with handle custom_3'),
    created_at: attr.datetime({ sort: true, upstream: { sort: true } }),
    updated_at: attr.datetime(),
  },
  relationships: {
    site: rel.toOne('sites', 'site_id'),
    customer: rel.hasOne('customers', 'contact_id', { resourceLink: true }),
    offers: rel.toManyThrough(
      'offers',
      { table: 'offer_grants', sourceKey: 'contact_id', targetKey: 'offer_id' },
      {
        links: true,
        linkage: false,
        where: (eb) => eb('offer_grants.revoked_at', 'is', null),
        write: { permission: 'manage:customers', ...contactOfferGrants },
      },
    ),
    tags: rel.toManyThrough(
      'contact_tags',
      { table: 'contact_taggings', sourceKey: 'contact_id', targetKey: 'contact_tag_id' },
      { links: true, write: { permission: 'manage:contacts', add: addContactTags, replace: replaceContactTags, remove: removeContactTags } },
    ),
  },
  filters: contactFilterFamily({ table: 'contacts', contactId: 'contacts.id', createdAt: 'contacts.created_at', noun: 'contact' }),
  write: {
    permission: 'manage:contacts',
    rules: { writable: WRITABLE, required: ['email'], relationships: { site: { required: true } } },
    // A contact stays in its site.
    updateRules: { writable: WRITABLE },
    create: createContact,
    update: updateContact,
    delete: deleteContact,
  },
});

