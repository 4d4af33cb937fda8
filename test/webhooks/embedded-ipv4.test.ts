// Production mode and the IPv6 forms that carry an IPv4 address (issue 21: [::127.0.0.1],
// [::7f00:1], [::ffff:0:7f00:1], [64:ff9b:1::7f00:1] and [2002:7f00:1::1] were accepted). One row
// per form and embedded address: a loopback, private or link-local IPv4 address is refused, as a
// literal and as what a name resolves to, at hook creation (422) and when an attempt connects;
// a public one is accepted where the form reaches public hosts. Names resolve through an injected
// lookup: the test machine has no DNS.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Lookup } from '../../src/webhooks/target-addresses.js';
import { builders } from '../support/builders.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { addTag, deliveriesOf } from '../support/webhooks.js';
import { assertError, send } from '../support/writes.js';

interface Row {
  form: string;
  address: string;
  /** What the refusal says after "<address> is " (undefined: accepted). */
  refused?: string;
}

// Teredo: 2001:0:<server>:<flags>:<port>:<client with every bit flipped>; the server here is the
// public 65.54.227.120 (4136:e378) unless the row says otherwise.
const ROWS: Row[] = [
  { form: 'IPv4-compatible', address: '::127.0.0.1', refused: 'an IPv4-compatible address of 127.0.0.1, a loopback address' },
  { form: 'IPv4-compatible', address: '::7f00:1', refused: 'an IPv4-compatible address of 127.0.0.1, a loopback address' },
  { form: 'IPv4-compatible', address: '::10.1.2.3', refused: 'an IPv4-compatible address of 10.1.2.3, a private address' },
  { form: 'IPv4-compatible', address: '::a9fe:a9fe', refused: 'an IPv4-compatible address of 169.254.169.254, a link-local address' },
  // Deprecated (RFC 4291): no public host has one, so even a public IPv4 address is refused.
  { form: 'IPv4-compatible', address: '::93.184.216.34', refused: 'an IPv4-compatible address (no public host has one)' },
  { form: 'IPv4-mapped', address: '::ffff:127.0.0.1', refused: 'an IPv4-mapped address of 127.0.0.1, a loopback address' },
  { form: 'IPv4-mapped', address: '::ffff:7f00:1', refused: 'an IPv4-mapped address of 127.0.0.1, a loopback address' },
  { form: 'IPv4-mapped', address: '::ffff:c0a8:101', refused: 'an IPv4-mapped address of 192.168.1.1, a private address' },
  { form: 'IPv4-mapped', address: '::ffff:169.254.169.254', refused: 'an IPv4-mapped address of 169.254.169.254, a link-local address' },
  { form: 'IPv4-mapped', address: '::ffff:93.184.216.34' },
  { form: 'IPv4-translated', address: '::ffff:0:7f00:1', refused: 'an IPv4-translated address of 127.0.0.1, a loopback address' },
  { form: 'IPv4-translated', address: '::ffff:0:10.1.2.3', refused: 'an IPv4-translated address of 10.1.2.3, a private address' },
  { form: 'IPv4-translated', address: '::ffff:0:a9fe:a9fe', refused: 'an IPv4-translated address of 169.254.169.254, a link-local address' },
  // RFC 2765's form, dropped by RFC 6145: not a public host's either.
  { form: 'IPv4-translated', address: '::ffff:0:5db8:d822', refused: 'an IPv4-translated address (no public host has one)' },
  { form: 'NAT64 64:ff9b::/96', address: '64:ff9b::7f00:1', refused: 'a NAT64 address of 127.0.0.1, a loopback address' },
  { form: 'NAT64 64:ff9b::/96', address: '64:ff9b::10.1.2.3', refused: 'a NAT64 address of 10.1.2.3, a private address' },
  { form: 'NAT64 64:ff9b::/96', address: '64:ff9b::a9fe:a9fe', refused: 'a NAT64 address of 169.254.169.254, a link-local address' },
  { form: 'NAT64 64:ff9b::/96', address: '64:ff9b::93.184.216.34' },
  // Not globally reachable (RFC 8215), whatever it carries; where the IPv4 address sits is the
  // operator's choice (here 127.0.0.1, 192.168.1.1 at /96, then 93.184.216.34 at /48).
  { form: 'local-use NAT64 64:ff9b:1::/48', address: '64:ff9b:1::7f00:1', refused: 'a local-use NAT64 address (no public host has one)' },
  { form: 'local-use NAT64 64:ff9b:1::/48', address: '64:ff9b:1::c0a8:101', refused: 'a local-use NAT64 address (no public host has one)' },
  { form: 'local-use NAT64 64:ff9b:1::/48', address: '64:ff9b:1:5db8:d8:2200::', refused: 'a local-use NAT64 address (no public host has one)' },
  { form: '6to4 2002::/16', address: '2002:7f00:1::1', refused: 'a 6to4 address of 127.0.0.1, a loopback address' },
  { form: '6to4 2002::/16', address: '2002:a01:203::1', refused: 'a 6to4 address of 10.1.2.3, a private address' },
  { form: '6to4 2002::/16', address: '2002:a9fe:a9fe::1', refused: 'a 6to4 address of 169.254.169.254, a link-local address' },
  { form: '6to4 2002::/16', address: '2002:5db8:d822::1' },
  { form: 'Teredo 2001::/32', address: '2001:0:4136:e378:8000:63bf:80ff:fffe', refused: 'a Teredo address of 127.0.0.1, a loopback address' },
  { form: 'Teredo 2001::/32', address: '2001:0:4136:e378:8000:63bf:3f57:fefe', refused: 'a Teredo address of 192.168.1.1, a private address' },
  { form: 'Teredo 2001::/32', address: '2001:0:4136:e378:8000:63bf:5601:5601', refused: 'a Teredo address of 169.254.169.254, a link-local address' },
  { form: 'Teredo 2001::/32', address: '2001:0:a00:1:8000:63bf:a247:27dd', refused: 'a Teredo address of 10.0.0.1, a private address' },
  { form: 'Teredo 2001::/32', address: '2001:0:4136:e378:8000:63bf:a247:27dd' },
];

