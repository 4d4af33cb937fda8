// GET /v1/forms, GET /v1/forms/{id} (with include=fields) and GET /v1/form_submissions(/{id}).
// Forms read with view:forms, submissions with view:form_submissions.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { formSubmissions, forms } from '../../src/resources/forms.js';
import { DIALECTS } from '../support/harness.js';
import {
  adjustAll,
  assertIncludedDistinct,
  assertUpstream,
  at,
  createWorld,
  getJson,
  includedKeys,
  readResourceTests,
  selfUrl,
  withoutNullToOne,
  withoutSeedOnlyAttributes,
  type UpstreamCheck,
  type World,
} from '../support/catalogue-fixtures.js';

const FORMS_UPSTREAM: UpstreamCheck = {
  list: '/v1/forms',
  show: '/v1/forms/{id}',
  adjust: adjustAll(
    // The seed gives forms a `description` attribute that upstream's form_attributes lacks. The
    // seed wins: it is left out of the check and every other attribute stays strict.
    withoutSeedOnlyAttributes({ forms: ['description'] }),
    // A form without an offer renders `offer: { data: null }`; upstream types the data as an object.
    withoutNullToOne({ forms: ['offer'] }),
  ),
};
const SUBMISSIONS_UPSTREAM: UpstreamCheck = { list: '/v1/form_submissions', show: '/v1/form_submissions/{id}' };

