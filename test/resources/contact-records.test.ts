// GET /v1/contact_tags, /v1/custom_fields and /v1/contact_notes (and their shows): the records a
// site keeps beside its contacts. Read with view:contacts.
import { after, before, describe } from 'node:test';
import { contactNotes } from '../../src/resources/contact-notes.js';
import { contactTags } from '../../src/resources/contact-tags.js';
import { customFields } from '../../src/resources/custom-fields.js';
import { DIALECTS } from '../support/harness.js';
import { at, createWorld, selfUrl, readResourceTests, type World } from '../support/catalogue-fixtures.js';

for (const dialect of DIALECTS) {
  describe(`contact tags, custom fields and contact notes [${dialect}]`, () => {
    let w: World;
    const f = {
      tags: { alpha: '', beta: '', gamma: '', delta: '', second: '', foreign: '' },
      fields: { company: '', birthday: '', plan: '', bio: '', second: '', foreign: '' },
      notes: { n1: '', n2: '', n3: '', n4: '', second: '', foreign: '' },
      contacts: { c1: '', c2: '' },
    };

    before(async () => {
      w = await createWorld(dialect);
      const { rows, siteId, secondSiteId, other } = w;

      f.tags.alpha = await rows.contactTag(siteId, { name: 'Alpha Lead' });
      f.tags.beta = await rows.contactTag(siteId, { name: 'Beta Buyer' });
      f.tags.gamma = await rows.contactTag(siteId, { name: 'Gamma VIP' });
      f.tags.delta = await rows.contactTag(siteId, { name: 'Delta Lead' });
      f.tags.second = await rows.contactTag(secondSiteId, { name: 'Alpha Lead' });
      f.tags.foreign = await rows.contactTag(other.siteId, { name: 'Alpha Lead' });

      f.fields.company = await rows.customField(siteId, { title: 'Company', handle: 'custom_1', field_type: 'TextField', required: false });
      f.fields.birthday = await rows.customField(siteId, { title: 'Birthday', handle: 'custom_2', field_type: 'DateField', required: true });
      f.fields.plan = await rows.customField(siteId, { title: 'Plan', handle: 'custom_3', field_type: 'SelectField', required: false });
      f.fields.bio = await rows.customField(siteId, { title: 'Bio', handle: 'custom_4', field_type: 'TextArea', required: true });
      f.fields.second = await rows.customField(secondSiteId, { title: 'Company', handle: 'custom_1' });
      f.fields.foreign = await rows.customField(other.siteId, { title: 'Company', handle: 'custom_1' });

      f.contacts.c1 = await rows.contact(siteId, { name: 'Nora Note' });
      f.contacts.c2 = await rows.contact(siteId, { name: 'Ned Note' });
      const note = (contact: string, body: string, created: string, updated: string) =>
        rows.contactNote(siteId, contact, { body, created_at: at(created), updated_at: at(updated) });
      f.notes.n1 = await note(f.contacts.c1, 'Called about the renewal', '2026-05-01T10:00:00.000Z', '2026-05-01T10:00:00.000Z');
      f.notes.n2 = await note(f.contacts.c2, 'Asked for an invoice', '2026-05-01T11:00:00.000Z', '2026-05-01T13:00:00.000Z');
      f.notes.n3 = await note(f.contacts.c1, 'Renewal signed', '2026-05-01T12:00:00.000Z', '2026-05-01T12:00:00.000Z');
      // Created at the same moment as n2: the id breaks the tie.
      f.notes.n4 = await note(f.contacts.c2, 'Follow up next week', '2026-05-01T11:00:00.000Z', '2026-05-01T11:30:00.000Z');
      f.notes.second = await rows.contactNote(secondSiteId, await rows.contact(secondSiteId), { body: 'Elsewhere' });
      f.notes.foreign = await rows.contactNote(other.siteId, await rows.contact(other.siteId), { body: 'Not yours' });
    });
    after(() => w.t.close());

    const site = () => ({ data: { type: 'sites', id: w.siteId } });

    describe('contact_tags', () => {
      const t = f.tags;
      readResourceTests({
        resource: contactTags,
        world: () => w,
        fixtures: () => f,
        upstream: { list: '/v1/contact_tags', show: '/v1/contact_tags/{id}' },
        all: () => [t.alpha, t.beta, t.delta, t.gamma],
        sorts: { name: () => [t.alpha, t.beta, t.delta, t.gamma] },
        filters: [
          { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [t.second] },
          { name: 'name_eq', query: () => 'filter[name_eq]=Beta Buyer', expect: () => [t.beta] },
          { name: 'name_cont', query: () => 'filter[name_cont]=TA', expect: () => [t.beta, t.delta] },
          { name: 'name_start', query: () => 'filter[name_start]=ga', expect: () => [t.gamma] },
          { name: 'name_end', query: () => 'filter[name_end]=lead', expect: () => [t.alpha, t.delta] },
        ],
        sparse: ['name'],
        show: () => ({
          id: t.gamma,
          type: 'contact_tags',
          attributes: { name: 'Gamma VIP' },
          relationships: { site: site() },
          links: { self: selfUrl('contact_tags', t.gamma) },
        }),
        foreign: () => t.foreign,
      });
    });

    describe('custom_fields', () => {
      const c = f.fields;
      readResourceTests({
        resource: customFields,
        world: () => w,
        fixtures: () => f,
        upstream: { list: '/v1/custom_fields', show: '/v1/custom_fields/{id}' },
        all: () => [c.bio, c.birthday, c.company, c.plan],
        sorts: {
          title: () => [c.bio, c.birthday, c.company, c.plan],
          handle: () => [c.company, c.birthday, c.plan, c.bio],
          type: () => [c.birthday, c.plan, c.bio, c.company],
          // false before true; equal values in id order.
          required: () => [c.company, c.plan, c.birthday, c.bio],
        },
        filters: [
          { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [c.second] },
          { name: 'title_eq', query: () => 'filter[title_eq]=Plan', expect: () => [c.plan] },
          { name: 'title_cont', query: () => 'filter[title_cont]=BI', expect: () => [c.bio, c.birthday] },
          { name: 'handle_eq', query: () => 'filter[handle_eq]=custom_2', expect: () => [c.birthday] },
          { name: 'type_eq', query: () => 'filter[type_eq]=TextField', expect: () => [c.company] },
          { name: 'type_in', query: () => 'filter[type_in]=DateField,TextArea', expect: () => [c.birthday, c.bio] },
          { name: 'required_eq', query: () => 'filter[required_eq]=true', expect: () => [c.birthday, c.bio] },
        ],
        sparse: ['title', 'type'],
        show: () => ({
          id: c.birthday,
          type: 'custom_fields',
          attributes: { title: 'Birthday', handle: 'custom_2', type: 'DateField', required: true },
          relationships: { site: site() },
          links: { self: selfUrl('custom_fields', c.birthday) },
        }),
        foreign: () => c.foreign,
      });
    });

    describe('contact_notes', () => {
      const n = f.notes;
      readResourceTests({
        resource: contactNotes,
        world: () => w,
        fixtures: () => f,
        upstream: { list: '/v1/contact_notes', show: '/v1/contact_notes/{id}' },
        all: () => [n.n3, n.n4, n.n2, n.n1],
        sorts: {
          created_at: () => [n.n1, n.n2, n.n4, n.n3],
          updated_at: () => [n.n1, n.n4, n.n3, n.n2],
        },
        filters: [
          { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [n.second] },
          { name: 'contact_id', query: () => `filter[contact_id]=${f.contacts.c1}`, expect: () => [n.n1, n.n3] },
          { name: 'body_cont', query: () => 'filter[body_cont]=INVOICE', expect: () => [n.n2] },
        ],
        sparse: ['body'],
        show: () => ({
          id: n.n2,
          type: 'contact_notes',
          attributes: { body: 'Asked for an invoice', created_at: '2026-05-01T11:00:00.000Z', updated_at: '2026-05-01T13:00:00.000Z' },
          relationships: { contact: { data: { type: 'contacts', id: f.contacts.c2 } } },
          links: { self: selfUrl('contact_notes', n.n2) },
        }),
        foreign: () => n.foreign,
      });
    });
  });
}
