// Email broadcasts and email activity (docs/sandbox.md, "Email activity and broadcasts"):
// POST/GET /v1/test_helpers/email_broadcasts and POST /v1/test_helpers/contacts/{id}/email_activity.
// What the activity records is seen at once by the contacts' email filters (whose counts are
// cached per data version), contacts and broadcasts of other accounts or sites are 404s with the
// pointer, bad kinds 422, refused requests write nothing, and production mode serves none of it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { builders, type Builders } from '../support/builders.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from '../support/harness.js';
import { assertError, otherAccount, rowCounts, send } from '../support/writes.js';
import { withSharedPartsInline } from '../support/openapi-document.js';

const activity = (broadcastId: number | string, attributes: Record<string, unknown>) => ({
  data: {
    type: 'email_activities',
    attributes,
    relationships: { broadcast: { data: { type: 'email_broadcasts', id: String(broadcastId) } } },
  },
});

for (const dialect of DIALECTS) {
  describe(`email activity and broadcasts [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let b: Builders;

    const contactIds = async (query: string): Promise<{ ids: string[]; total: number }> => {
      const res = await t.get(`/v1/contacts?${query}&page[size]=100`, token);
      assert.equal(res.statusCode, 200, res.body);
      const doc = res.json();
      return { ids: doc.data.map((c: { id: string }) => c.id), total: doc.meta.total_count };
    };
    const record = (contactId: number | string, body: unknown, as = token) => send(t, 'POST', `/v1/test_helpers/contacts/${contactId}/email_activity`, as, body);
    const siteOf = () => ({ site: { data: { type: 'sites', id: String(t.tenant.siteId) } } });
    /** A broadcast of the tenant's site (named unless `relationships` is null). */
    const newBroadcast = async (attributes: Record<string, unknown>, relationships: unknown = siteOf()) => {
      const res = await send(t, 'POST', '/v1/test_helpers/email_broadcasts', token, {
        data: { type: 'email_broadcasts', attributes, ...(relationships ? { relationships } : {}) },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data as { id: string; attributes: Record<string, unknown>; links: { self: string } };
    };

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      b = builders(t);
    });
    after(() => t.close());

    it('POST email_broadcasts makes a broadcast of the key\'s one site, sent at the account\'s now unless told', async () => {
      const made = await newBroadcast({ subject: 'Spring launch' }, null);
      assert.equal(made.attributes.subject, 'Spring launch');
      assert.equal(made.attributes.sent_at, t.clock.now().toISOString());
      assert.equal(made.links.self, `${PUBLIC_URL}/v1/test_helpers/email_broadcasts/${made.id}`);
      const draft = await newBroadcast({ subject: 'Draft', sent_at: null }, null);
      assert.equal(draft.attributes.sent_at, null);
      const earlier = await newBroadcast({ subject: 'Earlier', sent_at: '2026-05-01T09:00:00Z' });
      assert.equal(earlier.attributes.sent_at, '2026-05-01T09:00:00.000Z');

      const shown = await t.get(`/v1/test_helpers/email_broadcasts/${made.id}`, token);
      assert.equal(shown.statusCode, 200, shown.body);
      assert.deepEqual(shown.json().data.relationships.site.data, { type: 'sites', id: String(t.tenant.siteId) });

      const list = await t.get('/v1/test_helpers/email_broadcasts?page[size]=2', token);
      assert.equal(list.statusCode, 200, list.body);
      const doc = list.json();
      assert.equal(doc.meta.total_count, 3);
      assert.equal(doc.data.length, 2);
      assert.match(doc.links.next, /^http:\/\/sitebiz\.test\/v1\/test_helpers\/email_broadcasts\?page\[number\]=2&page\[size\]=2$/);
      // -sent_at: the draft (no sent_at) first, as descending orders put nulls (docs/paging.md), then newest sent first.
      const all = (await t.get('/v1/test_helpers/email_broadcasts', token)).json().data.map((r: { id: string }) => r.id);
      assert.deepEqual(all, [draft.id, made.id, earlier.id]);
    });

    it('POST email_broadcasts: subject is required (422), a bad sent_at is 422, both with pointers', async () => {
      const before = await rowCounts(t, ['email_broadcasts']);
      const post = (attributes: unknown) => send(t, 'POST', '/v1/test_helpers/email_broadcasts', token, { data: { type: 'email_broadcasts', attributes } });
      assertError(await post({}), 422, 'missing_attribute', '/data/attributes/subject');
      assertError(await post({ subject: 'x', sent_at: 'yesterday' }), 422, 'invalid_attribute', '/data/attributes/sent_at');
      assertError(await post({ subject: 'x', opened: 3 }), 422, 'unknown_attribute', '/data/attributes/opened');
      assert.deepEqual(await rowCounts(t, ['email_broadcasts']), before);
    });

    it('opened: 201 with the activity and its contact, and the broadcast filters see it at once', async () => {
      const contact = await b.contact({ email: 'olive@example.com' });
      const broadcast = Number((await newBroadcast({ subject: 'News' })).id);
      // Asked before, so that a cached count would be stale after the write.
      assert.deepEqual(await contactIds(`filter[opened_email_broadcast_id]=${broadcast}`), { ids: [], total: 0 });
      const res = await record(contact, activity(broadcast, { kind: 'opened' }));
      assert.equal(res.statusCode, 201, res.body);
      const doc = res.json();
      assert.equal(doc.data.type, 'email_activities');
      assert.equal(doc.data.attributes.kind, 'opened');
      assert.equal(doc.data.attributes.bounce_type, null);
      assert.equal(doc.data.attributes.occurred_at, t.clock.now().toISOString());
      assert.deepEqual(doc.data.relationships.contact.data, { type: 'contacts', id: String(contact) });
      assert.deepEqual(doc.data.relationships.broadcast.data, { type: 'email_broadcasts', id: String(broadcast) });
      assert.equal(res.headers.location, `${PUBLIC_URL}/v1/test_helpers/email_activities/${doc.data.id}`);
      assert.equal(doc.included[0].type, 'contacts');
      assert.equal(doc.included[0].id, String(contact));

      assert.deepEqual(await contactIds(`filter[opened_email_broadcast_id]=${broadcast}`), { ids: [String(contact)], total: 1 });
      assert.deepEqual((await contactIds(`filter[opened_email_in_last]=1`)).ids, [String(contact)]);
      assert.ok(!(await contactIds(`filter[no_opened_email_broadcast_id]=${broadcast}`)).ids.includes(String(contact)));
      const shown = await t.get(`/v1/test_helpers/email_activities?filter[contact_id]=${contact}`, token);
      assert.deepEqual(shown.json().data.map((r: { id: string }) => r.id), [doc.data.id]);
    });

    it('bounced keeps the latest bounce on the contact: hard by default, soft when told', async () => {
      const contact = await b.contact();
      const broadcast = Number((await newBroadcast({ subject: 'Bounce' })).id);
      const soft = await record(contact, activity(broadcast, { kind: 'bounced', bounce_type: 'soft' }));
      assert.equal(soft.statusCode, 201, soft.body);
      assert.equal(soft.json().data.attributes.bounce_type, 'soft');
      assert.ok((await contactIds(`filter[bounced_email_broadcast_id]=${broadcast}`)).ids.includes(String(contact)));
      assert.ok((await contactIds('filter[bounced_in_last]=1')).ids.includes(String(contact)));
      assert.ok(!(await contactIds('filter[is_hard_bouncing]=true')).ids.includes(String(contact)));
      const hard = await record(contact, activity(broadcast, { kind: 'bounced' }));
      assert.equal(hard.json().data.attributes.bounce_type, 'hard');
      assert.ok((await contactIds('filter[is_hard_bouncing]=true')).ids.includes(String(contact)));
      assert.ok((await contactIds('filter[suppressed]=true')).ids.includes(String(contact)));
    });

    it('unsubscribed and complained end the contact\'s marketing consent, its sequences and newsletters', async () => {
      const broadcast = Number((await newBroadcast({ subject: 'Consent' })).id);
      const sequence = await b.sequence();
      const newsletter = await b.newsletter();
      for (const kind of ['unsubscribed', 'complained'] as const) {
        const contact = await b.contact({ subscribed: true, subscribed_at: b.daysAgo(10) } as never);
        await b.sequenceSubscription({ sequenceId: sequence, contactId: contact } as never);
        await b.newsletterSubscription({ newsletterId: newsletter, contactId: contact } as never);
        assert.ok((await contactIds(`filter[subscribed_email_sequence_id]=${sequence}`)).ids.includes(String(contact)));
        const res = await record(contact, activity(broadcast, { kind }));
        assert.equal(res.statusCode, 201, res.body);
        assert.equal(res.json().included[0].attributes.subscribed, false, kind);
        assert.ok((await contactIds('filter[unsubscribed_in_last]=1')).ids.includes(String(contact)), kind);
        assert.ok((await contactIds('filter[subscribed]=false')).ids.includes(String(contact)), kind);
        assert.ok((await contactIds(`filter[not_subscribed_email_sequence_id]=${sequence}`)).ids.includes(String(contact)), kind);
        assert.ok((await contactIds(`filter[unsubscribed_newsletter_id]=${newsletter}`)).ids.includes(String(contact)), kind);
        const complained = (await contactIds('filter[complained_in_last]=1')).ids.includes(String(contact));
        assert.equal(complained, kind === 'complained', kind);
      }
    });

    it('a contact or broadcast of another account, or a broadcast of another site, is a 404; nothing is written', async () => {
      const other = await otherAccount(t);
      const theirs = builders(t, other.siteId);
      const theirContact = await theirs.contact();
      const theirBroadcast = await theirs.broadcast();
      const contact = await b.contact();
      const broadcast = Number((await newBroadcast({ subject: 'Mine' })).id);
      const before = await rowCounts(t, ['email_events', 'contacts']);
      assertError(await record(theirContact, activity(broadcast, { kind: 'opened' })), 404, 'not_found');
      assertError(await record(contact, activity(theirBroadcast, { kind: 'opened' })), 404, 'not_found', '/data/relationships/broadcast/data/id');
      assertError(await record(999999, activity(broadcast, { kind: 'opened' })), 404, 'not_found');
      assertError(await record('abc', activity(broadcast, { kind: 'opened' })), 404, 'not_found');
      assert.equal((await t.get(`/v1/test_helpers/email_broadcasts/${theirBroadcast}`, token)).statusCode, 404);

      // A second site of the same account: its broadcast is not the contact's site's.
      const secondSite = builders(t, (await t.handle.db.insertInto('sites').values({ account_id: t.tenant.accountId, title: 'Second', subdomain: `second-${dialect}`, created_at: t.handle.traits.encodeTimestamp(t.clock.now()), updated_at: t.handle.traits.encodeTimestamp(t.clock.now()) }).returning('id').executeTakeFirstOrThrow()).id as number);
      const elsewhere = await secondSite.broadcast();
      const fresh = await t.token();
      assertError(await record(contact, activity(elsewhere, { kind: 'opened' }), fresh), 404, 'not_found', '/data/relationships/broadcast/data/id');
      // With two sites, a broadcast must name its site.
      assertError(
        await send(t, 'POST', '/v1/test_helpers/email_broadcasts', fresh, { data: { type: 'email_broadcasts', attributes: { subject: 'x' } } }),
        400,
        'missing_relationship',
        '/data/relationships/site',
      );
      assert.deepEqual(await rowCounts(t, ['email_events', 'contacts']), before);
    });

    it('a bad kind or bounce_type, a missing broadcast, or a broadcast not sent yet is refused with a pointer', async () => {
      const contact = await b.contact();
      const broadcast = Number((await newBroadcast({ subject: 'Checks' })).id);
      const draft = Number((await newBroadcast({ subject: 'Draft', sent_at: null })).id);
      const later = Number((await newBroadcast({ subject: 'Later', sent_at: new Date(t.clock.now().getTime() + 86_400_000).toISOString() })).id);
      const before = await rowCounts(t, ['email_events']);
      assertError(await record(contact, activity(broadcast, { kind: 'read' })), 422, 'invalid_attribute', '/data/attributes/kind');
      assertError(await record(contact, activity(broadcast, { kind: 7 })), 422, 'invalid_attribute', '/data/attributes/kind');
      assertError(await record(contact, activity(broadcast, {})), 422, 'missing_attribute', '/data/attributes/kind');
      assertError(await record(contact, activity(broadcast, { kind: 'opened', bounce_type: 'hard' })), 422, 'invalid_attribute', '/data/attributes/bounce_type');
      assertError(await record(contact, activity(broadcast, { kind: 'bounced', bounce_type: 'medium' })), 422, 'invalid_attribute', '/data/attributes/bounce_type');
      assertError(await record(contact, { data: { type: 'email_activities', attributes: { kind: 'opened' } } }), 400, 'missing_relationship', '/data/relationships/broadcast');
      assertError(await record(contact, { data: { ...activity(broadcast, { kind: 'opened' }).data, type: 'contacts' } }), 409, 'type_mismatch', '/data/type');
      assertError(await record(contact, activity(draft, { kind: 'sent' })), 422, 'broadcast_not_sent', '/data/relationships/broadcast');
      assertError(await record(contact, activity(later, { kind: 'sent' })), 422, 'broadcast_not_sent', '/data/relationships/broadcast');
      assert.deepEqual(await rowCounts(t, ['email_events']), before);
    });

    it('needs manage:sandbox (403)', async () => {
      const { token: viewer } = await t.keyWith(t.tenant.ownerId, ['view:contacts', 'manage:contacts']);
      const contact = await b.contact();
      const broadcast = await b.broadcast();
      assertError(await record(contact, activity(broadcast, { kind: 'opened' }), viewer), 403, 'forbidden');
      assertError(await t.get('/v1/test_helpers/email_broadcasts', viewer), 403, 'forbidden');
    });

    it('the OpenAPI document lists the routes under the Sandbox tag', async () => {
      const doc = withSharedPartsInline((await t.get('/v1/openapi.json')).json());
      for (const [path, method] of [
        ['/v1/test_helpers/email_broadcasts', 'get'],
        ['/v1/test_helpers/email_broadcasts', 'post'],
        ['/v1/test_helpers/email_broadcasts/{id}', 'get'],
        ['/v1/test_helpers/contacts/{id}/email_activity', 'post'],
      ] as const) {
        assert.deepEqual(doc.paths[path]?.[method]?.tags, ['Sandbox'], `${method} ${path}`);
      }
      assert.equal(doc.paths['/v1/email_broadcasts'], undefined);
    });
  });

  describe(`email activity and broadcasts in production mode [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect, { env: { MODE: 'production' } });
    });
    after(() => t.close());

    it('answers 404 under /v1/test_helpers', async () => {
      const token = await t.token();
      const b = builders(t);
      const contact = await b.contact();
      const broadcast = await b.broadcast();
      assertError(await record404(t, token, contact, broadcast), 404);
      assertError(await t.get('/v1/test_helpers/email_broadcasts', token), 404);
      assertError(await t.get(`/v1/test_helpers/email_broadcasts/${broadcast}`, token), 404);
      const doc = withSharedPartsInline((await t.get('/v1/openapi.json')).json());
      assert.deepEqual(Object.keys(doc.paths).filter((p) => p.includes('test_helpers') || p.includes('email_')), []);
    });
  });
}

function record404(t: TestApp, token: string, contact: number, broadcast: number) {
  return send(t, 'POST', `/v1/test_helpers/contacts/${contact}/email_activity`, token, activity(broadcast, { kind: 'opened' }));
}
