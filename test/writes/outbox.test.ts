// The outbox: a write that announces something writes its event in the same transaction, with its
// payload rendered as GET renders the records at that moment, and queues one delivery for each
// hook of the site the event matches (event type, resource_id, not disabled), so that a hook
// created later gets nothing and a rolled-back write leaves neither event nor delivery.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Principal } from '../../src/auth/principal.js';
import type { DatabaseHandle } from '../../src/db/connect.js';
import { createSite } from '../../src/domain/accounts.js';
import { recordEvent } from '../../src/domain/outbox.js';
import { builders, type Builders } from '../support/builders.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { rowCounts, send } from '../support/writes.js';

for (const dialect of DIALECTS) {
  describe(`outbox [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let b: Builders;
    let vip: number;
    let lead: number;
    let secondSite: number;

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      b = builders(t);
      vip = await b.tag('VIP');
      lead = await b.tag('Lead');
      secondSite = await createSite(t.handle, { accountId: t.tenant.accountId, title: 'Second', subdomain: `second-${randomBytes(4).toString('hex')}` }, t.clock);
    });
    after(() => t.close());

    const tag = async (contactId: number, tagId: number) => {
      const res = await send(t, 'POST', `/v1/contacts/${contactId}/relationships/tags`, token, { data: [{ type: 'contact_tags', id: String(tagId) }] });
      assert.equal(res.statusCode, 200, res.body);
    };
    const hook = async (event: string, targetUrl: string, resourceId: number | null = null, siteId = t.tenant.siteId): Promise<number> => {
      const res = await send(t, 'POST', '/v1/hooks', token, {
        data: { type: 'hooks', attributes: { event, target_url: targetUrl, resource_id: resourceId }, relationships: { site: { data: { type: 'sites', id: String(siteId) } } } },
      });
      assert.equal(res.statusCode, 201, res.body);
      return Number(res.json().data.id);
    };
    const lastEvent = () => t.handle.db.selectFrom('outbox_events').selectAll().orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow();
    const deliveriesOf = (eventId: unknown) =>
      t.handle.db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', Number(eventId)).orderBy('hook_id').execute();

    it('an event holds the records it is about, rendered exactly as GET renders them at that moment', async () => {
      const contactId = await b.contact({ name: 'Ada' });
      await tag(contactId, vip);
      const event = await lastEvent();
      assert.equal(event.event_type, 'tag_added');
      assert.equal(Number(event.resource_id), contactId, 'triggered by the contact');
      const [contact, tagRecord] = t.handle.traits.decodeJson(event.payload) as unknown[];
      assert.deepEqual(contact, (await t.get(`/v1/contacts/${contactId}`, token)).json().data);
      assert.deepEqual(tagRecord, (await t.get(`/v1/contact_tags/${vip}`, token)).json().data);
    });

    it('queues one pending delivery per matching hook: same event, the resource it is limited to, not disabled, same site', async () => {
      const everyTag = await hook('tag_added', 'https://example.com/every-tag');
      const vipOnly = await hook('tag_added', 'https://example.com/vip', vip);
      await hook('tag_added', 'https://example.com/lead', lead);
      await hook('tag_removed', 'https://example.com/removed');
      await hook('tag_added', 'https://example.com/second-site', null, secondSite);
      const disabled = await hook('tag_added', 'https://example.com/disabled');
      await t.handle.db.updateTable('hooks').set({ disabled_at: t.handle.traits.encodeTimestamp(t.clock.now()) }).where('id', '=', disabled).execute();

      const contactId = await b.contact();
      await tag(contactId, vip);
      const event = await lastEvent();
      const deliveries = await deliveriesOf(event.id);
      assert.deepEqual(
        deliveries.map((d) => [Number(d.hook_id), d.target_url]),
        [
          [everyTag, 'https://example.com/every-tag'],
          [vipOnly, 'https://example.com/vip'],
        ],
      );
      const now = t.handle.traits.encodeTimestamp(t.clock.now());
      for (const d of deliveries) {
        assert.equal(d.status, 'pending');
        assert.equal(d.event, 'tag_added');
        assert.equal(Number(d.resource_id), contactId);
        assert.equal(Number(d.site_id), t.tenant.siteId);
        assert.equal(d.attempt_count, 0);
        assert.equal(t.handle.traits.decodeTimestamp(d.next_attempt_at), t.handle.traits.decodeTimestamp(now), 'due at once');
        assert.match(d.webhook_id, /^msg_[A-Za-z0-9_-]{24}$/);
      }
      assert.notEqual(deliveries[0]!.webhook_id, deliveries[1]!.webhook_id, 'each delivery has its own webhook-id');
    });

    it('a hook created after an event does not receive it', async () => {
      const contactId = await b.contact();
      await tag(contactId, lead);
      const event = await lastEvent();
      const before = (await deliveriesOf(event.id)).length;
      await hook('tag_added', 'https://example.com/late');
      assert.equal((await deliveriesOf(event.id)).length, before);
    });

    it('a rolled-back transaction leaves neither the event nor its deliveries', async () => {
      const tables = ['outbox_events', 'webhook_deliveries'];
      const counts = await rowCounts(t, tables);
      const contactId = await b.contact();
      await assert.rejects(
        t.handle.db.transaction().execute(async (trx) => {
          const handle: DatabaseHandle = { ...t.handle, db: trx };
          const committed: Array<() => void> = [];
          await recordEvent(
            {
              handle,
              principal: {} as Principal,
              now: t.clock.now(),
              render: async (type, id) => ({ type, id: String(id), attributes: {}, links: { self: '' } }),
              afterCommit: (run) => committed.push(run),
            },
            { siteId: t.tenant.siteId, type: 'tag_added', records: [{ type: 'contacts', id: contactId }, { type: 'contact_tags', id: vip }], hookResourceIds: [vip] },
          );
          assert.equal(committed.length, 1, 'the worker would be woken after the commit');
          throw new Error('the change failed');
        }),
        /the change failed/,
      );
      assert.deepEqual(await rowCounts(t, tables), counts, 'no event and no delivery without the change');
    });
  });
}
