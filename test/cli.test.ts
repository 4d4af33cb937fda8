// The `sitebiz` command line, run as users run it: `node bin/sitebiz.js ...` in a child process.
// Every test gets a database of its own: a temporary SQLite file, and on PostgreSQL (when
// TEST_DATABASE_URL is set) a fresh database made next to TEST_DATABASE_URL's, so its user needs
// CREATEDB. (Not a schema as the harness uses: the CLI takes nothing but a URL, and Kysely's
// migrator, without an explicit schema, finds the migration tables of any schema of the database.)
// Credentials the CLI prints are checked by building the app over the same database and asking it
// for tokens.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { PERMISSION_NAMES } from '../src/auth/permissions.js';
import { loadConfig, SETTINGS } from '../src/config.js';
import { freePort } from './support/free-port.js';
import { freshDatabase, type FreshDatabase } from './support/serve-process.js';
import { DIALECTS } from './support/harness.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'sitebiz.js');
const SPAWN_TIMEOUT_MS = 60_000;

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of the child: ours without any sitebiz setting, plus `extra`. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const spec of Object.values(SETTINGS)) delete env[spec.env];
  return { ...env, ...extra };
}

// Children run in a scratch directory, so a test that forgot --database-url could never touch the
// checkout's data/ folder.
const scratch = mkdtempSync(join(tmpdir(), 'sitebiz-cli-cwd-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function run(args: string[], options: { env?: Record<string, string> } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: scratch,
      env: childEnv(options.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`sitebiz ${args.join(' ')} did not finish within ${SPAWN_TIMEOUT_MS} ms`));
    }, SPAWN_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs a command that must succeed, and returns its stdout. */
