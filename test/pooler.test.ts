// sitebiz behind a real connection pooler: Debian's PgBouncer (1.18: no prepared-statement
// support), started here in its own configuration on a free port, in front of TEST_DATABASE_URL's
// server (test/support/pgbouncer.ts).
//
// - In `transaction` mode, with sitebiz's defaults (no DATABASE_POOLER): `serve --workers 2`
//   answers every request, none with a 500 (named prepared statements live on a server connection
//   the pooler hands to other clients; sitebiz notices the first refusal and stops naming them),
//   and with DATABASE_POOLER=transaction it never names one.
// - In `session` mode, with sitebiz's defaults.
// - The suites whose statements a pooler can break (write races, webhook workers, the sandbox's locking
//   actions, tokens) on PostgreSQL, run again with every app and
//   every `sitebiz` process reaching its database through PgBouncer in transaction mode, with
//   sitebiz's defaults (test/support/harness.ts, TEST_DATABASE_POOLER_URL).
// Each start makes a new demo database through the pooler (migrations and the demo data), takes a
// token, reads 80 times, ten at a time, and writes five contacts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { PgBouncer, PGBOUNCER_SKIP, type PoolMode } from './support/pgbouncer.js';
import { accessToken, freePort, freshDatabase, request, runSitebiz, startServe } from './support/serve-process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const skip = PGBOUNCER_SKIP;

/** A served demo database through the pooler: 80 reads of several kinds and a few writes. */
async function serveThrough(bouncer: PgBouncer, env: Record<string, string>): Promise<{ statuses: Map<number, number>; stderr: string }> {
  const scratch = mkdtempSync(join(tmpdir(), 'sitebiz-pooler-'));
  const db = await freshDatabase('postgres');
  const port = await freePort();
  const server = startServe(scratch, ['--port', String(port), '--database-url', bouncer.through(db.url), '--workers', '2', '--rate-limit', '0'], env);
  try {
    await server.waitFor(/sitebiz is serving/);
    const token = await accessToken(port, server);
    const paths = ['/v1/me', '/v1/sites', '/v1/contacts?page[size]=5', '/v1/offers', '/v1/customers?include=contact', '/v1/contacts?filter[email_contains]=a'];
    const statuses = new Map<number, number>();
    const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
    // Ten at a time, so that the pooler's server connections change hands between requests.
    for (let round = 0; round < 8; round++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => request(port, { path: paths[(round * 10 + i) % paths.length]!, requestId: `r${round}-${i}`, token })),
      );
      for (const answer of answers) count(answer.status);
    }
    const sites = JSON.parse((await request(port, { path: '/v1/sites', requestId: 'sites', token })).body) as { data: Array<{ id: string }> };
    for (let i = 0; i < 5; i++) {
      const created = await request(port, {
        method: 'POST',
        path: '/v1/contacts',
        requestId: `w${i}`,
        token,
        json: { data: { type: 'contacts', attributes: { name: `Pooled ${i}`, email: `pooled-${i}@example.com` }, relationships: { site: { data: { type: 'sites', id: sites.data[0]!.id } } } } },
      });
      count(created.status);
      assert.equal(created.status, 201, created.body);
    }
    return { statuses, stderr: server.stderr };
  } finally {
    await server.stop();
    await db.cleanup();
    rmSync(scratch, { recursive: true, force: true });
  }
}

for (const mode of ['transaction', 'session'] as PoolMode[]) {
  describe(`serve --workers 2 behind PgBouncer in ${mode} mode`, () => {
    let bouncer: PgBouncer;
    before(async () => {
      if (!skip) bouncer = await PgBouncer.start(mode);
    });
    after(async () => {
      if (!skip) await bouncer.stop();
    });

    it('answers every request, none with a 5xx, with sitebiz\'s defaults', { skip }, async () => {
      const { statuses, stderr } = await serveThrough(bouncer, {});
      assert.deepEqual([...statuses.keys()].sort(), [200, 201], `statuses: ${JSON.stringify([...statuses])}\n${stderr}`);
      assert.equal(statuses.get(200), 80);
      if (mode === 'session') assert.doesNotMatch(stderr, /SITEBIZ_TRANSACTION_POOLER/, 'a session pooler keeps named statements working');
    });

    it('commands started at once each bring the schema up to date, and none waits on a lock another left', { skip, timeout: 120_000 }, async () => {
      // Every command migrates first. Kysely's own lock is a session-level one: through a
      // transaction pooler it was left held on some server connection, and the next command
      // waited for its hour-long timeout (src/db/connect.ts, migrateInOneTransaction).
      const db = await freshDatabase('postgres');
      try {
        const url = bouncer.through(db.url);
        for (const round of [1, 2]) {
          const runs = await Promise.all(Array.from({ length: 6 }, () => runSitebiz(['migrate', '--json', '--database-url', url])));
          for (const run of runs) assert.equal(run.code, 0, `round ${round}: ${run.stdout}${run.stderr}`);
          const applied = runs.map((run) => (JSON.parse(run.stdout.trim().split('\n').pop()!) as { applied: string[] }).applied.length);
          if (round === 1) assert.equal(applied.filter((n) => n > 0).length, 1, `one of them applied the migrations: ${applied}`);
          else assert.deepEqual(applied, [0, 0, 0, 0, 0, 0]);
        }
      } finally {
        await db.cleanup();
      }
    });

    if (mode === 'transaction') {
      it('with DATABASE_POOLER=transaction, never names a statement: no refusal to notice', { skip }, async () => {
        const { statuses, stderr } = await serveThrough(bouncer, { DATABASE_POOLER: 'transaction' });
        assert.equal(statuses.get(200), 80, `statuses: ${JSON.stringify([...statuses])}\n${stderr}`);
        assert.doesNotMatch(stderr, /SITEBIZ_TRANSACTION_POOLER/);
      });
    }
  });
}

