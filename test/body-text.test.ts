// Bodies must be Unicode text: bytes that are not UTF-8 (such as C0 80 ED A0 80) were stored as
// U+FFFD, and an escaped lone surrogate ("\ud800") was stored by one database and refused by the
// other. Both are a 400 naming the problem, on every write, and nothing is stored.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loneSurrogateAt } from '../src/jsonapi/body-text.js';
import { builders } from './support/builders.js';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';
import { assertError, rowsOf } from './support/writes.js';

describe('loneSurrogateAt', () => {
  it('points at the first string, value or member name, holding a lone surrogate', () => {
    assert.equal(loneSurrogateAt({ a: ['ok', 'x\ud800'] }), '/a/1');
    assert.equal(loneSurrogateAt({ 'a/b': { '\udc00': 1 } }), '/a~1b/\udc00');
    assert.equal(loneSurrogateAt({ a: 'x\udfffy' }), '/a');
    assert.equal(loneSurrogateAt({ a: 'paired \ud83d\ude00', b: [1, null, true] }), undefined);
    // Deeper than a recursive walk could go.
    let deep: unknown = '\ud800';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    assert.equal(loneSurrogateAt(deep), '/0'.repeat(200_000));
  });
});

const INVALID_UTF8 = [
  [0xc0, 0x80], // an overlong NUL
  [0xed, 0xa0, 0x80], // an encoded surrogate
  [0xff],
  [0xe2, 0x82], // a character cut short
];

for (const dialect of DIALECTS) {
  describe(`body text [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let contactId: number;
    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      contactId = await builders(t).contact({ name: 'Ada', email: 'ada@example.com' });
    });
    after(() => t.close());

    const tables = ['contacts', 'contact_notes'];
    const snapshot = async () => Object.fromEntries(await Promise.all(tables.map(async (table) => [table, await rowsOf(t, table)])));

    /** JSON texts with `{{text}}` where the bad text goes. */
    const writes = () => [
      {
        method: 'POST' as const,
        url: '/v1/contacts',
        json: `{"data":{"type":"contacts","attributes":{"email":"new@example.com","name":"{{text}}"},"relationships":{"site":{"data":{"type":"sites","id":"${t.tenant.siteId}"}}}}}`,
        pointer: '/data/attributes/name',
      },
      {
        method: 'PATCH' as const,
        url: `/v1/contacts/${contactId}`,
        json: `{"data":{"type":"contacts","id":"${contactId}","attributes":{"name":"{{text}}"}}}`,
        pointer: '/data/attributes/name',
      },
      {
        method: 'POST' as const,
        url: '/v1/contact_notes',
        json: `{"data":{"type":"contact_notes","attributes":{"body":"{{text}}"},"relationships":{"contact":{"data":{"type":"contacts","id":"${contactId}"}}}}}`,
        pointer: '/data/attributes/body',
      },
    ];

    it('400 invalid_utf8 for bytes that are not UTF-8, whatever the JSON media type; nothing stored', async () => {
      const before = await snapshot();
      for (const write of writes()) {
        for (const bytes of [...INVALID_UTF8, [0xc0, 0x80, 0xed, 0xa0, 0x80]]) {
          for (const type of ['application/vnd.api+json', 'application/json']) {
            const [head, tail] = write.json.split('{{text}}') as [string, string];
            const payload = Buffer.concat([Buffer.from(`${head}Ad`), Buffer.from(bytes), Buffer.from(`a${tail}`)]);
            const res = await t.request({ method: write.method, url: write.url, token, headers: { 'content-type': type }, payload });
            assertError(res, 400, 'invalid_utf8');
            assert.match(res.json().errors[0].detail, /not valid UTF-8 \(first bad byte at offset \d+\)/);
          }
        }
      }
      assert.deepEqual(await snapshot(), before, 'nothing was stored');
    });

    it('400 invalid_unicode at the member for an escaped lone surrogate; paired escapes are fine', async () => {
      const before = await snapshot();
      for (const write of writes()) {
        for (const text of ['\\ud800', 'a\\udc00b', '\\ud83d', '\\ude00\\ud83d']) {
          const res = await t.request({ method: write.method, url: write.url, token, headers: { 'content-type': 'application/vnd.api+json' }, payload: write.json.replace('{{text}}', text) });
          assertError(res, 400, 'invalid_unicode', write.pointer);
        }
      }
      // In a member name too (here an unknown attribute, refused for being unreadable first).
      const name = await t.request({
        method: 'PATCH',
        url: `/v1/contacts/${contactId}`,
        token,
        headers: { 'content-type': 'application/vnd.api+json' },
        payload: `{"data":{"type":"contacts","id":"${contactId}","attributes":{"\\udbff":"x"}}}`,
      });
      assertError(name, 400, 'invalid_unicode', '/data/attributes/\udbff');
      assert.deepEqual(await snapshot(), before, 'nothing was stored');

      const paired = await t.request({
        method: 'PATCH',
        url: `/v1/contacts/${contactId}`,
        token,
        headers: { 'content-type': 'application/vnd.api+json' },
        payload: `{"data":{"type":"contacts","id":"${contactId}","attributes":{"name":"Ada \\ud83d\\ude00 \u00e9"}}}`,
      });
      assert.equal(paired.statusCode, 200, paired.body);
      assert.equal(paired.json().data.attributes.name, 'Ada \u{1F600} \u00e9');
    });

    it('the OAuth endpoints refuse them too, in RFC 6749 form', async () => {
      const form = await t.request({
        method: 'POST',
        url: '/v1/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: Buffer.concat([Buffer.from('grant_type=client_credentials&client_id='), Buffer.from([0xc0, 0x80])]),
      });
      assert.equal(form.statusCode, 400, form.body);
      assert.equal(form.json().error, 'invalid_request');
      const json = await t.request({
        method: 'POST',
        url: '/v1/oauth/token',
        headers: { 'content-type': 'application/json' },
        payload: '{"grant_type":"client_credentials","client_id":"\\ud800","client_secret":"x"}',
      });
      assert.equal(json.statusCode, 400, json.body);
      assert.equal(json.json().error, 'invalid_request');
    });
  });
}
