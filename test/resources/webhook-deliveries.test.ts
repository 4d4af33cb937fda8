// GET /v1/webhook_deliveries(/{id}) and GET /v1/webhook_attempts/{id}: the delivery log, read with
// view:hooks, from rows as the outbox and the delivery worker write them. The behaviour around it
// (deliveries queued by API writes, redeliver, a deleted hook's deliveries) is in
// test/webhooks/delivery-log.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { webhookDeliveries } from '../../src/resources/webhook-deliveries.js';
import { DIALECTS } from '../support/harness.js';
import { at, createWorld, getJson, readResourceTests, selfUrl, type World } from '../support/catalogue-fixtures.js';

for (const dialect of DIALECTS) {
  describe(`webhook deliveries [${dialect}]`, () => {
    let w: World;
    const f = { d1: '', d2: '', d3: '', d4: '', second: '', foreign: '', hook: '', formHook: '', event: '', formEvent: '', a1: '', a2: '' };

    before(async () => {
      w = await createWorld(dialect);
      const { rows, siteId } = w;
      const event = (site: string, type: string, created: string) =>
        rows.insert('outbox_events', site, { event_type: type, resource_id: 5, payload: [], created_at: at(created), delivered_at: at(created) });
      f.event = await event(siteId, 'tag_added', '2026-03-01T10:00:00.000Z');
      f.formEvent = await event(siteId, 'form_submission', '2026-04-01T10:00:00.000Z');
      f.hook = await rows.hook(siteId, { event: 'tag_added', target_url: 'https://receiver.example/tags' });
      f.formHook = await rows.hook(siteId, { event: 'form_submission', target_url: 'https://receiver.example/forms' });
      let n = 0;
      const delivery = (site: string, o: Record<string, unknown>) =>
        rows.insert('webhook_deliveries', site, {
          hook_id: Number(f.hook),
          event_id: Number(f.event),
          event: 'tag_added',
          resource_id: 5,
          target_url: 'https://receiver.example/tags',
          webhook_id: `msg_${dialect}_${++n}`,
          status: 'pending',
          attempt_count: 0,
          failures_in_round: 0,
          next_attempt_at: null,
          ...o,
        } as never);
      f.d1 = await delivery(siteId, {
        status: 'succeeded',
        attempt_count: 1,
        last_attempt_at: at('2026-03-01T10:00:01.000Z'),
        last_response_status: 204,
        created_at: at('2026-03-01T10:00:00.000Z'),
      });
      f.d2 = await delivery(siteId, {
        hook_id: Number(f.formHook),
        event_id: Number(f.formEvent),
        event: 'form_submission',
        resource_id: 77,
        target_url: 'https://receiver.example/forms',
        status: 'failed',
        attempt_count: 2,
        failures_in_round: 2,
        last_attempt_at: at('2026-04-01T10:05:05.000Z'),
        last_response_status: 500,
        last_error: 'the receiver answered 500',
        created_at: at('2026-04-01T10:00:00.000Z'),
        updated_at: at('2026-04-01T10:05:05.000Z'),
      });
      // Made at the same moment as d2: the id breaks the tie.
      f.d3 = await delivery(siteId, {
        status: 'retrying',
        attempt_count: 1,
        failures_in_round: 1,
        next_attempt_at: at('2026-04-01T10:05:00.000Z'),
        last_attempt_at: at('2026-04-01T10:00:00.000Z'),
        last_error: 'connect ECONNREFUSED',
        created_at: at('2026-04-01T10:00:00.000Z'),
      });
      // A deleted hook's delivery stays in the log.
      f.d4 = await delivery(siteId, { hook_id: 987654, event: 'tag_removed', status: 'cancelled', last_error: 'the hook was deleted', created_at: at('2026-05-01T10:00:00.000Z') });
      const secondEvent = await event(w.secondSiteId, 'tag_added', '2026-03-01T10:00:00.000Z');
      f.second = await delivery(w.secondSiteId, { event_id: Number(secondEvent) });
      const foreignEvent = await event(w.other.siteId, 'tag_added', '2026-03-01T10:00:00.000Z');
      f.foreign = await delivery(w.other.siteId, { event_id: Number(foreignEvent) });
      const attempt = (number: number, o: Record<string, unknown>) =>
        rows.insert('webhook_attempts', siteId, { delivery_id: Number(f.d2), attempt_number: number, duration_ms: 120, ...o } as never);
      f.a1 = await attempt(1, {
        started_at: at('2026-04-01T10:00:00.000Z'),
        response_status: 500,
        response_headers: { 'content-type': 'text/plain' },
        response_body: 'oops',
        error: 'the receiver answered 500',
      });
      f.a2 = await attempt(2, { started_at: at('2026-04-01T10:05:05.000Z'), duration_ms: 10_000, response_status: null, response_headers: null, response_body: null, error: 'timed out after 10 s' });
    });
    after(() => w.t.close());

    readResourceTests({
      resource: webhookDeliveries,
      world: () => w,
      fixtures: () => f,
      // A sitebiz extension: upstream describes no delivery log.
      upstream: null,
      all: () => [f.d4, f.d3, f.d2, f.d1],
      sorts: { created_at: () => [f.d1, f.d2, f.d3, f.d4] },
      filters: [
        { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [f.second] },
        { name: 'event_eq', query: () => 'filter[event_eq]=tag_added', expect: () => [f.d1, f.d3] },
        { name: 'event_in', query: () => 'filter[event_in]=form_submission,tag_removed', expect: () => [f.d2, f.d4] },
        { name: 'status_eq', query: () => 'filter[status_eq]=failed', expect: () => [f.d2] },
        { name: 'status_in', query: () => 'filter[status_in]=retrying,cancelled', expect: () => [f.d3, f.d4] },
        { name: 'created_at_gt', query: () => 'filter[created_at_gt]=2026-04-01T10:00:00Z', expect: () => [f.d4] },
        { name: 'created_at_gte', query: () => 'filter[created_at_gte]=2026-04-01', expect: () => [f.d2, f.d3, f.d4] },
        { name: 'created_at_lt', query: () => 'filter[created_at_lt]=2026-04-01T10:00:00Z', expect: () => [f.d1] },
        { name: 'created_at_lte', query: () => 'filter[created_at_lte]=2026-04-01T10:00:00Z', expect: () => [f.d1, f.d2, f.d3] },
      ],
      sparse: ['status', 'event'],
      show: () => ({
        id: f.d2,
        type: 'webhook_deliveries',
        attributes: {
          event: 'form_submission',
          resource_id: '77',
          status: 'failed',
          attempt_count: 2,
          next_attempt_at: null,
          last_attempt_at: '2026-04-01T10:05:05.000Z',
          last_response_status: 500,
          last_error: 'the receiver answered 500',
          target_url: 'https://receiver.example/forms',
          webhook_id: `msg_${dialect}_2`,
          created_at: '2026-04-01T10:00:00.000Z',
          updated_at: '2026-04-01T10:05:05.000Z',
        },
        relationships: {
          site: { data: { type: 'sites', id: w.siteId } },
          hook: { data: { type: 'hooks', id: f.formHook } },
          source_event: { data: { type: 'events', id: f.formEvent } },
          attempts: {
            data: [
              { type: 'webhook_attempts', id: f.a1 },
              { type: 'webhook_attempts', id: f.a2 },
            ],
            links: {
              self: `${selfUrl('webhook_deliveries', f.d2)}/relationships/attempts`,
              related: `${selfUrl('webhook_deliveries', f.d2)}/attempts`,
            },
          },
        },
        links: { self: selfUrl('webhook_deliveries', f.d2) },
      }),
      foreign: () => f.foreign,
    });

    it('includes the attempts in order, each with the receiver\'s answer or the error', async () => {
      const res = await getJson(w, `/v1/webhook_deliveries/${f.d2}?include=attempts`);
      const included = res.json().included;
      assert.deepEqual(
        included.map((r: { id: string }) => r.id),
        [f.a1, f.a2],
      );
      assert.deepEqual(included[0], {
        id: f.a1,
        type: 'webhook_attempts',
        attributes: {
          attempt_number: 1,
          started_at: '2026-04-01T10:00:00.000Z',
          duration_ms: 120,
          response_status: 500,
          response_headers: { 'content-type': 'text/plain' },
          response_body: 'oops',
          error: 'the receiver answered 500',
          created_at: w.t.clock.now().toISOString(),
        },
        relationships: { delivery: { data: { type: 'webhook_deliveries', id: f.d2 } } },
        links: { self: selfUrl('webhook_attempts', f.a1) },
      });
      assert.deepEqual(included[1].attributes, {
        attempt_number: 2,
        started_at: '2026-04-01T10:05:05.000Z',
        duration_ms: 10_000,
        response_status: null,
        response_headers: null,
        response_body: null,
        error: 'timed out after 10 s',
        created_at: w.t.clock.now().toISOString(),
      });
      const shown = await getJson(w, `/v1/webhook_attempts/${f.a1}`);
      assert.deepEqual(shown.json().data, included[0], 'an included attempt renders as its own show');
      const related = await getJson(w, `/v1/webhook_deliveries/${f.d2}/attempts`);
      assert.deepEqual(related.json().data, included);
      assert.equal(related.json().meta.total_count, 2);
    });

    it('keeps the hook\'s id in the linkage of a deleted hook\'s delivery; the hook itself is not included', async () => {
      const res = await getJson(w, `/v1/webhook_deliveries/${f.d4}?include=hook`);
      assert.deepEqual(res.json().data.relationships.hook.data, { type: 'hooks', id: '987654' });
      assert.deepEqual(res.json().included, [], 'nothing to include: the hook is gone');
      await getJson(w, '/v1/hooks/987654', 404);
    });

    it('webhook attempts of another account, or of nobody, are 404; reading them needs view:hooks', async () => {
      await getJson(w, '/v1/webhook_attempts/987654321', 404);
      const foreignAttempt = await w.rows.insert('webhook_attempts', w.other.siteId, {
        delivery_id: Number(f.foreign),
        attempt_number: 1,
        started_at: at('2026-03-01T10:00:00.000Z'),
        duration_ms: 5,
      });
      await getJson(w, `/v1/webhook_attempts/${foreignAttempt}`, 404);
      await getJson(w, `/v1/webhook_attempts/${foreignAttempt}`, 200, w.other.token);
      const { token } = await w.t.keyWith(w.t.tenant.ownerId, ['view:contacts', 'manage:hooks']);
      const refused = await getJson(w, `/v1/webhook_attempts/${f.a1}`, 403, token);
      assert.match(refused.json().errors[0].detail, /view:hooks/);
      await getJson(w, `/v1/webhook_deliveries/${f.d2}?include=attempts`, 403, token);
    });
  });
}