// The re-run of the PostgreSQL suites through the pooler tests how PgBouncer and PostgreSQL treat sitebiz's
// statements, which no Node version changes: CI's second run (Node 24) sets TEST_POOLER_SUITES=off
// and leaves it to the first (it takes about 100 s of a 2-core machine).
const suitesSkip: string | false = skip || (process.env.TEST_POOLER_SUITES === 'off' ? 'TEST_POOLER_SUITES=off: another run of this CI ran them' : false);

describe('the PostgreSQL suites through PgBouncer in transaction mode', () => {
  let bouncer: PgBouncer;
  before(async () => {
    if (!suitesSkip) bouncer = await PgBouncer.start('transaction');
  });
  after(async () => {
    if (!suitesSkip) await bouncer.stop();
  });

  // What a transaction pooler changes is how statements share server connections: transactions
  // racing each other (row locks, SKIP LOCKED, retries on serialization failures), advisory locks,
  // LISTEN/NOTIFY, session settings, prepared statements, and commands in processes of their own.
  // These suites exercise those: the write races and the outbox; the webhook workers (claims,
  // crashes, retries, fairness, LISTEN); the sandbox's account-wide actions that lock and race
  // each other, reset and snapshots (long transactions that turn triggers off), `trigger` and
  // `listen` in processes of their own; tokens and keys. The other suites (a resource's writes,
  // checkouts, renewals, payload samples, target checks...) run ordinary statements and
  // single-connection transactions, which the served demo above already sends through the pooler;
  // running them here again cost about half of this test's time.
  const POOLER_SENSITIVE = [
    'test/writes/races.test.ts',
    'test/writes/races-database.test.ts',
    'test/writes/outbox.test.ts',
    ...['delivery', 'delivery-crash', 'delivery-log', 'delivery-races', 'events', 'fairness', 'retries', 'worker-lifecycle'].map((name) => `test/webhooks/${name}.test.ts`),
    ...['account-actions-overlap', 'reset', 'snapshots', 'trigger-listen'].map((name) => `test/sandbox/${name}.test.ts`),
    'test/authentication.test.ts',
    'test/oauth.test.ts',
  ];
  const suites = POOLER_SENSITIVE.filter((file) => existsSync(join(ROOT, file)));
  assert.deepEqual(suites, POOLER_SENSITIVE, 'a suite of the list was renamed or removed: update the list');

  it(`pass: ${suites.length} files (write races, webhook workers, the sandbox's locking actions, tokens and keys)`, { skip: suitesSkip, timeout: 15 * 60_000 }, async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, TEST_DIALECTS: 'postgres', TEST_DATABASE_POOLER_URL: bouncer.url };
    // Not as a child of this test run, and without this run's timing table.
    delete env.NODE_TEST_CONTEXT;
    delete env.TEST_TIMINGS;
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'run-tests.js'), ...suites], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const summary = output.split('\n').filter((line) => line.startsWith('ℹ ')).join('\n');
    assert.equal(code, 0, `${output.slice(-20_000)}\n${bouncer.log().slice(-5_000)}`);
    assert.match(summary, /^ℹ fail 0$/m);
    assert.ok(Number(/^ℹ pass (\d+)$/m.exec(summary)?.[1]) >= 140, summary);
    // They ran through the pooler, which refused the named statements they started with.
    assert.match(output, /SITEBIZ_TRANSACTION_POOLER/);
  });
});