const nameOf = (i: number) => `form-${i}.example`;
const lookup: Lookup = async (hostname) => {
  const row = ROWS[Number(/^form-(\d+)\.example$/.exec(hostname)?.[1] ?? NaN)];
  if (!row) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return [{ address: row.address, family: 6 }];
};
/** The address as the URL parser writes it in a target URL (compressed, hexadecimal). */
const literalOf = (address: string) => new URL(`http://[${address}]/`).hostname.slice(1, -1);

for (const dialect of DIALECTS) {
  describe(`production mode and IPv6 forms that carry an IPv4 address [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    before(async () => {
      t = await createTestApp(dialect, { env: { MODE: 'production' }, webhooks: { lookup } });
      token = await t.token();
    });
    after(() => t.close());

    const create = (targetUrl: string) =>
      send(t, 'POST', '/v1/hooks', token, {
        data: { type: 'hooks', attributes: { event: 'tag_added', target_url: targetUrl }, relationships: { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } } },
      });

    it('at creation: refuses each form carrying a non-public IPv4 address, as a literal or by name, and accepts a public one where the form reaches public hosts', async () => {
      for (const [i, row] of ROWS.entries()) {
        const literal = literalOf(row.address);
        const targets: Array<[string, string]> = [
          [`http://[${row.address}]:8080/in`, `${literal} is ${row.refused}`],
          [`https://${nameOf(i)}/in`, `${nameOf(i)} resolves to ${row.address}, ${row.refused}`],
        ];
        for (const [url, reason] of targets) {
          const res = await create(url);
          if (row.refused === undefined) {
            assert.equal(res.statusCode, 201, `${row.form} ${url}: ${res.body}`);
            continue;
          }
          assertError(res, 422, 'target_not_public', '/data/attributes/target_url');
          assert.equal(res.json().errors[0].detail, `target_url is refused in production mode, which delivers only to public addresses: ${reason}`, `${row.form} ${url}`);
        }
      }
    });

    it('when an attempt connects: refuses each form carrying a non-public IPv4 address, as a literal or by name', async () => {
      // The public targets accepted above would be attempted too, over a network this machine may not have.
      await t.handle.db.deleteFrom('hooks').execute();
      const refusedRows = ROWS.map((row, i) => ({ row, i })).filter(({ row }) => row.refused !== undefined);
      const stamp = t.handle.traits.encodeTimestamp(t.clock.now());
      // Rows made directly: what a hook accepted before this check existed becomes.
      const hooks: Array<{ id: number; expected: string }> = [];
      for (const { row, i } of refusedRows) {
        const targets: Array<[string, string]> = [
          [`http://[${row.address}]:8080/in`, `${literalOf(row.address)} is ${row.refused}`],
          [`http://${nameOf(i)}:8080/in`, `${nameOf(i)} resolves to ${row.address}, ${row.refused}`],
        ];
        for (const [target, reason] of targets) {
          const inserted = await t.handle.db
            .insertInto('hooks')
            .values({ site_id: t.tenant.siteId, event: 'tag_added', target_url: target, resource_id: null, signing_secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', previous_signing_secret: null, previous_secret_expires_at: null, created_at: stamp, updated_at: stamp })
            .returning('id')
            .executeTakeFirstOrThrow();
          hooks.push({ id: Number(inserted.id), expected: `refused: ${reason} (production mode delivers only to public addresses)` });
        }
      }
      const b = builders(t);
      await addTag(t, token, await b.contact(), await b.tag('Probe'));
      await t.app.webhooks.runDue();
      for (const hook of hooks) {
        const [delivery] = await deliveriesOf(t, hook.id);
        assert.ok(delivery, `a delivery for ${hook.expected}`);
        assert.equal(delivery.last_response_status, null);
        assert.equal(delivery.last_error, hook.expected);
      }
    });
  });
}
