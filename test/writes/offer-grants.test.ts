// POST, PATCH and DELETE on /v1/contacts/{id}/relationships/offers and
// /v1/customers/{id}/relationships/offers: the resulting linkage; the customer made on a first
// grant (visible in GET /v1/customers and the has_offer_id / has_product_id filters at once); the
// welcome message recorded or not per meta.send_customer_welcome_email; idempotent grants; PATCH
// replacing the set; revoking ending access (grants, purchases and their memberships); every
// refusal with its status and pointer, proof that a refused request wrote nothing, tenancy and
// permissions.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { REVOKED_REASON } from '../../src/domain/offer-grants.js';
import { builders, type Builders } from '../support/builders.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from '../support/harness.js';
import { assertResponseMatchesUpstream } from '../support/upstream.js';
import { assertError, otherAccount, rowCounts, rowsOf, send, type Res } from '../support/writes.js';

const CONTACT_PATH = '/v1/contacts/{contact_id}/relationships/offers';
const CUSTOMER_PATH = '/v1/customers/{customer_id}/relationships/offers';
const TABLES = ['customers', 'offer_grants', 'memberships', 'purchases', 'outgoing_messages', 'outbox_events'] as const;

type Method = 'POST' | 'PATCH' | 'DELETE';
const lower = (m: Method) => m.toLowerCase();

