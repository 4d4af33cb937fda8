// `sitebiz clock show` and `sitebiz clock advance`, run as users run them (a child process) on the
// database of a server that is running meanwhile (an app built over the same database): the
// server sees the new time at its next request, the advance runs the clock's due work (a pending
// webhook retry falls due as much earlier), and the account is the demo account, the only one, or
// the one named.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { DIALECTS } from '../support/harness.js';
import { freshDatabase, runSitebiz } from '../support/serve-process.js';
import { queueDeliveries } from '../support/webhooks.js';

const scratch = mkdtempSync(join(tmpdir(), 'sitebiz-clock-cli-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const run = (args: string[]) => runSitebiz(args, { cwd: scratch });

async function json<T = Record<string, any>>(args: string[], code = 0): Promise<T> {
  const result = await run([...args, '--json']);
  assert.equal(result.code, code, `sitebiz ${args.join(' ')} exited ${result.code}: ${result.stdout}${result.stderr}`);
  const lines = result.stdout.trim().split('\n');
  assert.equal(lines.length, 1, `one line of JSON: ${result.stdout}`);
  return JSON.parse(lines[0]!) as T;
}

for (const dialect of DIALECTS) {
  describe(`sitebiz clock [${dialect}]`, () => {
    it('advances the demo account\'s clock for a running server, runs its due work, and shows it', async () => {
      const db = await freshDatabase(dialect);
      const init = await json(['init', '--demo', '--database-url', db.url]);
      const app = await buildApp({ config: loadConfig({ DATABASE_URL: db.url, LOG_LEVEL: 'silent', PUBLIC_URL: 'http://sitebiz.test' }), webhooks: { autoStart: false } });
      try {
        await app.ready();
        const token = await (async () => {
          const res = await app.inject({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials', client_id: init.client_id, client_secret: init.client_secret } });
          return res.json().access_token as string;
        })();
        const serverClock = async () => (await app.inject({ method: 'GET', url: '/v1/test_helpers/clock', headers: { authorization: `Bearer ${token}` } })).json().data.attributes;
        assert.equal((await serverClock()).offset_seconds, 0);

        // A webhook retry of the demo site due in an hour of real time.
        const hook = await app.inject({
          method: 'POST',
          url: '/v1/hooks',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.api+json' },
          payload: { data: { type: 'hooks', attributes: { event: 'tag_added', target_url: 'http://receiver.test/hooks' }, relationships: { site: { data: { type: 'sites', id: init.site_id } } } } },
        });
        assert.equal(hook.statusCode, 201, hook.body);
        const realNow = new Date();
        await queueDeliveries(app.database, { id: Number(hook.json().data.id), siteId: Number(init.site_id), targetUrl: 'http://receiver.test/hooks' }, 1, realNow, new Date(realNow.getTime() + 3_600_000));
        const dueAt = async () => Date.parse(app.database.traits.decodeTimestamp((await app.database.db.selectFrom('webhook_deliveries').select('next_attempt_at').executeTakeFirstOrThrow()).next_attempt_at)!);
        const before = await dueAt();

        const shown = await json(['clock', 'show', '--database-url', db.url]);
        assert.equal(shown.account_id, init.account_id);
        assert.equal(shown.offset_seconds, 0);

        const advanced = await json(['clock', 'advance', 'PT2H', '--database-url', db.url]);
        assert.equal(advanced.account_id, init.account_id);
        assert.equal(advanced.offset_seconds, 7200);
        assert.equal(Date.parse(advanced.now) - Date.parse(advanced.real_time), 7_200_000);
        assert.equal((await serverClock()).offset_seconds, 7200, 'the running server sees the new time at its next request');
        assert.equal(await dueAt(), before - 7_200_000, 'the retry fell due two hours earlier: the same due work as the API\'s');

        const again = await json(['clock', 'show', '--database-url', db.url]);
        assert.equal(again.offset_seconds, 7200);

        const back = await json(['clock', 'advance', '2020-01-01T00:00:00Z', '--database-url', db.url], 1);
        assert.equal(back.error.code, 'rejected');
        assert.match(back.error.message, /only moves forward/);
        const bad = await json(['clock', 'advance', 'soon', '--database-url', db.url], 2);
        assert.equal(bad.error.code, 'usage');
        assert.equal((await serverClock()).offset_seconds, 7200, 'refusals change nothing');

        // Another account: the demo account stays the default; --account names the other.
        const other = await json(['accounts', 'create', '--name', 'Other', '--database-url', db.url]);
        assert.equal((await json(['clock', 'show', '--database-url', db.url])).account_id, init.account_id);
        const moved = await json(['clock', 'advance', 'P1D', '--account', other.id, '--database-url', db.url]);
        assert.equal(moved.account_id, other.id);
        assert.equal(moved.offset_seconds, 86_400);
        assert.equal((await serverClock()).offset_seconds, 7200);
        const unknown = await json(['clock', 'show', '--account', '999999', '--database-url', db.url], 1);
        assert.equal(unknown.error.code, 'rejected');
      } finally {
        await app.close();
        await db.cleanup();
      }
    });

    it('without a demo account and with several accounts, asks which', async () => {
      const db = await freshDatabase(dialect);
      try {
        await json(['init', '--empty', '--database-url', db.url]);
        assert.equal((await json(['clock', 'advance', 'P1M', '--database-url', db.url])).account_id, '1', 'the only account');
        await json(['accounts', 'create', '--name', 'Second', '--database-url', db.url]);
        const ask = await json(['clock', 'show', '--database-url', db.url], 2);
        assert.match(ask.error.message, /--account/);
      } finally {
        await db.cleanup();
      }
    });
  });
}
