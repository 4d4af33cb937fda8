// Production mode refuses, at creation, a hook whose target is or resolves to a non-public address
// (loopback, private, link-local, unique-local ...): 422 at /data/attributes/target_url, with the
// reason, and nothing written. Sandbox mode (the default) takes local receivers. Names resolve
// through an injected lookup: the test machine has no DNS.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Lookup } from '../../src/webhooks/target-addresses.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { assertError, rowsOf, send } from '../support/writes.js';

const ADDRESSES: Record<string, string[]> = {
  'receiver.example': ['93.184.216.34'],
  'internal.example': ['10.0.0.5'],
  'metadata.example': ['169.254.169.254'],
  'localhost': ['127.0.0.1', '::1'],
  // One public and one private address: a connection could pick either, so it is refused.
  'split.example': ['93.184.216.34', '192.168.1.10'],
  'v6-private.example': ['fd00::1'],
};

/** A resolver over ADDRESSES that counts its calls; unknown names fail as ENOTFOUND does. */
function fakeLookup(): Lookup & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string) => {
    calls.push(hostname);
    const found = ADDRESSES[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(lookup, { calls });
}

for (const dialect of DIALECTS) {
  describe(`webhook targets by mode [${dialect}]`, () => {
    const body = (targetUrl: string, siteId: number, event = 'tag_added') => ({
      data: { type: 'hooks', attributes: { event, target_url: targetUrl }, relationships: { site: { data: { type: 'sites', id: String(siteId) } } } },
    });

    describe('production', () => {
      let t: TestApp;
      let token: string;
      const lookup = fakeLookup();
      before(async () => {
        t = await createTestApp(dialect, { env: { MODE: 'production' }, webhooks: { lookup } });
        token = await t.token();
      });
      after(() => t.close());
      const create = (url: string, as = token, event?: string) => send(t, 'POST', '/v1/hooks', as, body(url, t.tenant.siteId, event));

      it('refuses loopback, private, link-local and unique-local targets, literal or by name, naming the reason; nothing is written', async () => {
        const cases: Array<[string, RegExp]> = [
          ['http://127.0.0.1:4000/in', /127\.0\.0\.1 is a loopback address/],
          ['http://[::1]:4000/in', /::1 is a loopback address/],
          ['http://[::ffff:127.0.0.1]/in', /loopback/],
          ['http://10.1.2.3/in', /10\.1\.2\.3 is a private address/],
          ['https://192.168.0.7/in', /private/],
          ['http://169.254.169.254/latest/meta-data', /link-local/],
          ['http://localhost:4000/in', /localhost resolves to 127\.0\.0\.1, a loopback address/],
          ['https://internal.example/in', /internal\.example resolves to 10\.0\.0\.5, a private address/],
          ['https://metadata.example/in', /link-local/],
          ['https://split.example/in', /split\.example resolves to 192\.168\.1\.10, a private address/],
          ['https://v6-private.example/in', /fd00::1, a unique-local address/],
          ['https://nowhere.example/in', /nowhere\.example does not resolve/],
        ];
        const hooksBefore = await rowsOf(t, 'hooks');
        for (const [url, reason] of cases) {
          const res = await create(url);
          assertError(res, 422, 'target_not_public', '/data/attributes/target_url');
          const detail: string = res.json().errors[0].detail;
          assert.match(detail, reason, url);
          assert.match(detail, /production mode/, url);
        }
        assert.deepEqual(await rowsOf(t, 'hooks'), hooksBefore, 'no hook was created');
      });

      it('accepts a target whose every address is public', async () => {
        const res = await create('https://receiver.example/hooks');
        assert.equal(res.statusCode, 201, res.body);
        assert.equal(res.json().data.attributes.target_url, 'https://receiver.example/hooks');
        assert.ok(lookup.calls.includes('receiver.example'), 'the name was resolved through the injected lookup');
        const public4 = await create('https://93.184.216.34/in');
        assert.equal(public4.statusCode, 201, public4.body);
      });

      it('answers the checks that need no lookup first: a malformed URL and a missing event permission resolve nothing', async () => {
        lookup.calls.length = 0;
        assertError(await create('ftp://internal.example/in'), 422, 'invalid_attribute', '/data/attributes/target_url');
        const withoutContacts = (await t.keyWith(t.tenant.ownerId, ['view:hooks', 'manage:hooks'])).token;
        const res = await create('https://internal.example/in', withoutContacts);
        assertError(res, 403, 'forbidden');
        assert.match(res.json().errors[0].detail, /lacks view:contacts/);
        assert.deepEqual(lookup.calls, [], 'no name was resolved');
      });
    });

    describe('sandbox (the default)', () => {
      let t: TestApp;
      let token: string;
      const lookup = fakeLookup();
      before(async () => {
        t = await createTestApp(dialect, { webhooks: { lookup } });
        token = await t.token();
      });
      after(() => t.close());

      it('takes local receivers, and resolves nothing', async () => {
        assert.equal(t.config.mode, 'sandbox');
        for (const url of ['http://localhost:4000/in', 'http://127.0.0.1:4000/in', 'http://[::1]:4000/in', 'http://10.0.0.5/in', 'https://internal.example/in']) {
          const res = await send(t, 'POST', '/v1/hooks', token, body(url, t.tenant.siteId));
          assert.equal(res.statusCode, 201, `${url}: ${res.body}`);
          assert.equal(res.json().data.attributes.target_url, url);
        }
        assert.deepEqual(lookup.calls, []);
      });
    });
  });
}