async function ok(args: string[]): Promise<string> {
  const result = await run(args);
  assert.equal(result.code, 0, `sitebiz ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

/** Runs a command with --json and returns the one JSON value it prints. */
async function okJson<T = Record<string, unknown>>(args: string[]): Promise<T> {
  const stdout = await ok([...args, '--json']);
  const lines = stdout.trim().split('\n');
  assert.equal(lines.length, 1, `expected one line of JSON, got:\n${stdout}`);
  return JSON.parse(lines[0]!) as T;
}

/** Runs `fn` over up to `limit` items at a time (children are CPU-heavy at start). */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** The app over the CLI's database, as a server started with DATABASE_URL=url would be. */
async function appOver(url: string): Promise<FastifyInstance> {
  const config = loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent', PUBLIC_URL: 'http://sitebiz.test' });
  const app = await buildApp({ config });
  await app.ready();
  return app;
}

async function tokenResponse(app: FastifyInstance, clientId: string, clientSecret: string) {
  return app.inject({
    method: 'POST',
    url: '/v1/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }).toString(),
  });
}

async function tokenFor(app: FastifyInstance, clientId: string, clientSecret: string): Promise<string> {
  const res = await tokenResponse(app, clientId, clientSecret);
  assert.equal(res.statusCode, 200, `token request failed: ${res.body}`);
  return (res.json() as { access_token: string }).access_token;
}

async function getJson(app: FastifyInstance, url: string, token: string) {
  const res = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
  return { status: res.statusCode, body: res.body === '' ? undefined : res.json() };
}

interface InitJson {
  account_id: string;
  user_id: string;
  site_id: string;
  client_id: string;
  client_secret: string;
  base_url: string;
  sign_in_url: string;
}

describe('sitebiz CLI: help, usage and configuration errors', { concurrency: 2 }, () => {
  it('--help lists every command and exits 0; each command has --help with its usage', async () => {
    const general = await run(['--help']);
    assert.equal(general.code, 0);
    assert.match(general.stdout, /Usage: sitebiz <command> \[options\]/);
    // The commands as the tool lists them, so a new command cannot go untested here.
    const section = general.stdout.split('Commands:\n')[1]?.split('\n\n')[0] ?? '';
    const commands = section
      .split('\n')
      .map((line) => /^ {2}([a-z]+(?: [a-z]+)?) {2,}\S/.exec(line)?.[1])
      .filter((name): name is string => name !== undefined);
    assert.deepEqual(commands, [
      'serve',
      'init',
      'seed',
      'import',
      'clock show',
      'clock advance',
      'reset',
      'snapshot save',
      'snapshot restore',
      'snapshot list',
      'snapshot delete',
      'migrate',
      'backup',
      'restore',
      'keys create',
      'keys list',
      'keys rotate',
      'keys delete',
      'accounts create',
      'sites create',
      'users create',
      'trigger',
      'listen',
    ]);
    // The configuration table is one topic of its own, which the general help and every command's
    // help point to rather than repeat.
    assert.match(general.stdout, /sitebiz help config/);
    const config = await run(['help', 'config']);
    assert.equal(config.code, 0);
    for (const spec of Object.values(SETTINGS)) {
      assert.ok(config.stdout.includes(`--${spec.flag}`) && config.stdout.includes(spec.env), `help config mentions --${spec.flag}`);
    }

    const results = await mapLimit(commands, 3, (name) => run([...name.split(' '), '--help']));
    commands.forEach((name, i) => {
      const result = results[i]!;
      assert.equal(result.code, 0, `${name} --help exited ${result.code}: ${result.stderr}`);
      assert.ok(result.stdout.startsWith(`sitebiz ${name}`), `${name} --help starts with its usage:\n${result.stdout}`);
      assert.match(result.stdout, /sitebiz help config/);
      assert.ok(!result.stdout.includes('--log-level'), `${name} --help does not repeat the configuration table`);
    });
    // `help <command>` is `<command> --help`.
    assert.equal((await run(['help', 'keys', 'create'])).stdout, results[commands.indexOf('keys create')]!.stdout);
  });

  it('a group with --help (or help <group>) lists its commands and exits 0', async () => {
    const [flag, word, unknown] = await Promise.all([run(['keys', '--help']), run(['help', 'snapshot']), run(['help', 'bogus'])]);
    assert.equal(flag.code, 0, flag.stderr);
    assert.match(flag.stdout, /Usage: sitebiz keys <command>/);
    for (const name of ['keys create', 'keys list', 'keys rotate', 'keys delete']) assert.match(flag.stdout, new RegExp(`^  ${name} +\\S`, 'm'));
    assert.ok(!flag.stdout.includes('accounts create'), 'only the group\'s commands');
    assert.equal(word.code, 0, word.stderr);
    assert.match(word.stdout, /snapshot save[\s\S]*snapshot delete/);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no command or topic "bogus"/);
  });

  it('an unknown command exits 2 and points at --help; a bare command group names its commands', async () => {
    const [unknown, group, badOption] = await Promise.all([run(['bogus']), run(['keys']), run(['init', '--bogus'])]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command "bogus"; see sitebiz --help/);
    assert.equal(group.code, 2);
    assert.match(group.stderr, /keys create, keys list, keys rotate, keys delete/);
    assert.equal(badOption.code, 2);
    assert.match(badOption.stderr, /--bogus/);
    assert.match(badOption.stderr, /Usage: sitebiz init/);
  });

  it('a bad configuration exits 2 and names every bad value, before touching the database', async () => {
    const db = await freshDatabase('sqlite');
    try {
      const port = await run(['migrate', '--database-url', db.url, '--port', '99999']);
      assert.equal(port.code, 2);
      assert.match(port.stderr, /invalid configuration/);
      assert.match(port.stderr, /--port must be a whole number from 0 to 65535, got "99999"/);
      assert.equal(existsSync(db.file!), false, 'no database file is created');

      const both = await run(['migrate', '--port', '99999'], { env: { DATABASE_URL: 'mysql://x' } });
      assert.equal(both.code, 2);
      assert.match(both.stderr, /DATABASE_URL must start with sqlite: or postgres:\/\/.*got "mysql:\/\/x"/);
      assert.match(both.stderr, /--port .*"99999"/);
    } finally {
      await db.cleanup();
    }
  });

  it('init refuses --demo with --empty (exit 2)', async () => {
    const result = await run(['init', '--demo', '--empty', '--database-url', 'sqlite::memory:']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /choose one of --demo and --empty/);
  });
});

for (const dialect of DIALECTS) {
  describe(`sitebiz CLI [${dialect}]`, { concurrency: 2 }, () => {
    const databases: FreshDatabase[] = [];
    const apps: FastifyInstance[] = [];
    const database = async () => {
      const db = await freshDatabase(dialect);
      databases.push(db);
      return db;
    };
    const app = async (url: string) => {
      const a = await appOver(url);
      apps.push(a);
      return a;
    };
    after(async () => {
      for (const a of apps) await a.close();
      for (const db of databases) await db.cleanup();
    });

    it('init --json prints one JSON object whose credentials work; a second init reuses the account', async () => {
      const db = await database();
      const first = await okJson<InitJson>(['init', '--database-url', db.url]);
      assert.deepEqual(Object.keys(first).sort(), ['account_id', 'base_url', 'client_id', 'client_secret', 'sign_in_url', 'site_id', 'user_id']);
      assert.equal(first.base_url, 'http://127.0.0.1:3000');
      assert.match(first.sign_in_url, /^http:\/\/127\.0\.0\.1:3000\/console\/link\/[A-Za-z0-9_-]{43}$/);

      const second = await ok(['init', '--database-url', db.url]);
      assert.match(second, /The account exists; created a new API key for its owner\./);
      assert.doesNotMatch(second, /console\/link/, 'a sign-in link only on a new database');
      const secondId = /client_id:\s+(\S+)/.exec(second)?.[1];
      const secondSecret = /client_secret:\s+(\S+)/.exec(second)?.[1];
      assert.ok(secondId && secondSecret, second);
      assert.notEqual(secondId, first.client_id);
      assert.match(second, new RegExp(`curl -s -X POST http://127.0.0.1:3000/v1/oauth/token -d grant_type=client_credentials -d client_id=${secondId} -d client_secret=\\S+`));

      const a = await app(db.url);
      for (const [id, secret] of [[first.client_id, first.client_secret], [secondId, secondSecret]] as const) {
        const token = await tokenFor(a, id, secret);
        const me = await getJson(a, '/v1/me', token);
        assert.equal(me.status, 200);
        assert.equal(me.body.data.id, first.user_id);
        assert.equal(me.body.data.attributes.role_level, 'OWNER');
        const sites = await getJson(a, '/v1/sites', token);
        assert.deepEqual(sites.body.data.map((s: { id: string }) => s.id), [first.site_id]);
      }
      const accounts = await a.database.db.selectFrom('accounts').select('id').execute();
      assert.equal(accounts.length, 1, 'the second init made no account');
      // The printed sign-in link opens a console session for the owner, once.
      const linkPath = new URL(first.sign_in_url).pathname;
      const signedIn = await a.inject({ method: 'GET', url: linkPath });
      assert.equal(signedIn.statusCode, 303);
      assert.match(String(signedIn.headers['set-cookie']), /sitebiz_console=/);
      assert.equal((await a.inject({ method: 'GET', url: linkPath })).statusCode, 410);
      const keys = await a.database.db.selectFrom('api_keys').select('permissions').execute();
      assert.equal(keys.length, 2);
      for (const k of keys) assert.deepEqual(JSON.parse(k.permissions), [...PERMISSION_NAMES].sort());
    });

    it('init --empty creates an account, owner and site without demo data', async () => {
      const db = await database();
      const created = await okJson<InitJson>(['init', '--empty', '--database-url', db.url]);
      const a = await app(db.url);
      const token = await tokenFor(a, created.client_id, created.client_secret);
      const me = await getJson(a, '/v1/me', token);
      assert.equal(me.body.data.attributes.name, 'Account Owner');
      const sites = await getJson(a, '/v1/sites', token);
      assert.deepEqual(sites.body.data.map((s: { attributes: { title: string } }) => s.attributes.title), ['My Site']);
      const users = await a.database.db.selectFrom('users').select('id').execute();
      assert.equal(users.length, 1, 'only the owner; the demo adds a second user');
    });

    it('keys create with a list, with all, and with an unknown permission; keys list never shows secrets', async () => {
      const db = await database();
      const init = await okJson<InitJson>(['init', '--database-url', db.url]);
      const limited = await okJson<{ id: string; client_id: string; client_secret: string; permissions: string[]; user_id: string }>([
        'keys', 'create', '--user', init.user_id, '--name', 'x', '--permissions', 'view:sites,view:contacts', '--database-url', db.url,
      ]);
      assert.deepEqual(limited.permissions, ['view:contacts', 'view:sites']);
      assert.equal(limited.user_id, init.user_id);
      const full = await okJson<{ client_id: string; client_secret: string; permissions: string[] }>([
        'keys', 'create', '--user', init.user_id, '--name', 'everything', '--permissions', 'all', '--database-url', db.url,
      ]);
      assert.deepEqual(full.permissions, [...PERMISSION_NAMES].sort());

      const unknown = await run(['keys', 'create', '--user', init.user_id, '--name', 'y', '--permissions', 'view:sites,view:sitez', '--database-url', db.url]);
      assert.notEqual(unknown.code, 0);
      assert.match(unknown.stderr, /unknown permission\(s\) view:sitez/);
      assert.match(unknown.stderr, /known: all, view:sites/);

      const { keys: listed } = await okJson<{ keys: Array<Record<string, unknown>> }>(['keys', 'list', '--database-url', db.url]);
      assert.equal(listed.length, 3, 'the init key, x and everything; the refused key was not created');
      assert.deepEqual(listed.map((k) => k.name).slice(1), ['x', 'everything']);
      const text = await ok(['keys', 'list', '--database-url', db.url]);
      for (const output of [JSON.stringify(listed), text]) {
        assert.ok(!output.includes('sbzsec_'), 'no secret is listed');
        for (const secret of [init.client_secret, limited.client_secret, full.client_secret]) assert.ok(!output.includes(secret));
        assert.ok(output.includes(limited.client_id), 'client ids are listed');
      }
      for (const k of listed) assert.deepEqual(Object.keys(k).filter((name) => /secret|hash/.test(name)), []);

      const a = await app(db.url);
      const token = await tokenFor(a, limited.client_id, limited.client_secret);
      assert.equal((await getJson(a, '/v1/sites', token)).status, 200);
      assert.equal((await getJson(a, '/v1/me', token)).status, 200);
      await tokenFor(a, full.client_id, full.client_secret);
    });

    it('keys rotate <id> replaces the secret and ends old tokens; keys delete <client_id> ends the key', async () => {
      const db = await database();
      const init = await okJson<InitJson>(['init', '--database-url', db.url]);
      const a = await app(db.url);
      const key = await a.database.db.selectFrom('api_keys').select('id').where('client_id', '=', init.client_id).executeTakeFirstOrThrow();
      const oldToken = await tokenFor(a, init.client_id, init.client_secret);
      assert.equal((await getJson(a, '/v1/me', oldToken)).status, 200);

      const rotated = await okJson<{ id: string; client_id: string; client_secret: string }>(['keys', 'rotate', String(key.id), '--database-url', db.url]);
      assert.equal(rotated.id, String(key.id));
      assert.equal(rotated.client_id, init.client_id, 'the client id survives a rotation');
      assert.notEqual(rotated.client_secret, init.client_secret);
      assert.equal((await getJson(a, '/v1/me', oldToken)).status, 401, 'tokens of the old secret stop at once');
      const oldSecret = await tokenResponse(a, init.client_id, init.client_secret);
      assert.equal(oldSecret.statusCode, 401);
      assert.equal(oldSecret.json().error, 'invalid_client');
      const newToken = await tokenFor(a, rotated.client_id, rotated.client_secret);
      assert.equal((await getJson(a, '/v1/me', newToken)).status, 200);

      const deleted = await ok(['keys', 'delete', init.client_id, '--database-url', db.url]);
      assert.match(deleted, new RegExp(`Deleted API key ${key.id} \\(${init.client_id}\\)`));
      assert.equal((await getJson(a, '/v1/me', newToken)).status, 401, 'tokens of a deleted key stop at once');
      assert.equal((await tokenResponse(a, rotated.client_id, rotated.client_secret)).statusCode, 401);

      const missing = await run(['keys', 'delete', init.client_id, '--database-url', db.url]);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, new RegExp(`no API key ${init.client_id}`));
    });

    it('accounts create, sites create and users create --role assistant --sites give a user only its sites', async () => {
      const db = await database();
      const init = await okJson<InitJson>(['init', '--database-url', db.url]);
      const account = await okJson<{ id: string; name: string }>(['accounts', 'create', '--name', 'Acme', '--database-url', db.url]);
      assert.equal(account.name, 'Acme');
      assert.notEqual(account.id, init.account_id);
      const [shop, blog] = await Promise.all(
        ['shop', 'blog'].map((name) =>
          okJson<{ id: string; account_id: string }>([
            'sites', 'create', '--account', account.id, '--title', `Acme ${name}`, '--subdomain', `acme-${name}`, '--database-url', db.url,
          ]),
        ),
      );
      assert.equal(shop!.account_id, account.id);
      const user = await okJson<{ id: string; role: string; site_ids: string[] }>([
        'users', 'create', '--account', account.id, '--name', 'Sam Lee', '--email', 'sam@acme.example',
        '--role', 'assistant', '--sites', shop!.id, '--database-url', db.url,
      ]);
      assert.equal(user.role, 'assistant');
      assert.deepEqual(user.site_ids, [shop!.id]);
      const key = await okJson<{ client_id: string; client_secret: string }>([
        'keys', 'create', '--user', user.id, '--name', 'sam', '--permissions', 'view:sites', '--database-url', db.url,
      ]);

      const a = await app(db.url);
      const token = await tokenFor(a, key.client_id, key.client_secret);
      const me = await getJson(a, '/v1/me', token);
      assert.equal(me.body.data.attributes.name, 'Sam Lee');
      assert.equal(me.body.data.attributes.role_level, 'ASSISTANT');
      const sites = await getJson(a, '/v1/sites', token);
      assert.deepEqual(sites.body.data.map((s: { id: string }) => s.id), [shop!.id]);
      assert.equal((await getJson(a, `/v1/sites/${blog!.id}`, token)).status, 404, 'a site of the account it was not given');
      assert.equal((await getJson(a, `/v1/sites/${init.site_id}`, token)).status, 404, 'a site of another account');

      const owner = await tokenFor(a, init.client_id, init.client_secret);
      const ownerSites = await getJson(a, '/v1/sites', owner);
      assert.deepEqual(ownerSites.body.data.map((s: { id: string }) => s.id), [init.site_id], 'the first owner sees none of Acme');

      const duplicate = await run([
        'users', 'create', '--account', account.id, '--name', 'Sam Again', '--email', 'sam@acme.example', '--role', 'assistant', '--database-url', db.url,
      ]);
      assert.equal(duplicate.code, 1);
      assert.match(duplicate.stderr, /email sam@acme\.example is already taken/);
    });

    it('keys create without --user makes the key for the owner of the only account, and --help says so', async () => {
      const db = await database();
      const init = await okJson<InitJson>(['init', '--database-url', db.url]);
      const key = await okJson<{ user_id: string; client_id: string; client_secret: string }>([
        'keys', 'create', '--name', 'reporting', '--permissions', 'view:sites', '--database-url', db.url,
      ]);
      assert.equal(key.user_id, init.user_id, 'the owner of the account');
      const text = await ok(['keys', 'create', '--name', 'again', '--permissions', 'view:sites', '--database-url', db.url]);
      assert.match(text, new RegExp(`for user ${init.user_id}, the account's owner\\.`));
      const a = await app(db.url);
      const token = await tokenFor(a, key.client_id, key.client_secret);
      assert.equal((await getJson(a, '/v1/me', token)).body.data.id, init.user_id);

      const help = await ok(['keys', 'create', '--help']);
      assert.match(help, /--user defaults to the owner of the account when the database holds exactly one/);

      await okJson(['accounts', 'create', '--name', 'Second', '--database-url', db.url]);
      const ambiguous = await run(['keys', 'create', '--name', 'x', '--permissions', 'all', '--database-url', db.url]);
      assert.equal(ambiguous.code, 1);
      assert.match(ambiguous.stderr, /several accounts: name the key's user with --user <id>/);
    });

    it('every command takes --json and prints one JSON object, failures included', async () => {
      const db = await database();
      const url = ['--database-url', db.url];
      const migrated = await okJson<{ applied: string[] }>(['migrate', ...url]);
      assert.ok(migrated.applied.length > 0);
      assert.deepEqual(await okJson(['migrate', ...url]), { applied: [] });
      const init = await okJson<InitJson>(['init', '--empty', ...url]);
      const key = await okJson<{ id: string; client_id: string }>(['keys', 'create', '--name', 'k', '--permissions', 'all', ...url]);
      assert.equal(typeof (await okJson(['keys', 'rotate', key.id, ...url])).client_secret, 'string');
      assert.equal((await okJson<{ keys: unknown[] }>(['keys', 'list', ...url])).keys.length, 2);
      assert.deepEqual(await okJson(['keys', 'delete', key.client_id, ...url]), { id: key.id, client_id: key.client_id, deleted: true });
      const account = await okJson<{ id: string }>(['accounts', 'create', '--name', 'J', ...url]);
      const site = await okJson<{ id: string }>(['sites', 'create', '--account', account.id, '--title', 'J', '--subdomain', 'j-site', ...url]);
      const user = await okJson<{ site_ids: string[] }>([
        'users', 'create', '--account', account.id, '--name', 'J', '--email', 'j@example.com', '--role', 'assistant', '--sites', site.id, ...url,
      ]);
      assert.deepEqual(user.site_ids, [site.id]);
      assert.equal(init.base_url, 'http://127.0.0.1:3000');

      // Failures: one object on stdout, nothing else, and the exit code of the failure.
      const failures: Array<[string[], number, string]> = [
        [['keys', 'delete', 'sbz_nope', ...url], 1, 'rejected'],
        [['keys', 'create', '--name', 'x', ...url], 2, 'usage'],
        [['init', '--bogus', ...url], 2, 'usage'],
        [['migrate', '--port', '99999', ...url], 2, 'configuration'],
        [['bogus'], 2, 'usage'],
      ];
      const results = await mapLimit(failures, 3, ([args]) => run([...args, '--json']));
      for (const [i, [args, exitCode, code]] of failures.entries()) {
        const result = results[i]!;
        assert.equal(result.code, exitCode, `${args.join(' ')}: ${result.stdout}${result.stderr}`);
        const lines = result.stdout.trim().split('\n');
        assert.equal(lines.length, 1, `one line of JSON for ${args.join(' ')}:\n${result.stdout}`);
        const body = JSON.parse(lines[0]!) as { error: { code: string; message: string } };
        assert.equal(body.error.code, code, lines[0]);
        assert.ok(body.error.message.length > 0);
      }
    });

    it('serve on a taken port says so plainly, exits 1, and creates no database and no key', async () => {
      const db = await database();
      const blocker = createServer();
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      const port = (blocker.address() as { port: number }).port;
      try {
        for (const json of [false, true]) {
          const result = await run(['serve', '--port', String(port), '--database-url', db.url, ...(json ? ['--json'] : [])]);
          assert.equal(result.code, 1, `${result.stdout}${result.stderr}`);
          const said = json ? (JSON.parse(result.stdout) as { error: { code: string; message: string } }).error.message : result.stderr;
          assert.match(said, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use`));
          // The hint keeps the database: a bare `PORT=... npm start` would serve the default one.
          const onDb = `DATABASE_URL=${db.url}`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          assert.match(said, new RegExp(`${onDb} PORT=${port + 1} npm start, or ${onDb} sitebiz serve --port ${port + 1}`));
          assert.doesNotMatch(result.stdout + result.stderr, /EADDRINUSE|client_secret|sbzsec_|\n\s+at /);
        }
      } finally {
        await new Promise<void>((resolve) => blocker.close(() => resolve()));
      }
      if (db.file) assert.equal(existsSync(db.file), false, 'no SQLite file was created');
      else {
        const client = new pg.Client({ connectionString: db.url });
        await client.connect();
        try {
          const tables = await client.query("select count(*)::int as n from information_schema.tables where table_schema = 'public'");
          assert.equal(tables.rows[0].n, 0, 'not even migrated');
        } finally {
          await client.end();
        }
      }
    });

    it('serve --json announces itself with one JSON object holding the first credentials', async () => {
      let started: Awaited<ReturnType<typeof startServe>> | undefined;
      for (let attempt = 1; !started; attempt++) {
        const db = await database();
        try {
          started = await startServe(['serve', '--json', '--port', String(await freePort()), '--database-url', db.url]);
        } catch (error) {
          if (!(error instanceof AddressInUse) || attempt === 3) throw error;
        }
      }
      try {
        const line = started.banner.split('\n').find((l) => l.includes('"serving"'));
        assert.ok(line, started.banner);
        const announced = JSON.parse(line) as { serving: string; docs: string; credentials: { client_id: string; client_secret: string } };
        assert.match(announced.serving, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
        assert.match(announced.credentials.client_secret, /^sbzsec_/);
      } finally {
        assert.deepEqual(await started.stop(), { code: 0, signal: null }, started.stderr());
      }
    });

    it('serve prints working credentials and a curl line, serves them, and exits 0 on SIGTERM', async () => {
      // A port found free can be taken by the time the child listens (the machine is busy with
      // other tests); then start over with a fresh database, since the first run seeds it.
      let first: Awaited<ReturnType<typeof startServe>> | undefined;
      let db: FreshDatabase | undefined;
      let port = 0;
      for (let attempt = 1; !first; attempt++) {
        db = await database();
        port = await freePort();
        try {
          first = await startServe(['serve', '--port', String(port), '--database-url', db.url]);
        } catch (error) {
          if (!(error instanceof AddressInUse) || attempt === 3) throw error;
        }
      }
      const base = `http://127.0.0.1:${port}`;
      try {
        const banner = first.banner;
        assert.match(banner, /created the demo account/);
        const curl = /curl -s -X POST (\S+)\/v1\/oauth\/token -d grant_type=client_credentials -d client_id=(\S+) -d client_secret=(\S+)/.exec(banner);
        assert.ok(curl, `a curl line for a token:\n${banner}`);
        const [, curlBase, clientId, clientSecret] = curl;
        assert.equal(curlBase, base);
        assert.equal(/client_id:\s+(\S+)/.exec(banner)?.[1], clientId);
        assert.equal(/client_secret:\s+(\S+)/.exec(banner)?.[1], clientSecret);
        assert.ok(banner.includes(`curl -s ${base}/v1/me -H "Authorization: Bearer <access_token>"`), banner);
        assert.ok(banner.includes(`sitebiz is serving ${base}/v1`), banner);
        assert.match(banner, /Mode: sandbox/, 'the banner says which mode is on');

        // What the curl line does: a form-encoded client_credentials request.
        const tokenRes = await fetch(`${base}/v1/oauth/token`, {
          method: 'POST',
          body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId!, client_secret: clientSecret! }),
        });
        assert.equal(tokenRes.status, 200);
        const { access_token: accessToken } = (await tokenRes.json()) as { access_token: string };
        const meRes = await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${accessToken}` } });
        assert.equal(meRes.status, 200);
        const me = (await meRes.json()) as { data: { type: string; attributes: { name: string }; }; links: { self: string } };
        assert.equal(me.data.type, 'users');
        assert.equal(me.data.attributes.name, 'Avery Quinn');
        assert.equal(me.links.self, `${base}/v1/me`);
      } finally {
        const exit = await first.stop();
        assert.deepEqual(exit, { code: 0, signal: null }, `serve exits cleanly on SIGTERM; stderr:\n${first.stderr()}`);
      }

      // A second start on the same database prints no secret.
      let second: Awaited<ReturnType<typeof startServe>> | undefined;
      let secondPort = 0;
      for (let attempt = 1; !second; attempt++) {
        try {
          secondPort = await freePort();
          second = await startServe(['serve', '--port', String(secondPort), '--database-url', db!.url]);
        } catch (error) {
          if (!(error instanceof AddressInUse) || attempt === 3) throw error;
        }
      }
      try {
        assert.doesNotMatch(second.banner, /client_secret|sbzsec_/);
        // Its hint, run as printed from the checkout, makes a key on this server's database, and
        // prints this server's address, which no flag of the hint gives (the server recorded it).
        const hint = /For credentials: (.+) \(prints a new API key\);/.exec(second.banner)?.[1];
        assert.ok(hint, second.banner);
        // Checked before it runs: a hint without the database would make a key in the checkout's data/.
        assert.equal(hint, `DATABASE_URL=${db!.url} npm run sitebiz -- init`);
        const ran = await runShell(hint, ROOT);
        assert.equal(ran.code, 0, ran.stderr);
        const secondBase = `http://127.0.0.1:${secondPort}`;
        assert.match(ran.stdout, new RegExp(`Base URL:\\s+${secondBase}\n`));
        const id = /client_id:\s+(\S+)/.exec(ran.stdout)?.[1];
        const secret = /client_secret:\s+(\S+)/.exec(ran.stdout)?.[1];
        assert.ok(id && secret, ran.stdout);
        const token = await fetch(`${secondBase}/v1/oauth/token`, {
          method: 'POST',
          body: new URLSearchParams({ grant_type: 'client_credentials', client_id: id, client_secret: secret }),
        });
        assert.equal(token.status, 200, 'the key works on the server that printed the hint');
      } finally {
        assert.deepEqual(await second.stop(), { code: 0, signal: null }, `stderr:\n${second.stderr()}`);
      }
    });

    it('serve --mode production on an empty database makes no demo account, and says so', async () => {
      let server: Awaited<ReturnType<typeof startServe>> | undefined;
      for (let attempt = 1; !server; attempt++) {
        try {
          server = await startServe(['serve', '--mode', 'production', '--port', String(await freePort()), '--database-url', (await database()).url]);
        } catch (error) {
          if (!(error instanceof AddressInUse) || attempt === 3) throw error;
        }
      }
      try {
        assert.doesNotMatch(server.banner, /created the demo account|client_secret|sbzsec_/);
        assert.match(server.banner, /with no account: production mode makes no demo account/);
        assert.match(server.banner, /npm run sitebiz -- init --empty/);
        assert.match(server.banner, /Mode: production/);
      } finally {
        assert.deepEqual(await server.stop(), { code: 0, signal: null }, `stderr:\n${server.stderr()}`);
      }
    });
  });
}

