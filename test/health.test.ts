// GET /healthz, /readyz and /health (src/observability/health.ts): no token, no rate limit,
// nothing but a status; /readyz answers for the database and the schema, /healthz never touches
// the database. The drain under a real SIGTERM is in shutdown.test.ts, a database that goes away
// in database-outage.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { MIGRATIONS } from '../src/db/migrations/index.js';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';

for (const dialect of DIALECTS) {
  describe(`health checks [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      // A limit of 2 requests a minute: the checks below are many more, and none is refused.
      t = await createTestApp(dialect, { env: { RATE_LIMIT: '2' } });
    });
    after(() => t.close());

    it('GET /healthz answers 200 {"status":"alive"} without a token and without a database statement', async () => {
      const { statements } = await t.queries.during(async () => {
        for (let i = 0; i < 5; i++) {
          const res = await t.get('/healthz');
          assert.equal(res.statusCode, 200);
          assert.deepEqual(res.json(), { status: 'alive' });
          assert.equal(res.headers['cache-control'], 'no-store');
          assert.equal(res.headers['ratelimit-limit'], undefined);
        }
      });
      assert.deepEqual(statements, []);
    });

    it('GET /readyz answers 200 {"status":"ready"} while the database answers and the schema is current, however often it is asked', async () => {
      for (let i = 0; i < 5; i++) {
        const res = await t.get('/readyz');
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(res.json(), { status: 'ready' });
        assert.equal(res.headers['cache-control'], 'no-store');
      }
      // A check is one small read: the migration table's names.
      const { statements } = await t.queries.during(async () => assert.equal((await t.get('/readyz')).statusCode, 200));
      assert.equal(statements.length, 1);
      assert.match(statements[0]!, /^select name, timestamp from "?kysely_migration"? order by name$/);
    });

    it('while the process drains, /readyz and /health answer 503 and /healthz still 200', async () => {
      t.app.lifecycle.draining = true;
      try {
        const ready = await t.get('/readyz');
        assert.equal(ready.statusCode, 503);
        assert.deepEqual(ready.json(), { status: 'not_ready', reason: 'draining', detail: 'the process is shutting down and takes no new work' });
        assert.equal((await t.get('/health')).statusCode, 503);
        assert.equal((await t.get('/healthz')).statusCode, 200);
      } finally {
        t.app.lifecycle.draining = false;
      }
      assert.equal((await t.get('/readyz')).statusCode, 200);
      assert.deepEqual((await t.get('/health')).json(), { status: 'serving' });
    });

    it('the checks are not in the API description, and other methods find no route', async () => {
      const document = (await t.get('/v1/openapi.json')).json<{ paths: Record<string, unknown> }>();
      for (const path of ['/healthz', '/readyz', '/health']) assert.equal(document.paths[path], undefined);
      const post = await t.request({ method: 'POST', url: '/readyz' });
      assert.equal(post.statusCode, 404);
    });
  });

  describe(`GET /readyz on a schema behind this version [${dialect}]`, () => {
    let t: TestApp;
    const newest = MIGRATIONS.at(-1)!.name;
    before(async () => {
      // As if another process with an older version had made the schema: the newest migration's
      // row is gone (its tables stay; the check reads only the migration table).
      t = await createTestApp(dialect, {
        prepare: async (handle) => {
          await sql`delete from kysely_migration where name = ${newest}`.execute(handle.db);
        },
      });
    });
    after(() => t.close());

    it('answers 503 migrations_pending, then 200 once the migration is recorded, without a restart', async () => {
      const res = await t.get('/readyz');
      assert.equal(res.statusCode, 503);
      assert.deepEqual(res.json(), { status: 'not_ready', reason: 'migrations_pending', detail: '1 migration is not applied yet (sitebiz migrate --status)' });
      await sql`insert into kysely_migration (name, timestamp) values (${newest}, ${new Date().toISOString()})`.execute(t.handle.db);
      assert.equal((await t.get('/readyz')).statusCode, 200);
    });
  });
}
