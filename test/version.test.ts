import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';

for (const dialect of DIALECTS) {
  describe(`GET /v1/version [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect);
    });
    after(() => t.close());

    it('answers without authentication with title, version, documentation and JSON:API version', async () => {
      const res = await t.get('/v1/version');
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/);
      const body = res.json();
      assert.equal(body.meta.version, '1.1.0');
      assert.equal(body.meta.title, 'Site Business Service API');
      assert.equal(body.links.documentation, 'http://sitebiz.test/docs');
      assert.equal(body.jsonapi.version, '1.1');
    });

    it('returns the request id it was given, and makes one otherwise', async () => {
      const given = await t.request({ method: 'GET', url: '/v1/version', headers: { 'x-request-id': 'abc-123' } });
      assert.equal(given.headers['x-request-id'], 'abc-123');
      const insane = await t.request({ method: 'GET', url: '/v1/version', headers: { 'x-request-id': 'bad id with spaces' } });
      assert.notEqual(insane.headers['x-request-id'], 'bad id with spaces');
      assert.match(String(insane.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    });
  });
}
