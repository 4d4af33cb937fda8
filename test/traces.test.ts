// OpenTelemetry traces (src/observability/tracing.ts), against a local OTLP/HTTP receiver: a
// request carrying a W3C traceparent is a SERVER span in the caller's trace, under the caller's
// span, named by its route template with its status; its database statements are CLIENT spans
// under it; the webhook attempt of the event it made is a CLIENT span in the same trace, and the
// receiver gets a traceparent naming that span. With no OTLP endpoint nothing of it is loaded.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { tracingLoaded } from '../src/observability/trace-context.js';
import { builders } from './support/builders.js';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';
import { OtlpCollector, SPAN_KIND, STATUS, type CollectedSpan } from './support/otlp-collector.js';
import { Receiver } from './support/receiver.js';
import { createHook } from './support/webhooks.js';
import { JSONAPI } from './support/writes.js';

/** A caller's span: a new trace id and span id, sampled. */
function callerSpan() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

const tagContact = (t: TestApp, token: string, contactId: number, tagId: number, traceparent?: string) =>
  t.request({
    method: 'POST',
    url: `/v1/contacts/${contactId}/relationships/tags`,
    token,
    headers: { 'content-type': JSONAPI, ...(traceparent ? { traceparent } : {}) },
    payload: JSON.stringify({ data: [{ type: 'contact_tags', id: String(tagId) }] }),
  });

