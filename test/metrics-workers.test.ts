// GET /metrics of `serve --workers 2` (a real child process, as users run it): node:cluster gives
// each connection to one worker, yet every scrape, whichever worker takes it, counts the requests
// of both (the primary gathers them, src/observability/metrics-cluster.ts), and the webhook
// queue's gauges, which every worker reads from the same database, are not doubled.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DIALECTS } from './support/harness.js';
import { PROMTOOL_SKIP, promtoolCheckMetrics, sampleValue } from './support/prometheus.js';
import { accessToken, freePort, freshDatabase, request, startServe, type ServeProcess } from './support/serve-process.js';

const scratch = mkdtempSync(join(tmpdir(), 'sitebiz-metrics-workers-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const REQUESTS = 40;

for (const dialect of DIALECTS) {
  describe(`GET /metrics with --workers 2 [${dialect}]`, () => {
    it('counts every worker\'s requests in each scrape, whichever worker answers it', async () => {
      const db = await freshDatabase(dialect);
      let server: ServeProcess | undefined;
      try {
        let port = 0;
        for (let attempt = 1; !server; attempt++) {
          port = await freePort();
          const candidate = startServe(scratch, ['--workers', '2', '--port', String(port), '--database-url', db.url], { METRICS: 'public' });
          try {
            // The demo's credentials, then both workers listening. Each worker's log comes through
            // a pipe of its own, so the primary's "serving" line can come before a busy worker's
            // "Server listening": the two are awaited apart, not as one ordered pattern.
            await candidate.waitFor(/sitebiz is serving/);
            await candidate.waitFor(/Server listening at[\s\S]*Server listening at/);
            server = candidate;
          } catch (error) {
            // Exited on its own (a port taken), or still running after waitFor gave up.
            await candidate.stop('SIGKILL');
            if (!/EADDRINUSE/.test(candidate.stderr) || attempt === 3) throw error;
          }
        }
        const token = await accessToken(port, server);
        // Each request on a connection of its own, so the cluster spreads them over both workers.
        const ids = Array.from({ length: REQUESTS }, (_, i) => `metrics-${i}`);
        const answers = await Promise.all(ids.map((requestId) => request(port, { path: '/v1/contacts?page[size]=5', requestId, token })));
        for (const answer of answers) assert.equal(answer.status, 200, answer.body);
        const answeredBy = new Set<number | undefined>();
        for (const id of ids) answeredBy.add(await waitForPid(server, id));
        assert.equal(answeredBy.size, 2, `both workers answered: ${[...answeredBy].join(', ')}`);

        // Several scrapes, each on its own connection (so taken by either worker), all say the same.
        const scrapePids = new Set<number | undefined>();
        for (let i = 0; i < 6; i++) {
          const scrape = await request(port, { path: '/metrics', requestId: `scrape-${i}` });
          assert.equal(scrape.status, 200, scrape.body);
          assert.equal(sampleValue(scrape.body, 'sitebiz_http_requests_total', { route: '/v1/contacts', method: 'GET', status_class: '2xx' }), REQUESTS);
          assert.equal(sampleValue(scrape.body, 'sitebiz_http_requests_total', { route: '/v1/oauth/token', method: 'POST', status_class: '2xx' }), 1);
          assert.equal(sampleValue(scrape.body, 'sitebiz_http_request_duration_seconds_count', { route: '/v1/contacts', method: 'GET', status_class: '2xx' }), REQUESTS);
          // Read by both workers from one database: the largest reading, not their sum.
          assert.equal(sampleValue(scrape.body, 'sitebiz_webhook_deliveries_pending'), 0);
          assert.equal(scrape.body.match(/^sitebiz_webhook_deliveries_pending /gm)?.length, 1);
          assert.ok(sampleValue(scrape.body, 'process_resident_memory_bytes')! > 0);
          if (dialect === 'postgres') assert.equal(sampleValue(scrape.body, 'sitebiz_db_pool_max_connections', { target: 'primary' }), 20, 'two pools of 10');
          if (i === 0 && !PROMTOOL_SKIP) {
            const checked = promtoolCheckMetrics(scrape.body);
            assert.equal(checked.status, 0, `the aggregate passes promtool check metrics: ${checked.output}`);
          }
          const pid = await waitForPid(server, `scrape-${i}`);
          scrapePids.add(pid);
        }
        assert.equal(scrapePids.size, 2, 'both workers answered scrapes');
      } finally {
        if (server) {
          const exit = await server.stop();
          assert.equal(exit.code, 0, server.stderr);
        }
        await db.cleanup();
      }
    });
  });
}

/** The pid that logged the request's completion (its line may come a moment after the answer). */
async function waitForPid(server: ServeProcess, requestId: string): Promise<number | undefined> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const pid = server.logs().find((line) => line.reqId === requestId && line.msg === 'request completed')?.pid;
    if (pid !== undefined || Date.now() > deadline) return pid;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
