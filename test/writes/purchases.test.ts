// POST /v1/purchases/{id}/deactivate, /reactivate and /cancel_subscription: the seed's state table
// row by row (an active purchase becomes deactivated and its subscription stays active; one that
// cannot be deactivated answers an error and changes nothing), free versus paid reactivation,
// cancelling with and without an active subscription, access following each transition as the
// contact, customer and purchase filters see it, tenancy, permissions, a body refused, a race,
// and conformance of the answers upstream documents.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEACTIVATED_THROUGH_API, SUBSCRIPTION_CANCELED } from '../../src/domain/purchases.js';
import { builders, type Builders } from '../support/builders.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from '../support/harness.js';
import { assertMatchesUpstreamComponent, assertResponseMatchesUpstream } from '../support/upstream.js';
import { assertError, otherAccount, rowsOf, send, type Res } from '../support/writes.js';

type Action = 'deactivate' | 'reactivate' | 'cancel_subscription';

interface Bought {
  purchase: number;
  contactId: number;
  customerId: number;
  offer: number;
  products: number[];
  grant: number;
}

for (const dialect of DIALECTS) {
  describe(`purchase actions [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let b: Builders;
    let foreign: Bought;
    let serial = 0;

    /** A customer who bought an offer of two products: the purchase, its grant and memberships. */
    async function bought(
      input: { amount_in_cents?: number; payment_type?: 'one_time' | 'subscription' | 'multipay' | 'free'; subscription_status?: string | null; deactivated?: boolean } = {},
      using: Builders = b,
    ): Promise<Bought> {
      serial += 1;
      const customer = await using.customer({ email: `buyer-${serial}@example.com` });
      const products = [await using.product({ title: `Course ${serial}` }), await using.product({ title: `Community ${serial}` })];
      const offer = await using.offer({ title: `Offer ${serial}`, productIds: products });
      const purchase = await using.purchase({
        customerId: customer.id,
        offerId: offer,
        amount_in_cents: input.amount_in_cents ?? 4900,
        payment_type: input.payment_type ?? 'subscription',
        subscription_status: input.subscription_status === undefined ? 'active' : input.subscription_status,
        ...(input.deactivated ? { deactivated: t.clock.now(), deactivation_reason: 'Refunded' } : {}),
      });
      const ended = input.deactivated ? t.clock.now() : null;
      const grant = await using.grant({ contactId: customer.contactId, offerId: offer, purchaseId: purchase, revoked_at: ended });
      for (const productId of products) {
        await using.membership({ contactId: customer.contactId, productId, offerGrantId: grant, state: ended ? 'ended' : 'current' });
      }
      return { purchase, contactId: customer.contactId, customerId: customer.id, offer, products, grant };
    }

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      b = builders(t);
      const other = await otherAccount(t);
      foreign = await bought({}, b.forSite(other.siteId));
    });
    after(() => t.close());

    const act = (action: Action, id: number | string, as = token, body?: unknown) => send(t, 'POST', `/v1/purchases/${id}/${action}`, as, body);
    const purchaseRow = (id: number) => t.handle.db.selectFrom('purchases').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const get = async (url: string): Promise<string[]> => {
      const res = await t.request({ method: 'GET', url, token });
      assert.equal(res.statusCode, 200, res.body);
      return (res.json().data as Array<{ id: string }>).map((r) => r.id).sort();
    };
    /** Whether the contact (and its customer) is in the contacts and customers lists under a filter. */
    const listed = async (who: Bought, filter: string, value: number): Promise<boolean> => {
      const contacts = (await get(`/v1/contacts?filter[${filter}]=${value}&page[size]=100`)).includes(String(who.contactId));
      const customers = (await get(`/v1/customers?filter[${filter}]=${value}&page[size]=100`)).includes(String(who.customerId));
      assert.equal(customers, contacts, `contacts and customers agree on filter[${filter}]`);
      return contacts;
    };
    /** What every filter says about the buyer's access to the purchase's first product and offer. */
    const access = async (who: Bought) => ({
      has_product_id: await listed(who, 'has_product_id', who.products[0]!),
      has_active_product_id: await listed(who, 'has_active_product_id', who.products[0]!),
      previously_owned_product_id: await listed(who, 'previously_owned_product_id', who.products[0]!),
      has_offer_id: await listed(who, 'has_offer_id', who.offer),
      purchase_active: (await get('/v1/purchases?filter[active]=true&page[size]=100')).includes(String(who.purchase)),
      purchase_deactivated: (await get('/v1/purchases?filter[deactivated]=true&page[size]=100')).includes(String(who.purchase)),
    });
    const OWNS = { has_product_id: true, has_active_product_id: true, previously_owned_product_id: false, has_offer_id: true, purchase_active: true, purchase_deactivated: false };
    const OWNED_BEFORE = { has_product_id: false, has_active_product_id: false, previously_owned_product_id: true, has_offer_id: false, purchase_active: false, purchase_deactivated: true };

    /** The rows an action may touch, to prove a refusal changed nothing. */
    const snapshot = async () => ({ purchases: await rowsOf(t, 'purchases'), grants: await rowsOf(t, 'offer_grants'), memberships: await rowsOf(t, 'memberships') });

    async function refused(run: () => Promise<Res>, status: number, code: string): Promise<Res> {
      const before = await snapshot();
      const res = await run();
      assertError(res, status, code);
      assert.deepEqual(await snapshot(), before, 'a refused action changes no purchase, grant or membership');
      return res;
    }

    /** The purchase as GET /v1/purchases/{id} shows it. */
    const show = async (id: number) => {
      const res = await t.request({ method: 'GET', url: `/v1/purchases/${id}`, token });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data as { attributes: Record<string, unknown> };
    };

    function assertAnswer(res: Res, id: number): Record<string, unknown> {
      assert.equal(res.statusCode, 200, res.body);
      const doc = res.json();
      const self = `${PUBLIC_URL}/v1/purchases/${id}`;
      assert.deepEqual(doc.links, { self, current: self }, 'the answer carries links.self and links.current');
      assert.equal(doc.data.type, 'purchases');
      assert.equal(doc.data.id, String(id));
      return doc.data.attributes;
    }

    describe('the seed state table: POST /v1/purchases/{id}/deactivate', () => {
      it('active → deactivated: both fields set, the subscription NOT cancelled, the access ended', async () => {
        const who = await bought();
        assert.deepEqual(await access(who), OWNS, 'before: the buyer owns the product and the offer');
        t.clock.advance(60);
        const res = await act('deactivate', who.purchase);
        const attributes = assertAnswer(res, who.purchase);
        assert.equal(attributes.deactivated_at, t.clock.now().toISOString());
        assert.equal(attributes.deactivation_reason, DEACTIVATED_THROUGH_API);
        assert.equal(attributes.updated_at, t.clock.now().toISOString());
        assertResponseMatchesUpstream('post', '/v1/purchases/{id}/deactivate', res);

        const row = await purchaseRow(who.purchase);
        assert.equal(row.subscription_status, 'active', 'deactivating does not cancel the subscription');
        assert.equal(row.subscription_canceled_at, null, 'no cancellation time');
        const again = await show(who.purchase);
        assert.equal(again.attributes.deactivated_at, t.clock.now().toISOString(), 'show sees the deactivation');

        const grant = await t.handle.db.selectFrom('offer_grants').selectAll().where('id', '=', who.grant).executeTakeFirstOrThrow();
        assert.notEqual(grant.revoked_at, null, "the purchase's grant is revoked");
        const memberships = await t.handle.db.selectFrom('memberships').select('ended_at').where('offer_grant_id', '=', who.grant).execute();
        assert.equal(memberships.length, 2);
        assert.ok(memberships.every((m) => m.ended_at !== null), 'every membership of the grant ended');
        assert.deepEqual(await access(who), OWNED_BEFORE, 'every filter sees the ended access at once');
      });

      it('leaves access that did not come from this purchase alone', async () => {
        const who = await bought();
        const other = await b.product({ title: 'Given by hand' });
        const offer = await b.offer({ title: 'Hand grant', productIds: [other] });
        const grant = await b.grant({ contactId: who.contactId, offerId: offer });
        await b.membership({ contactId: who.contactId, productId: other, offerGrantId: grant });
        assertAnswer(await act('deactivate', who.purchase), who.purchase);
        assert.equal(await listed(who, 'has_product_id', other), true, 'a hand-granted product is still owned');
        assert.equal(await listed(who, 'has_offer_id', offer), true, 'a hand-granted offer is still granted');
      });

      it('cannot deactivate (already deactivated): 422 purchase_not_active, the purchase unchanged', async () => {
        const who = await bought({ deactivated: true });
        const before = await show(who.purchase);
        t.clock.advance(60);
        const res = await refused(() => act('deactivate', who.purchase), 422, 'purchase_not_active');
        // Upstream documents no 422 for deactivate; the body is its error document all the same.
        assertMatchesUpstreamComponent('errors_unprocessable', res.json());
        assert.deepEqual(await show(who.purchase), before, 'reading the purchase again shows it unchanged');
        assert.equal(before.attributes.deactivation_reason, 'Refunded', 'the first deactivation keeps its reason');
      });

      it('deactivating twice in a row: the second is refused', async () => {
        const who = await bought();
        assertAnswer(await act('deactivate', who.purchase), who.purchase);
        await refused(() => act('deactivate', who.purchase), 422, 'purchase_not_active');
      });

      it('two concurrent deactivations: exactly one succeeds', async () => {
        const who = await bought();
        const results = await Promise.all([act('deactivate', who.purchase), act('deactivate', who.purchase)]);
        const statuses = results.map((r) => r.statusCode).sort();
        assert.deepEqual(statuses, [200, 422], `one success and one refusal: ${results.map((r) => r.body).join(' | ')}`);
      });
    });

    describe('POST /v1/purchases/{id}/reactivate', () => {
      it('a deactivated free purchase is active again with a new grant; the filters follow', async () => {
        for (const free of [{ payment_type: 'free' as const, amount_in_cents: 0 }, { payment_type: 'one_time' as const, amount_in_cents: 0 }]) {
          const who = await bought({ ...free, subscription_status: null });
          t.clock.advance(60);
          assertAnswer(await act('deactivate', who.purchase), who.purchase);
          assert.deepEqual(await access(who), OWNED_BEFORE, 'deactivated: access ended');
          t.clock.advance(60);
          const res = await act('reactivate', who.purchase);
          const attributes = assertAnswer(res, who.purchase);
          assert.equal(attributes.deactivated_at, null);
          assert.equal(attributes.deactivation_reason, null);
          assertResponseMatchesUpstream('post', '/v1/purchases/{id}/reactivate', res);
          assert.deepEqual(await access(who), OWNS, `reactivated (${free.payment_type}): access is back`);
          const grants = await t.handle.db.selectFrom('offer_grants').selectAll().where('purchase_id', '=', who.purchase).orderBy('id').execute();
          assert.equal(grants.length, 2, 'the old grant stays as history and a new one is made');
          assert.notEqual(grants[0]!.revoked_at, null, 'the old grant stays revoked');
          assert.equal(grants[1]!.revoked_at, null, 'the new grant is current');
          const memberships = await t.handle.db.selectFrom('memberships').select('product_id').where('offer_grant_id', '=', grants[1]!.id).execute();
          assert.deepEqual(memberships.map((m) => Number(m.product_id)).sort((x, y) => x - y), [...who.products].sort((x, y) => x - y), 'a membership per product');
          // And the cycle can run again.
          assertAnswer(await act('deactivate', who.purchase), who.purchase);
          assert.deepEqual(await access(who), OWNED_BEFORE, 'deactivated again');
        }
      });

      it('a paid purchase cannot be reactivated: 422 purchase_not_free, unchanged', async () => {
        const who = await bought({ deactivated: true, amount_in_cents: 4900, payment_type: 'one_time', subscription_status: null });
        const before = await show(who.purchase);
        const res = await refused(() => act('reactivate', who.purchase), 422, 'purchase_not_free');
        assertMatchesUpstreamComponent('errors_unprocessable', res.json());
        assert.deepEqual(await show(who.purchase), before, 'reading the purchase again shows it unchanged');
      });

      it('an active purchase cannot be reactivated: 422 purchase_already_active', async () => {
        const who = await bought({ payment_type: 'free', amount_in_cents: 0, subscription_status: null });
        await refused(() => act('reactivate', who.purchase), 422, 'purchase_already_active');
        assert.deepEqual(await access(who), OWNS, 'access unchanged');
      });
      it('a purchase whose contact was deleted cannot be reactivated (nobody to give access to): 422 customer_detached', async () => {
        const who = await bought({ deactivated: true, payment_type: 'free', amount_in_cents: 0, subscription_status: null });
        assert.equal((await send(t, 'DELETE', `/v1/contacts/${who.contactId}`, token)).statusCode, 200);
        await refused(() => act('reactivate', who.purchase), 422, 'customer_detached');
        assert.equal((await act('deactivate', who.purchase)).statusCode, 422, 'still there, and still deactivated');
      });
    });

    describe('POST /v1/purchases/{id}/cancel_subscription', () => {
      it('cancels the active subscription and deactivates the purchase, ending its access', async () => {
        const who = await bought();
        t.clock.advance(60);
        const res = await act('cancel_subscription', who.purchase);
        const attributes = assertAnswer(res, who.purchase);
        assert.equal(attributes.deactivated_at, t.clock.now().toISOString());
        assert.equal(attributes.deactivation_reason, SUBSCRIPTION_CANCELED);
        assertResponseMatchesUpstream('post', '/v1/purchases/{id}/cancel_subscription', res);
        const row = await purchaseRow(who.purchase);
        assert.equal(row.subscription_status, 'canceled');
        assert.equal(t.handle.traits.decodeTimestamp(row.subscription_canceled_at), t.clock.now().toISOString(), "cancelled now");
        assert.deepEqual(await access(who), OWNED_BEFORE, 'the access ended');
        await refused(() => act('cancel_subscription', who.purchase), 422, 'no_active_subscription');
      });

      it('a purchase deactivated earlier (subscription still active): cancels it, keeping the deactivation', async () => {
        const who = await bought();
        const deactivatedAt = t.clock.now().toISOString();
        assertAnswer(await act('deactivate', who.purchase), who.purchase);
        t.clock.advance(60);
        const attributes = assertAnswer(await act('cancel_subscription', who.purchase), who.purchase);
        assert.equal(attributes.deactivated_at, deactivatedAt, 'the deactivation keeps its time');
        assert.equal(attributes.deactivation_reason, DEACTIVATED_THROUGH_API, 'and its reason');
        assert.equal((await purchaseRow(who.purchase)).subscription_status, 'canceled');
      });

      it('without an active subscription: 422 no_active_subscription, unchanged', async () => {
        const none = await bought({ payment_type: 'one_time', subscription_status: null });
        const res = await refused(() => act('cancel_subscription', none.purchase), 422, 'no_active_subscription');
        assertResponseMatchesUpstream('post', '/v1/purchases/{id}/cancel_subscription', res);
        assert.deepEqual(await access(none), OWNS, 'access unchanged');
        const canceled = await bought({ subscription_status: 'canceled' });
        await refused(() => act('cancel_subscription', canceled.purchase), 422, 'no_active_subscription');
      });
    });

    describe('every action', () => {
      const ACTIONS: Action[] = ['deactivate', 'reactivate', 'cancel_subscription'];

      it("another account's purchase and a missing one are 404", async () => {
        for (const action of ACTIONS) {
          const res = await refused(() => act(action, foreign.purchase), 404, 'not_found');
          assertResponseMatchesUpstream('post', `/v1/purchases/{id}/${action}`, res);
          await refused(() => act(action, 999999), 404, 'not_found');
          await refused(() => act(action, 'abc'), 404, 'not_found');
        }
        const row = await purchaseRow(foreign.purchase);
        assert.equal(row.deactivated_at, null, "the other account's purchase is untouched");
      });

      it('needs manage:purchases and view:purchases (403), and a token (401)', async () => {
        const who = await bought({ deactivated: true, payment_type: 'free', amount_in_cents: 0 });
        const active = await bought();
        const viewer = await t.keyWith(t.tenant.ownerId, ['view:purchases']);
        const blind = await t.keyWith(t.tenant.ownerId, ['manage:purchases']);
        for (const action of ACTIONS) {
          const target = action === 'reactivate' ? who.purchase : active.purchase;
          const res = await refused(() => act(action, target, viewer.token), 403, 'forbidden');
          assertResponseMatchesUpstream('post', `/v1/purchases/{id}/${action}`, res);
          await refused(() => act(action, target, blind.token), 403, 'forbidden');
          const anonymous = await refused(() => t.request({ method: 'POST', url: `/v1/purchases/${target}/${action}` }), 401, 'unauthorized');
          assertResponseMatchesUpstream('post', `/v1/purchases/{id}/${action}`, anonymous);
        }
      });

      it('a request body is refused (400 unexpected_body); an empty object is accepted', async () => {
        const who = await bought();
        for (const action of ACTIONS) {
          await refused(() => act(action, who.purchase, token, { data: { type: 'purchases', id: String(who.purchase) } }), 400, 'unexpected_body');
          await refused(() => act(action, who.purchase, token, '[]'), 400, 'unexpected_body');
        }
        assertAnswer(await act('deactivate', who.purchase, token, {}), who.purchase);
      });
    });
  });
}
