// Production mode has no sandbox: every operation the sandbox's OpenAPI document lists under
// /v1/test_helpers/ (taken from a sandbox app, so a new test helper is covered the day it is
// added) answers 404 in production mode, with a token holding every permission, and changes
// nothing; the production document lists none of them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';

const PREFIX = '/v1/test_helpers/';

for (const dialect of DIALECTS) {
  describe(`production mode has no test helpers [${dialect}]`, () => {
    let sandbox: TestApp;
    let production: TestApp;
    let operations: Array<{ method: string; path: string }>;

    before(async () => {
      sandbox = await createTestApp(dialect);
      production = await createTestApp(dialect, { env: { MODE: 'production' } });
      const document = sandbox.app.swagger() as { paths: Record<string, Record<string, unknown>> };
      operations = Object.entries(document.paths)
        .filter(([path]) => path.startsWith(PREFIX))
        .flatMap(([path, methods]) => Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, '1') })));
    });
    after(async () => {
      await sandbox.close();
      await production.close();
    });

    it('the sandbox serves test helpers; production mode answers 404 to every one of them and lists none', async () => {
      assert.ok(operations.length >= 20, `the sandbox lists its test helpers (${operations.length})`);
      const token = await production.token();
      const accounts = await production.handle.db.selectFrom('accounts').select(['id', 'clock_offset_ms']).execute();
      const answers: string[] = [];
      for (const { method, path } of operations) {
        const res = await production.request({
          method: method as 'GET',
          url: path,
          token,
          ...(method === 'GET' || method === 'DELETE' ? {} : { payload: { data: { type: 'x', attributes: {} } } }),
        });
        if (res.statusCode !== 404) answers.push(`${method} ${path}: ${res.statusCode} ${res.body.slice(0, 120)}`);
      }
      assert.deepEqual(answers, [], 'every test helper is a 404 in production mode');
      assert.deepEqual(await production.handle.db.selectFrom('accounts').select(['id', 'clock_offset_ms']).execute(), accounts, 'no clock moved');
      const paths = Object.keys((production.app.swagger() as { paths: Record<string, unknown> }).paths);
      assert.deepEqual(paths.filter((p) => p.startsWith(PREFIX)), []);
    });
  });
}
