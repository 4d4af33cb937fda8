import { submitForm } from '../domain/form-submissions.js';
import { attr, defineResource, namedFilter, rel } from '../jsonapi/resource.js';

export const forms = defineResource({
  type: 'forms',
  table: 'forms',
  description: 'Opt-in forms of a site. A submission creates or updates a contact and applies the form’s tags, offer and sequences.',
  readPermission: 'view:forms',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: 'title',
  attributes: {
    title: attr.string({ sort: true, nullable: true, filter: ['eq', 'cont'], upstream: { sort: true, filter: ['cont'] } }),
    description: attr.string({ nullable: true, description: 'Text shown above the form', upstream: false }),
    default: attr.boolean({ column: 'is_default', description: 'The site’s default form' }),
    // The column is text on both databases (JSON written as text), so it is parsed here rather
    // than by the json codec, which expects PostgreSQL to hand back parsed jsonb.
    webhook_url: attr.json({ nullable: true, description: 'Where submissions are also posted, if anywhere' }),
    url: attr.string({ description: 'Public page of the form' }),
    created_at: attr.datetime({ sort: true }),
    updated_at: attr.datetime(),
  },
  relationships: {
    site: rel.toOne('sites', 'site_id'),
    offer: rel.toOne('offers', 'offer_id'),
    fields: rel.toMany('form_fields', 'form_id'),
    // The tags a submission applies to the contact (src/domain/form-submissions.ts).
    contact_tags: rel.toManyThrough('contact_tags', { table: 'form_tags', sourceKey: 'form_id', targetKey: 'contact_tag_id' }),
  },
  actions: {
    submit: {
      permission: 'manage:form_submissions',
      description:
        'Submits the form for a person: creates or updates the contact by email, records the submission, applies the form’s tags, offer and email sequences, and subscribes the contact (with double opt-in: records a confirmation email instead).',
      body: {
        type: 'form_submissions',
        rules: {
          writable: ['name', 'email', 'phone_number', 'business_number', 'address_line_1', 'address_line_2', 'address_city', 'address_state', 'address_country', 'address_zip', 'custom_1', 'custom_2', 'custom_3'],
          required: ['name', 'email'],
          // Kept on the contact; a submission row has no column for it.
          extraAttributes: { mobile_phone_number: 'string' },
        },
      },
      run: submitForm,
    },
  },
});

export const formFields = defineResource({
  type: 'form_fields',
  table: 'form_fields',
  description: 'A field of a form. Reached through forms?include=fields.',
  readPermission: 'view:forms',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: 'position',
  routes: { list: false, show: false },
  attributes: {
    title: attr.string({ nullable: true }),
    type: attr.string({ column: 'field_type', enum: ['name', 'email', 'phone_number', 'TextField', 'TextArea', 'SelectField', 'CheckboxField'] }),
    required: attr.boolean(),
    handle: attr.string({ description: 'Submission attribute the field fills: name, email, custom_1, ...' }),
    select_options: attr.string({ nullable: true, description: 'Choices of a select field, one per line' }),
    editable: attr.boolean(),
  },
  sorts: { position: (eb) => eb.ref('form_fields.position') },
  relationships: { form: rel.toOne('forms', 'form_id') },
});

const text = () => attr.string({ nullable: true });

export const formSubmissions = defineResource({
  type: 'form_submissions',
  table: 'form_submissions',
  description: 'What people entered in forms.',
  readPermission: 'view:form_submissions',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: '-created_at',
  attributes: {
    name: attr.string({ sort: true, filter: ['cont'], upstream: { sort: true } }),
    email: attr.string({ sort: true, filter: ['eq', 'cont'], upstream: { sort: true } }),
    phone_number: text(),
    business_number: text(),
    address_line_1: text(),
    address_line_2: text(),
    address_city: text(),
    address_state: text(),
    address_country: text(),
    address_zip: text(),
    custom_1: text(),
    custom_2: text(),
    custom_3: text(),
  },
  sorts: { created_at: (eb) => eb.ref('form_submissions.created_at') },
  upstream: { list: ['sort', 'page[number]', 'page[size]'], show: ['include'], sorts: ['created_at'] },
  relationships: {
    site: rel.toOne('sites', 'site_id'),
    form: rel.toOne('forms', 'form_id'),
  },
  filters: {
    form_id: namedFilter('id', 'Submissions of one form', (eb, id) => eb('form_submissions.form_id', '=', id), { references: 'forms' }),
  },
});
