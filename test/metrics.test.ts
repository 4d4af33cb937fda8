// GET /metrics (METRICS=public|token, src/observability/metrics.ts), on each database, over
// app.inject with real OAuth tokens: requests labelled by route template (never a raw id or an
// unknown URL), database statements, the webhook queue read at scrape, attempts, rate-limit
// refusals and sandbox faults counted, process metrics present, and `promtool check metrics`
// accepting the whole scrape. METRICS=off serves no /metrics; token mode wants its token.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';
import { labelSets, PROMTOOL_SKIP, promtoolCheckMetrics, promtoolCheckRules, sampleValue } from './support/prometheus.js';
import { Receiver } from './support/receiver.js';
import { addTag, createHook } from './support/webhooks.js';
import { builders } from './support/builders.js';
import { formBody } from './support/console.js';
import { ConsoleSessions, SIGN_IN_FAILURE_LIMITS } from '../src/console/sessions.js';
import { send } from './support/writes.js';
import { readFileSync } from 'node:fs';
import { CompiledQuery } from 'kysely';

const TOKEN = 'metrics-test-token-0123456789abcdef';

const newContact = (t: TestApp, token: string, email: string) =>
  send(t, 'POST', '/v1/contacts', token, {
    data: { type: 'contacts', attributes: { email }, relationships: { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } } },
  });

