// A real Prometheus (Debian's package) scrapes a running sitebiz every second, with METRICS=token
// and the Bearer token in its scrape config, while a steady load asks for contact pages for about
// 50 s; then its HTTP API is asked for a request rate and a latency quantile, which must be sane:
// the rate near the rate the load actually achieved, the quantile within the histogram's range.
//
// SQLite only: what this adds over test/metrics.test.ts (which checks the content on both
// databases) is Prometheus reading and computing over the exposition over time, which the
// database does not change; PostgreSQL would double a test that is a minute long by design.
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createListeningTestApp, type ListeningTestApp } from './support/harness.js';
import { PROMETHEUS_SKIP, PrometheusServer } from './support/prometheus.js';

const TOKEN = 'prometheus-scrape-token-0123456789';
const LOAD_MS = 50_000;
const CONCURRENCY = 3;

describe('a real Prometheus scraping sitebiz [sqlite]', { skip: PROMETHEUS_SKIP }, () => {
  let t: ListeningTestApp;
  let prometheus: PrometheusServer | undefined;

  before(async () => {
    t = await createListeningTestApp('sqlite', { env: { METRICS: 'token', METRICS_TOKEN: TOKEN } });
  });
  after(async () => {
    await prometheus?.stop();
    await t.close();
  });

  it('computes a request rate and a latency quantile from a minute of scrapes under load', { timeout: 120_000 }, async (context) => {
    const url = new URL(t.baseUrl);
    prometheus = await PrometheusServer.start({ host: url.hostname, port: Number(url.port), bearerToken: TOKEN });
    const token = await t.token();

    // The load: a few keep-alive clients asking for a page of contacts, with a pause between
    // requests so that the shared machine stays responsive; each answer's time is kept.
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const done: number[] = [];
    const started = Date.now();
    const client = async () => {
      while (Date.now() - started < LOAD_MS) {
        const status = await get(agent, `${t.baseUrl}/v1/contacts?page[size]=10`, token);
        assert.equal(status, 200);
        done.push(Date.now());
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, client));
    agent.destroy();

    const health = await prometheus.targetHealth();
    assert.equal(health.health, 'up', `scrape target health: ${health.lastError}`);
    assert.deepEqual((await prometheus.query('up{job="sitebiz"}')).map((r) => r.value), [1]);

    // The rate over the last 30 s of load, as Prometheus saw it, against the rate the clients achieved.
    const end = Date.now();
    const windowStart = end - 30_000;
    const achieved = done.filter((at) => at >= windowStart).length / 30;
    const [rate] = await prometheus.query('sum(rate(sitebiz_http_requests_total{route="/v1/contacts",method="GET",status_class="2xx"}[30s]))');
    assert.ok(rate, 'a rate');
    assert.ok(rate.value > 0 && rate.value > achieved * 0.5 && rate.value < achieved * 2, `Prometheus rate ${rate.value}/s, achieved ${achieved}/s`);

    const [p90] = await prometheus.query(
      'histogram_quantile(0.9, sum by (le) (rate(sitebiz_http_request_duration_seconds_bucket{route="/v1/contacts",method="GET"}[30s])))',
    );
    assert.ok(p90, 'a quantile');
    assert.ok(Number.isFinite(p90.value) && p90.value > 0 && p90.value <= 10, `p90 latency ${p90.value} s`);

    // The database histogram and the process metrics reached it too.
    const [statements] = await prometheus.query('sum(rate(sitebiz_db_statement_duration_seconds_count[30s]))');
    assert.ok(statements && statements.value > 0, 'statements a second');
    const [rss] = await prometheus.query('process_resident_memory_bytes{job="sitebiz"}');
    assert.ok(rss && rss.value > 10_000_000, 'RSS');
    context.diagnostic(`Prometheus: ${rate.value.toFixed(1)} requests/s (clients: ${achieved.toFixed(1)}/s), p90 ${(p90.value * 1000).toFixed(1)} ms`);
  });
});

function get(agent: Agent, url: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
}