// First, before any traced app of this process has loaded tracing.ts.
for (const dialect of DIALECTS) {
  describe(`traces off [${dialect}]`, () => {
    it('loads nothing of OpenTelemetry, keeps no trace context and sends no traceparent to receivers', async () => {
      const collector = await OtlpCollector.start();
      const receiver = await Receiver.start();
      // OTEL_SERVICE_NAME alone turns nothing on.
      const t = await createTestApp(dialect, { env: { OTEL_SERVICE_NAME: 'sitebiz-off' } });
      try {
        assert.equal(t.config.tracing, undefined);
        const token = await t.token();
        const b = builders(t);
        const contactId = await b.contact({ name: 'Ada' });
        const tagId = await b.tag('VIP');
        await createHook(t, token, { event: 'tag_added', targetUrl: receiver.url('/off') });
        const caller = callerSpan();
        assert.equal((await t.get('/v1/contacts', token)).statusCode, 200);
        assert.equal((await tagContact(t, token, contactId, tagId, caller.traceparent)).statusCode, 200);
        await t.app.webhooks.runDue();
        assert.equal(receiver.received.length, 1);
        assert.equal(receiver.received[0]!.headers.traceparent, undefined, 'no traceparent to the receiver');
        const events = await t.handle.db.selectFrom('outbox_events').select('trace_parent').execute();
        assert.ok(events.length > 0);
        assert.ok(events.every((e) => e.trace_parent === null), 'no trace context kept with the event');
        assert.equal(tracingLoaded(), false, 'src/observability/tracing.ts was never loaded');
      } finally {
        await t.close();
        await receiver.close();
      }
      assert.equal(collector.spans.length, 0, 'no spans');
      await collector.close();
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`traces on [${dialect}]`, () => {
    let collector: OtlpCollector;
    let receiver: Receiver;
    const listCaller = callerSpan();
    const writeCaller = callerSpan();
    const faultCaller = callerSpan();
    let storedTraceparent: string | null | undefined;
    let statuses: Record<string, number> = {};

    const serverSpanOf = (caller: { traceId: string }) => {
      const found = collector.spans.filter((s) => s.traceId === caller.traceId && s.kind === SPAN_KIND.server);
      assert.equal(found.length, 1, `one server span in trace ${caller.traceId}: ${JSON.stringify(found.map((s) => s.name))}`);
      return found[0]!;
    };
    const childrenOf = (span: CollectedSpan) => collector.spans.filter((s) => s.parentSpanId === span.spanId);

    // Everything happens here, then the app closes: closing must export the spans still queued.
    before(async () => {
      collector = await OtlpCollector.start();
      receiver = await Receiver.start();
      const t = await createTestApp(dialect, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_SERVICE_NAME: 'sitebiz-test' } });
      try {
        const token = await t.token();
        const b = builders(t);
        const contactId = await b.contact({ name: 'Grace Hopper' });
        const tagId = await b.tag('Navy');
        await createHook(t, token, { event: 'tag_added', targetUrl: receiver.url('/traced?secret=hush') });
        // A query string whose value must not reach the span.
        const list = await t.request({ method: 'GET', url: '/v1/contacts?filter[search]=secret-value&page[size]=5', token, headers: { traceparent: listCaller.traceparent } });
        const write = await tagContact(t, token, contactId, tagId, writeCaller.traceparent);
        const missing = await t.request({ method: 'GET', url: '/v1/no_such_things', token });
        // A 503 of the sandbox's faults: a server error.
        const fault = await t.request({
          method: 'POST',
          url: '/v1/test_helpers/faults',
          token,
          headers: { 'content-type': JSONAPI },
          payload: JSON.stringify({ data: { type: 'faults', attributes: { method: 'GET', path: '/v1/offers', status: 503, times: 1 } } }),
        });
        assert.equal(fault.statusCode, 201, fault.body);
        const faulted = await t.request({ method: 'GET', url: '/v1/offers', token, headers: { traceparent: faultCaller.traceparent } });
        statuses = { list: list.statusCode, write: write.statusCode, missing: missing.statusCode, faulted: faulted.statusCode };
        await t.app.webhooks.runDue();
        storedTraceparent = (await t.handle.db.selectFrom('outbox_events').select('trace_parent').orderBy('id', 'desc').executeTakeFirst())?.trace_parent;
      } finally {
        await t.close();
      }
    });
    after(async () => {
      await collector.close();
      await receiver.close();
    });

    it('answers as without traces', () => {
      assert.deepEqual(statuses, { list: 200, write: 200, missing: 404, faulted: 503 });
    });

    it('exports over OTLP/HTTP in JSON, under OTEL_SERVICE_NAME, by the time the app has closed', () => {
      assert.ok(collector.spans.length > 0, 'spans arrived');
      assert.ok(collector.contentTypes.every((c) => c.startsWith('application/json')), collector.contentTypes.join());
      assert.equal(collector.spans[0]!.resource['service.name'], 'sitebiz-test');
    });

    it("makes a request a SERVER span in the caller's trace, under the caller's span, named by its route template", () => {
      const span = serverSpanOf(listCaller);
      assert.equal(span.parentSpanId, listCaller.spanId);
      assert.equal(span.name, 'GET /v1/contacts');
      assert.equal(span.attributes['http.request.method'], 'GET');
      assert.equal(span.attributes['http.route'], '/v1/contacts');
      assert.equal(span.attributes['http.response.status_code'], 200);
      assert.equal(span.attributes['url.path'], '/v1/contacts', 'the path without its query');
      assert.ok(!JSON.stringify(span.attributes).includes('secret-value'), 'nothing of the query string');
      assert.equal(span.status, STATUS.unset);
      assert.ok(span.endNanos > span.startNanos);
    });

    it('makes each database statement of the request a CLIENT span under it, within its time', () => {
      const span = serverSpanOf(listCaller);
      const statements = childrenOf(span);
      assert.ok(statements.length > 0, 'statement spans under the request');
      for (const s of statements) {
        assert.equal(s.kind, SPAN_KIND.client);
        assert.equal(s.traceId, listCaller.traceId);
        assert.equal(s.attributes['db.system'], dialect === 'postgres' ? 'postgresql' : 'sqlite');
        assert.equal(typeof s.attributes['db.query.text'], 'string');
        assert.ok(s.startNanos >= span.startNanos && s.endNanos <= span.endNanos, `${s.name} within the request (${s.startNanos - span.startNanos} ns after its start, ${span.endNanos - s.endNanos} ns before its end)`);
        assert.ok(!JSON.stringify(s.attributes).includes('secret-value'), 'parameters are not sent');
      }
      // The page's select (SQLite's text search reads its contacts_text index first).
      const page = statements.find((s) => String(s.attributes['db.collection.name']).startsWith('contacts') && s.attributes['db.operation.name'] === 'SELECT');
      assert.ok(page, `the page's select: ${statements.map((s) => s.name).join(', ')}`);
      assert.equal(page.name, `SELECT ${page.attributes['db.collection.name']}`);
    });

    it('names a write by its template, with its statements (the outbox insert among them) under it', () => {
      const span = serverSpanOf(writeCaller);
      assert.equal(span.parentSpanId, writeCaller.spanId);
      assert.equal(span.attributes['http.route'], '/v1/contacts/:id/relationships/tags');
      assert.equal(span.name, 'POST /v1/contacts/:id/relationships/tags');
      assert.equal(span.attributes['http.response.status_code'], 200);
      assert.ok(childrenOf(span).some((s) => s.name === 'INSERT outbox_events'), childrenOf(span).map((s) => s.name).join(', '));
      assert.equal(storedTraceparent, `00-${writeCaller.traceId}-${span.spanId}-01`, "the event keeps the request span's traceparent");
    });

    it("makes the webhook attempt a CLIENT span in the request's trace, and sends the receiver its traceparent", () => {
      const server = serverSpanOf(writeCaller);
      const attempts = collector.spans.filter((s) => s.name.startsWith('POST webhook'));
      assert.equal(attempts.length, 1);
      const attempt = attempts[0]!;
      assert.equal(attempt.name, 'POST webhook tag_added');
      assert.equal(attempt.kind, SPAN_KIND.client);
      assert.equal(attempt.traceId, writeCaller.traceId);
      assert.equal(attempt.parentSpanId, server.spanId);
      assert.equal(attempt.attributes['http.response.status_code'], 200);
      assert.equal(attempt.attributes['sitebiz.webhook.event'], 'tag_added');
      assert.equal(attempt.attributes['sitebiz.webhook.attempt'], 1);
      assert.equal(attempt.attributes['url.full'], `${receiver.url('/traced')}`, 'without the query');
      assert.equal(attempt.status, STATUS.unset);
      const [request] = receiver.received;
      assert.ok(request, 'the receiver got the delivery');
      assert.equal(request.headers.traceparent, `00-${writeCaller.traceId}-${attempt.spanId}-01`);
    });

    it('names a request of no route by its method alone, and marks a 5xx as an error', () => {
      const missing = collector.spans.find((s) => s.kind === SPAN_KIND.server && s.attributes['url.path'] === '/v1/no_such_things');
      assert.ok(missing);
      assert.equal(missing.name, 'GET');
      assert.equal(missing.parentSpanId, '', 'a root span: the request had no traceparent');
      assert.equal(missing.attributes['http.route'], undefined);
      assert.equal(missing.attributes['http.response.status_code'], 404);
      assert.equal(missing.status, STATUS.unset, "a 4xx is not the server span's error");
      const faulted = serverSpanOf(faultCaller);
      assert.equal(faulted.name, 'GET /v1/offers');
      assert.equal(faulted.attributes['http.response.status_code'], 503);
      assert.equal(faulted.status, STATUS.error);
    });

    it('makes no spans of statements outside a request or an attempt', () => {
      const ids = new Set(collector.spans.map((s) => s.spanId));
      const orphans = collector.spans.filter((s) => s.kind === SPAN_KIND.client && !s.name.startsWith('POST webhook') && !ids.has(s.parentSpanId));
      assert.deepEqual(orphans.map((s) => s.name), []);
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`traces with a collector that refuses them [${dialect}]`, () => {
    it('serves as usual, and closes without waiting on it, dropping the spans it refused', async () => {
      // 400: not retried by the exporter. (One that refuses connections is retried for up to
      // OTEL_EXPORTER_OTLP_TIMEOUT, 10 s; closing then waits 2 s at most, tracing.ts.)
      let exports = 0;
      const refusing = http.createServer((req, res) => req.resume().on('end', () => (exports++, res.writeHead(400).end())));
      await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
      const t = await createTestApp(dialect, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(refusing.address() as AddressInfo).port}` } });
      try {
        const token = await t.token();
        assert.equal((await t.get('/v1/contacts', token)).statusCode, 200);
      } finally {
        const started = performance.now();
        await t.close();
        // Far below the exporter's 10 s of retries (the machine may be busy: no tighter bound).
        assert.ok(performance.now() - started < 5_000, `closed in ${Math.round(performance.now() - started)} ms`);
        refusing.closeAllConnections();
        refusing.close();
      }
      assert.ok(exports >= 1, 'the spans were offered once at closing');
    });
  });
}
