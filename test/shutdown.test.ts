// SIGTERM and SIGINT with requests in flight, on `node bin/sitebiz.js serve` as users run it: every
// request already sent is answered (none reset), and the process exits 0 within the shutdown
// deadline. Before, on SQLite, about half of 20 such requests were reset (the synchronous driver
// kept the event loop from accepting them before the listener closed).
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DIALECTS } from './support/harness.js';
import { accessToken, freePort, freshDatabase, request, startServe, type ServeProcess } from './support/serve-process.js';

const scratch = mkdtempSync(join(tmpdir(), 'sitebiz-shutdown-cwd-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const IN_FLIGHT = 20;
const SHUTDOWN_TIMEOUT_MS = 10_000;

/** Status of each answer, or the error code of a request that got none. */
type Outcome = number | string;

async function inFlightThenSignal(server: ServeProcess, port: number, token: string, signal: NodeJS.Signals): Promise<{ outcomes: Outcome[]; exit: Awaited<ServeProcess['exited']>; stopMs: number }> {
  let sent = 0;
  let signalled: () => void = () => {};
  const allSent = new Promise<void>((resolve) => (signalled = resolve));
  // A fifth of the requests on kept-alive connections: they must not hold the exit back.
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 2 });
  const requests = Array.from({ length: IN_FLIGHT }, (_, i) =>
    request(port, {
      path: i % 2 === 0 ? '/v1/contacts?page[size]=100&sort=name' : '/v1/customers?page[size]=50&include=contact',
      requestId: `in-flight-${i}`,
      token,
      ...(i % 5 === 0 ? { agent: keepAlive } : {}),
      onSent: () => {
        if (++sent === IN_FLIGHT) signalled();
      },
    }).then(
      (res) => res.status,
      (error: NodeJS.ErrnoException) => error.code ?? error.message,
    ),
  );
  await allSent;
  const started = Date.now();
  const exited = server.stop(signal);
  const outcomes = await Promise.all(requests);
  const exit = await exited;
  keepAlive.destroy();
  return { outcomes, exit, stopMs: Date.now() - started };
}

for (const dialect of DIALECTS) {
  describe(`shutdown with requests in flight [${dialect}]`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    after(async () => {
      for (const cleanup of cleanups) await cleanup();
    });

    for (const [signal, workers] of [['SIGTERM', '1'], ['SIGINT', '1'], ['SIGTERM', '2']] as const) {
      it(`${signal}${workers === '1' ? '' : ` with --workers ${workers}`}: answers all ${IN_FLIGHT} requests sent before it, then exits 0`, async () => {
        const db = await freshDatabase(dialect);
        cleanups.push(db.cleanup);
        const port = await freePort();
        const server = startServe(scratch, ['--port', String(port), '--database-url', db.url, '--workers', workers], {
          LOG_LEVEL: 'warn',
          SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
        });
        await server.waitFor(/sitebiz is serving .*\n/);
        const token = await accessToken(port, server);

        const { outcomes, exit, stopMs } = await inFlightThenSignal(server, port, token, signal);
        assert.deepEqual(outcomes, Array(IN_FLIGHT).fill(200), `every request answered; stderr:\n${server.stderr}`);
        assert.deepEqual(exit, { code: 0, signal: null }, `exit; stderr:\n${server.stderr}`);
        assert.ok(stopMs < SHUTDOWN_TIMEOUT_MS, `stopped after ${stopMs} ms`);
        // Nothing listens any more.
        const late = await request(port, { path: '/v1/version', requestId: 'late' }).then(
          (res) => res.status,
          (error: NodeJS.ErrnoException) => error.code,
        );
        assert.equal(late, 'ECONNREFUSED');
      });
    }

    it('SIGTERM with SHUTDOWN_DRAIN_MS: GET /readyz (and the older /health) says 503 while every other request is still answered, then it stops accepting and exits 0', async () => {
      const db = await freshDatabase(dialect);
      cleanups.push(db.cleanup);
      const port = await freePort();
      const DRAIN_MS = 1_500;
      const server = startServe(scratch, ['--port', String(port), '--database-url', db.url], { LOG_LEVEL: 'warn', SHUTDOWN_DRAIN_MS: String(DRAIN_MS) });
      await server.waitFor(/sitebiz is serving .*\n/);
      const token = await accessToken(port, server);
      const health = await request(port, { path: '/health', requestId: 'health-before' });
      assert.deepEqual([health.status, JSON.parse(health.body)], [200, { status: 'serving' }]);
      const ready = await request(port, { path: '/readyz', requestId: 'ready-before' });
      assert.deepEqual([ready.status, JSON.parse(ready.body)], [200, { status: 'ready' }]);

      const signalled = Date.now();
      const exited = server.stop('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 300));
      const draining = await request(port, { path: '/health', requestId: 'health-draining' });
      assert.deepEqual([draining.status, JSON.parse(draining.body)], [503, { status: 'draining' }]);
      const notReady = await request(port, { path: '/readyz', requestId: 'ready-draining' });
      assert.deepEqual([notReady.status, JSON.parse(notReady.body).reason], [503, 'draining']);
      const alive = await request(port, { path: '/healthz', requestId: 'alive-draining' });
      assert.equal(alive.status, 200, 'the process is still alive while it drains');
      const served = await request(port, { path: '/v1/contacts?page[size]=5', requestId: 'while-draining', token });
      assert.equal(served.status, 200, 'requests are still answered while draining');
      assert.equal(served.headers.connection, 'close', 'and their connections closed, so clients come back through the balancer');
      assert.deepEqual(await exited, { code: 0, signal: null }, `exit; stderr:\n${server.stderr}`);
      assert.ok(Date.now() - signalled >= DRAIN_MS, 'it served on for the whole drain');
    });
  });
}
