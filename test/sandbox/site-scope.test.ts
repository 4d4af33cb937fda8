// Who may act on the whole account in the sandbox (docs/permissions.md, "The sandbox and sites"),
// with keys of the owner, of an administrator given every site and of the demo's assistant
// (site 1 only), on an account whose second site has a paying subscriber:
// - reset, clock advances and every snapshot route answer the assistant 403 whole_account_required
//   and change nothing (site 2's transactions, clock, snapshots, contacts); the owner and the
//   all-sites administrator may;
// - the request journal shows the assistant the requests about its sites (by the sites each
//   request reached, whichever key made it) and its own requests about no site, never the owner's
//   site-2 requests; the others see every entry;
// - a fault the assistant makes is limited to site 1: it never answers the owner's or the
//   administrator's requests; the assistant neither sees nor deletes the owner's account-wide fault;
// - checkouts, refunds, fail_next_payment, email activity and the mailbox answer 404 for site-2
//   records, and write nothing;
// - the console follows the same rules (snapshots, reset and clock pages; the Requests page).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { PERMISSION_NAMES } from '../../src/auth/permissions.js';
import { createSite, createUser } from '../../src/domain/accounts.js';
import { builders } from '../support/builders.js';
import { buy, checkout, refund } from '../support/commerce.js';
import { signInToConsole } from '../support/console.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { seedDemo } from '../support/snapshots.js';
import { assertError, send } from '../support/writes.js';

const advanceBy = (duration: string) => ({ data: { type: 'clocks', attributes: { advance_by: duration } } });
const snapshotNamed = (name: string) => ({ data: { type: 'snapshots', attributes: { name } } });

