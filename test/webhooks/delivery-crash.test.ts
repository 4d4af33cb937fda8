// kill -9 during a delivery loses nothing: a real `sitebiz serve` claims a delivery and posts it
// to a receiver that holds the request open; the process is killed; a new process on the same
// database attempts the delivery again once the claim's lease has ended, with the same webhook-id
// and body, and it arrives.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseDatabaseUrl } from '../../src/config.js';
import { connectDatabase } from '../../src/db/connect.js';
import { DIALECTS } from '../support/harness.js';
import { Receiver } from '../support/receiver.js';
import { accessToken, freePort, freshDatabase, request, startServe, type ServeProcess } from '../support/serve-process.js';

const scratch = mkdtempSync(join(tmpdir(), 'sitebiz-crash-cwd-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A 2 s attempt timeout: the lease ends 3 s after the claim. */
const SETTINGS = { WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_POLL_MS: '100', LOG_LEVEL: 'warn' };

async function api(port: number, token: string, method: string, path: string, json?: unknown) {
  const res = await request(port, { method, path, token, requestId: `crash-${method}-${path}`, ...(json === undefined ? {} : { json }) });
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.body}`);
  return JSON.parse(res.body || 'null') as { data: any };
}

for (const dialect of DIALECTS) {
  describe(`kill -9 during a delivery [${dialect}]`, () => {
    it('the delivery is attempted again after its lease by the next process, with the same webhook-id, and arrives', async () => {
      const db = await freshDatabase(dialect);
      const receiver = await Receiver.start();
      const servers: ServeProcess[] = [];
      try {
        receiver.react = () => (receiver.received.length === 1 ? { hold: true } : { status: 200 });
        const port = await freePort();
        const first = startServe(scratch, ['--port', String(port), '--database-url', db.url], SETTINGS);
        servers.push(first);
        await first.waitFor(/sitebiz is serving .*\n/);
        const token = await accessToken(port, first);
        const siteId = (await api(port, token, 'GET', '/v1/sites')).data[0].id as string;
        const site = { site: { data: { type: 'sites', id: siteId } } };
        await api(port, token, 'POST', '/v1/hooks', { data: { type: 'hooks', attributes: { event: 'tag_added', target_url: receiver.url('/crash') }, relationships: site } });
        const contact = await api(port, token, 'POST', '/v1/contacts', { data: { type: 'contacts', attributes: { email: 'crash@example.com' }, relationships: site } });
        const tagId = (await api(port, token, 'GET', '/v1/contact_tags?page[size]=1')).data[0].id as string;
        await api(port, token, 'POST', `/v1/contacts/${contact.data.id}/relationships/tags`, { data: [{ type: 'contact_tags', id: tagId }] });

        await receiver.waitFor(1);
        first.child.kill('SIGKILL');
        assert.equal((await first.exited).signal, 'SIGKILL');
        const killedAt = Date.now();

        const second = startServe(scratch, ['--port', String(await freePort()), '--database-url', db.url], SETTINGS);
        servers.push(second);
        await second.waitFor(/sitebiz is serving .*\n/);
        await receiver.waitFor(2, 20_000);
        assert.ok(Date.now() - killedAt < 15_000, 'attempted again soon after the lease');
        const [held, again] = receiver.received;
        assert.equal(again!.headers['webhook-id'], held!.headers['webhook-id'], 'the same webhook-id');
        assert.equal(again!.body, held!.body, 'the same body');
        assert.equal(JSON.parse(again!.body).id, String(contact.data.id));
        assert.deepEqual(await second.stop(), { code: 0, signal: null }, second.stderr);

        const handle = await connectDatabase(parseDatabaseUrl(db.url, 'test', [])!);
        try {
          const delivery = await handle.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', String(held!.headers['webhook-id'])).executeTakeFirstOrThrow();
          assert.equal(delivery.status, 'succeeded');
          assert.equal(delivery.attempt_count, 2, 'the killed attempt counted');
          const attempts = await handle.db.selectFrom('webhook_attempts').select(['attempt_number', 'response_status']).where('delivery_id', '=', delivery.id).execute();
          assert.deepEqual(attempts, [{ attempt_number: 2, response_status: 200 }], 'the killed attempt left no log; the next one did');
        } finally {
          await handle.close();
        }
      } finally {
        receiver.release();
        for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) await server.stop('SIGKILL');
        await receiver.close();
        await db.cleanup();
      }
    });
  });
}
