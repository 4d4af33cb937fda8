// The mailbox (GET /v1/test_helpers/messages) and the double opt-in link: a submitted double
// opt-in form leaves a message whose link, followed without a token, subscribes the contact once;
// lists are newest first, filtered and paged like the API, limited to the key's account.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PERMISSION_NAMES } from '../../src/auth/permissions.js';
import { createApiKey } from '../../src/domain/accounts.js';
import { builders, type Builders } from '../support/builders.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from '../support/harness.js';
import { assertError, otherAccount, send } from '../support/writes.js';

interface Message {
  id: string;
  type: string;
  attributes: { kind: string; to: string; subject: string; body: string; confirmation_url: string | null; confirmed_at: string | null; created_at: string };
  relationships: { site: { data: { id: string } }; contact: { data: { id: string } | null } };
  links: { self: string };
}

for (const dialect of DIALECTS) {
  describe(`sandbox mailbox [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let b: Builders;
    let doubleForm: number;
    let singleForm: number;
    let offerForm: number;
    let otherToken: string;

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      b = builders(t);
      const product = await b.product({ title: 'Starter course' });
      const offer = await b.offer({ title: 'Free starter', payment_type: 'free', productIds: [product] });
      doubleForm = await b.form({ title: 'Newsletter', double_opt_in: true });
      singleForm = await b.form({ title: 'Updates', double_opt_in: false });
      offerForm = await b.form({ title: 'Get the course', offer_id: offer, double_opt_in: false });
      const other = await otherAccount(t);
      const otherForm = await b.forSite(other.siteId).form({ title: 'Theirs', double_opt_in: true });
      const key = await createApiKey(t.handle, { userId: other.ownerId, name: 'other', permissions: PERMISSION_NAMES }, t.clock);
      otherToken = await t.tokenFor(key.clientId, key.clientSecret);
      assert.equal((await submit(otherForm, 'theirs@example.com', otherToken)).statusCode, 201);
    });
    after(() => t.close());

    const submit = (formId: number, email: string, as = token) =>
      send(t, 'POST', `/v1/forms/${formId}/submit`, as, { data: { type: 'form_submissions', attributes: { name: 'Pat Doe', email } } });
    const mailbox = async (query = '', as = token): Promise<{ data: Message[]; meta: Record<string, number>; links: Record<string, string | null> }> => {
      const res = await t.get(`/v1/test_helpers/messages${query}`, as);
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };

    it('lists the double opt-in and welcome messages of the account, newest first, with their site and contact', async () => {
      assert.equal((await submit(doubleForm, 'dana@example.com')).statusCode, 201);
      t.clock.advance(60);
      assert.equal((await submit(offerForm, 'omar@example.com')).statusCode, 201);
      const { data, meta } = await mailbox();
      assert.deepEqual(data.map((m) => [m.attributes.kind, m.attributes.to]), [['customer_welcome', 'omar@example.com'], ['double_opt_in', 'dana@example.com']]);
      assert.equal(meta.total_count, 2, 'the other account\'s message is not listed');
      const [welcome, optIn] = data;
      assert.equal(optIn!.type, 'messages');
      assert.equal(optIn!.relationships.site.data.id, String(t.tenant.siteId));
      assert.ok(optIn!.relationships.contact.data);
      assert.equal(welcome!.attributes.confirmation_url, null);
      assert.equal(optIn!.links.self, `${PUBLIC_URL}/v1/test_helpers/messages/${optIn!.id}`);
      const shown = await t.get(optIn!.links.self.slice(PUBLIC_URL.length), token);
      assert.equal(shown.statusCode, 200, shown.body);
      assert.deepEqual(shown.json().data, optIn);
    });

    it('confirms a double opt-in subscription when its link is followed, once, without a token', async () => {
      assert.equal((await submit(doubleForm, 'erin@example.com')).statusCode, 201);
      const [message] = (await mailbox('?filter[to]=erin@example.com')).data;
      assert.ok(message);
      const url = message.attributes.confirmation_url!;
      assert.match(url, new RegExp(`^${PUBLIC_URL}/v1/test_helpers/confirm/[A-Za-z0-9_-]{32}$`));
      assert.ok(message.attributes.body.endsWith(`Confirm your subscription: ${url}`), message.attributes.body);
      const contactId = message.relationships.contact.data!.id;
      const contact = async () => (await t.get(`/v1/contacts/${contactId}`, token)).json().data.attributes;
      assert.equal((await contact()).subscribed, false, 'double opt-in: not subscribed before the link is followed');

      const followed = await t.request({ method: 'GET', url: url.slice(PUBLIC_URL.length) });
      assert.equal(followed.statusCode, 200, followed.body);
      assert.equal(followed.json().data.attributes.status, 'confirmed');
      assert.equal(followed.json().data.attributes.contact_id, contactId);
      assert.equal((await contact()).subscribed, true);
      const subscribedAt = async () =>
        t.handle.traits.decodeTimestamp((await t.handle.db.selectFrom('contacts').select('subscribed_at').where('id', '=', Number(contactId)).executeTakeFirstOrThrow()).subscribed_at);
      const at = await subscribedAt();
      assert.equal(at, t.clock.now().toISOString());
      const [confirmed] = (await mailbox(`?filter[contact_id]=${contactId}`)).data;
      assert.equal(confirmed!.attributes.confirmed_at, t.clock.now().toISOString());

      t.clock.advance(60);
      const again = await t.request({ method: 'GET', url: url.slice(PUBLIC_URL.length) });
      assert.equal(again.statusCode, 200);
      assert.equal(again.json().data.attributes.status, 'already_confirmed');
      assert.equal(await subscribedAt(), at, 'the second visit changes nothing');

      assertError(await t.request({ method: 'GET', url: '/v1/test_helpers/confirm/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }), 404, 'not_found');
      assertError(await t.request({ method: 'GET', url: '/v1/test_helpers/confirm/short' }), 404, 'not_found');
    });

    it('filters by kind, recipient, contact and site, and pages like the API', async () => {
      for (const n of [1, 2, 3]) {
        t.clock.advance(1);
        assert.equal((await submit(doubleForm, `page${n}@example.com`)).statusCode, 201);
      }
      assert.equal((await submit(singleForm, 'single@example.com')).statusCode, 201);
      const optIns = await mailbox('?filter[kind]=double_opt_in');
      assert.ok(optIns.data.every((m) => m.attributes.kind === 'double_opt_in'));
      assert.equal(optIns.meta.total_count, 5);
      assert.deepEqual((await mailbox('?filter[kind]=customer_welcome')).data.map((m) => m.attributes.to), ['omar@example.com']);
      assert.deepEqual((await mailbox('?filter[email]=PAGE2@example.com')).data.map((m) => m.attributes.to), ['page2@example.com']);
      assert.equal((await mailbox('?filter[to]=single@example.com')).meta.total_count, 0, 'single opt-in sends no confirmation');
      assert.equal((await mailbox(`?filter[site_id]=${t.tenant.siteId}`)).meta.total_count, 6);

      const first = await mailbox('?page[size]=2');
      assert.deepEqual(first.data.map((m) => m.attributes.to), ['page3@example.com', 'page2@example.com']);
      assert.equal(first.meta.total_pages, 3);
      assert.ok(first.links.next?.startsWith(`${PUBLIC_URL}/v1/test_helpers/messages?`), String(first.links.next));
      const second = await mailbox(`?${new URL(first.links.next!).search.slice(1)}`);
      assert.deepEqual(second.data.map((m) => m.attributes.to), ['page1@example.com', 'erin@example.com']);
      const cursor = await mailbox('?page[size]=4&page[after]=');
      assert.equal(cursor.data.length, 4);
      const rest = await mailbox(`?${new URL(cursor.links.next!).search.slice(1)}`);
      assert.deepEqual(rest.data.map((m) => m.attributes.to), ['omar@example.com', 'dana@example.com']);

      const included = await t.get('/v1/test_helpers/messages?filter[to]=page1@example.com&include=contact', token);
      assert.equal(included.json().included[0].attributes.email, 'page1@example.com');
    });

    it('answers 400 for unknown filters, 404 for a site or contact of another account, 403 without manage:sandbox', async () => {
      assertError(await t.get('/v1/test_helpers/messages?filter[nope]=1', token), 400, 'invalid_parameter');
      const theirs = (await mailbox('', otherToken)).data;
      assert.deepEqual(theirs.map((m) => m.attributes.to), ['theirs@example.com']);
      assertError(await t.get(`/v1/test_helpers/messages?filter[contact_id]=${theirs[0]!.relationships.contact.data!.id}`, token), 404);
      assertError(await t.get(`/v1/test_helpers/messages?filter[site_id]=${theirs[0]!.relationships.site.data.id}`, token), 404);
      assertError(await t.get(`/v1/test_helpers/messages/${theirs[0]!.id}`, token), 404);
      const reader = await t.keyWith(t.tenant.ownerId, ['view:contacts']);
      assertError(await t.get('/v1/test_helpers/messages', reader.token), 403, 'forbidden');
    });
  });

  describe(`sandbox mailbox in production mode [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect, { env: { MODE: 'production' } });
    });
    after(() => t.close());

    it('answers 404 for the mailbox and the confirmation link', async () => {
      const token = await t.token();
      assert.equal((await t.get('/v1/test_helpers/messages', token)).statusCode, 404);
      assert.equal((await t.get('/v1/test_helpers/confirm/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).statusCode, 404);
    });
  });
}
