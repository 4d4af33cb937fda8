// POST /v1/contacts, PATCH and DELETE /v1/contacts/{id}: every rule of a contact write, every
// refusal with its status and source.pointer, proof that a refused request wrote nothing, the
// unique-email race, and conformance of the answers upstream documents.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { builders, type Builders } from '../support/builders.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from '../support/harness.js';
import { assertResponseMatchesUpstream, upstreamMismatches } from '../support/upstream.js';
import { assertError, otherAccount, rowCounts, rowsOf, send, type Res } from '../support/writes.js';

const TABLES = ['contacts', 'customers', 'contact_notes', 'purchases', 'form_submissions', 'outbox_events', 'outgoing_messages'];

/**
 * A contact document conforms to upstream's contacts_show_response, except that a contact without
 * a customer renders relationships.customer as `{ data: null }` (JSON:API's empty to-one), which
 * upstream's schema cannot express (see test/contacts.test.ts).
 */
function assertContactConforms(method: string, path: string, res: Res): void {
  const body = res.json();
  const problems = upstreamMismatches(method, path, res.statusCode, body, { contentType: 'application/vnd.api+json' });
  const allowed = /^ {2}\/data\/relationships\/customer\/data must be object$/;
  assert.deepEqual(problems.filter((p) => !allowed.test(p)), [], `${method} ${path} does not match upstream:\n${problems.join('\n')}`);
  if (body.data.relationships?.customer?.data !== null) assertResponseMatchesUpstream(method, path, res);
}

