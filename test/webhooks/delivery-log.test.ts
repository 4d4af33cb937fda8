// The delivery log as an integration sees it, over HTTP with real tokens: deliveries queued by API
// writes (a tag added to a contact while hooks exist) appear with their attributes, per hook
// (GET /v1/hooks/{id}/deliveries) and together, newest first, filtered by status and event, with
// their attempts; POST /v1/webhook_deliveries/{id}/redeliver queues one again (202) and wakes the
// worker, but not for a deleted hook's delivery; POST /v1/hooks/{id}/enable turns a disabled hook
// on again. The worker's attempts are simulated by writing their rows as it does.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PERMISSION_NAMES } from '../../src/auth/permissions.js';
import { onDeliveriesQueued } from '../../src/webhooks/wakeups.js';
import { builders, type Builders } from '../support/builders.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from '../support/harness.js';
import { assertError, otherAccount, rowsOf, send } from '../support/writes.js';
import { withSharedPartsInline } from '../support/openapi-document.js';

for (const dialect of DIALECTS) {
  describe(`delivery log [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let b: Builders;
    let vip: number;
    let tagHook: string;
    let removedHook: string;
    let foreign: { delivery: string; hook: string };

    const site = (id: number) => ({ site: { data: { type: 'sites', id: String(id) } } });
    const createHook = async (event: string, targetUrl: string, as = token, siteId = t.tenant.siteId): Promise<string> => {
      const res = await send(t, 'POST', '/v1/hooks', as, { data: { type: 'hooks', attributes: { event, target_url: targetUrl }, relationships: site(siteId) } });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data.id;
    };
    const tag = async (contactId: number, tagId: number, as = token) => {
      const res = await send(t, 'POST', `/v1/contacts/${contactId}/relationships/tags`, as, { data: [{ type: 'contact_tags', id: String(tagId) }] });
      assert.equal(res.statusCode, 200, res.body);
    };
    const untag = async (contactId: number, tagId: number) => {
      const res = await send(t, 'DELETE', `/v1/contacts/${contactId}/relationships/tags`, token, { data: [{ type: 'contact_tags', id: String(tagId) }] });
      assert.equal(res.statusCode, 200, res.body);
    };
    const get = async (url: string, as = token, status = 200) => {
      const res = await t.get(url, as);
      assert.equal(res.statusCode, status, `GET ${url}: ${res.body}`);
      return res.json();
    };
    const ids = (doc: { data: Array<{ id: string }> }) => doc.data.map((r) => r.id);
    const deliveryRow = (id: string) => t.handle.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', Number(id)).executeTakeFirstOrThrow();
    const hookRow = (id: string) => t.handle.db.selectFrom('hooks').selectAll().where('id', '=', Number(id)).executeTakeFirstOrThrow();
    const keyWith = async (permissions: string[]) => (await t.keyWith(t.tenant.ownerId, permissions)).token;
    const encode = (iso: string) => t.handle.traits.encodeTimestamp(new Date(iso));

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      b = builders(t);
      vip = await b.tag('VIP');
      tagHook = await createHook('tag_added', 'http://localhost:4000/tags');
      removedHook = await createHook('tag_removed', 'http://localhost:4000/removed');
      // Another account's hook and delivery, made through the API with its own key.
      const other = await otherAccount(t);
      const theirs = builders(t).forSite(other.siteId);
      const theirKey = (await t.keyWith(other.ownerId, PERMISSION_NAMES)).token;
      const theirHook = await createHook('tag_added', 'http://localhost:4000/theirs', theirKey, other.siteId);
      await tag(await theirs.contact(), await theirs.tag('Theirs'), theirKey);
      const row = await t.handle.db.selectFrom('webhook_deliveries').select('id').where('hook_id', '=', Number(theirHook)).executeTakeFirstOrThrow();
      foreign = { delivery: String(row.id), hook: theirHook };
    });
    after(() => t.close());

    it('a tag added through the API queues a delivery for the matching hook, shown with its attributes', async () => {
      const contactId = await b.contact({ name: 'Ada' });
      await tag(contactId, vip);
      const now = t.clock.now().toISOString();
      const log = await get(`/v1/hooks/${tagHook}/deliveries`);
      assert.equal(log.data.length, 1);
      const [delivery] = log.data;
      assert.equal(delivery.type, 'webhook_deliveries');
      assert.deepEqual({ ...delivery.attributes, webhook_id: undefined }, {
        event: 'tag_added',
        resource_id: String(contactId),
        status: 'pending',
        attempt_count: 0,
        next_attempt_at: now,
        last_attempt_at: null,
        last_response_status: null,
        last_error: null,
        target_url: 'http://localhost:4000/tags',
        webhook_id: undefined,
        created_at: now,
        updated_at: now,
      });
      assert.match(delivery.attributes.webhook_id, /^msg_[A-Za-z0-9_-]{20,}$/, 'a Standard Webhooks message id');
      const event = await t.handle.db.selectFrom('outbox_events').select('id').orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow();
      assert.deepEqual(delivery.relationships.hook.data, { type: 'hooks', id: tagHook });
      assert.deepEqual(delivery.relationships.source_event.data, { type: 'events', id: String(event.id) });
      assert.deepEqual(delivery.relationships.attempts.data, []);
      assert.equal(delivery.links.self, `${PUBLIC_URL}/v1/webhook_deliveries/${delivery.id}`);
      assert.equal(log.links.self, `${PUBLIC_URL}/v1/hooks/${tagHook}/deliveries?page[number]=1&page[size]=25`);
      // The same record in the whole log and on its own.
      assert.deepEqual((await get(`/v1/webhook_deliveries/${delivery.id}`)).data, delivery);
      assert.ok(ids(await get('/v1/webhook_deliveries')).includes(delivery.id));
      // The tag_removed hook got nothing.
      assert.deepEqual((await get(`/v1/hooks/${removedHook}/deliveries`)).data, []);
    });

    it('lists newest first, per hook and together, filtered by status and event, with paging', async () => {
      const contacts = [await b.contact(), await b.contact(), await b.contact()];
      const made: string[] = [];
      for (const contactId of contacts) {
        t.clock.advance(60);
        await tag(contactId, vip);
        made.push(ids(await get(`/v1/hooks/${tagHook}/deliveries?page[size]=1`))[0]!);
      }
      t.clock.advance(60);
      await untag(contacts[0]!, vip);
      const removed = ids(await get(`/v1/hooks/${removedHook}/deliveries`));
      assert.equal(removed.length, 1);
      await t.handle.db.updateTable('webhook_deliveries').set({ status: 'failed', next_attempt_at: null }).where('id', '=', Number(made[0])).execute();
      await t.handle.db.updateTable('webhook_deliveries').set({ status: 'succeeded', next_attempt_at: null }).where('id', '=', Number(made[1])).execute();

      const hookLog = ids(await get(`/v1/hooks/${tagHook}/deliveries`));
      assert.deepEqual(hookLog.slice(0, 3), [made[2], made[1], made[0]], 'newest first');
      assert.equal(hookLog.length, 4, 'with the first test\'s delivery last');
      const all = await get('/v1/webhook_deliveries');
      assert.deepEqual(ids(all).slice(0, 4), [removed[0], made[2], made[1], made[0]]);
      assert.equal(all.meta.total_count, 5, 'every delivery of the site, none of the other account');
      const createdAt = all.data.map((d: { attributes: { created_at: string } }) => d.attributes.created_at);
      assert.deepEqual(createdAt, [...createdAt].sort().reverse());

      assert.deepEqual(ids(await get(`/v1/hooks/${tagHook}/deliveries?filter[status_eq]=failed`)), [made[0]]);
      assert.deepEqual(ids(await get(`/v1/hooks/${tagHook}/deliveries?filter[status_in]=failed,succeeded`)), [made[1], made[0]]);
      assert.deepEqual(ids(await get('/v1/webhook_deliveries?filter[event_eq]=tag_removed')), removed);
      assert.deepEqual(ids(await get(`/v1/hooks/${removedHook}/deliveries?filter[event_eq]=tag_added`)), []);
      assert.deepEqual(ids(await get('/v1/webhook_deliveries?filter[status_eq]=pending&filter[event_in]=tag_added')), [made[2], hookLog[3]]);
      const bad = await t.get('/v1/webhook_deliveries?filter[status_eq]=lost', token);
      assert.equal(bad.statusCode, 200, 'an unknown status matches nothing');
      assert.deepEqual(bad.json().data, []);
      assertError(await t.get('/v1/webhook_deliveries?filter[status]=failed', token), 400);

      // Cursor paging walks the hook's log newest first.
      let page = await get(`/v1/hooks/${tagHook}/deliveries?page[size]=3&page[after]=`);
      const walked = ids(page);
      while (page.links.next) {
        page = await get(page.links.next.replace(PUBLIC_URL, ''));
        walked.push(...ids(page));
      }
      assert.deepEqual(walked, hookLog);
    });

    it('include=attempts shows the attempts the worker logged; include=source_event the event it delivers', async () => {
      const contactId = await b.contact();
      await tag(contactId, vip);
      const id = ids(await get(`/v1/hooks/${tagHook}/deliveries?page[size]=1`))[0]!;
      const started = t.clock.now();
      const attempts: string[] = [];
      for (const [n, values] of [
        [1, { response_status: 503, response_headers: { 'retry-after': '5' }, response_body: 'busy', error: 'the receiver answered 503' }],
        [2, { response_status: 200, response_headers: { 'content-type': 'text/plain' }, response_body: 'ok', error: null }],
      ] as const) {
        const row = await t.handle.db
          .insertInto('webhook_attempts')
          .values({
            site_id: t.tenant.siteId,
            delivery_id: Number(id),
            attempt_number: n,
            started_at: t.handle.traits.encodeTimestamp(new Date(started.getTime() + n * 5000)),
            duration_ms: 40 * n,
            response_status: values.response_status,
            response_headers: t.handle.traits.encodeJson(values.response_headers),
            response_body: values.response_body,
            error: values.error,
            created_at: t.handle.traits.encodeTimestamp(started),
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        attempts.push(String(row.id));
      }
      const doc = await get(`/v1/webhook_deliveries/${id}?include=attempts,source_event`);
      assert.deepEqual(doc.data.relationships.attempts.data, attempts.map((a) => ({ type: 'webhook_attempts', id: a })));
      const included = doc.included as Array<{ type: string; id: string; attributes: Record<string, unknown> }>;
      const tried = included.filter((r) => r.type === 'webhook_attempts');
      assert.deepEqual(tried.map((r) => r.id), attempts);
      assert.deepEqual(tried[0]!.attributes, {
        attempt_number: 1,
        started_at: new Date(started.getTime() + 5000).toISOString(),
        duration_ms: 40,
        response_status: 503,
        response_headers: { 'retry-after': '5' },
        response_body: 'busy',
        error: 'the receiver answered 503',
        created_at: started.toISOString(),
      });
      assert.equal(tried[1]!.attributes.response_status, 200);
      const event = included.find((r) => r.type === 'events');
      assert.ok(event, 'the event is included');
      assert.deepEqual(event, (await get(`/v1/events/${event.id}`)).data, 'as GET /v1/events/{id} renders it');
      assert.equal(event.attributes.event, 'tag_added');
      assert.equal(event.attributes.resource_id, String(contactId));
    });

    it('reading needs view:hooks, redeliver and enable need manage:hooks; each 403 names what is missing', async () => {
      const [delivery] = ids(await get(`/v1/hooks/${tagHook}/deliveries?page[size]=1`));
      const manageOnly = await keyWith(['manage:hooks', 'view:contacts']);
      for (const url of ['/v1/webhook_deliveries', `/v1/webhook_deliveries/${delivery}`, `/v1/hooks/${tagHook}/deliveries`]) {
        const res = await t.get(url, manageOnly);
        assertError(res, 403, 'forbidden');
        assert.match(res.json().errors[0].detail, /view:hooks/, url);
      }
      const viewOnly = await keyWith(['view:hooks']);
      assert.equal((await get('/v1/webhook_deliveries', viewOnly)).data.length > 0, true, 'view:hooks alone reads the log');
      const before = await rowsOf(t, 'webhook_deliveries');
      for (const [url, as] of [
        [`/v1/webhook_deliveries/${delivery}/redeliver`, viewOnly],
        [`/v1/hooks/${tagHook}/enable`, viewOnly],
        [`/v1/webhook_deliveries/${delivery}/redeliver`, manageOnly],
        [`/v1/hooks/${tagHook}/enable`, manageOnly],
      ] as const) {
        const res = await send(t, 'POST', url, as);
        assertError(res, 403, 'forbidden');
        assert.match(res.json().errors[0].detail, /needs the manage:hooks and view:hooks permissions; this API key lacks (manage|view):hooks/, url);
      }
      assert.deepEqual(await rowsOf(t, 'webhook_deliveries'), before, 'refused requests change nothing');
    });

    it('another account\'s deliveries and hooks are missing: 404 to read, redeliver or enable, and never listed', async () => {
      assertError(await t.get(`/v1/webhook_deliveries/${foreign.delivery}`, token), 404, 'not_found');
      assertError(await t.get(`/v1/hooks/${foreign.hook}/deliveries`, token), 404, 'not_found');
      assertError(await send(t, 'POST', `/v1/webhook_deliveries/${foreign.delivery}/redeliver`, token), 404, 'not_found');
      assertError(await send(t, 'POST', `/v1/hooks/${foreign.hook}/enable`, token), 404, 'not_found');
      assertError(await send(t, 'POST', '/v1/webhook_deliveries/987654321/redeliver', token), 404, 'not_found');
      assert.ok(!ids(await get('/v1/webhook_deliveries?page[size]=100')).includes(foreign.delivery));
      const row = await deliveryRow(foreign.delivery);
      assert.equal(row.status, 'pending', 'untouched');
    });

    describe('POST /v1/webhook_deliveries/{id}/redeliver', () => {
      it('queues a failed delivery for an attempt now: 202, pending, due now, the schedule from its start, the same webhook-id, the worker woken', async () => {
        await tag(await b.contact(), vip);
        const [id] = ids(await get(`/v1/hooks/${tagHook}/deliveries?page[size]=1`));
        await t.handle.db
          .updateTable('webhook_deliveries')
          .set({
            status: 'failed',
            attempt_count: 8,
            failures_in_round: 8,
            next_attempt_at: null,
            last_attempt_at: encode('2026-06-02T15:00:00.000Z'),
            last_response_status: 500,
            last_error: 'the receiver answered 500',
          })
          .where('id', '=', Number(id))
          .execute();
        const queued = await deliveryRow(id!);
        t.clock.advance(3600);
        let woken = 0;
        const stop = onDeliveriesQueued(() => woken++);
        let res;
        try {
          res = await send(t, 'POST', `/v1/webhook_deliveries/${id}/redeliver`, token);
        } finally {
          stop();
        }
        assert.equal(res.statusCode, 202, res.body);
        assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/);
        assert.equal(res.headers.location, undefined, 'nothing was created');
        const now = t.clock.now().toISOString();
        const doc = res.json();
        assert.equal(doc.data.id, id);
        assert.equal(doc.links.self, `${PUBLIC_URL}/v1/webhook_deliveries/${id}`);
        assert.deepEqual(doc.data.attributes, {
          ...(await get(`/v1/webhook_deliveries/${id}`)).data.attributes,
          status: 'pending',
          next_attempt_at: now,
          updated_at: now,
        });
        assert.equal(doc.data.attributes.attempt_count, 8, 'the attempts made stay counted');
        assert.equal(doc.data.attributes.last_error, 'the receiver answered 500', 'the last outcome stays in the log');
        assert.equal(doc.data.attributes.last_response_status, 500);
        const row = await deliveryRow(id!);
        assert.equal(row.failures_in_round, 0, 'the retry schedule starts again');
        assert.equal(row.webhook_id, queued.webhook_id, 'the same webhook-id');
        assert.equal(row.event_id, queued.event_id, 'the same event, so the same body');
        assert.equal(woken, 1, 'the worker of this process is woken once the write committed');
      });

      it('redelivers whatever the status: a succeeded delivery too', async () => {
        await tag(await b.contact(), vip);
        const [id] = ids(await get(`/v1/hooks/${tagHook}/deliveries?page[size]=1`));
        await t.handle.db.updateTable('webhook_deliveries').set({ status: 'succeeded', next_attempt_at: null, attempt_count: 1 }).where('id', '=', Number(id)).execute();
        const res = await send(t, 'POST', `/v1/webhook_deliveries/${id}/redeliver`, token);
        assert.equal(res.statusCode, 202, res.body);
        assert.equal(res.json().data.attributes.status, 'pending');
        assert.equal(res.json().data.attributes.next_attempt_at, t.clock.now().toISOString());
      });

      it('takes no body and no query parameters', async () => {
        const [id] = ids(await get(`/v1/hooks/${tagHook}/deliveries?page[size]=1`));
        assertError(await send(t, 'POST', `/v1/webhook_deliveries/${id}/redeliver`, token, { data: { type: 'webhook_deliveries' } }), 400, 'unexpected_body');
        assertError(await send(t, 'POST', `/v1/webhook_deliveries/${id}/redeliver?include=attempts`, token), 400);
      });

      it('refuses a disabled hook\'s delivery until the hook is enabled: 422 hook_disabled, then 202', async () => {
        const resting = await createHook('tag_added', 'http://localhost:4000/resting');
        await tag(await b.contact(), vip);
        const [id] = ids(await get(`/v1/hooks/${resting}/deliveries`));
        await t.handle.db.updateTable('hooks').set({ disabled_at: t.handle.traits.encodeTimestamp(t.clock.now()) }).where('id', '=', Number(resting)).execute();
        const before = await deliveryRow(id!);
        assertError(await send(t, 'POST', `/v1/webhook_deliveries/${id}/redeliver`, token), 422, 'hook_disabled');
        assert.deepEqual(await deliveryRow(id!), before, 'nothing changed');
        assert.equal((await send(t, 'POST', `/v1/hooks/${resting}/enable`, token)).statusCode, 200);
        assert.equal((await send(t, 'POST', `/v1/webhook_deliveries/${id}/redeliver`, token)).statusCode, 202);
      });

      it('refuses a deleted hook\'s delivery (there is no secret to sign it with): 422 hook_deleted, nothing changes; the delivery stays in the log, cancelled', async () => {
        const doomed = await createHook('tag_added', 'http://localhost:4000/doomed');
        await tag(await b.contact(), vip);
        const [id] = ids(await get(`/v1/hooks/${doomed}/deliveries`));
        assert.equal((await send(t, 'DELETE', `/v1/hooks/${doomed}`, token)).statusCode, 204);
        const logged = (await get(`/v1/webhook_deliveries/${id}`)).data;
        assert.equal(logged.attributes.status, 'cancelled');
        assert.equal(logged.attributes.next_attempt_at, null);
        assert.deepEqual(logged.relationships.hook.data, { type: 'hooks', id: doomed }, 'the linkage keeps the deleted hook\'s id');
        assert.ok(ids(await get('/v1/webhook_deliveries?filter[status_eq]=cancelled')).includes(id!));
        assertError(await t.get(`/v1/hooks/${doomed}/deliveries`, token), 404, 'not_found');
        const before = await deliveryRow(id!);
        const res = await send(t, 'POST', `/v1/webhook_deliveries/${id}/redeliver`, token);
        assertError(res, 422, 'hook_deleted');
        assert.match(res.json().errors[0].detail, new RegExp(`hook ${doomed}, which was deleted`));
        assert.deepEqual(await deliveryRow(id!), before, 'nothing changed');
      });
    });

    describe('POST /v1/hooks/{id}/enable', () => {
      it('turns a disabled hook on again: 200 with the hook, disabled_at and failing_since cleared, deliveries queued again', async () => {
        const hook = await createHook('tag_added', 'http://localhost:4000/flaky');
        await t.handle.db
          .updateTable('hooks')
          .set({ disabled_at: encode('2026-06-01T00:00:00.000Z'), failing_since: encode('2026-05-27T00:00:00.000Z') })
          .where('id', '=', Number(hook))
          .execute();
        const disabled = (await get(`/v1/hooks/${hook}`)).data.attributes;
        assert.equal(disabled.disabled_at, '2026-06-01T00:00:00.000Z');
        assert.equal(disabled.failing_since, '2026-05-27T00:00:00.000Z', 'when its failures began');
        assert.deepEqual(ids(await get('/v1/hooks?filter[disabled_at_null]=false')), [hook]);
        await tag(await b.contact(), vip);
        assert.deepEqual((await get(`/v1/hooks/${hook}/deliveries`)).data, [], 'nothing is queued for a disabled hook');

        t.clock.advance(60);
        const res = await send(t, 'POST', `/v1/hooks/${hook}/enable`, token);
        assert.equal(res.statusCode, 200, res.body);
        assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/);
        const doc = res.json();
        assert.equal(doc.data.id, hook);
        assert.equal(doc.data.attributes.disabled_at, null);
        assert.equal(doc.data.attributes.failing_since, null);
        assert.equal(doc.data.attributes.updated_at, t.clock.now().toISOString());
        assert.equal(doc.data.meta, undefined, 'no secret is shown');
        const row = await hookRow(hook);
        assert.equal(row.failing_since, null);
        assert.equal(row.disabled_at, null);
        await tag(await b.contact(), vip);
        assert.equal((await get(`/v1/hooks/${hook}/deliveries`)).data.length, 1, 'events are delivered to it again');
      });

      it('leaves an enabled hook exactly as it is: 200, unchanged', async () => {
        const before = await hookRow(tagHook);
        t.clock.advance(60);
        const res = await send(t, 'POST', `/v1/hooks/${tagHook}/enable`, token);
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(res.json().data, (await get(`/v1/hooks/${tagHook}`)).data);
        assert.deepEqual(await hookRow(tagHook), before);
      });
    });

    it('the served OpenAPI document answers redeliver with 202 and enable with 200', async () => {
      const doc = withSharedPartsInline(await get('/v1/openapi.json', undefined));
      const redeliver = doc.paths['/v1/webhook_deliveries/{id}/redeliver'].post.responses;
      assert.ok(redeliver['202'], 'redeliver documents 202');
      assert.equal(redeliver['200'], undefined);
      assert.match(redeliver['202'].description, /Accepted/);
      assert.ok(redeliver['202'].content['application/vnd.api+json'].schema);
      const enable = doc.paths['/v1/hooks/{id}/enable'].post.responses;
      assert.ok(enable['200']);
      assert.equal(enable['202'], undefined);
      for (const path of ['/v1/webhook_deliveries', '/v1/hooks/{id}/deliveries']) {
        const names = doc.paths[path].get.parameters.map((p: { name: string }) => p.name);
        for (const filter of ['filter[status_eq]', 'filter[status_in]', 'filter[event_eq]', 'filter[event_in]']) assert.ok(names.includes(filter), `${path} ${filter}`);
      }
    });
  });
}
