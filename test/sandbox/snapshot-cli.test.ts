// `sitebiz reset` and `sitebiz snapshot save|restore|list|delete` against the database of a running
// server (docs/sandbox.md "Reset and snapshots"): the commands run as child processes on the
// database an app in this process serves, which sees each change at once (a restore moves the
// data version forward, so its list caches are not used again); --json prints one object; a
// refusal exits 1 with a JSON error, a usage mistake exits 2; production mode refuses.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { DIALECTS } from '../support/harness.js';
import { freshDatabase, runSitebiz, type FreshDatabase } from '../support/serve-process.js';


interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

for (const dialect of DIALECTS) {
  describe(`sitebiz reset and snapshot [${dialect}]`, () => {
    let database: FreshDatabase;
    let app: FastifyInstance;
    let token: string;
    const scratch = mkdtempSync(join(tmpdir(), 'sitebiz-snapshot-cli-'));

    const run = (args: string[]): Promise<RunResult> => runSitebiz([...args, '--database-url', database.url, '--log-level', 'silent'], { cwd: scratch });
    const json = async (args: string[], code = 0) => {
      const result = await run([...args, '--json']);
      assert.equal(result.code, code, `sitebiz ${args.join(' ')}: ${result.stdout}${result.stderr}`);
      const lines = result.stdout.trim().split('\n');
      assert.equal(lines.length, 1, result.stdout);
      return JSON.parse(lines[0]!);
    };
    const get = async (url: string) => {
      const res = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
      assert.equal(res.statusCode, 200, res.body);
      return res.body;
    };
    const total = async () => JSON.parse(await get('/v1/contacts?page[size]=1')).meta.total_count as number;
    const filtered = async () => JSON.parse(await get('/v1/contacts?filter[email_contains]=example&page[size]=1')).meta.total_count as number;
    const createContact = async (email: string) => {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/contacts',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.api+json' },
        payload: JSON.stringify({ data: { type: 'contacts', attributes: { email }, relationships: { site: { data: { type: 'sites', id: '1' } } } } }),
      });
      assert.equal(res.statusCode, 201, res.body);
    };

    before(async () => {
      database = await freshDatabase(dialect);
      const init = await json(['init', '--demo']);
      const config = loadConfig({ DATABASE_URL: database.url, LOG_LEVEL: 'silent', PUBLIC_URL: 'http://sitebiz.test' });
      app = await buildApp({ config });
      await app.ready();
      const res = await app.inject({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials', client_id: init.client_id, client_secret: init.client_secret } });
      token = res.json().access_token;
    });
    after(async () => {
      await app?.close();
      await database?.cleanup();
      rmSync(scratch, { recursive: true, force: true });
    });

    it('saves, lists, restores, resets and deletes, and the running server sees each change', async () => {
      const seeded = await get('/v1/contacts?include=tags&page[size]=100');
      const seededTotal = await total();
      const seededFiltered = await filtered(); // cached under the data version by the server
      await createContact('cli-one@example.com');
      assert.equal(await filtered(), seededFiltered + 1);

      const saved = await json(['snapshot', 'save', 'one-more']);
      assert.equal(saved.account_id, '1');
      assert.equal(saved.snapshot.name, 'one-more');
      assert.equal(saved.snapshot.row_counts.contacts, seededTotal + 1);
      await createContact('cli-two@example.com');

      const listed = await json(['snapshot', 'list']);
      assert.deepEqual(listed.snapshots.map((s: { name: string }) => s.name), ['seed', 'one-more']);
      assert.equal(listed.snapshots[0].reserved, true);

      const restored = await json(['snapshot', 'restore', 'one-more']);
      assert.equal(restored.snapshot.name, 'one-more');
      assert.equal(restored.restored_rows, saved.snapshot.total_rows);
      assert.equal(typeof restored.milliseconds, 'number');
      assert.equal(await total(), seededTotal + 1);
      assert.equal(await filtered(), seededFiltered + 1, 'the server does not serve a count cached before the restore');

      const reset = await json(['reset']);
      assert.equal(reset.snapshot.name, 'seed');
      assert.equal(await total(), seededTotal);
      assert.equal(await filtered(), seededFiltered);
      assert.equal(await get('/v1/contacts?include=tags&page[size]=100'), seeded, 'byte-identical after the reset');

      assert.deepEqual(await json(['snapshot', 'delete', 'one-more']), { account_id: '1', deleted: 'one-more' });
      assert.deepEqual((await json(['snapshot', 'list', '--account', '1'])).snapshots.map((s: { name: string }) => s.name), ['seed']);
    });

    it('refuses with exit 1 and a JSON error; usage mistakes exit 2; production mode refuses', async () => {
      // Side by side: none of them writes anything.
      const [deleteSeed, restoreUnknown, saveSeed, noAccount, noName, production] = await Promise.all([
        json(['snapshot', 'delete', 'seed'], 1),
        json(['snapshot', 'restore', 'nope'], 1),
        json(['snapshot', 'save', 'seed'], 1),
        json(['reset', '--account', '999'], 1),
        json(['snapshot', 'save'], 2),
        json(['reset', '--mode', 'production'], 1),
      ]);
      assert.match(deleteSeed.error.message, /cannot be deleted/);
      assert.match(restoreUnknown.error.message, /no snapshot named "nope"/);
      assert.match(saveSeed.error.message, /reserved/);
      assert.match(noAccount.error.message, /no account 999/);
      assert.equal(noName.error.code, 'usage');
      assert.match(production.error.message, /sandbox mode only/);
    });
  });
}