for (const dialect of DIALECTS) {
  describe(`offer grant writes [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let b: Builders;
    let course: number;
    let workbook: number;
    let community: number;
    /** course + workbook */
    let bundle: number;
    /** community */
    let club: number;
    /** no products */
    let coaching: number;
    /** course alone: a second way to own it */
    let courseOnly: number;
    let foreignOffer: number;
    let foreignContact: number;
    let foreignCustomer: number;
    let contactId: number;

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      b = builders(t);
      course = await b.product({ title: 'Course' });
      workbook = await b.product({ title: 'Workbook' });
      community = await b.product({ title: 'Community' });
      bundle = await b.offer({ title: 'Bundle', productIds: [course, workbook] });
      club = await b.offer({ title: 'Club', productIds: [community] });
      coaching = await b.offer({ title: 'Coaching' });
      courseOnly = await b.offer({ title: 'Course only', productIds: [course] });
      const other = await otherAccount(t);
      const foreign = b.forSite(other.siteId);
      foreignOffer = await foreign.offer({ title: 'Foreign', productIds: [await foreign.product()] });
      const fc = await foreign.customer({ email: 'foreign@example.com' });
      foreignContact = fc.contactId;
      foreignCustomer = fc.id;
    });
    after(() => t.close());

    beforeEach(async () => {
      t.clock.advance(60);
      contactId = await b.contact({ name: 'Grace Hopper', email: `grace-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com` });
    });

    const ids = (...offerIds: number[]) => ({ data: offerIds.map((id) => ({ type: 'offers', id: String(id) })) });
    const contactUrl = (id: number | string = contactId) => `/v1/contacts/${id}/relationships/offers`;
    const customerUrl = (id: number | string) => `/v1/customers/${id}/relationships/offers`;
    const onContact = (method: Method, body: unknown, id: number | string = contactId, as = token) => send(t, method, contactUrl(id), as, body);
    const onCustomer = (method: Method, body: unknown, id: number | string, as = token) => send(t, method, customerUrl(id), as, body);

    /** A 200 whose linkage is exactly these offers (in id order) with links.self of `url`. */
    function linkage(res: Res, url: string, ...offerIds: number[]): void {
      assert.equal(res.statusCode, 200, res.body);
      const doc = res.json();
      const got = [...doc.data].sort((x: { id: string }, y: { id: string }) => Number(x.id) - Number(y.id));
      assert.deepEqual(got, ids(...[...offerIds].sort((x, y) => x - y)).data, `linkage of offers ${offerIds.join(', ')}`);
      assert.equal(doc.links.self, `${PUBLIC_URL}${url}`);
    }

    async function customerOf(contact: number) {
      return t.handle.db.selectFrom('customers').selectAll().where('contact_id', '=', contact).executeTakeFirst();
    }
    async function grantsOf(contact: number) {
      return t.handle.db.selectFrom('offer_grants').selectAll().where('contact_id', '=', contact).orderBy('id').execute();
    }
    async function membershipsOf(contact: number) {
      return t.handle.db.selectFrom('memberships').selectAll().where('contact_id', '=', contact).orderBy('id').execute();
    }
    async function messagesOf(contact: number) {
      return t.handle.db.selectFrom('outgoing_messages').selectAll().where('contact_id', '=', contact).orderBy('id').execute();
    }

    /** Ids a list answers for `filter[name]=value`, in the tenant's site. */
    async function matching(type: 'contacts' | 'customers', name: string, value: number): Promise<string[]> {
      const res = await t.get(`/v1/${type}?filter[${name}]=${value}&page[size]=100`, token);
      assert.equal(res.statusCode, 200, res.body);
      return (JSON.parse(res.body).data as Array<{ id: string }>).map((r) => r.id);
    }

    async function refused(run: () => Promise<Res>, status: number, code?: string, pointer?: string): Promise<Res> {
      const counts = await rowCounts(t, TABLES);
      const before = { grants: await rowsOf(t, 'offer_grants'), memberships: await rowsOf(t, 'memberships'), purchases: await rowsOf(t, 'purchases') };
      const res = await run();
      assertError(res, status, code, pointer);
      assert.deepEqual(await rowCounts(t, TABLES), counts, 'a refused request adds or removes no row');
      const after = { grants: await rowsOf(t, 'offer_grants'), memberships: await rowsOf(t, 'memberships'), purchases: await rowsOf(t, 'purchases') };
      assert.deepEqual(after, before, 'a refused request changes no grant, membership or purchase');
      return res;
    }

    describe('granting (POST)', () => {
      it('a first grant makes the contact a customer, grants the offer and its products, and records the welcome email', async () => {
        const res = await onContact('POST', ids(bundle));
        linkage(res, contactUrl(), bundle);
        assertResponseMatchesUpstream('post', CONTACT_PATH, res);

        const contact = await t.handle.db.selectFrom('contacts').select(['name', 'email']).where('id', '=', contactId).executeTakeFirstOrThrow();
        const customer = await customerOf(contactId);
        assert.ok(customer, 'a customer was created');
        assert.equal(customer.name, 'Grace Hopper');
        assert.equal(customer.email, contact.email);
        assert.equal(Number(customer.net_revenue_cents), 0);
        assert.equal(Number(customer.site_id), t.tenant.siteId);

        const grants = await grantsOf(contactId);
        assert.deepEqual(grants.map((g) => [Number(g.offer_id), g.revoked_at, g.purchase_id]), [[bundle, null, null]]);
        const memberships = await membershipsOf(contactId);
        assert.deepEqual(
          memberships.map((m) => [Number(m.product_id), Number(m.offer_grant_id), m.ended_at]).sort((x, y) => Number(x[0]) - Number(y[0])),
          [[course, Number(grants[0]!.id), null], [workbook, Number(grants[0]!.id), null]],
          'one membership per product of the offer',
        );
        const messages = await messagesOf(contactId);
        assert.deepEqual(messages.map((m) => [m.kind, m.to_email, m.subject]), [['customer_welcome', contact.email, 'Welcome to Bundle']]);

        // Reads see it at once.
        const list = await t.get(`/v1/customers?page[size]=100`, token);
        assert.ok((JSON.parse(list.body).data as Array<{ id: string }>).some((c) => c.id === String(customer.id)), 'GET /v1/customers lists the new customer');
        const shown = await t.get(`/v1/contacts/${contactId}?include=customer`, token);
        assert.deepEqual(JSON.parse(shown.body).data.relationships.customer.data, { type: 'customers', id: String(customer.id) });
        assert.ok((await matching('contacts', 'has_offer_id', bundle)).includes(String(contactId)), 'contacts has_offer_id');
        assert.ok((await matching('contacts', 'has_product_id', course)).includes(String(contactId)), 'contacts has_product_id');
        assert.ok((await matching('contacts', 'has_active_product_id', workbook)).includes(String(contactId)), 'contacts has_active_product_id');
        assert.ok((await matching('customers', 'has_offer_id', bundle)).includes(String(customer.id)), 'customers has_offer_id');
        assert.ok((await matching('customers', 'has_product_id', workbook)).includes(String(customer.id)), 'customers has_product_id');
        assert.ok(!(await matching('customers', 'has_product_id', community)).includes(String(customer.id)), 'not the products of other offers');
        linkage(await t.get(customerUrl(customer.id), token) as Res, customerUrl(customer.id), bundle);
      });

      it('meta.send_customer_welcome_email false records no message; a non-boolean is a 422 at its pointer', async () => {
        linkage(await onContact('POST', { ...ids(club), meta: { send_customer_welcome_email: false } }), contactUrl(), club);
        assert.deepEqual(await messagesOf(contactId), [], 'no welcome message');
        await refused(() => onContact('POST', { ...ids(coaching), meta: { send_customer_welcome_email: 'no' } }), 422, 'invalid_meta', '/meta/send_customer_welcome_email');
        linkage(await onContact('POST', { ...ids(coaching), meta: { send_customer_welcome_email: true } }), contactUrl(), club, coaching);
        assert.deepEqual((await messagesOf(contactId)).map((m) => m.subject), ['Welcome to Coaching']);
      });

      it('granting an offer the contact already holds changes nothing', async () => {
        linkage(await onContact('POST', ids(bundle)), contactUrl(), bundle);
        const counts = await rowCounts(t, TABLES);
        linkage(await onContact('POST', ids(bundle, bundle)), contactUrl(), bundle);
        assert.deepEqual(await rowCounts(t, TABLES), counts, 'no grant, membership, customer or message added');
        linkage(await onContact('POST', { data: [] }), contactUrl(), bundle);
        assert.deepEqual(await rowCounts(t, TABLES), counts, 'an empty list changes nothing');
      });

      it('a contact that is already a customer keeps its customer', async () => {
        const existing = await b.customer({ contactId });
        linkage(await onContact('POST', ids(club)), contactUrl(), club);
        const customers = await t.handle.db.selectFrom('customers').select('id').where('contact_id', '=', contactId).execute();
        assert.deepEqual(customers.map((c) => Number(c.id)), [existing.id], 'no second customer');
      });

      it('on a customer: grants to its contact and answers with the customer linkage', async () => {
        const { id } = await b.customer({ contactId });
        const res = await onCustomer('POST', ids(club, coaching), id);
        linkage(res, customerUrl(id), club, coaching);
        assertResponseMatchesUpstream('post', CUSTOMER_PATH, res);
        assert.deepEqual((await grantsOf(contactId)).map((g) => Number(g.offer_id)).sort((x, y) => x - y), [club, coaching].sort((x, y) => x - y));
        assert.equal((await messagesOf(contactId)).length, 2, 'a welcome message per offer granted');
        linkage(await t.get(contactUrl(), token) as Res, contactUrl(), club, coaching);
      });
    });

    describe('replacing (PATCH)', () => {
      it('revokes the unlisted offers, grants the new ones and leaves held ones as they are', async () => {
        linkage(await onContact('POST', ids(bundle, club)), contactUrl(), bundle, club);
        const clubGrant = (await grantsOf(contactId)).find((g) => Number(g.offer_id) === club)!;
        t.clock.advance(60);
        const res = await onContact('PATCH', { ...ids(club, coaching), meta: { send_customer_welcome_email: false } });
        linkage(res, contactUrl(), club, coaching);
        assertResponseMatchesUpstream('patch', CONTACT_PATH, res);
        const grants = await grantsOf(contactId);
        const bundleGrant = grants.find((g) => Number(g.offer_id) === bundle)!;
        assert.equal(t.handle.traits.decodeTimestamp(bundleGrant.revoked_at), t.clock.now().toISOString(), 'the unlisted offer is revoked');
        assert.deepEqual(grants.find((g) => Number(g.offer_id) === club), clubGrant, 'the held offer is untouched');
        assert.ok(!(await matching('contacts', 'has_product_id', course)).includes(String(contactId)), 'the revoked offer no longer gives its products');
        assert.ok((await matching('contacts', 'previously_owned_product_id', course)).includes(String(contactId)), 'previously owned');
        assert.equal((await messagesOf(contactId)).length, 2, 'the PATCH honoured meta: no message for coaching');
      });

      it('on a customer, an empty list revokes everything', async () => {
        const { id } = await b.customer({ contactId });
        linkage(await onCustomer('POST', ids(club), id), customerUrl(id), club);
        const res = await onCustomer('PATCH', { data: [] }, id);
        linkage(res, customerUrl(id));
        assertResponseMatchesUpstream('patch', CUSTOMER_PATH, res);
        assert.ok(!(await matching('customers', 'has_offer_id', club)).includes(String(id)), 'customers has_offer_id no longer matches');
      });
    });

    describe('revoking (DELETE)', () => {
      it('revokes the grants, deactivates purchases of the offer and ends their memberships only', async () => {
        const { id: customerId } = await b.customer({ contactId });
        // Bought the bundle: a purchase, its grant and memberships, as checkout makes them.
        const purchase = await b.purchase({ customerId, offerId: bundle });
        const boughtGrant = await b.grant({ contactId, offerId: bundle, purchaseId: purchase });
        await b.membership({ contactId, productId: course, offerGrantId: boughtGrant });
        await b.membership({ contactId, productId: workbook, offerGrantId: boughtGrant });
        // The course is also owned through another offer, which stays.
        linkage(await onContact('POST', ids(courseOnly, club)), contactUrl(), bundle, courseOnly, club);
        // A purchase of another offer stays active.
        const otherPurchase = await b.purchase({ customerId, offerId: club });
        t.clock.advance(60);
        const now = t.clock.now().toISOString();

        const res = await onContact('DELETE', ids(bundle, coaching));
        linkage(res, contactUrl(), courseOnly, club);
        assertResponseMatchesUpstream('delete', CONTACT_PATH, res);

        const purchases = await t.handle.db.selectFrom('purchases').selectAll().where('customer_id', '=', customerId).orderBy('id').execute();
        const bought = purchases.find((p) => Number(p.id) === purchase)!;
        assert.equal(t.handle.traits.decodeTimestamp(bought.deactivated_at), now, 'the purchase of the offer is deactivated');
        assert.equal(bought.deactivation_reason, REVOKED_REASON);
        assert.equal(purchases.find((p) => Number(p.id) === otherPurchase)!.deactivated_at, null, 'purchases of other offers stay');
        const grants = await grantsOf(contactId);
        assert.equal(t.handle.traits.decodeTimestamp(grants.find((g) => Number(g.id) === boughtGrant)!.revoked_at), now);
        const memberships = await membershipsOf(contactId);
        const ended = memberships.filter((m) => m.ended_at !== null).map((m) => [Number(m.product_id), Number(m.offer_grant_id)]);
        assert.deepEqual(ended.sort((x, y) => x[0]! - y[0]!), [[course, boughtGrant], [workbook, boughtGrant]].sort((x, y) => x[0]! - y[0]!), 'only the memberships of the bundle end');

        assert.ok((await matching('contacts', 'has_product_id', course)).includes(String(contactId)), 'the course is still owned through the other offer');
        assert.ok(!(await matching('contacts', 'has_product_id', workbook)).includes(String(contactId)), 'the workbook is not owned any more');
        assert.ok((await matching('contacts', 'previously_owned_product_id', workbook)).includes(String(contactId)), 'the workbook was owned before');
        assert.ok(!(await matching('customers', 'has_offer_id', bundle)).includes(String(customerId)), 'customers has_offer_id no longer matches');
      });

      it('on a customer; offers not held are ignored', async () => {
        const { id } = await b.customer({ contactId });
        linkage(await onCustomer('POST', ids(club, coaching), id), customerUrl(id), club, coaching);
        const res = await onCustomer('DELETE', ids(club), id);
        linkage(res, customerUrl(id), coaching);
        assertResponseMatchesUpstream('delete', CUSTOMER_PATH, res);
        const counts = await rowCounts(t, TABLES);
        const grants = await rowsOf(t, 'offer_grants');
        linkage(await onCustomer('DELETE', ids(club, bundle), id), customerUrl(id), coaching);
        assert.deepEqual(await rowCounts(t, TABLES), counts, 'nothing added');
        assert.deepEqual(await rowsOf(t, 'offer_grants'), grants, 'nothing changed');
      });

      it('a revoked offer can be granted again', async () => {
        linkage(await onContact('POST', ids(club)), contactUrl(), club);
        linkage(await onContact('DELETE', ids(club)), contactUrl());
        linkage(await onContact('POST', ids(club)), contactUrl(), club);
        const grants = await grantsOf(contactId);
        assert.deepEqual(grants.map((g) => g.revoked_at === null), [false, true], 'history kept, a new active grant');
        assert.ok((await matching('contacts', 'has_product_id', community)).includes(String(contactId)), 'owned again');
      });
    });

    describe('refusals', () => {
      const both = () => [
        { label: 'contact', path: CONTACT_PATH, run: (m: Method, body: unknown, as = token) => onContact(m, body, contactId, as) },
        { label: 'customer', path: CUSTOMER_PATH, run: (m: Method, body: unknown, as = token) => onCustomer(m, body, customerIdOf!, as) },
      ];
      let customerIdOf: number | undefined;
      beforeEach(async () => {
        customerIdOf = (await b.customer({ contact: { email: `cust-${Math.random().toString(36).slice(2)}@example.com` } })).id;
      });
      const METHODS: Method[] = ['POST', 'PATCH', 'DELETE'];

      it('bad documents: 400 not an array, 409 wrong type, 422 non-string id; nothing written', async () => {
        for (const target of both()) {
          for (const m of METHODS) {
            const res = await refused(() => target.run(m, {}), 400, 'invalid_document');
            assertResponseMatchesUpstream(lower(m), target.path, res);
            await refused(() => target.run(m, { data: { type: 'offers', id: String(club) } }), 400, 'invalid_document', '/data');
            await refused(() => target.run(m, { data: [{ type: 'products', id: String(course) }] }), 409, 'type_mismatch', '/data/0/type');
            await refused(() => target.run(m, { data: [{ type: 'offers', id: club }] }), 422, 'invalid_id', '/data/0/id');
          }
        }
      });

      it('a failing second identifier (unknown or another account) writes nothing: no customer, grant, membership or message', async () => {
        for (const target of both()) {
          for (const m of METHODS) {
            const res = await refused(() => target.run(m, ids(bundle, 999999)), 404, 'not_found', '/data/1/id');
            assertResponseMatchesUpstream(lower(m), target.path, res);
            await refused(() => target.run(m, ids(club, foreignOffer)), 404, 'not_found', '/data/1/id');
          }
        }
        assert.equal(await customerOf(contactId), undefined, 'the contact did not become a customer');
      });

      it('records of other accounts and unknown records are 404', async () => {
        for (const m of METHODS) {
          await refused(() => onContact(m, ids(club), foreignContact), 404, 'not_found');
          await refused(() => onContact(m, ids(club), 999999), 404, 'not_found');
          await refused(() => onCustomer(m, ids(club), foreignCustomer), 404, 'not_found');
          const res = await refused(() => onCustomer(m, ids(club), 999999), 404, 'not_found');
          assertResponseMatchesUpstream(lower(m), CUSTOMER_PATH, res);
        }
      });

      it('revoking an offer the contact bought needs manage:purchases too (403 naming it); the purchase and grants stay', async () => {
        const { id: customerId } = await b.customer({ contactId });
        const purchase = await b.purchase({ customerId, offerId: bundle });
        const boughtGrant = await b.grant({ contactId, offerId: bundle, purchaseId: purchase });
        await b.membership({ contactId, productId: course, offerGrantId: boughtGrant });
        linkage(await onContact('POST', ids(club)), contactUrl(), bundle, club);
        const grantsOnly = await t.keyWith(t.tenant.ownerId, ['view:contacts', 'view:customers', 'view:offers', 'manage:customers']);
        for (const run of [
          () => onContact('DELETE', ids(bundle), contactId, grantsOnly.token),
          () => onContact('PATCH', ids(club), contactId, grantsOnly.token),
          () => onCustomer('DELETE', ids(bundle, club), customerId, grantsOnly.token),
          () => onCustomer('PATCH', ids(), customerId, grantsOnly.token),
        ]) {
          const res = await refused(run, 403, 'forbidden');
          assert.match(res.json().errors[0].detail, /manage:purchases/);
        }
        // Offers given by hand are still theirs to revoke.
        linkage(await onContact('DELETE', ids(club), contactId, grantsOnly.token), contactUrl(), bundle);
        const withPurchases = await t.keyWith(t.tenant.ownerId, ['view:contacts', 'view:offers', 'manage:customers', 'manage:purchases']);
        linkage(await onContact('DELETE', ids(bundle), contactId, withPurchases.token), contactUrl());
        const bought = await t.handle.db.selectFrom('purchases').select('deactivation_reason').where('id', '=', purchase).executeTakeFirstOrThrow();
        assert.equal(bought.deactivation_reason, REVOKED_REASON);
      });

      it('a customer whose contact was deleted holds no offers: 422 customer_detached', async () => {
        const detached = await b.customer({ contact: { email: `detached-${Math.random().toString(36).slice(2)}@example.com` } });
        assert.equal((await send(t, 'DELETE', `/v1/contacts/${detached.contactId}`, token)).statusCode, 200);
        for (const m of METHODS) await refused(() => onCustomer(m, ids(club), detached.id), 422, 'customer_detached');
      });

      it('needs manage:customers (403) and a token (401)', async () => {
        const reader = await t.keyWith(t.tenant.ownerId, ['view:contacts', 'view:customers', 'view:offers', 'manage:contacts']);
        for (const target of both()) {
          for (const m of METHODS) {
            const res = await refused(() => target.run(m, ids(club), reader.token), 403, 'forbidden');
            assertResponseMatchesUpstream(lower(m), target.path, res);
          }
        }
        const res = await refused(
          () => t.request({ method: 'POST', url: contactUrl(), headers: { 'content-type': 'application/vnd.api+json' }, payload: JSON.stringify(ids(club)) }),
          401,
        );
        assertResponseMatchesUpstream('post', CONTACT_PATH, res);
      });
    });
  });
}