/** A command line run by bash, as a person pastes it, in `cwd`, with the environment of the other children. */
function runShell(line: string, cwd: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', line], { cwd, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${line} did not finish within ${SPAWN_TIMEOUT_MS} ms`));
    }, SPAWN_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const SERVE_START_TIMEOUT_MS = 30_000;
const SERVE_STOP_TIMEOUT_MS = 5_000;

class AddressInUse extends Error {}

/** Starts `sitebiz serve` and resolves once the banner says it is serving. */
async function startServe(args: string[]): Promise<{
  banner: string;
  stderr(): string;
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: scratch,
    env: childEnv({ LOG_LEVEL: 'warn' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // 'close' comes after the output has been read to the end, unlike 'exit'.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  const banner = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start within ${SERVE_START_TIMEOUT_MS} ms; stdout:\n${stdout}\nstderr:\n${stderr}`));
    }, SERVE_START_TIMEOUT_MS);
    child.stdout.on('data', () => {
      if (/sitebiz is serving .*\n|"serving":.*\n/.test(stdout)) {
        clearTimeout(timer);
        resolve(stdout);
      }
    });
    void exited.then(({ code }) => {
      clearTimeout(timer);
      const message = `serve exited with ${code} before serving; stdout:\n${stdout}\nstderr:\n${stderr}`;
      reject(/EADDRINUSE|already in use/.test(stderr) ? new AddressInUse(message) : new Error(message));
    });
  });
  return {
    banner,
    stderr: () => stderr,
    async stop() {
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`serve did not exit within ${SERVE_STOP_TIMEOUT_MS} ms of SIGTERM`));
        }, SERVE_STOP_TIMEOUT_MS);
      });
      try {
        return await Promise.race([exited, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
