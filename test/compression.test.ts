// Compression (src/compression.ts, issue 22): answers of 1 KB or more go gzip or brotli coded to
// a client whose Accept-Encoding asks, and decode to exactly the identity bytes; smaller ones and
// clients that do not ask get identity. Entity tags are weak and the same for every coding, so a
// client that sends back the tag of a compressed answer gets its 304.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { COMPRESSION_THRESHOLD_BYTES } from '../src/compression.js';
import { builders } from './support/builders.js';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';

type Response = Awaited<ReturnType<TestApp['request']>>;

/** The body as the client reads it after undoing the answer's Content-Encoding. */
function decoded(res: Response): Buffer {
  const coding = res.headers['content-encoding'];
  if (coding === 'gzip') return gunzipSync(res.rawPayload);
  if (coding === 'br') return brotliDecompressSync(res.rawPayload);
  assert.equal(coding, undefined, `unexpected Content-Encoding ${String(coding)}`);
  return res.rawPayload;
}

const varies = (res: Response) => /(^|,)\s*accept-encoding\s*(,|$)/i.test(String(res.headers.vary ?? ''));

for (const dialect of DIALECTS) {
  describe(`compression [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    const listPath = () => `/v1/contacts?filter[site_id]=${t.tenant.siteId}&page[size]=100`;
    const read = (url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') => t.request({ method, url, token, headers });

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      // Enough contacts for a page well above the threshold (each renders to about 1 KB).
      const b = builders(t);
      for (let i = 0; i < 12; i++) await b.contact({ name: `Person ${i}`, email: `person-${i}@example.com`, address_city: 'Lisbon' });
    });
    after(() => t.close());

    it('sends a list gzip or brotli coded as asked, decoding to exactly the identity body, with one weak ETag for all', async () => {
      const identity = await read(listPath());
      assert.equal(identity.statusCode, 200, identity.body);
      assert.equal(identity.headers['content-encoding'], undefined);
      assert.ok(identity.rawPayload.length > COMPRESSION_THRESHOLD_BYTES * 4, `page of ${identity.rawPayload.length} bytes`);
      assert.ok(varies(identity), 'identity answer names Accept-Encoding in Vary');
      assert.match(String(identity.headers.etag), /^W\/"[A-Za-z0-9_-]{27}"$/);

      for (const [acceptEncoding, coding] of [
        ['gzip', 'gzip'],
        ['br', 'br'],
        ['gzip, deflate, br', 'br'], // what browsers send: brotli on a tie
        ['gzip;q=1.0, br;q=0.5', 'gzip'],
      ] as const) {
        const res = await read(listPath(), { 'accept-encoding': acceptEncoding });
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers['content-encoding'], coding, acceptEncoding);
        assert.ok(varies(res), acceptEncoding);
        assert.ok(res.rawPayload.length < identity.rawPayload.length / 3, `${coding}: ${res.rawPayload.length} bytes`);
        assert.ok(decoded(res).equals(identity.rawPayload), `${acceptEncoding}: decodes to the identity body`);
        assert.equal(res.headers.etag, identity.headers.etag);
        assert.equal(res.headers['content-type'], identity.headers['content-type']);
      }
      // A coding it does not offer, or identity asked for by name: identity.
      for (const acceptEncoding of ['identity', 'compress', 'deflate']) {
        const res = await read(listPath(), { 'accept-encoding': acceptEncoding });
        assert.equal(res.headers['content-encoding'], undefined, acceptEncoding);
        assert.ok(res.rawPayload.equals(identity.rawPayload), acceptEncoding);
      }
    });

    it('answers If-None-Match with the tag of a compressed answer with a bare 304, in any coding; HEAD carries the same tag', async () => {
      const compressed = await read(listPath(), { 'accept-encoding': 'br' });
      const etag = String(compressed.headers.etag);
      for (const acceptEncoding of ['br', 'gzip', 'gzip, br']) {
        const again = await read(listPath(), { 'accept-encoding': acceptEncoding, 'if-none-match': etag });
        assert.equal(again.statusCode, 304, acceptEncoding);
        assert.equal(again.rawPayload.length, 0);
        assert.equal(again.headers['content-encoding'], undefined);
        assert.equal(again.headers.etag, etag);
        assert.ok(varies(again), 'a 304 carries the Vary of its 200');
      }
      // The tag without W/, as some clients strip it: still the same answer.
      const stripped = await read(listPath(), { 'accept-encoding': 'gzip', 'if-none-match': etag.slice(2) });
      assert.equal(stripped.statusCode, 304);

      const head = await read(listPath(), { 'accept-encoding': 'gzip, br' }, 'HEAD');
      assert.equal(head.statusCode, 200);
      assert.equal(head.rawPayload.length, 0);
      assert.equal(head.headers.etag, etag);
      const conditionalHead = await read(listPath(), { 'accept-encoding': 'br', 'if-none-match': etag }, 'HEAD');
      assert.equal(conditionalHead.statusCode, 304);
    });

    it('sends answers under the threshold as they are: a small show, a version, an error', async () => {
      const [contact] = (await read(`/v1/contacts?filter[site_id]=${t.tenant.siteId}&page[size]=1`)).json().data as Array<{ id: string }>;
      for (const url of [`/v1/contacts/${contact!.id}?fields[contacts]=name`, '/v1/version', '/v1/contacts/999999999']) {
        const res = await read(url, { 'accept-encoding': 'gzip, br' });
        assert.ok(res.rawPayload.length < COMPRESSION_THRESHOLD_BYTES, `${url}: ${res.rawPayload.length} bytes`);
        assert.equal(res.headers['content-encoding'], undefined, url);
        JSON.parse(res.body); // readable as it is
      }
    });

    it('compresses the OpenAPI document (JSON and YAML) and the console assets', async () => {
      for (const url of ['/v1/openapi.json', '/v1/openapi.yaml']) {
        const identity = await t.request({ method: 'GET', url });
        for (const coding of ['gzip', 'br']) {
          const res = await t.request({ method: 'GET', url, headers: { 'accept-encoding': coding } });
          assert.equal(res.headers['content-encoding'], coding, url);
          assert.ok(res.rawPayload.length < identity.rawPayload.length / 5, `${url} ${coding}: ${res.rawPayload.length} of ${identity.rawPayload.length} bytes`);
          assert.ok(decoded(res).equals(identity.rawPayload), url);
        }
      }

      const css = await t.request({ method: 'GET', url: '/console/assets/console.css' });
      const cssBr = await t.request({ method: 'GET', url: '/console/assets/console.css', headers: { 'accept-encoding': 'br' } });
      assert.equal(cssBr.statusCode, 200);
      assert.equal(cssBr.headers['content-encoding'], 'br');
      assert.ok(decoded(cssBr).equals(css.rawPayload));
      // The file's own 304 (its weak ETag, @fastify/static's) goes bare too.
      const cssAgain = await t.request({ method: 'GET', url: '/console/assets/console.css', headers: { 'accept-encoding': 'br', 'if-none-match': String(cssBr.headers.etag) } });
      assert.equal(cssAgain.statusCode, 304);
      assert.equal(cssAgain.headers['content-encoding'], undefined);
      assert.equal(cssAgain.rawPayload.length, 0);
    });

    it('compresses nothing with COMPRESSION=off', async () => {
      const off = await createTestApp(dialect, { env: { COMPRESSION: 'off' } });
      try {
        const offToken = await off.token();
        const b = builders(off);
        for (let i = 0; i < 4; i++) await b.contact({ name: `Person ${i}` });
        const res = await off.request({ method: 'GET', url: `/v1/contacts?filter[site_id]=${off.tenant.siteId}`, token: offToken, headers: { 'accept-encoding': 'gzip, br' } });
        assert.equal(res.statusCode, 200);
        assert.ok(res.rawPayload.length > COMPRESSION_THRESHOLD_BYTES, `page of ${res.rawPayload.length} bytes`);
        assert.equal(res.headers['content-encoding'], undefined);
        assert.equal(res.headers.vary, undefined);
        const css = await off.request({ method: 'GET', url: '/console/assets/console.css', headers: { 'accept-encoding': 'gzip, br' } });
        assert.equal(css.statusCode, 200);
        assert.equal(css.headers['content-encoding'], undefined);
      } finally {
        await off.close();
      }
    });
  });
}
