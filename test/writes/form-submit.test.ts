// POST /v1/forms/{id}/submit: a new and an existing contact, the form's tags, offer and email
// sequences applied (seen through the contact filters), double and single opt-in, the outbox
// events and outgoing messages, every refusal with its status and pointer, and proof that a
// refused submission wrote nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { builders, type Builders } from '../support/builders.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from '../support/harness.js';
import { assertResponseMatchesUpstream } from '../support/upstream.js';
import { assertError, otherAccount, rowCounts, send, type Res } from '../support/writes.js';

const TABLES = [
  'contacts',
  'customers',
  'form_submissions',
  'contact_taggings',
  'offer_grants',
  'memberships',
  'email_sequence_subscriptions',
  'outbox_events',
  'outgoing_messages',
];

for (const dialect of DIALECTS) {
  describe(`form submit [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let b: Builders;
    let tagA: number;
    let tagB: number;
    let product: number;
    let offer: number;
    let sequence: number;
    /** Tags A and B, the offer, the sequence; single opt-in. */
    let fullForm: number;
    /** No tags, offer or sequences; double opt-in. */
    let doubleForm: number;
    let foreignForm: number;

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      b = builders(t);
      tagA = await b.tag('Lead');
      tagB = await b.tag('Webinar');
      product = await b.product({ title: 'Starter course' });
      offer = await b.offer({ title: 'Free starter', payment_type: 'free', productIds: [product] });
      sequence = await b.sequence({ title: 'Welcome series' });
      fullForm = await b.form({ title: 'Webinar sign-up', offer_id: offer, double_opt_in: false });
      doubleForm = await b.form({ title: 'Newsletter', double_opt_in: true });
      const db = t.handle.db;
      await db.insertInto('form_tags').values([{ form_id: fullForm, contact_tag_id: tagA }, { form_id: fullForm, contact_tag_id: tagB }]).execute();
      await db.insertInto('form_email_sequences').values({ form_id: fullForm, email_sequence_id: sequence }).execute();
      const other = await otherAccount(t);
      foreignForm = await b.forSite(other.siteId).form({ title: 'Not yours' });
    });
    after(() => t.close());

    const body = (attributes: Record<string, unknown>, type = 'form_submissions') => ({ data: { type, attributes } });
    const submit = (formId: number | string, doc: unknown, as = token, contentType?: string) =>
      send(t, 'POST', `/v1/forms/${formId}/submit`, as, doc, contentType);
    const contactByEmail = (email: string) =>
      t.handle.db.selectFrom('contacts').selectAll().where('site_id', '=', t.tenant.siteId).where('email', '=', email).executeTakeFirst();
    const contactIds = async (query: string): Promise<string[]> => {
      const res = await t.get(`/v1/contacts?${query}&page[size]=100`, token);
      assert.equal(res.statusCode, 200, res.body);
      return (res.json().data as Array<{ id: string }>).map((c) => c.id).sort();
    };
    /** Events of a type, with the ids of their payload's records ("contacts 7") and the tag's name. */
    const eventsOf = async (type: string) =>
      (await t.handle.db.selectFrom('outbox_events').selectAll().where('event_type', '=', type).orderBy('id').execute()).map((e) => {
        const payload = t.handle.traits.decodeJson(e.payload) as Array<{ type: string; id: string; attributes: Record<string, unknown> }>;
        return { ...e, payload, records: payload.map((r) => `${r.type} ${r.id}`), contactId: String(e.resource_id) };
      });

    async function refused(run: () => Promise<Res>, status: number, code?: string, pointer?: string): Promise<Res> {
      const counts = await rowCounts(t, TABLES);
      const res = await run();
      assertError(res, status, code, pointer);
      assert.deepEqual(await rowCounts(t, TABLES), counts, 'a refused submission adds no row anywhere');
      return res;
    }

    it('creates the contact, records the submission and applies tags, offer and sequences: 201 with Location', async () => {
      const res = await submit(
        fullForm,
        body({ name: ' Grace Hopper ', email: '  Grace@Example.COM ', phone_number: '555-0100', address_city: 'Arlington', mobile_phone_number: '555-0199' }),
      );
      assert.equal(res.statusCode, 201, res.body);
      assertResponseMatchesUpstream('post', '/v1/forms/{id}/submit', res);
      const doc = res.json();
      const self = `${PUBLIC_URL}/v1/form_submissions/${doc.data.id}`;
      assert.equal(res.headers.location, self);
      assert.deepEqual(doc.links, { self, current: self });
      assert.equal(doc.data.type, 'form_submissions');
      assert.equal(doc.data.attributes.name, 'Grace Hopper');
      assert.equal(doc.data.attributes.email, 'grace@example.com', 'the email is trimmed and lower-cased');
      assert.equal(doc.data.attributes.phone_number, '555-0100');
      assert.equal(doc.data.attributes.address_city, 'Arlington');
      assert.equal(doc.data.attributes.address_zip, null);
      assert.deepEqual(doc.data.relationships.form.data, { type: 'forms', id: String(fullForm) });
      assert.deepEqual(doc.data.relationships.site.data, { type: 'sites', id: String(t.tenant.siteId) });

      const contact = await contactByEmail('grace@example.com');
      assert.ok(contact, 'the contact was created');
      const id = String(contact.id);
      assert.equal(contact.name, 'Grace Hopper');
      assert.equal(contact.phone_number, '555-0100');
      assert.equal(contact.mobile_phone_number, '555-0199', 'the mobile number goes to the contact');
      assert.equal(contact.address_city, 'Arlington');
      assert.equal(t.handle.traits.decodeBoolean(contact.subscribed), true, 'single opt-in subscribes at once');
      assert.equal(new Date(String(contact.subscribed_at)).toISOString(), t.clock.now().toISOString());
      const row = await t.handle.db.selectFrom('form_submissions').select('contact_id').where('id', '=', Number(doc.data.id)).executeTakeFirstOrThrow();
      assert.equal(String(row.contact_id), id, 'the submission names its contact');

      assert.deepEqual(await contactIds(`filter[submitted_form_id]=${fullForm}`), [id]);
      assert.deepEqual(await contactIds(`filter[has_all_tag_id]=${tagA},${tagB}`), [id]);
      assert.deepEqual(await contactIds(`filter[has_tag_id]=${tagA}`), [id]);
      assert.deepEqual(await contactIds(`filter[subscribed_email_sequence_id]=${sequence}`), [id]);
      assert.deepEqual(await contactIds(`filter[has_offer_id]=${offer}`), [id]);
      const customers = await t.get(`/v1/customers?filter[has_offer_id]=${offer}`, token);
      assert.equal(customers.statusCode, 200, customers.body);
      assert.deepEqual(
        customers.json().data.map((c: { attributes: { email: string } }) => c.attributes.email),
        ['grace@example.com'],
        'the grant created the customer',
      );
      const memberships = await t.handle.db.selectFrom('memberships').selectAll().where('contact_id', '=', Number(id)).execute();
      assert.deepEqual(memberships.map((m) => Number(m.product_id)), [product], "the grant gives access to the offer's product");
      const listed = await t.get(`/v1/form_submissions?filter[form_id]=${fullForm}`, token);
      assert.deepEqual(listed.json().data.map((s: { id: string }) => s.id), [doc.data.id], 'the submission is listed under its form');

      const [submitted] = await eventsOf('form_submission');
      assert.ok(submitted, 'a form_submission event');
      assert.deepEqual(submitted.records, [`form_submissions ${doc.data.id}`, `forms ${fullForm}`], 'the submission and its form');
      assert.deepEqual(submitted.payload[0], doc.data, 'the submission as the API renders it');
      assert.equal(String(submitted.resource_id), doc.data.id, 'triggered by the submission');
      const tagged = (await eventsOf('tag_added')).filter((e) => e.contactId === id);
      assert.deepEqual(tagged.map((e) => e.records[1]).sort(), [`contact_tags ${tagA}`, `contact_tags ${tagB}`].sort(), 'one tag_added per new tagging');
      assert.deepEqual(
        tagged.find((e) => e.records[1] === `contact_tags ${tagA}`)?.records,
        [`contacts ${id}`, `contact_tags ${tagA}`],
        'the payload the tags endpoint writes too: the contact and the tag',
      );
      const messages = await t.handle.db.selectFrom('outgoing_messages').selectAll().where('to_email', '=', 'grace@example.com').where('kind', '=', 'double_opt_in').execute();
      assert.deepEqual(messages, [], 'single opt-in sends no confirmation');
      const welcome = await t.handle.db.selectFrom('outgoing_messages').select(['kind', 'contact_id']).where('to_email', '=', 'grace@example.com').execute();
      assert.deepEqual(welcome.map((m) => [m.kind, String(m.contact_id)]), [['customer_welcome', id]], "the offer's welcome email is recorded, once");
    });

    it('fills the blanks of an existing contact, never overwrites, and is idempotent for tags, offer and sequences', async () => {
      const existing = await b.contact({ name: 'Ada Lovelace', email: 'ada@example.com', phone_number: '111', address_city: null });
      await b.tagging(existing, tagA);
      const grantsBefore = await rowCounts(t, ['offer_grants']);
      const first = await submit(fullForm, body({ name: 'Ada L.', email: 'ADA@example.com', phone_number: '222', address_city: 'London', address_zip: null }));
      assert.equal(first.statusCode, 201, first.body);
      const contact = await contactByEmail('ada@example.com');
      assert.ok(contact, 'the contact is still there');
      assert.equal(Number(contact.id), existing, 'the existing contact is used, none created');
      assert.equal(contact.name, 'Ada Lovelace', 'the name is not overwritten');
      assert.equal(contact.phone_number, '111', 'a filled field is not overwritten');
      assert.equal(contact.address_city, 'London', 'a blank field is filled');
      assert.equal(first.json().data.attributes.name, 'Ada L.', 'the submission keeps what was entered');
      const tagEvents = (await eventsOf('tag_added')).filter((e) => e.contactId === String(existing));
      assert.deepEqual(tagEvents.map((e) => e.records[1]), [`contact_tags ${tagB}`], 'tag_added only for the tag the contact lacked');
      assert.deepEqual(await rowCounts(t, ['offer_grants']), { offer_grants: grantsBefore.offer_grants! + 1 }, 'one grant');

      const counts = await rowCounts(t, TABLES);
      const second = await submit(fullForm, body({ name: 'Ada', email: 'ada@example.com', address_city: null }));
      assert.equal(second.statusCode, 201, second.body);
      const after = await rowCounts(t, TABLES);
      assert.equal(after.form_submissions, counts.form_submissions! + 1, 'every submission is recorded');
      assert.equal(after.outbox_events, counts.outbox_events! + 1, 'only the form_submission event: no tag is new');
      for (const table of ['contacts', 'customers', 'contact_taggings', 'offer_grants', 'memberships', 'email_sequence_subscriptions', 'outgoing_messages']) {
        assert.equal(after[table], counts[table], `a repeated submission adds no ${table} row`);
      }
      assert.equal((await contactByEmail('ada@example.com'))?.address_city, 'London', 'null never clears a field');
    });

    it('double opt-in: not subscribed, a confirmation email recorded to the address', async () => {
      const res = await submit(doubleForm, body({ name: 'Linus', email: 'linus@example.com' }));
      assert.equal(res.statusCode, 201, res.body);
      const contact = await contactByEmail('linus@example.com');
      assert.ok(contact, 'the contact was created');
      assert.equal(t.handle.traits.decodeBoolean(contact.subscribed), false, 'double opt-in waits for the confirmation');
      assert.equal(contact.subscribed_at, null);
      const messages = await t.handle.db.selectFrom('outgoing_messages').selectAll().where('to_email', '=', 'linus@example.com').execute();
      assert.equal(messages.length, 1, 'one confirmation email');
      assert.equal(messages[0]!.kind, 'double_opt_in');
      assert.equal(Number(messages[0]!.contact_id), Number(contact.id));
      assert.equal(Number(messages[0]!.site_id), t.tenant.siteId);
      assert.deepEqual(await contactIds(`filter[submitted_form_id]=${doubleForm}`), [String(contact.id)]);
    });

    it('double opt-in for a contact already subscribed sends nothing and changes no consent', async () => {
      const subscribedAt = new Date('2026-01-01T00:00:00.000Z');
      const id = await b.contact({ email: 'subscribed@example.com', subscribed: true, subscribed_at: subscribedAt });
      const res = await submit(doubleForm, body({ name: 'Sub', email: 'subscribed@example.com' }));
      assert.equal(res.statusCode, 201, res.body);
      const contact = await contactByEmail('subscribed@example.com');
      assert.equal(Number(contact?.id), id);
      assert.equal(t.handle.traits.decodeBoolean(contact?.subscribed), true);
      assert.equal(new Date(String(contact?.subscribed_at)).toISOString(), subscribedAt.toISOString(), 'subscribed_at is kept');
      const messages = await t.handle.db.selectFrom('outgoing_messages').selectAll().where('to_email', '=', 'subscribed@example.com').execute();
      assert.deepEqual(messages, [], 'no confirmation for someone already subscribed');
    });

    it('refuses a missing or bad name and email with 422 at the attribute, writing nothing', async () => {
      await refused(() => submit(fullForm, body({ email: 'x@example.com' })), 422, 'missing_attribute', '/data/attributes/name');
      await refused(() => submit(fullForm, body({ name: '  ', email: 'x@example.com' })), 422, 'missing_attribute', '/data/attributes/name');
      await refused(() => submit(fullForm, body({ name: 'X' })), 422, 'missing_attribute', '/data/attributes/email');
      await refused(() => submit(fullForm, body({ name: 'X', email: null })), 422, undefined, '/data/attributes/email');
      await refused(() => submit(fullForm, body({ name: 'X', email: 'not-an-email' })), 422, 'invalid_email', '/data/attributes/email');
      await refused(() => submit(fullForm, body({ name: 'X', email: 'a b@example.com' })), 422, 'invalid_email', '/data/attributes/email');
      await refused(() => submit(fullForm, body({ name: 'X', email: 42 })), 422, 'invalid_attribute', '/data/attributes/email');
      await refused(() => submit(fullForm, body({ name: 'X', email: 'x@example.com', custom_1: 'No such field' })), 422, 'unknown_custom_field', '/data/attributes/custom_1');
    });

    it('refuses documents of the wrong shape, type or attributes, writing nothing', async () => {
      await refused(() => submit(fullForm, body({ name: 'X', email: 'x@example.com' }, 'contacts')), 409, 'type_mismatch', '/data/type');
      await refused(() => submit(fullForm, body({ name: 'X', email: 'x@example.com', favourite_colour: 'red' })), 422, 'unknown_attribute', '/data/attributes/favourite_colour');
      await refused(() => submit(fullForm, {}), 400, 'invalid_document', '/data');
      await refused(() => submit(fullForm, '{', token), 400, 'malformed_json');
      await refused(() => submit(fullForm, 'name=X&email=x@example.com', token, 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type');
    });

    it('answers 404 for a form of another account or a missing form, writing nothing', async () => {
      await refused(() => submit(foreignForm, body({ name: 'X', email: 'x@example.com' })), 404, 'not_found');
      await refused(() => submit(999999, body({ name: 'X', email: 'x@example.com' })), 404, 'not_found');
      await refused(() => submit('abc', body({ name: 'X', email: 'x@example.com' })), 404);
    });

    it('needs manage:form_submissions (403) and a token (401), writing nothing', async () => {
      const reader = await t.keyWith(t.tenant.ownerId, ['view:forms', 'view:form_submissions']);
      const res = await refused(() => submit(fullForm, body({ name: 'X', email: 'x@example.com' }), reader.token), 403, 'forbidden');
      assert.match(res.json().errors[0].detail, /manage:form_submissions/, 'the refusal names the missing permission');
      const counts = await rowCounts(t, TABLES);
      const anonymous = await t.request({ method: 'POST', url: `/v1/forms/${fullForm}/submit`, headers: { 'content-type': 'application/vnd.api+json' }, payload: JSON.stringify(body({ name: 'X', email: 'x@example.com' })) });
      assert.equal(anonymous.statusCode, 401, anonymous.body);
      assert.deepEqual(await rowCounts(t, TABLES), counts, 'an unauthenticated submission writes nothing');
    });

    it('two simultaneous submissions of a new email both succeed with one contact, one grant and one tagging each', async () => {
      const doc = body({ name: 'Twin', email: 'twin@example.com' });
      const [one, two] = await Promise.all([submit(fullForm, doc), submit(fullForm, doc)]);
      assert.equal(one!.statusCode, 201, one!.body);
      assert.equal(two!.statusCode, 201, two!.body);
      const contact = await contactByEmail('twin@example.com');
      assert.ok(contact, 'the contact exists');
      const db = t.handle.db;
      const count = async (table: 'contacts' | 'offer_grants' | 'contact_taggings' | 'email_sequence_subscriptions' | 'form_submissions' | 'customers') =>
        Number((await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).where(table === 'contacts' ? 'email' : 'contact_id', '=', table === 'contacts' ? 'twin@example.com' : Number(contact.id)).executeTakeFirstOrThrow()).n);
      assert.equal(await count('contacts'), 1, 'one contact');
      assert.equal(await count('form_submissions'), 2, 'both submissions recorded');
      assert.equal(await count('customers'), 1, 'one customer');
      assert.equal(await count('offer_grants'), 1, 'one grant');
      assert.equal(await count('contact_taggings'), 2, 'each tag once');
      assert.equal(await count('email_sequence_subscriptions'), 1, 'one sequence subscription');
    });

    it('rolls back everything when a late step fails: the contact, submission, tags and events written before it are gone', async () => {
      // A customer whose email is the submitted one but who belongs to another contact: the grant
      // (after the contact, the submission and the tags were written) cannot give the contact a
      // customer and refuses with 409.
      const holder = await b.customer({ email: 'holder@example.com' });
      await t.handle.db.updateTable('customers').set({ email: 'clash@example.com' }).where('id', '=', holder.id).execute();
      await refused(() => submit(fullForm, body({ name: 'Clash', email: 'clash@example.com' })), 409, 'customer_conflict');
      assert.equal(await contactByEmail('clash@example.com'), undefined, 'the contact created before the failure was rolled back');
    });
  });
}