for (const dialect of DIALECTS) {
  describe(`contact writes [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let b: Builders;
    let siteId: number;
    let other: { accountId: number; siteId: number; ownerId: number };

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      b = builders(t);
      siteId = t.tenant.siteId;
      other = await otherAccount(t);
    });
    after(() => t.close());

    const site = (id: number | string = siteId) => ({ site: { data: { type: 'sites', id: String(id) } } });
    const createBody = (attributes: Record<string, unknown>, relationships: Record<string, unknown> = site()) => ({
      data: { type: 'contacts', attributes, relationships },
    });
    const create = (body: unknown, as = token, contentType?: string) => send(t, 'POST', '/v1/contacts', as, body, contentType);
    const patch = (id: number | string, attributes: Record<string, unknown>, as = token) =>
      send(t, 'PATCH', `/v1/contacts/${id}`, as, { data: { type: 'contacts', id: String(id), attributes } });
    const contactRow = (id: number | string) => t.handle.db.selectFrom('contacts').selectAll().where('id', '=', Number(id)).executeTakeFirstOrThrow();

    /** Runs a request that must be refused, and proves it wrote nothing. */
    async function refused(run: () => Promise<Res>, status: number, code?: string, pointer?: string): Promise<Res> {
      const before = await rowCounts(t, TABLES);
      const contactsBefore = await rowsOf(t, 'contacts');
      const customersBefore = await rowsOf(t, 'customers');
      const res = await run();
      assertError(res, status, code, pointer);
      assert.deepEqual(await rowCounts(t, TABLES), before, 'a refused request adds or removes no row');
      assert.deepEqual(await rowsOf(t, 'contacts'), contactsBefore, 'a refused request changes no contact');
      assert.deepEqual(await rowsOf(t, 'customers'), customersBefore, 'a refused request changes no customer');
      return res;
    }

    describe('POST /v1/contacts', () => {
      it('creates a contact: 201, Location, email stripped and lower-cased, name from the email, no outbox event', async () => {
        const before = await rowCounts(t, ['outbox_events']);
        const res = await create(createBody({ email: '  Grace.Hopper+Navy@Example.COM ', phone_number: '555-0100' }));
        assert.equal(res.statusCode, 201, res.body);
        const doc = res.json();
        assert.equal(res.headers.location, `${PUBLIC_URL}/v1/contacts/${doc.data.id}`);
        assert.equal(doc.links.self, res.headers.location);
        assert.equal(doc.data.attributes.email, 'grace.hopper+navy@example.com');
        assert.equal(doc.data.attributes.name, 'Grace Hopper Navy');
        assert.equal(doc.data.attributes.phone_number, '555-0100');
        assert.equal(doc.data.attributes.subscribed, false);
        assert.equal(doc.data.attributes.external_user_id, null);
        assert.equal(doc.data.attributes.created_at, t.clock.now().toISOString());
        assert.deepEqual(doc.data.relationships.site.data, { type: 'sites', id: String(siteId) });
        assertContactConforms('post', '/v1/contacts', res);
        assert.deepEqual(await rowCounts(t, ['outbox_events']), before, 'creating a contact announces nothing');
        const shown = await t.get(`/v1/contacts/${doc.data.id}`, token);
        assert.equal(shown.statusCode, 200, 'the new contact can be shown');
      });

      it('keeps a given name (trimmed); subscribed sets subscribed_at; application/json is accepted', async () => {
        const res = await create(JSON.stringify(createBody({ email: 'ada@example.com', name: '  Ada Lovelace ', subscribed: true })), token, 'application/json');
        assert.equal(res.statusCode, 201, res.body);
        assert.equal(res.json().data.attributes.name, 'Ada Lovelace');
        assert.equal(res.json().data.attributes.subscribed, true);
        const row = await contactRow(res.json().data.id);
        assert.equal(t.handle.traits.decodeTimestamp(row.subscribed_at), t.clock.now().toISOString());
        assert.equal(row.unsubscribed_at, null);
      });

      it('writes custom_1..custom_3 the site defines; others are refused', async () => {
        const at = t.handle.traits.encodeTimestamp(t.clock.now());
        await t.handle.db
          .insertInto('custom_fields')
          .values({ site_id: siteId, title: 'Company', handle: 'custom_1', field_type: 'TextField', required: t.handle.traits.encodeBoolean(false), created_at: at, updated_at: at })
          .execute();
        const res = await create(createBody({ email: 'custom@example.com', custom_1: 'ACME', custom_2: null }));
        assert.equal(res.statusCode, 201, res.body);
        assert.equal(res.json().data.attributes.custom_1, 'ACME');
        await refused(() => create(createBody({ email: 'custom2@example.com', custom_2: 'x' })), 422, 'unknown_custom_field', '/data/attributes/custom_2');
      });

      it('refuses an email already in the site, whatever its case: 422 at /data/attributes/email', async () => {
        await b.contact({ email: 'taken@example.com' });
        const res = await refused(() => create(createBody({ email: ' TAKEN@example.com' })), 422, 'taken', '/data/attributes/email');
        assertResponseMatchesUpstream('post', '/v1/contacts', res);
      });

      it('the same email in another site is a different contact', async () => {
        const { createSite } = await import('../../src/domain/accounts.js');
        const second = await createSite(t.handle, { accountId: t.tenant.accountId, title: 'Second', subdomain: `second-${dialect}-${Date.now()}` }, t.clock);
        await b.contact({ email: 'twice@example.com' });
        const res = await create(createBody({ email: 'twice@example.com' }, site(second)));
        assert.equal(res.statusCode, 201, res.body);
        assert.deepEqual(res.json().data.relationships.site.data, { type: 'sites', id: String(second) });
      });

      it('two parallel creates of one email: exactly one 201 and one clean 422, one row', async () => {
        for (let round = 0; round < 3; round++) {
          const email = `race-${round}@example.com`;
          const results = await Promise.all([create(createBody({ email })), create(createBody({ email: email.toUpperCase() }))]);
          const statuses = results.map((r) => r.statusCode).sort();
          assert.deepEqual(statuses, [201, 422], results.map((r) => r.body).join('\n'));
          assertError(results.find((r) => r.statusCode === 422)!, 422, 'taken', '/data/attributes/email');
          const rows = await t.handle.db.selectFrom('contacts').select('id').where('site_id', '=', siteId).where('email', '=', email).execute();
          assert.equal(rows.length, 1, 'one contact with the email');
        }
      });

      it('a create racing an uncommitted insert of the same email loses cleanly once it commits (the unique index decides)', async () => {
        // The other writer's transaction holds its row uncommitted while the request runs, so the
        // request's own check cannot see it: PostgreSQL blocks the insert until the commit, then
        // reports the unique violation; SQLite's one connection makes the request wait its turn.
        let commit!: () => void;
        const held = new Promise<void>((resolve) => (commit = resolve));
        let inserted!: () => void;
        const insertedYet = new Promise<void>((resolve) => (inserted = resolve));
        const other = t.handle.db.transaction().execute(async (trx) => {
          const at = t.handle.traits.encodeTimestamp(t.clock.now());
          await trx
            .insertInto('contacts')
            .values({ site_id: siteId, name: 'Held', email: 'held@example.com', hidden: t.handle.traits.encodeBoolean(false), subscribed: t.handle.traits.encodeBoolean(false), created_at: at, updated_at: at })
            .execute();
          inserted();
          await held;
        });
        await insertedYet;
        const request = create(createBody({ email: 'held@example.com' }));
        await new Promise((resolve) => setTimeout(resolve, 150));
        commit();
        await other;
        assertError(await request, 422, 'taken', '/data/attributes/email');
        const rows = await t.handle.db.selectFrom('contacts').select('name').where('site_id', '=', siteId).where('email', '=', 'held@example.com').execute();
        assert.deepEqual(rows.map((r) => r.name), ['Held'], 'only the other writer\'s row');
      });

      it('refuses bodies that are not a contact document, writing nothing', async () => {
        await refused(() => create('{"data": ', token), 400, 'malformed_json');
        await refused(() => create('plain text', token, 'text/plain'), 415, 'unsupported_media_type');
        await refused(() => create(`{"data":{}}`, token, 'application/vnd.api+json; version=2'), 415);
        await refused(() => create({}), 400, 'invalid_document', '/data');
        await refused(() => create({ data: [] }), 400, 'invalid_document', '/data');
        await refused(() => create({ data: { attributes: { email: 'a@example.com' }, relationships: site() } }), 400, 'missing_type', '/data/type');
        await refused(() => create({ data: { type: 'customers', attributes: { email: 'a@example.com' }, relationships: site() } }), 409, 'type_mismatch', '/data/type');
        await refused(() => create({ data: { type: 'contacts', id: '1', attributes: { email: 'a@example.com' }, relationships: site() } }), 403, 'client_id_unsupported', '/data/id');
      });

      it('refuses unknown, read-only and mistyped attributes, and missing or invalid required ones', async () => {
        await refused(() => create(createBody({ email: 'a@example.com', colour: 'red' })), 422, 'unknown_attribute', '/data/attributes/colour');
        await refused(() => create(createBody({ email: 'a@example.com', created_at: '2026-01-01T00:00:00Z' })), 422, 'read_only_attribute', '/data/attributes/created_at');
        await refused(() => create(createBody({ email: 'a@example.com', updated_at: '2026-01-01T00:00:00Z' })), 422, 'read_only_attribute', '/data/attributes/updated_at');
        await refused(() => create(createBody({ email: 'a@example.com', id: '5' })), 422, 'unknown_attribute', '/data/attributes/id');
        await refused(() => create(createBody({ email: 'a@example.com', subscribed: 'yes' })), 422, 'invalid_attribute', '/data/attributes/subscribed');
        await refused(() => create(createBody({ email: 'a@example.com', name: 42 })), 422, 'invalid_attribute', '/data/attributes/name');
        await refused(() => create(createBody({ email: 'a@example.com', name: null })), 422, 'invalid_attribute', '/data/attributes/name');
        await refused(() => create(createBody({ email: 7 })), 422, 'invalid_attribute', '/data/attributes/email');
        await refused(() => create(createBody({ name: 'No Email' })), 422, 'missing_attribute', '/data/attributes/email');
        await refused(() => create(createBody({ email: '   ' })), 422, 'missing_attribute', '/data/attributes/email');
        const bad = await refused(() => create(createBody({ email: 'not-an-email' })), 422, 'invalid_email', '/data/attributes/email');
        assertResponseMatchesUpstream('post', '/v1/contacts', bad);
        await refused(() => create(createBody({ email: 'ext@example.com', external_user_id: 'u-1' })), 422, 'customer_required', '/data/attributes/external_user_id');
      });

      it('needs a site relationship naming a site the token reaches', async () => {
        const missing = await refused(() => create(createBody({ email: 'a@example.com' }, {})), 400, 'missing_relationship', '/data/relationships/site');
        assertResponseMatchesUpstream('post', '/v1/contacts', missing);
        await refused(() => create(createBody({ email: 'a@example.com' }, { site: {} })), 400, 'invalid_document', '/data/relationships/site');
        await refused(() => create(createBody({ email: 'a@example.com' }, { site: { data: { type: 'offers', id: '1' } } })), 409, 'type_mismatch', '/data/relationships/site/data/type');
        await refused(() => create(createBody({ email: 'a@example.com' }, { site: { data: { type: 'sites', id: 'x' } } })), 422, 'invalid_id', '/data/relationships/site/data/id');
        await refused(() => create(createBody({ email: 'a@example.com' }, site(other.siteId))), 404, 'not_found', '/data/relationships/site/data/id');
        await refused(() => create(createBody({ email: 'a@example.com' }, site(999999))), 404, 'not_found', '/data/relationships/site/data/id');
        await refused(() => create(createBody({ email: 'a@example.com' }, { ...site(), tags: { data: [] } })), 422, 'unknown_relationship', '/data/relationships/tags');
      });

      it('needs manage:contacts (403) and a token (401)', async () => {
        const viewer = await t.keyWith(t.tenant.ownerId, ['view:contacts']);
        const res = await refused(() => create(createBody({ email: 'a@example.com' }), viewer.token), 403, 'forbidden');
        assertResponseMatchesUpstream('post', '/v1/contacts', res);
        const manager = await t.keyWith(t.tenant.ownerId, ['manage:contacts']);
        await refused(() => create(createBody({ email: 'a@example.com' }), manager.token), 403, 'forbidden');
        await refused(() => t.request({ method: 'POST', url: '/v1/contacts', headers: { 'content-type': 'application/vnd.api+json' }, payload: JSON.stringify(createBody({ email: 'a@example.com' })) }), 401);
      });
    });

    describe('PATCH /v1/contacts/{id}', () => {
      it('updates attributes; subscribing and unsubscribing keep their moments', async () => {
        const id = await b.contact({ email: 'pat@example.com', name: 'Pat' });
        t.clock.advance(60);
        const res = await patch(id, { name: 'Pat Smith', address_city: 'Lisbon', subscribed: true });
        assert.equal(res.statusCode, 200, res.body);
        const doc = res.json();
        assert.equal(doc.data.attributes.name, 'Pat Smith');
        assert.equal(doc.data.attributes.address_city, 'Lisbon');
        assert.equal(doc.data.attributes.subscribed, true);
        assert.equal(doc.data.attributes.updated_at, t.clock.now().toISOString());
        assert.equal(doc.links.self, `${PUBLIC_URL}/v1/contacts/${id}`);
        assertContactConforms('patch', '/v1/contacts/{id}', res);
        const subscribedAt = t.clock.now().toISOString();
        t.clock.advance(60);
        const off = await patch(id, { subscribed: false, address_city: null });
        assert.equal(off.statusCode, 200, off.body);
        assert.equal(off.json().data.attributes.address_city, null);
        const row = await contactRow(id);
        assert.equal(t.handle.traits.decodeTimestamp(row.subscribed_at), subscribedAt);
        assert.equal(t.handle.traits.decodeTimestamp(row.unsubscribed_at), t.clock.now().toISOString());
      });

      it('a blank name is generated from the (new) email', async () => {
        const id = await b.contact({ email: 'old@example.com', name: 'Someone' });
        const res = await patch(id, { name: ' ', email: 'Mary-Jane@Example.com' });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().data.attributes.name, 'Mary Jane');
        assert.equal(res.json().data.attributes.email, 'mary-jane@example.com');
      });

      it("keeps the customer's name and email in step; a new email resets bounce state", async () => {
        const { id: customerId, contactId } = await b.customer({ name: 'Bo Bounce', email: 'bo@example.com', bounced_at: b.daysAgo(2) });
        await b.contactFlags(contactId, { bounced_at: b.daysAgo(2), bounce_type: 'hard' });
        const same = await patch(contactId, { email: 'BO@example.com', name: 'Bo B.' });
        assert.equal(same.statusCode, 200, same.body);
        let contact = await contactRow(contactId);
        assert.notEqual(contact.bounced_at, null, 'the same email keeps its bounce');
        const res = await patch(contactId, { email: 'bo.new@example.com' });
        assert.equal(res.statusCode, 200, res.body);
        contact = await contactRow(contactId);
        assert.equal(contact.bounced_at, null);
        assert.equal(contact.bounce_type, null);
        const customer = await t.handle.db.selectFrom('customers').selectAll().where('id', '=', customerId).executeTakeFirstOrThrow();
        assert.equal(customer.email, 'bo.new@example.com');
        assert.equal(customer.name, 'Bo B.');
        assert.equal(customer.bounced_at, null);
      });

      it('external_user_id: set on the customer of a contact that has one, unique within the site', async () => {
        const { id: customerId, contactId } = await b.customer({ email: 'ext1@example.com' });
        const res = await patch(contactId, { external_user_id: 'crm-1' });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().data.attributes.external_user_id, 'crm-1');
        const customer = await t.handle.db.selectFrom('customers').select('external_user_id').where('id', '=', customerId).executeTakeFirstOrThrow();
        assert.equal(customer.external_user_id, 'crm-1');
        const second = await b.customer({ email: 'ext2@example.com' });
        await refused(() => patch(second.contactId, { external_user_id: 'crm-1' }), 422, 'taken', '/data/attributes/external_user_id');
        const cleared = await patch(contactId, { external_user_id: null });
        assert.equal(cleared.json().data.attributes.external_user_id, null);
        const plain = await b.contact({ email: 'plain@example.com' });
        const noCustomer = await refused(() => patch(plain, { external_user_id: 'crm-2' }), 422, 'customer_required', '/data/attributes/external_user_id');
        assertResponseMatchesUpstream('patch', '/v1/contacts/{id}', noCustomer);
      });

      it('refuses an email another contact of the site has', async () => {
        await b.contact({ email: 'first@example.com' });
        const id = await b.contact({ email: 'second@example.com' });
        await refused(() => patch(id, { email: 'First@example.com' }), 422, 'taken', '/data/attributes/email');
        await refused(() => patch(id, { email: 'nope' }), 422, 'invalid_email', '/data/attributes/email');
        await refused(() => patch(id, { email: null }), 422, 'invalid_attribute', '/data/attributes/email');
      });

      it('refuses documents that do not name this contact, and what may not change', async () => {
        const id = await b.contact();
        const url = `/v1/contacts/${id}`;
        await refused(() => send(t, 'PATCH', url, token, { data: { type: 'contacts', attributes: { name: 'x' } } }), 400, 'missing_id', '/data/id');
        await refused(() => send(t, 'PATCH', url, token, { data: { type: 'contacts', id: String(id + 1), attributes: { name: 'x' } } }), 409, 'id_mismatch', '/data/id');
        await refused(() => send(t, 'PATCH', url, token, { data: { type: 'customers', id: String(id), attributes: { name: 'x' } } }), 409, 'type_mismatch', '/data/type');
        await refused(() => send(t, 'PATCH', url, token, { data: { type: 'contacts', id: String(id), relationships: site() } }), 422, 'unknown_relationship', '/data/relationships/site');
        await refused(() => patch(id, { created_at: '2020-01-01T00:00:00Z' }), 422, 'read_only_attribute', '/data/attributes/created_at');
        await refused(() => patch(id, { subscribed: 1 }), 422, 'invalid_attribute', '/data/attributes/subscribed');
        await refused(() => send(t, 'PATCH', url, token, 'x=1', 'application/x-www-form-urlencoded'), 415);
        await refused(() => send(t, 'PATCH', url, token, '{', 'application/json'), 400, 'malformed_json');
      });

      it('contacts of other accounts, missing ids and bad ids are 404; without manage:contacts 403', async () => {
        const foreign = await b.forSite(other.siteId).contact({ email: 'foreign@example.com' });
        await refused(() => patch(foreign, { name: 'Mine now' }), 404, 'not_found');
        await refused(() => patch(999999, { name: 'x' }), 404, 'not_found');
        await refused(() => send(t, 'PATCH', '/v1/contacts/abc', token, { data: { type: 'contacts', id: 'abc', attributes: {} } }), 404, 'not_found');
        const id = await b.contact();
        const viewer = await t.keyWith(t.tenant.ownerId, ['view:contacts']);
        const res = await refused(() => patch(id, { name: 'x' }, viewer.token), 403, 'forbidden');
        assertResponseMatchesUpstream('patch', '/v1/contacts/{id}', res);
      });
    });

    describe('DELETE /v1/contacts/{id}', () => {
      const remove = (id: number | string, as = token) => send(t, 'DELETE', `/v1/contacts/${id}`, as);

      it('answers {"data": {}} and removes what is only about the person; money stays, detached, with manage:contacts alone', async () => {
        const { id: customerId, contactId } = await b.customer({ email: 'gone@example.com', public_bio: 'Bio', socials: { x: 'gone' } });
        const product = await b.product();
        const offer = await b.offer({ productIds: [product] });
        const purchases = [
          await b.purchase({ customerId, offerId: offer, payment_type: 'subscription', subscription_status: 'canceled', amount_in_cents: 4900 }),
          await b.purchase({ customerId, offerId: offer, amount_in_cents: 2500 }),
          await b.purchase({ customerId, offerId: offer, payment_type: 'free', deactivated: true }),
        ];
        await b.grant({ contactId, offerId: offer, purchaseId: purchases[0] });
        await b.transaction({ customerId, offerId: offer, amount_in_cents: 4900, purchaseIds: [purchases[0]!] });
        await b.transaction({ customerId, offerId: offer, amount_in_cents: 2500, purchaseIds: [purchases[1]!] });
        await b.transaction({ customerId, offerId: offer, action: 'refund', amount_in_cents: 500, purchaseIds: [purchases[1]!] });
        const at = t.handle.traits.encodeTimestamp(t.clock.now());
        const order = await t.handle.db
          .insertInto('orders')
          .values({
            site_id: siteId,
            customer_id: customerId,
            order_number: 7001,
            currency_code: 'USD',
            fulfilled_at: null,
            total_price_in_cents: 2500,
            subtotal_in_cents: 2500,
            sales_tax_amount_in_cents: 0,
            discount_amount_in_cents: 0,
            created_at: at,
            updated_at: at,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        await t.handle.db
          .insertInto('order_items')
          .values({
            site_id: siteId,
            order_id: order.id,
            quantity: 1,
            currency_code: 'USD',
            item_type: 'Offer',
            item_id: offer,
            title: 'Offer',
            fulfilled_at: null,
            total_price_in_cents: 2500,
            subtotal_in_cents: 2500,
            sales_tax_amount_in_cents: 0,
            discount_amount_in_cents: 0,
            created_at: at,
            updated_at: at,
          })
          .execute();
        const form = await b.form();
        await b.submission({ formId: form, contactId });
        await t.handle.db.insertInto('contact_notes').values({ site_id: siteId, contact_id: contactId, body: 'note', created_at: at, updated_at: at }).execute();
        const keep = await b.contact({ email: 'stays@example.com' });
        const message = await t.handle.db
          .insertInto('outgoing_messages')
          .values({ site_id: siteId, contact_id: contactId, kind: 'welcome_email', to_email: 'gone@example.com', subject: 's', body: 'b', created_at: at })
          .returning('id')
          .executeTakeFirstOrThrow();

        /** What the money reports show, read through the API with every permission. */
        const money = async () => {
          const list = async (path: string) => {
            const res = await t.get(`${path}${path.includes('?') ? '&' : '?'}filter[site_id]=${siteId}&page[size]=100`, token);
            assert.equal(res.statusCode, 200, res.body);
            return res.json() as { data: Array<{ id: string; attributes: Record<string, unknown> }>; meta: { total_count: number } };
          };
          const ofCustomer = `filter[customer_id]=${customerId}`;
          const customersList = await list('/v1/customers?sort=-net_revenue');
          return {
            purchases: (await list(`/v1/purchases?${ofCustomer}`)).data.map((r) => r.id).sort(),
            transactions: (await list(`/v1/transactions?${ofCustomer}`)).data.map((r) => [r.id, r.attributes.amount_in_cents]),
            orders: (await list(`/v1/orders?${ofCustomer}`)).data.map((r) => [r.id, r.attributes.total_price_in_cents]),
            totals: [
              (await list('/v1/purchases')).meta.total_count,
              (await list('/v1/transactions')).meta.total_count,
              (await list('/v1/orders')).meta.total_count,
              (await list('/v1/order_items')).meta.total_count,
              customersList.meta.total_count,
            ],
            netRevenue: customersList.data.map((c) => [c.id, c.attributes.net_revenue]),
          };
        };
        const before = await money();
        assert.equal(before.purchases.length, 3);
        assert.equal(before.transactions.length, 3);
        assert.deepEqual(before.netRevenue.find(([id]) => id === String(customerId)), [String(customerId), '69.0']);

        const contactsOnly = await t.keyWith(t.tenant.ownerId, ['view:contacts', 'manage:contacts']);
        assertError(await t.get(`/v1/purchases?filter[site_id]=${siteId}`, contactsOnly.token), 403, 'forbidden');
        const res = await remove(contactId, contactsOnly.token);
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(res.json(), { data: {} });
        assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/);
        assertResponseMatchesUpstream('delete', '/v1/contacts/{id}', res);

        // The money is all there, as it was: purchases, transactions, orders, totals, net revenue.
        assert.deepEqual(await money(), before);
        // The customer stays, detached from the deleted person, without the profile it wrote.
        const customer = await t.get(`/v1/customers/${customerId}`, token);
        assert.equal(customer.statusCode, 200, customer.body);
        const doc = customer.json();
        assert.deepEqual(doc.data.relationships.contact, { data: null });
        assert.equal(doc.data.links?.contact, undefined, 'no link to a contact that is gone');
        assert.equal(doc.data.attributes.email, 'gone@example.com');
        assert.equal(doc.data.attributes.net_revenue, '69.0');
        assert.equal(doc.data.attributes.public_bio, null);
        assert.equal(doc.data.attributes.socials, null);
        const purchase = await t.get(`/v1/purchases/${purchases[0]}?include=customer`, token);
        assert.equal(purchase.statusCode, 200, purchase.body);
        assert.deepEqual(purchase.json().data.relationships.customer.data, { type: 'customers', id: String(customerId) });
        assert.deepEqual(purchase.json().included[0].relationships.contact, { data: null });

        const db = t.handle.db;
        assert.equal((await db.selectFrom('contacts').select('id').where('id', '=', contactId).execute()).length, 0, 'contact gone');
        assert.equal((await db.selectFrom('offer_grants').select('id').where('contact_id', '=', contactId).execute()).length, 0, 'grants gone');
        assert.equal((await db.selectFrom('contact_notes').select('id').where('contact_id', '=', contactId).execute()).length, 0, 'notes gone');
        assert.equal((await db.selectFrom('form_submissions').select('id').where('email', '=', 'gone@example.com').execute()).length, 0, 'submissions gone');
        const kept = await db.selectFrom('outgoing_messages').select('contact_id').where('id', '=', message.id).executeTakeFirstOrThrow();
        assert.equal(kept.contact_id, null, 'the outgoing message stays, detached');
        assert.equal((await db.selectFrom('contacts').select('id').where('id', '=', keep).execute()).length, 1, 'other contacts stay');
        assertError(await t.get(`/v1/contacts/${contactId}`, token), 404, 'not_found');
        assertError(await remove(contactId), 404, 'not_found');

        // The same email coming back is the same buyer: granting it an offer re-attaches the customer.
        const returning = await create(createBody({ email: 'gone@example.com', name: 'Back Again' }));
        assert.equal(returning.statusCode, 201, returning.body);
        const newContact = returning.json().data.id;
        const other = await b.offer();
        const grant = await send(t, 'POST', `/v1/contacts/${newContact}/relationships/offers`, token, { data: [{ type: 'offers', id: String(other) }] });
        assert.equal(grant.statusCode, 200, grant.body);
        const attached = (await t.get(`/v1/customers/${customerId}`, token)).json();
        assert.deepEqual(attached.data.relationships.contact, { data: { type: 'contacts', id: newContact } });
        assert.equal(attached.data.attributes.name, 'Back Again');
        assert.equal(attached.data.attributes.net_revenue, '69.0');
      });

      it('the database refuses to delete a customer that has purchases, transactions or orders', async () => {
        const { id: customerId } = await b.customer();
        await b.purchase({ customerId, offerId: await b.offer() });
        await assert.rejects(t.handle.db.deleteFrom('customers').where('id', '=', customerId).execute());
        assert.equal((await t.handle.db.selectFrom('purchases').select('id').where('customer_id', '=', customerId).execute()).length, 1);
      });

      it('refuses (422) a contact with an active subscription or an active payment plan, deleting nothing', async () => {
        const offer = await b.offer({ payment_type: 'subscription' });
        const subscriber = await b.customer();
        await b.purchase({ customerId: subscriber.id, offerId: offer, payment_type: 'subscription', subscription_status: 'active' });
        const res = await refused(() => remove(subscriber.contactId), 422, 'active_subscription');
        assertResponseMatchesUpstream('delete', '/v1/contacts/{id}', res);
        const planner = await b.customer();
        await b.purchase({ customerId: planner.id, offerId: offer, payment_type: 'multipay', multipay_payments_made: 1 });
        await refused(() => remove(planner.contactId), 422, 'active_subscription');
        // A deactivated payment plan no longer bills.
        const done = await b.customer();
        await b.purchase({ customerId: done.id, offerId: offer, payment_type: 'multipay', deactivated: true });
        assert.equal((await remove(done.contactId)).statusCode, 200);
      });

      it('other accounts, missing and bad ids are 404; without manage:contacts 403', async () => {
        const foreign = await b.forSite(other.siteId).contact();
        await refused(() => remove(foreign), 404, 'not_found');
        await refused(() => remove(999999), 404, 'not_found');
        await refused(() => remove('x1'), 404, 'not_found');
        const id = await b.contact();
        const viewer = await t.keyWith(t.tenant.ownerId, ['view:contacts']);
        const res = await refused(() => remove(id, viewer.token), 403, 'forbidden');
        assertResponseMatchesUpstream('delete', '/v1/contacts/{id}', res);
      });
    });
  });
}