for (const dialect of DIALECTS) {
  describe(`sandbox actions and sites [${dialect}]`, () => {
    let t: TestApp;
    let site1: number;
    let site2: number;
    let assistantId: number;
    let adminId: number;
    const tokens = { owner: '', admin: '', assistant: '' };
    const get = (url: string, token: string) => t.request({ method: 'GET', url, token });
    /** Site 2's records: a subscriber's purchase, its transaction, contact and a message sent to it. */
    const site2Records = { offer: 0, purchase: '', transaction: '', contact: '', message: '', email: '' };

    const countOf = async (table: 'transactions' | 'contacts' | 'snapshots' | 'outgoing_messages' | 'email_events', where?: { site: number }) => {
      let q = t.handle.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n'));
      if (where) q = q.where('site_id' as never, '=', where.site as never);
      return Number((await q.executeTakeFirstOrThrow()).n);
    };
    const clockOffset = async () =>
      Number((await t.handle.db.selectFrom('accounts').select('clock_offset_ms').where('id', '=', t.tenant.accountId).executeTakeFirstOrThrow()).clock_offset_ms);

    before(async () => {
      t = await createTestApp(dialect);
      site1 = t.tenant.siteId;
      // The demo: site 1's data, its seed snapshot, and Jordan Blake, an assistant given site 1.
      await seedDemo(t);
      const assistant = await t.handle.db.selectFrom('users').select('id').where('account_id', '=', t.tenant.accountId).where('role', '=', 'assistant').executeTakeFirstOrThrow();
      assistantId = Number(assistant.id);
      site2 = await createSite(t.handle, { accountId: t.tenant.accountId, title: 'Second site', subdomain: `second-${randomBytes(4).toString('hex')}` }, t.clock);
      adminId = await createUser(t.handle, { accountId: t.tenant.accountId, name: 'Ada Admin', email: `ada-${randomBytes(3).toString('hex')}@example.com`, role: 'administrator', siteIds: [site1, site2] }, t.clock);
      tokens.owner = await t.token();
      tokens.admin = (await t.keyWith(adminId, PERMISSION_NAMES)).token;
      tokens.assistant = (await t.keyWith(assistantId, PERMISSION_NAMES)).token;

      site2Records.offer = await builders(t).forSite(site2).offer({ title: 'Monthly', payment_type: 'subscription', price_in_cents: 1900, billing_period_months: 1 });
      site2Records.email = `site2-buyer-${randomBytes(3).toString('hex')}@example.com`;
      const bought = await buy(t, tokens.owner, { offer: site2Records.offer, email: site2Records.email });
      site2Records.purchase = bought.data.id;
      site2Records.transaction = bought.included.find((r) => r.type === 'transactions')!.id;
      const customer = bought.included.find((r) => r.type === 'customers')!;
      site2Records.contact = (customer.relationships!.contact!.data as { id: string }).id;
      const message = await t.handle.db.selectFrom('outgoing_messages').select('id').where('site_id', '=', site2).orderBy('id').executeTakeFirst();
      assert.ok(message, 'the checkout sent site 2 a message');
      site2Records.message = String(message.id);
    });
    after(() => t.close());

    describe('account-wide actions', () => {
      const ACCOUNT_WIDE: Array<{ name: string; method: 'GET' | 'POST' | 'DELETE'; path: string; body?: unknown }> = [
        { name: 'reset', method: 'POST', path: '/v1/test_helpers/reset' },
        { name: 'clock advance', method: 'POST', path: '/v1/test_helpers/clock/advance', body: advanceBy('P2M') },
        { name: 'snapshot list', method: 'GET', path: '/v1/test_helpers/snapshots' },
        { name: 'snapshot save', method: 'POST', path: '/v1/test_helpers/snapshots', body: snapshotNamed('by-assistant') },
        { name: 'snapshot restore', method: 'POST', path: '/v1/test_helpers/snapshots/seed/restore' },
        { name: 'snapshot delete', method: 'DELETE', path: '/v1/test_helpers/snapshots/seed' },
      ];

      for (const route of ACCOUNT_WIDE) {
        it(`${route.name}: 403 whole_account_required for a site-limited user, nothing changed`, async () => {
          const before = {
            site2Transactions: await countOf('transactions', { site: site2 }),
            site2Contacts: await countOf('contacts', { site: site2 }),
            snapshots: await countOf('snapshots'),
            offset: await clockOffset(),
          };
          const res = route.method === 'GET' ? await get(route.path, tokens.assistant) : await send(t, route.method, route.path, tokens.assistant, route.body);
          assertError(res, 403, 'whole_account_required');
          const detail = res.json().errors[0].detail as string;
          assert.match(detail, /every site of the account/);
          assert.match(detail, new RegExp(`reaches only site ${site1}\\b`));
          assert.deepEqual(
            {
              site2Transactions: await countOf('transactions', { site: site2 }),
              site2Contacts: await countOf('contacts', { site: site2 }),
              snapshots: await countOf('snapshots'),
              offset: await clockOffset(),
            },
            before,
            `${route.name} by the assistant changed nothing`,
          );
        });
      }

      it('the all-sites administrator and the owner may: snapshots, and the clock (renewing site 2)', async () => {
        for (const [who, token] of [['admin', tokens.admin], ['owner', tokens.owner]] as const) {
          const saved = await send(t, 'POST', '/v1/test_helpers/snapshots', token, snapshotNamed(`by-${who}`));
          assert.equal(saved.statusCode, 201, saved.body);
          const listed = await get('/v1/test_helpers/snapshots', token);
          assert.equal(listed.statusCode, 200, listed.body);
          assert.ok((listed.json().data as Array<{ id: string }>).some((s) => s.id === `by-${who}`));
          const charged = await countOf('transactions', { site: site2 });
          const advanced = await send(t, 'POST', '/v1/test_helpers/clock/advance', token, advanceBy('P1M'));
          assert.equal(advanced.statusCode, 200, advanced.body);
          assert.equal(await countOf('transactions', { site: site2 }), charged + 1, `${who}'s advance renewed site 2's subscription`);
          const restored = await send(t, 'POST', `/v1/test_helpers/snapshots/by-${who}/restore`, token);
          assert.equal(restored.statusCode, 200, restored.body);
          assert.equal(await countOf('transactions', { site: site2 }), charged, 'the restore took the renewal back');
          assert.equal((await send(t, 'DELETE', `/v1/test_helpers/snapshots/by-${who}`, token)).statusCode, 204);
        }
        // The clock is the account's: anyone with manage:sandbox may read it.
        assert.equal((await get('/v1/test_helpers/clock', tokens.assistant)).statusCode, 200);
      });
    });

    describe('records of other sites', () => {
      it('checkouts, refunds, fail_next_payment, email activity and the mailbox answer 404 for site-2 records, and write nothing', async () => {
        const before = {
          transactions: await countOf('transactions'),
          messages: await countOf('outgoing_messages'),
          activities: await countOf('email_events'),
        };
        const broadcast = await t.handle.db.selectFrom('email_broadcasts').select('id').where('site_id', '=', site1).executeTakeFirstOrThrow();
        assertError(await checkout(t, tokens.assistant, { offer: site2Records.offer, email: 'someone@example.com' }), 404);
        assertError(await refund(t, tokens.assistant, site2Records.transaction), 404);
        assertError(await send(t, 'POST', `/v1/test_helpers/purchases/${site2Records.purchase}/fail_next_payment`, tokens.assistant), 404);
        assertError(
          await send(t, 'POST', `/v1/test_helpers/contacts/${site2Records.contact}/email_activity`, tokens.assistant, {
            data: {
              type: 'email_activities',
              attributes: { kind: 'opened' },
              relationships: { broadcast: { data: { type: 'email_broadcasts', id: String(broadcast.id) } } },
            },
          }),
          404,
        );
        assertError(await get(`/v1/test_helpers/messages/${site2Records.message}`, tokens.assistant), 404);
        assertError(await get(`/v1/test_helpers/messages?filter[site_id]=${site2}`, tokens.assistant), 404);
        const mailbox = await get('/v1/test_helpers/messages?page[size]=100', tokens.assistant);
        assert.equal(mailbox.statusCode, 200, mailbox.body);
        assert.ok(!mailbox.body.includes(site2Records.email), 'the assistant\'s mailbox has no message of site 2');
        assert.deepEqual(
          { transactions: await countOf('transactions'), messages: await countOf('outgoing_messages'), activities: await countOf('email_events') },
          before,
        );
        // The same requests reach site 2 for the all-sites administrator.
        assert.equal((await get(`/v1/test_helpers/messages/${site2Records.message}`, tokens.admin)).statusCode, 200);
      });
    });

    describe('the request journal', () => {
      /** Every journal entry a token sees, as "METHOD path". */
      const journalOf = async (token: string) => {
        const res = await get('/v1/test_helpers/requests?page[size]=100', token);
        assert.equal(res.statusCode, 200, res.body);
        return res.json().data as Array<{ id: string; attributes: { method: string; path: string; client_id: string; response_body: string | null } }>;
      };

      it('shows a site-limited user the requests about its sites and its own, never the owner\'s site-2 requests', async () => {
        const marker = randomBytes(3).toString('hex');
        const site2Email = `owner-wrote-${marker}@example.com`;
        // The owner's requests: about site 2 (a list, a record, a write), about site 1, about no site.
        assert.equal((await t.get(`/v1/contacts?filter[site_id]=${site2}&filter[search]=${marker}a`, tokens.owner)).statusCode, 200);
        assert.equal((await t.get(`/v1/contacts/${site2Records.contact}?m=${marker}`, tokens.owner)).statusCode, 400);
        assert.equal((await t.get(`/v1/contacts/${site2Records.contact}`, tokens.owner)).statusCode, 200);
        const wrote = await send(t, 'POST', '/v1/contacts', tokens.owner, {
          data: { type: 'contacts', attributes: { email: site2Email }, relationships: { site: { data: { type: 'sites', id: String(site2) } } } },
        });
        assert.equal(wrote.statusCode, 201, wrote.body);
        assert.equal((await t.get(`/v1/contacts?filter[site_id]=${site1}&filter[search]=${marker}b`, tokens.owner)).statusCode, 200);
        assert.equal((await t.get('/v1/me', tokens.owner)).statusCode, 200);
        // The administrator's request about site 2; the assistant's own, about site 1 and about none.
        assert.equal((await t.get(`/v1/contacts?filter[site_id]=${site2}&filter[search]=${marker}c`, tokens.admin)).statusCode, 200);
        assert.equal((await t.get(`/v1/contacts?filter[search]=${marker}d`, tokens.assistant)).statusCode, 200);
        assert.equal((await t.get(`/v1/contacts?filter[site_id]=${site2}&filter[search]=${marker}e`, tokens.assistant)).statusCode, 404);
        assert.equal((await t.get('/v1/me', tokens.assistant)).statusCode, 200);

        const seen = async (token: string) => (await journalOf(token)).map((e) => `${e.attributes.method} ${e.attributes.path}`);
        const site2Paths = [
          `GET /v1/contacts?filter[site_id]=${site2}&filter[search]=${marker}a`,
          `GET /v1/contacts/${site2Records.contact}`,
          'POST /v1/contacts',
          `GET /v1/contacts?filter[site_id]=${site2}&filter[search]=${marker}c`,
        ];
        const assistantSees = await seen(tokens.assistant);
        for (const path of site2Paths) assert.ok(!assistantSees.includes(path), `the assistant does not see ${path}`);
        const bodies = (await journalOf(tokens.assistant)).map((e) => `${e.attributes.response_body ?? ''}`).join('\n');
        assert.ok(!bodies.includes(site2Email) && !bodies.includes(site2Records.email), 'no site-2 email reaches the assistant through the journal');
        assert.ok(assistantSees.includes(`GET /v1/contacts?filter[site_id]=${site1}&filter[search]=${marker}b`), 'the owner\'s request about site 1');
        assert.ok(assistantSees.includes(`GET /v1/contacts?filter[search]=${marker}d`), 'its own request about site 1');
        assert.ok(assistantSees.includes(`GET /v1/contacts?filter[site_id]=${site2}&filter[search]=${marker}e`), 'its own refused request (about no site)');
        assert.equal(assistantSees.filter((p) => p === 'GET /v1/me').length, 1, 'its own /v1/me, not the owner\'s');
        assert.ok(assistantSees.includes('POST /v1/oauth/token'), 'its own token request');

        // One entry by id: a site-2 entry is as missing as an unknown one.
        const ownerEntries = await journalOf(tokens.owner);
        const site2Entry = ownerEntries.find((e) => e.attributes.method === 'POST' && e.attributes.path === '/v1/contacts');
        assert.ok(site2Entry);
        assertError(await get(`/v1/test_helpers/requests/${site2Entry.id}`, tokens.assistant), 404);
        assert.equal((await get(`/v1/test_helpers/requests/${site2Entry.id}`, tokens.admin)).statusCode, 200);

        // The owner and the all-sites administrator see every entry, whoever made it.
        for (const token of [tokens.owner, tokens.admin]) {
          const all = await seen(token);
          for (const path of [...site2Paths, `GET /v1/contacts?filter[search]=${marker}d`]) assert.ok(all.includes(path), path);
          assert.ok(all.filter((p) => p === 'GET /v1/me').length >= 2, 'both /v1/me requests');
        }
      });
    });

    describe('faults', () => {
      const createFault = (token: string, attributes: Record<string, unknown>) =>
        send(t, 'POST', '/v1/test_helpers/faults', token, { data: { type: 'faults', attributes } });

      it('a site-limited user\'s fault is limited to its sites: it never answers the owner\'s or the administrator\'s requests', async () => {
        const made = await createFault(tokens.assistant, { path: '/v1/contacts*', status: 503 });
        assert.equal(made.statusCode, 201, made.body);
        const fault = made.json().data;
        assert.deepEqual(fault.attributes.site_ids, [String(site1)]);
        try {
          assert.equal((await t.get(`/v1/contacts?filter[site_id]=${site2}`, tokens.owner)).statusCode, 200, 'the owner\'s site-2 request');
          assert.equal((await t.get(`/v1/contacts?filter[site_id]=${site1}`, tokens.owner)).statusCode, 200, 'the owner reaches site 2 too');
          assert.equal((await t.get(`/v1/contacts?filter[site_id]=${site2}`, tokens.admin)).statusCode, 200, 'the administrator\'s site-2 request');
          assertError(await get('/v1/contacts', tokens.assistant), 503, 'fault_injected');
          // Everyone reaching only site 1 may see it, and the owner.
          for (const token of [tokens.assistant, tokens.owner, tokens.admin]) {
            const listed = await get('/v1/test_helpers/faults', token);
            assert.ok((listed.json().data as Array<{ id: string }>).some((f) => f.id === fault.id));
          }
        } finally {
          assert.equal((await send(t, 'DELETE', `/v1/test_helpers/faults/${fault.id}`, tokens.assistant)).statusCode, 200);
        }
      });

      it('the all-sites administrator\'s fault is account-wide, as the owner\'s', async () => {
        const made = await createFault(tokens.admin, { path: '/v1/products*', status: 502, times: 1 });
        assert.equal(made.statusCode, 201, made.body);
        assert.equal(made.json().data.attributes.site_ids, null);
        assertError(await get(`/v1/products?filter[site_id]=${site2}`, tokens.owner), 502, 'fault_injected');
        assert.equal((await send(t, 'DELETE', `/v1/test_helpers/faults/${made.json().data.id}`, tokens.admin)).statusCode, 200);
      });

      it('the owner\'s fault is account-wide: it answers everyone, and a site-limited user neither sees nor deletes it', async () => {
        const made = await createFault(tokens.owner, { path: '/v1/offers*', status: 503 });
        assert.equal(made.statusCode, 201, made.body);
        const fault = made.json().data;
        assert.equal(fault.attributes.site_ids, null);
        try {
          assertError(await get('/v1/offers', tokens.assistant), 503, 'fault_injected');
          const listed = await get('/v1/test_helpers/faults', tokens.assistant);
          assert.ok(!(listed.json().data as Array<{ id: string }>).some((f) => f.id === fault.id));
          assertError(await get(`/v1/test_helpers/faults/${fault.id}`, tokens.assistant), 404);
          assertError(await send(t, 'DELETE', `/v1/test_helpers/faults/${fault.id}`, tokens.assistant), 404);
          assert.equal((await get(`/v1/test_helpers/faults/${fault.id}`, tokens.admin)).statusCode, 200, 'the all-sites administrator sees it');
        } finally {
          assert.equal((await send(t, 'DELETE', `/v1/test_helpers/faults/${fault.id}`, tokens.owner)).statusCode, 200);
        }
      });
    });

    describe('the console', () => {
      it('refuses the site-limited user the snapshot, reset and clock pages, and shows its Requests page without site 2', async () => {
        const assistant = await signInToConsole(t, assistantId);
        for (const page of ['/console/sandbox/snapshots', '/console/sandbox/reset', '/console/sandbox/snapshots/seed/restore']) {
          const res = await assistant.get(page);
          assert.equal(res.statusCode, 403, page);
          assert.match(res.body, /every site of the account/);
        }
        const snapshots = await countOf('snapshots');
        const site2Contacts = await countOf('contacts', { site: site2 });
        assert.equal((await assistant.post('/console/sandbox/reset')).statusCode, 403);
        assert.equal((await assistant.post('/console/sandbox/snapshots', { name: 'from-console' })).statusCode, 403);
        assert.equal((await assistant.post('/console/sandbox/snapshots/seed/delete')).statusCode, 403);
        const main = await assistant.get('/console/sandbox');
        assert.equal(main.statusCode, 200);
        assert.match(main.body, /id="clock-not-allowed"/, 'the sandbox page says why the clock cannot be moved');
        assert.doesNotMatch(main.body, /name="advance_by"/, 'and offers no advance form');
        const offset = await clockOffset();
        const clock = await assistant.post('/console/sandbox/clock', { advance_by: 'P2M' });
        assert.equal(clock.statusCode, 403, 'the clock form is refused');
        assert.match(clock.body, /every site of the account/);
        assert.deepEqual([await countOf('snapshots'), await countOf('contacts', { site: site2 }), await clockOffset()], [snapshots, site2Contacts, offset]);

        const marker = randomBytes(3).toString('hex');
        assert.equal((await t.get(`/v1/contacts?filter[site_id]=${site2}&filter[search]=${marker}`, tokens.owner)).statusCode, 200);
        const requests = await assistant.get('/console/requests');
        assert.equal(requests.statusCode, 200);
        assert.ok(!requests.body.includes(marker), 'the owner\'s site-2 request is not on the assistant\'s Requests page');
        const owner = await signInToConsole(t);
        const ownerRequests = await owner.get('/console/requests');
        assert.ok(ownerRequests.body.includes(marker), 'the owner\'s Requests page has it');
        assert.equal((await owner.get('/console/sandbox/snapshots')).statusCode, 200);
        assert.match((await owner.get('/console/sandbox')).body, /name="advance_by"/, 'the owner gets the clock forms');
      });
    });

    describe('reset by the owner', () => {
      it('the all-sites administrator and the owner reset the whole account, site 2 included (why it is account-wide)', async () => {
        assert.ok((await countOf('contacts', { site: site2 })) > 0);
        const res = await send(t, 'POST', '/v1/test_helpers/reset', tokens.admin);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(await countOf('contacts', { site: site2 }), 0, 'the seed predates site 2\'s records');
        const again = await send(t, 'POST', '/v1/test_helpers/reset', tokens.owner);
        assert.equal(again.statusCode, 200, again.body);
      });
    });
  });
}