for (const dialect of DIALECTS) {
  describe(`GET /metrics [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let receiver: Receiver;
    const scrape = async () => {
      const res = await t.get('/metrics');
      assert.equal(res.statusCode, 200, res.body);
      return res.body;
    };

    before(async () => {
      t = await createTestApp(dialect, { env: { METRICS: 'public', RATE_LIMIT: '1000', AUTH_FAILURE_LIMIT: '2' } });
      token = await t.token();
      receiver = await Receiver.start();
    });
    after(async () => {
      await t.close();
      await receiver.close();
    });

    it('labels requests by route template, method and status class, with a latency histogram', async () => {
      const created = await newContact(t, token, 'metrics@example.com');
      assert.equal(created.statusCode, 201, created.body);
      const id = created.json().data.id as string;
      for (let i = 0; i < 3; i++) assert.equal((await t.get(`/v1/contacts/${id}`, token)).statusCode, 200);
      assert.equal((await t.get('/v1/contacts', token)).statusCode, 200);
      assert.equal((await t.get('/v1/contacts/999999999', token)).statusCode, 404);
      assert.equal((await t.get('/no/such/path/12345')).statusCode, 404);

      const res = await t.get('/metrics');
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4; charset=utf-8$/);
      const text = res.body;
      const show = { route: '/v1/contacts/:id', method: 'GET' };
      assert.equal(sampleValue(text, 'sitebiz_http_requests_total', { ...show, status_class: '2xx' }), 3);
      assert.equal(sampleValue(text, 'sitebiz_http_requests_total', { ...show, status_class: '4xx' }), 1);
      assert.equal(sampleValue(text, 'sitebiz_http_requests_total', { route: '/v1/contacts', method: 'POST', status_class: '2xx' }), 1);
      assert.equal(sampleValue(text, 'sitebiz_http_request_duration_seconds_count', { ...show, status_class: '2xx' }), 3);
      assert.equal(sampleValue(text, 'sitebiz_http_request_duration_seconds_bucket', { ...show, status_class: '2xx', le: '+Inf' }), 3);
      assert.ok(sampleValue(text, 'sitebiz_http_request_duration_seconds_sum', { ...show, status_class: '2xx' })! > 0);
      assert.equal(sampleValue(text, 'sitebiz_http_requests_total', { route: 'unmatched', method: 'GET', status_class: '4xx' }), 1);
      // No label value is a raw URL: every route is a template or `unmatched`.
      const routes = new Set(labelSets(text, 'sitebiz_http_requests_total').map((l) => l.route));
      for (const route of routes) assert.ok(route === 'unmatched' || (route!.startsWith('/') && !/\d{3,}/.test(route!)), `route label ${route}`);
      assert.ok(!text.includes(id === '1' ? '/v1/contacts/1"' : `/${id}"`), 'no raw id in any label');
      assert.ok(!text.includes('12345'), 'no unknown URL in any label');

      // Statements: reads and the contact's insert, by kind, on the primary.
      assert.ok(sampleValue(text, 'sitebiz_db_statement_duration_seconds_count', { kind: 'select', target: 'primary' })! > 0);
      assert.ok(sampleValue(text, 'sitebiz_db_statement_duration_seconds_count', { kind: 'insert', target: 'primary' })! > 0);
      if (dialect === 'postgres') {
        assert.equal(sampleValue(text, 'sitebiz_db_pool_max_connections', { target: 'primary' }), 4);
        assert.ok(sampleValue(text, 'sitebiz_db_pool_wait_seconds_count', { target: 'primary' })! > 0);
        // Callers waiting while the scrape's own queue reads open connections are counted too.
        assert.ok(sampleValue(text, 'sitebiz_db_pool_waiting_clients', { target: 'primary' })! >= 0);
        const busy = sampleValue(text, 'sitebiz_db_pool_connections', { target: 'primary', state: 'busy' })!;
        const idle = sampleValue(text, 'sitebiz_db_pool_connections', { target: 'primary', state: 'idle' })!;
        assert.ok(busy + idle >= 1 && busy + idle <= 4, `pool connections ${busy} busy, ${idle} idle`);
      } else {
        assert.equal(sampleValue(text, 'sitebiz_db_pool_max_connections', { target: 'primary' }), undefined, 'SQLite has no pool');
      }
      // Process metrics (prom-client's defaults).
      for (const name of ['process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds', 'process_cpu_seconds_total']) {
        assert.ok(sampleValue(text, name)! > 0 || sampleValue(text, name) === 0, `${name} present`);
      }
      // Hidden from the API document.
      const openapi = (await t.get('/v1/openapi.json')).json() as { paths: Record<string, unknown> };
      assert.ok(!('/metrics' in openapi.paths));
    });

    it('reads the webhook queue at scrape: pending deliveries and how overdue the soonest is; counts attempts', async () => {
      const before = await scrape();
      assert.equal(sampleValue(before, 'sitebiz_webhook_deliveries_pending'), 0);
      assert.equal(sampleValue(before, 'sitebiz_webhook_oldest_due_age_seconds'), 0);
      const b = builders(t);
      const tagId = await b.tag('Metrics');
      await createHook(t, token, { event: 'tag_added', targetUrl: receiver.url('/metrics-hook') });
      for (let n = 0; n < 2; n++) await addTag(t, token, await b.contact(), tagId);
      t.clock.advance(30);
      const queued = await scrape();
      assert.equal(sampleValue(queued, 'sitebiz_webhook_deliveries_pending'), 2);
      const age = sampleValue(queued, 'sitebiz_webhook_oldest_due_age_seconds')!;
      assert.ok(age >= 30 && age < 31, `oldest due age ${age}`);

      assert.equal(await t.app.webhooks.runDue(), 2);
      const delivered = await scrape();
      assert.equal(sampleValue(delivered, 'sitebiz_webhook_attempts_total', { outcome: 'succeeded' }), 2);
      assert.equal(sampleValue(delivered, 'sitebiz_webhook_attempts_total', { outcome: 'failed' }), 0);
      assert.equal(sampleValue(delivered, 'sitebiz_webhook_deliveries_pending'), 0);
      assert.equal(sampleValue(delivered, 'sitebiz_webhook_oldest_due_age_seconds'), 0);
      assert.equal(sampleValue(delivered, 'sitebiz_webhook_hooks_disabled_total'), 0);
    });

    it('reads the queue at scrape through its partial index, never the deliveries table', async () => {
      const { statements } = await t.queries.during(() => scrape());
      const queueReads = statements.filter((text) => text.includes('webhook_deliveries'));
      assert.equal(queueReads.length, 2, statements.join('\n'));
      for (const text of queueReads) {
        const parameters = (text.match(/\?|\$\d+/g) ?? []).map(() => 1);
        const plan = await t.handle.db.connection().execute(async (connection) => {
          if (dialect === 'sqlite') {
            const rows = (await connection.executeQuery(CompiledQuery.raw(`explain query plan ${text}`, parameters))).rows as Array<{ detail: string }>;
            return rows.map((r) => r.detail).join('\n');
          }
          // The test's queue is tiny, where a scan would rightly win: price scans out, then the
          // index must still serve.
          await connection.executeQuery(CompiledQuery.raw('set enable_seqscan = off'));
          try {
            const rows = (await connection.executeQuery(CompiledQuery.raw(`explain ${text}`, parameters))).rows as Array<{ 'QUERY PLAN': string }>;
            return rows.map((r) => r['QUERY PLAN']).join('\n');
          } finally {
            await connection.executeQuery(CompiledQuery.raw('reset enable_seqscan'));
          }
        });
        assert.match(plan, /webhook_deliveries_due_idx/, `${text}\n${plan}`);
        assert.doesNotMatch(plan, /Seq Scan|SCAN webhook_deliveries(?! USING)/, `${text}\n${plan}`);
      }
    });

    it('counts rate-limit refusals by limit and sandbox faults by effect and status', async () => {
      for (let i = 0; i < 3; i++) {
        await t.request({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials', client_id: t.tenant.clientId, client_secret: 'wrong' } });
      }
      const fault = await send(t, 'POST', '/v1/test_helpers/faults', token, { data: { type: 'faults', attributes: { method: 'GET', path: '/v1/contact_tags', status: 503, times: 2 } } });
      assert.equal(fault.statusCode, 201, fault.body);
      for (let i = 0; i < 2; i++) assert.equal((await t.get('/v1/contact_tags', token)).statusCode, 503);
      const text = await scrape();
      assert.equal(sampleValue(text, 'sitebiz_rate_limit_refusals_total', { limit: 'auth_failures' }), 1);
      assert.equal(sampleValue(text, 'sitebiz_rate_limit_refusals_total', { limit: 'requests' }), 0);
      assert.equal(sampleValue(text, 'sitebiz_sandbox_faults_injected_total', { effect: 'error', status: '503' }), 2);
      assert.equal(sampleValue(text, 'sitebiz_http_requests_total', { route: '/v1/contact_tags', method: 'GET', status_class: '5xx' }), 2);
    });

    it('passes promtool check metrics, and the alert rule of docs/operations.md passes promtool check rules', { skip: PROMTOOL_SKIP }, async () => {
      const checked = promtoolCheckMetrics(await scrape());
      assert.equal(checked.status, 0, checked.output);
      assert.equal(checked.output.trim(), '', `no lint problems: ${checked.output}`);
      const doc = readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8');
      const rules = /```yaml\n(groups:[\s\S]*?)```/.exec(doc)?.[1];
      assert.ok(rules, 'docs/operations.md has a rules file example');
      const rulesChecked = promtoolCheckRules(rules);
      assert.equal(rulesChecked.status, 0, rulesChecked.output);
    });
  });

  describe(`GET /metrics access [${dialect}]`, () => {
    it('is not served with METRICS=off (the default)', async () => {
      const t = await createTestApp(dialect);
      try {
        assert.equal(t.config.metrics, 'off');
        assert.equal((await t.get('/metrics')).statusCode, 404);
      } finally {
        await t.close();
      }
    });

    it('counts a refusal of the request limit, and is itself never limited', async () => {
      const t = await createTestApp(dialect, { env: { METRICS: 'public', RATE_LIMIT: '2' } });
      try {
        const statuses = [];
        for (let i = 0; i < 3; i++) statuses.push((await t.get('/v1/version')).statusCode);
        assert.deepEqual(statuses, [200, 200, 429]);
        for (let i = 0; i < 3; i++) assert.equal((await t.get('/metrics')).statusCode, 200);
        const text = (await t.get('/metrics')).body;
        assert.equal(sampleValue(text, 'sitebiz_rate_limit_refusals_total', { limit: 'requests' }), 1);
        assert.equal(sampleValue(text, 'sitebiz_rate_limit_refusals_total', { limit: 'auth_failures' }), 0);
        assert.equal(sampleValue(text, 'sitebiz_rate_limit_refusals_total', { limit: 'console_sign_in' }), 0);
      } finally {
        await t.close();
      }
    });

    it('counts the console sign-in throttle\'s refusals', async () => {
      const t = await createTestApp(dialect, { env: { METRICS: 'public', RATE_LIMIT: '0' } });
      try {
        const { email } = await t.handle.db.selectFrom('users').select('email').where('id', '=', t.tenant.ownerId).executeTakeFirstOrThrow();
        const signIn = () =>
          t.app.inject({ method: 'POST', url: '/console/sign-in', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: formBody({ email, password: 'not the password' }) });
        // The account's allowance used up directly (each checked wrong password costs a hash's time).
        const sessions = new ConsoleSessions(t.handle, t.clock.now);
        for (let i = 0; i < SIGN_IN_FAILURE_LIMITS.perAccount; i++) assert.equal(await sessions.takeSignInAttempt([`account:${t.tenant.accountId}`]), null);
        assert.deepEqual([(await signIn()).statusCode, (await signIn()).statusCode], [429, 429]);
        const text = (await t.get('/metrics')).body;
        assert.equal(sampleValue(text, 'sitebiz_rate_limit_refusals_total', { limit: 'console_sign_in' }), 2);
        assert.equal(sampleValue(text, 'sitebiz_rate_limit_refusals_total', { limit: 'requests' }), 0);
      } finally {
        await t.close();
      }
    });

    it('asks for METRICS_TOKEN as a Bearer token in token mode', async () => {
      const t = await createTestApp(dialect, { env: { METRICS: 'token', METRICS_TOKEN: TOKEN } });
      try {
        const none = await t.get('/metrics');
        assert.equal(none.statusCode, 401);
        assert.equal(none.headers['www-authenticate'], 'Bearer realm="metrics"');
        assert.equal((await t.get('/metrics', 'not-the-metrics-token')).statusCode, 401);
        // An API access token is not the metrics token either.
        assert.equal((await t.get('/metrics', await t.token())).statusCode, 401);
        const ok = await t.get('/metrics', TOKEN);
        assert.equal(ok.statusCode, 200);
        assert.match(ok.body, /^# HELP sitebiz_/m);
        // The scrapes themselves are counted: twice refused, then answered.
        assert.match((await t.get('/metrics', TOKEN)).body, /sitebiz_http_requests_total\{route="\/metrics",method="GET",status_class="4xx"\} 3/);
      } finally {
        await t.close();
      }
    });
  });
}