for (const dialect of DIALECTS) {
  describe(`forms and form submissions [${dialect}]`, () => {
    let w: World;
    let offerId: string;
    const fm = { newsletter: '', untitled: '', webinar: '', guide: '', second: '', foreign: '' };
    const fld = { email: '', name: '', plan: '' };
    const s = { zoe: '', adam: '', mia: '', ben: '', second: '', foreign: '' };
    const tg = { lead: '', webinar: '', unused: '' };

    before(async () => {
      w = await createWorld(dialect);
      const { rows, siteId } = w;
      offerId = await rows.offer(siteId, { title: 'Lead Magnet' });
      fm.newsletter = await rows.form(siteId, {
        title: 'Newsletter Signup',
        description: 'Join the list',
        is_default: true,
        webhook_url: { url: 'https://hooks.example.com/newsletter', method: 'POST' },
        url: 'https://example.com/forms/newsletter',
        offer_id: Number(offerId),
        created_at: at('2026-01-01T09:00:00.000Z'),
      });
      fm.untitled = await rows.form(siteId, { title: null, created_at: at('2026-02-01T09:00:00.000Z') });
      // Created at the same moment as the newsletter form: the id breaks the tie.
      fm.webinar = await rows.form(siteId, { title: 'Webinar Registration', created_at: at('2026-01-01T09:00:00.000Z') });
      fm.guide = await rows.form(siteId, { title: 'Free Guide', created_at: at('2026-03-01T09:00:00.000Z') });
      fm.second = await rows.form(w.secondSiteId, { title: 'Newsletter Signup' });
      fm.foreign = await rows.form(w.other.siteId, { title: 'Newsletter Signup' });

      // Fields created out of order: position orders them.
      fld.email = await rows.formField(siteId, fm.newsletter, 2, { title: 'Email', field_type: 'email', required: true, handle: 'email', editable: false });
      fld.name = await rows.formField(siteId, fm.newsletter, 1, { title: 'Name', field_type: 'name', required: false, handle: 'name' });
      fld.plan = await rows.formField(siteId, fm.newsletter, 3, {
        title: 'Plan',
        field_type: 'SelectField',
        handle: 'custom_1',
        select_options: 'Basic\nPro',
      });
      await rows.formField(siteId, fm.webinar, 1, { title: 'Email', field_type: 'email', handle: 'email' });

      // The tags a submission applies (form_tags), linked out of id order.
      tg.webinar = await rows.contactTag(siteId, { name: 'Webinar' });
      tg.lead = await rows.contactTag(siteId, { name: 'Lead' });
      tg.unused = await rows.contactTag(siteId, { name: 'Unused' });
      await rows.link('form_tags', { form_id: Number(fm.newsletter), contact_tag_id: Number(tg.lead) });
      await rows.link('form_tags', { form_id: Number(fm.newsletter), contact_tag_id: Number(tg.webinar) });
      await rows.link('form_tags', { form_id: Number(fm.webinar), contact_tag_id: Number(tg.webinar) });

      const submit = (form: string, name: string, email: string, created: string, extra = {}) =>
        rows.formSubmission(siteId, form, { name, email, created_at: at(created), ...extra });
      s.zoe = await submit(fm.newsletter, 'Zoe Zimmer', 'zoe@example.com', '2026-05-01T10:00:00.000Z', {
        phone_number: '+1 555 0100',
        business_number: '+1 555 0199',
        address_line_1: '1 Main St',
        address_line_2: 'Suite 2',
        address_city: 'Springfield',
        address_state: 'IL',
        address_country: 'US',
        address_zip: '62701',
        custom_1: 'Pro',
        custom_2: null,
        custom_3: 'yes',
      });
      s.adam = await submit(fm.webinar, 'Adam Apple', 'adam@work.example', '2026-05-01T11:00:00.000Z');
      // Submitted at the same moment as Adam: the id breaks the tie.
      s.mia = await submit(fm.newsletter, 'Mia Moss', 'amia@example.com', '2026-05-01T11:00:00.000Z');
      s.ben = await submit(fm.guide, 'Ben Brook', 'ben@work.example', '2026-05-01T12:00:00.000Z');
      s.second = await rows.formSubmission(w.secondSiteId, fm.second, { name: 'Zoe Zimmer' });
      s.foreign = await rows.formSubmission(w.other.siteId, fm.foreign, { name: 'Zoe Zimmer' });
    });
    after(() => w.t.close());

    const site = () => ({ data: { type: 'sites', id: w.siteId } });
    const fieldsOf = (ids: string[]) => ({ data: ids.map((id) => ({ type: 'form_fields', id })) });
    const tagsOf = (ids: string[]) => ({ data: ids.map((id) => ({ type: 'contact_tags', id })) });
    const newsletter = () => ({
      id: fm.newsletter,
      type: 'forms',
      attributes: {
        title: 'Newsletter Signup',
        description: 'Join the list',
        default: true,
        webhook_url: { url: 'https://hooks.example.com/newsletter', method: 'POST' },
        url: 'https://example.com/forms/newsletter',
        created_at: '2026-01-01T09:00:00.000Z',
        updated_at: '2026-01-01T09:00:00.000Z',
      },
      relationships: {
        site: site(),
        offer: { data: { type: 'offers', id: offerId } },
        fields: fieldsOf([fld.name, fld.email, fld.plan]),
        // In the tags' own order (name).
        contact_tags: tagsOf([tg.lead, tg.webinar]),
      },
      links: { self: selfUrl('forms', fm.newsletter) },
    });

    describe('forms', () => {
      readResourceTests({
        resource: forms,
        world: () => w,
        fixtures: () => fm,
        upstream: FORMS_UPSTREAM,
        // Untitled forms sort last.
        all: () => [fm.guide, fm.newsletter, fm.webinar, fm.untitled],
        sorts: {
          title: () => [fm.guide, fm.newsletter, fm.webinar, fm.untitled],
          created_at: () => [fm.newsletter, fm.webinar, fm.untitled, fm.guide],
        },
        filters: [
          { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [fm.second] },
          { name: 'title_eq', query: () => 'filter[title_eq]=Free Guide', expect: () => [fm.guide] },
          { name: 'title_cont', query: () => 'filter[title_cont]=SIGN', expect: () => [fm.newsletter] },
        ],
        sparse: ['title', 'description'],
        show: newsletter,
        foreign: () => fm.foreign,
      });

      it('shows a form with include=fields, in position order', async () => {
        const res = await getJson(w, `/v1/forms/${fm.newsletter}?include=fields`);
        assertUpstream(FORMS_UPSTREAM, 'show', res);
        const body = res.json();
        assert.deepEqual(body.data, newsletter());
        assertIncludedDistinct(body);
        assert.deepEqual(includedKeys(body), [fld.name, fld.email, fld.plan].map((id) => `form_fields:${id}`));
        assert.deepEqual(body.included[2], {
          id: fld.plan,
          type: 'form_fields',
          attributes: { title: 'Plan', type: 'SelectField', required: false, handle: 'custom_1', select_options: 'Basic\nPro', editable: true },
          relationships: { form: { data: { type: 'forms', id: fm.newsletter } } },
        });
        assert.deepEqual(body.included[1].attributes, {
          title: 'Email',
          type: 'email',
          required: true,
          handle: 'email',
          select_options: null,
          editable: false,
        });
      });

      it('shows a form with upstream’s include=fields,site,offer,contact_tags: the tags a submission applies', async () => {
        const res = await getJson(w, `/v1/forms/${fm.newsletter}?include=fields,site,offer,contact_tags`);
        assertUpstream(FORMS_UPSTREAM, 'show', res);
        const body = res.json();
        assert.deepEqual(body.data, newsletter());
        assertIncludedDistinct(body);
        assert.deepEqual(includedKeys(body).sort(), [
          ...[fld.name, fld.email, fld.plan].map((id) => `form_fields:${id}`),
          `sites:${w.siteId}`,
          `offers:${offerId}`,
          `contact_tags:${tg.webinar}`,
          `contact_tags:${tg.lead}`,
        ].sort());
        const lead = body.included.find((r: { type: string; id: string }) => r.type === 'contact_tags' && r.id === tg.lead);
        assert.equal(lead.attributes.name, 'Lead');
      });

      it('takes upstream’s fields[fields] (the included relationship’s name) for the fields of form_fields', async () => {
        const res = await getJson(w, `/v1/forms/${fm.newsletter}?include=fields&fields[forms]=title,webhook_url&&fields[fields]=title`);
        assertUpstream(FORMS_UPSTREAM, 'show', res);
        const body = res.json();
        assert.deepEqual(Object.keys(body.data.attributes), ['title', 'webhook_url']);
        assert.deepEqual(body.included.map((r: { attributes: object }) => Object.keys(r.attributes)), [['title'], ['title'], ['title']]);
      });

      it('lists forms with include=contact_tags, each tag once', async () => {
        const res = await getJson(w, `/v1/forms?filter[site_id]=${w.siteId}&include=contact_tags`);
        assertUpstream(FORMS_UPSTREAM, 'list', res);
        const body = res.json();
        assertIncludedDistinct(body);
        assert.deepEqual(includedKeys(body).sort(), [`contact_tags:${tg.lead}`, `contact_tags:${tg.webinar}`].sort());
        assert.deepEqual(body.data.find((d: { id: string }) => d.id === fm.webinar).relationships.contact_tags, tagsOf([tg.webinar]));
      });

      it('renders a form without title, offer or fields', async () => {
        const res = await getJson(w, `/v1/forms/${fm.untitled}?include=fields`);
        assertUpstream(FORMS_UPSTREAM, 'show', res);
        const data = res.json().data;
        assert.equal(data.attributes.title, null);
        assert.equal(data.attributes.description, null);
        assert.equal(data.attributes.webhook_url, null);
        assert.equal(data.attributes.default, false);
        assert.deepEqual(data.relationships, { site: site(), offer: { data: null }, fields: fieldsOf([]), contact_tags: tagsOf([]) });
        assert.deepEqual(res.json().included, []);
      });

      it('lists forms with include=fields, each field once under its form', async () => {
        const res = await getJson(w, `/v1/forms?filter[site_id]=${w.siteId}&include=fields&fields[form_fields]=title`);
        assertUpstream(FORMS_UPSTREAM, 'list', res);
        const body = res.json();
        assertIncludedDistinct(body);
        assert.equal(body.included.length, 4);
        assert.deepEqual(body.data.find((d: { id: string }) => d.id === fm.webinar).relationships.fields.data.length, 1);
      });
    });

    describe('form_submissions', () => {
      readResourceTests({
        resource: formSubmissions,
        world: () => w,
        fixtures: () => s,
        upstream: SUBMISSIONS_UPSTREAM,
        all: () => [s.ben, s.mia, s.adam, s.zoe],
        sorts: {
          name: () => [s.adam, s.ben, s.mia, s.zoe],
          email: () => [s.adam, s.mia, s.ben, s.zoe],
          created_at: () => [s.zoe, s.adam, s.mia, s.ben],
        },
        filters: [
          { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [s.second] },
          { name: 'form_id', query: () => `filter[form_id]=${fm.newsletter}`, expect: () => [s.zoe, s.mia] },
          { name: 'name_cont', query: () => 'filter[name_cont]=MO', expect: () => [s.mia] },
          { name: 'email_eq', query: () => 'filter[email_eq]=ben@work.example', expect: () => [s.ben] },
          { name: 'email_cont', query: () => 'filter[email_cont]=WORK', expect: () => [s.adam, s.ben] },
        ],
        sparse: ['name', 'email'],
        show: () => ({
          id: s.zoe,
          type: 'form_submissions',
          attributes: {
            name: 'Zoe Zimmer',
            email: 'zoe@example.com',
            phone_number: '+1 555 0100',
            business_number: '+1 555 0199',
            address_line_1: '1 Main St',
            address_line_2: 'Suite 2',
            address_city: 'Springfield',
            address_state: 'IL',
            address_country: 'US',
            address_zip: '62701',
            custom_1: 'Pro',
            custom_2: null,
            custom_3: 'yes',
          },
          relationships: { site: site(), form: { data: { type: 'forms', id: fm.newsletter } } },
          links: { self: selfUrl('form_submissions', s.zoe) },
        }),
        foreign: () => s.foreign,
      });

      it('answers 404 for filter[form_id] naming another account’s form', async () => {
        const res = await getJson(w, `/v1/form_submissions?filter[site_id]=${w.siteId}&filter[form_id]=${fm.foreign}`, 404);
        assert.equal(res.json().errors[0].source.parameter, 'filter[form_id]');
      });
    });
  });
}
