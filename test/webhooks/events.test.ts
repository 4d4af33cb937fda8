// GET /v1/events(/{id}) (a sitebiz extension): every webhook event of the key's sites, newest
// first, with the payload deliveries carry, filtered by event and created_at, walked with cursors;
// each event is seen only by keys holding its type's read permissions (the ones a hook for it
// needs), and events of other accounts do not exist for the key. Events are made by API writes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PERMISSION_NAMES } from '../../src/auth/permissions.js';
import { builders, type Builders } from '../support/builders.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from '../support/harness.js';
import { assertError, otherAccount, send } from '../support/writes.js';
import { withSharedPartsInline } from '../support/openapi-document.js';

type Doc = { data: Array<{ id: string; attributes: Record<string, unknown> }>; links: Record<string, string | null>; meta: Record<string, number> };

for (const dialect of DIALECTS) {
  describe(`events [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let b: Builders;
    let vip: number;
    let contactId: number;
    let formId: number;
    /** Event ids by name, in the order they were made. */
    const e = { added: '', removed: '', submitted: '', legacy: '', payment: '', order: '', foreign: '' };
    let foreignSite: number;

    const tagging = (method: 'POST' | 'DELETE', contact: number, tag: number, as = token) =>
      send(t, method, `/v1/contacts/${contact}/relationships/tags`, as, { data: [{ type: 'contact_tags', id: String(tag) }] });
    const latestEvent = async () => String((await t.handle.db.selectFrom('outbox_events').select('id').orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow()).id);
    const get = async (url: string, as = token, status = 200) => {
      const res = await t.get(url, as);
      assert.equal(res.statusCode, status, `GET ${url}: ${res.body}`);
      return res.json();
    };
    const ids = (doc: Doc) => doc.data.map((r) => r.id);
    const keyWith = async (permissions: string[]) => (await t.keyWith(t.tenant.ownerId, permissions)).token;
    const insertEvent = async (siteId: number, type: string, payload: unknown, resourceId: number | null) => {
      const at = t.handle.traits.encodeTimestamp(t.clock.now());
      const row = await t.handle.db
        .insertInto('outbox_events')
        .values({ site_id: siteId, event_type: type, resource_id: resourceId, payload: t.handle.traits.encodeJson(payload), created_at: at, delivered_at: at })
        .returning('id')
        .executeTakeFirstOrThrow();
      return String(row.id);
    };

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      b = builders(t);
      vip = await b.tag('VIP');
      contactId = await b.contact({ name: 'Ada', email: 'ada@example.com' });
      formId = await b.form();
      // An event written before 0009 (no resource_id, an object of ids), as an upgraded database holds it.
      e.legacy = await insertEvent(t.tenant.siteId, 'tag_added', { contact_id: contactId, tag_id: vip }, null);
      t.clock.advance(60);
      assert.equal((await tagging('POST', contactId, vip)).statusCode, 200);
      e.added = await latestEvent();
      t.clock.advance(60);
      const submitted = await send(t, 'POST', `/v1/forms/${formId}/submit`, token, { data: { type: 'form_submissions', attributes: { name: 'Grace', email: 'grace@example.com' } } });
      assert.equal(submitted.statusCode, 201, submitted.body);
      e.submitted = await latestEvent();
      t.clock.advance(60);
      assert.equal((await tagging('DELETE', contactId, vip)).statusCode, 200);
      e.removed = await latestEvent();
      // Commerce events, written as the outbox writes them (their API flows are the sandbox's).
      t.clock.advance(60);
      e.payment = await insertEvent(t.tenant.siteId, 'payment_succeeded', [], 9001);
      t.clock.advance(60);
      e.order = await insertEvent(t.tenant.siteId, 'order_created', [], 9002);
      const other = await otherAccount(t);
      foreignSite = other.siteId;
      const theirs = builders(t).forSite(other.siteId);
      const theirKey = (await t.keyWith(other.ownerId, PERMISSION_NAMES)).token;
      assert.equal((await tagging('POST', await theirs.contact(), await theirs.tag('Theirs'), theirKey)).statusCode, 200);
      e.foreign = await latestEvent();
    });
    after(() => t.close());

    const newestFirst = () => [e.order, e.payment, e.removed, e.submitted, e.added, e.legacy];

    it('lists every event of the site newest first, with event, resource_id, payload and created_at', async () => {
      const doc: Doc = await get('/v1/events');
      assert.deepEqual(ids(doc), newestFirst());
      assert.equal(doc.meta.total_count, 6);
      const added = doc.data.find((r) => r.id === e.added)!;
      assert.deepEqual(Object.keys(added.attributes), ['event', 'resource_id', 'payload', 'created_at']);
      assert.equal(added.attributes.event, 'tag_added');
      assert.equal(added.attributes.resource_id, String(contactId), 'the record that triggered it');
      assert.equal(added.attributes.created_at, '2026-06-01T12:01:00.000Z');
      const submitted = doc.data.find((r) => r.id === e.submitted)!;
      assert.equal(submitted.attributes.event, 'form_submission');
      const payload = submitted.attributes.payload as Array<{ type: string; id: string }>;
      assert.deepEqual(payload.map((r) => r.type), ['form_submissions', 'forms']);
      assert.equal(submitted.attributes.resource_id, payload[0]!.id, 'triggered by the submission');
      assert.deepEqual((await get(`/v1/events/${e.added}`)).data, added, 'a listed event renders as its show');
      assert.equal((await get(`/v1/events/${e.added}`)).links.self, `${PUBLIC_URL}/v1/events/${e.added}`);
    });

    it('holds the payload as GET rendered its records when the event happened, however they change later', async () => {
      const event = (await get(`/v1/events/${e.submitted}`)).data;
      const [submission, form] = event.attributes.payload as Array<{ type: string; id: string }>;
      assert.deepEqual(submission, (await get(`/v1/form_submissions/${submission!.id}`)).data);
      assert.deepEqual(form, (await get(`/v1/forms/${formId}`)).data);
      // The tag_added event showed the contact tagged VIP; the contact has lost the tag since.
      const added = (await get(`/v1/events/${e.added}`)).data.attributes.payload as Array<{ type: string; id: string; relationships: { contact_tags?: { data: unknown[] } } }>;
      assert.deepEqual(added.map((r) => `${r.type} ${r.id}`), [`contacts ${contactId}`, `contact_tags ${vip}`]);
      const now = (await get(`/v1/contacts/${contactId}`)).data;
      assert.notDeepEqual(added[0], now, 'the contact as it was, not as it is');
      assert.equal(now.id, added[0]!.id);
    });

    it('renders an event written before sitebiz delivered webhooks as stored: no resource_id, an object of ids', async () => {
      const legacy = (await get(`/v1/events/${e.legacy}`)).data;
      assert.deepEqual(legacy.attributes, {
        event: 'tag_added',
        resource_id: null,
        payload: { contact_id: contactId, tag_id: vip },
        created_at: '2026-06-01T12:00:00.000Z',
      });
    });

    it('filters by event and by created_at', async () => {
      assert.deepEqual(ids(await get('/v1/events?filter[event_eq]=tag_added')), [e.added, e.legacy]);
      assert.deepEqual(ids(await get('/v1/events?filter[event_in]=tag_removed,form_submission')), [e.removed, e.submitted]);
      assert.deepEqual(ids(await get('/v1/events?filter[created_at_gt]=2026-06-01T12:03:00Z')), [e.order, e.payment]);
      assert.deepEqual(ids(await get('/v1/events?filter[created_at_gte]=2026-06-01T12:03:00Z')), [e.order, e.payment, e.removed]);
      assert.deepEqual(ids(await get('/v1/events?filter[created_at_lt]=2026-06-01T12:01:00Z')), [e.legacy]);
      assert.deepEqual(ids(await get('/v1/events?filter[created_at_lte]=2026-06-01T12:01:00Z&filter[event_eq]=tag_added')), [e.added, e.legacy]);
      assert.deepEqual(ids(await get('/v1/events?filter[created_at_gte]=2026-06-02')), []);
      assertError(await t.get('/v1/events?filter[created_at_gt]=yesterday', token), 400);
      assertError(await t.get('/v1/events?filter[event]=tag_added', token), 400);
      assert.deepEqual(ids(await get('/v1/events?sort=created_at')), [...newestFirst()].reverse());
    });

    it('walks with cursors both ways, as every list does', async () => {
      let page: Doc = await get('/v1/events?page[size]=2&page[after]=');
      assert.equal(page.meta.total_count, 6);
      const walked = ids(page);
      while (page.links.next) {
        page = await get(page.links.next.replace(PUBLIC_URL, ''));
        walked.push(...ids(page));
      }
      assert.deepEqual(walked, newestFirst());
      page = await get('/v1/events?page[size]=4&page[before]=');
      assert.deepEqual(ids(page), newestFirst().slice(2), 'the last page');
      page = await get(page.links.prev!.replace(PUBLIC_URL, ''));
      assert.deepEqual(ids(page), newestFirst().slice(0, 2));
      // A filtered walk keeps its filter.
      page = await get('/v1/events?filter[event_eq]=tag_added&page[size]=1&page[after]=');
      const tagged = ids(page);
      page = await get(page.links.next!.replace(PUBLIC_URL, ''));
      tagged.push(...ids(page));
      assert.deepEqual(tagged, [e.added, e.legacy]);
      assert.equal(page.links.next, null);
    });

    it('shows each key only the events whose read permissions it holds, as hooks need them; no view:hooks needed', async () => {
      const seen = async (permissions: string[]) => {
        const as = await keyWith(permissions);
        return ids(await get('/v1/events', as));
      };
      assert.deepEqual(await seen(['view:contacts']), [e.removed, e.added, e.legacy], 'tag events only');
      assert.deepEqual(await seen(['view:form_submissions']), [e.submitted]);
      assert.deepEqual(await seen(['view:transactions']), [e.payment], 'order_created needs view:orders too');
      assert.deepEqual(await seen(['view:transactions', 'view:orders']), [e.order, e.payment]);
      assert.deepEqual(await seen(['view:orders']), [], 'view:orders alone is not enough for order_created');
      assert.deepEqual(await seen(['view:hooks', 'manage:hooks']), [], 'hook permissions alone show no event');
      const contactsOnly = await keyWith(['view:contacts']);
      const list = await get('/v1/events', contactsOnly);
      assert.equal(list.meta.total_count, 3, 'the count counts only what the key sees');
      // An event the key may not see is missing, as one of another site is.
      assertError(await t.get(`/v1/events/${e.submitted}`, contactsOnly), 404, 'not_found');
      assert.equal((await get(`/v1/events/${e.added}`, contactsOnly)).data.id, e.added);
      assert.deepEqual(ids(await get('/v1/events?filter[event_eq]=form_submission', contactsOnly)), []);
    });

    it('includes a delivery\'s event only for keys that may see it; the linkage stays', async () => {
      const hook = await send(t, 'POST', '/v1/hooks', token, {
        data: { type: 'hooks', attributes: { event: 'tag_added', target_url: 'http://localhost:4000/in' }, relationships: { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } } },
      });
      assert.equal(hook.statusCode, 201, hook.body);
      t.clock.advance(60);
      assert.equal((await tagging('POST', contactId, vip)).statusCode, 200);
      const event = await latestEvent();
      const delivery = ids(await get(`/v1/hooks/${hook.json().data.id}/deliveries`))[0]!;
      const withContacts = await get(`/v1/webhook_deliveries/${delivery}?include=source_event`, await keyWith(['view:hooks', 'view:contacts']));
      assert.deepEqual(withContacts.included.map((r: { id: string }) => r.id), [event]);
      const hooksOnly = await get(`/v1/webhook_deliveries/${delivery}?include=source_event`, await keyWith(['view:hooks']));
      assert.deepEqual(hooksOnly.data.relationships.source_event.data, { type: 'events', id: event });
      assert.deepEqual(hooksOnly.included, [], 'a tag event needs view:contacts');
      // And the other way: an event's deliveries (view:hooks).
      assert.deepEqual(ids(await get(`/v1/events/${event}/deliveries`)), [delivery]);
      const refused = await t.get(`/v1/events/${event}/deliveries`, await keyWith(['view:contacts']));
      assertError(refused, 403, 'forbidden');
      assert.match(refused.json().errors[0].detail, /view:hooks/);
      assertError(await t.get(`/v1/events/${e.submitted}/deliveries`, await keyWith(['view:hooks', 'view:contacts'])), 404, 'not_found');
    });

    it('another account\'s events do not exist for the key', async () => {
      assert.ok(!ids(await get('/v1/events?page[size]=100')).includes(e.foreign));
      assertError(await t.get(`/v1/events/${e.foreign}`, token), 404, 'not_found');
      const res = await t.get(`/v1/events?filter[site_id]=${foreignSite}`, token);
      assertError(res, 404, 'not_found');
      assert.equal(res.json().errors[0].source.parameter, 'filter[site_id]');
      assertError(await t.get('/v1/events/987654321', token), 404, 'not_found');
      assertError(await t.get('/v1/events/abc', token), 404, 'not_found');
    });

    it('is documented in the served OpenAPI document with its filters and cursor parameters', async () => {
      const doc = withSharedPartsInline(await get('/v1/openapi.json', undefined));
      const names = doc.paths['/v1/events'].get.parameters.map((p: { name: string }) => p.name);
      for (const name of ['filter[event_eq]', 'filter[event_in]', 'filter[created_at_gt]', 'filter[created_at_gte]', 'filter[created_at_lt]', 'filter[created_at_lte]', 'page[after]', 'page[before]', 'sort']) {
        assert.ok(names.includes(name), name);
      }
      assert.ok(doc.paths['/v1/events/{id}'].get);
      assert.ok(doc.paths['/v1/events/{id}/deliveries'].get);
    });
  });
}
