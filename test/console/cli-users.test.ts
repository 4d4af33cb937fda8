// `sitebiz users set-password` and `sitebiz users sign-in-link`, run as commands on a database,
// then used against the app over the same database as a person in a browser would.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { saveServerPublicUrl } from '../../src/db/instance-settings.js';
import { formBody } from '../support/console.js';
import { DIALECTS } from '../support/harness.js';
import { freshDatabase, runSitebiz, type FreshDatabase } from '../support/serve-process.js';

/** `sitebiz <args>` with `stdin` as its standard input. */
const sitebiz = (args: string[], stdin?: string) => runSitebiz(args, stdin === undefined ? {} : { stdin });

for (const dialect of DIALECTS) {
  describe(`sitebiz users set-password and sign-in-link [${dialect}]`, () => {
    let db: FreshDatabase;
    let app: FastifyInstance;
    const email = 'owner@example.com';
    before(async () => {
      db = await freshDatabase(dialect);
      const init = await sitebiz(['init', '--empty', '--database-url', db.url, '--json']);
      assert.equal(init.code, 0, init.stderr);
      app = await buildApp({ config: loadConfig({ DATABASE_URL: db.url, LOG_LEVEL: 'silent' }), webhooks: { autoStart: false } });
    });
    after(async () => {
      await app?.close();
      await db?.cleanup();
    });

    const signIn = (password: string) =>
      app.inject({ method: 'POST', url: '/console/sign-in', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: formBody({ email, password }) });

    it('sets a password read from standard input; the user signs in with it, and the old sessions end', async () => {
      const first = await sitebiz(['users', 'set-password', '--email', email, '--password-stdin', '--database-url', db.url, '--json'], 'first password of ours\n');
      assert.equal(first.code, 0, first.stderr);
      assert.deepEqual(JSON.parse(first.stdout), { user_id: '1', email, password_set: true });
      const signedIn = await signIn('first password of ours');
      assert.equal(signedIn.statusCode, 303, 'the trailing newline is not part of the password');
      const cookie = String([signedIn.headers['set-cookie']].flat()[0]).split(';')[0]!;
      assert.equal((await app.inject({ method: 'GET', url: '/console', headers: { cookie } })).statusCode, 200);

      const second = await sitebiz(['users', 'set-password', '--email', email, '--password-stdin', '--database-url', db.url], 'second password of ours');
      assert.equal(second.code, 0, second.stderr);
      assert.equal((await app.inject({ method: 'GET', url: '/console', headers: { cookie } })).statusCode, 303, 'the session of the old password ended');
      assert.equal((await signIn('first password of ours')).statusCode, 401);
      assert.equal((await signIn('second password of ours')).statusCode, 303);
      const stored = await app.database.db.selectFrom('users').select('password_hash').where('email', '=', email).executeTakeFirstOrThrow();
      assert.match(stored.password_hash ?? '', /^scrypt\$17\$8\$1\$/);
      assert.ok(!stored.password_hash?.includes('second password'));
    });

    it('refuses a short password, a missing --password-stdin and an unknown email, changing nothing', async () => {
      const before = await app.database.db.selectFrom('users').select('password_hash').where('email', '=', email).executeTakeFirstOrThrow();
      const short = await sitebiz(['users', 'set-password', '--email', email, '--password-stdin', '--database-url', db.url], 'short');
      assert.equal(short.code, 2);
      assert.match(short.stderr, /at least 10 characters/);
      const noStdin = await sitebiz(['users', 'set-password', '--email', email, '--database-url', db.url], 'long enough password');
      assert.equal(noStdin.code, 2);
      assert.match(noStdin.stderr, /--password-stdin is required/);
      const unknown = await sitebiz(['users', 'set-password', '--email', 'nobody@example.com', '--password-stdin', '--database-url', db.url], 'long enough password');
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /no user with the email nobody@example.com/);
      const after = await app.database.db.selectFrom('users').select('password_hash').where('email', '=', email).executeTakeFirstOrThrow();
      assert.equal(after.password_hash, before.password_hash);
    });

    it('prints a one-time sign-in link for the owner (or a user by email) that opens a session once', async () => {
      const printed = await sitebiz(['users', 'sign-in-link', '--database-url', db.url, '--public-url', 'http://console.test:3000', '--json']);
      assert.equal(printed.code, 0, printed.stderr);
      const { sign_in_url: url, user_id: userId } = JSON.parse(printed.stdout) as { sign_in_url: string; user_id: string };
      assert.equal(userId, '1');
      assert.match(url, /^http:\/\/console\.test:3000\/console\/link\/[A-Za-z0-9_-]{43}$/);
      const path = new URL(url).pathname;
      assert.equal((await app.inject({ method: 'GET', url: path })).statusCode, 303);
      assert.equal((await app.inject({ method: 'GET', url: path })).statusCode, 410);
      const byEmail = await sitebiz(['users', 'sign-in-link', '--email', email, '--database-url', db.url]);
      assert.equal(byEmail.code, 0, byEmail.stderr);
      assert.match(byEmail.stdout, /works once, for 15 minutes/);
    });

    it('links to the server on the database, as it recorded its address at start, unless given PORT, HOST or PUBLIC_URL', async () => {
      const origin = async (flags: string[], env: Record<string, string> = {}) => {
        const printed = await runSitebiz(['users', 'sign-in-link', '--database-url', db.url, '--json', ...flags], { env });
        assert.equal(printed.code, 0, printed.stderr);
        return new URL((JSON.parse(printed.stdout) as { sign_in_url: string }).sign_in_url).origin;
      };
      assert.equal(await origin([]), 'http://127.0.0.1:3000', 'no server started on it yet: the default address');
      // What `serve` records as it starts (test/cli.test.ts runs a server's hint against the server).
      await saveServerPublicUrl(app.database, 'http://127.0.0.1:4321');
      const [recorded, port, host, publicUrl] = await Promise.all([
        origin([]),
        origin([], { PORT: '4400' }),
        origin(['--host', '0.0.0.0']),
        origin([], { PUBLIC_URL: 'https://console.example' }),
      ]);
      assert.equal(recorded, 'http://127.0.0.1:4321', 'the server that runs on the database, not the default port');
      assert.equal(port, 'http://127.0.0.1:4400', "the command's own PORT wins");
      assert.equal(host, 'http://0.0.0.0:3000', "the command's own --host wins (its PORT the default)");
      assert.equal(publicUrl, 'https://console.example');
    });
  });
}
