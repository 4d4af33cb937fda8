// The console's Overview (/console): the chosen site's last webhook deliveries (through the engine's
// webhook_deliveries list, each linking to its page on the Webhooks page) and, in sandbox mode, the
// account's last journaled requests (this process's buffer written first, as GET
// /v1/test_helpers/requests does); production mode has no journal to show.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createSite } from '../../src/domain/accounts.js';
import { builders, type Builders } from '../support/builders.js';
import { signInToConsole, type ConsoleBrowser } from '../support/console.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { send } from '../support/writes.js';

/** The overview's section under the heading with this id. */
function section(body: string, headingId: string): string | undefined {
  return new RegExp(`<section aria-labelledby="${headingId}">([\\s\\S]*?)</section>`).exec(body)?.[1];
}

const bodyRows = (html: string) => [...html.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => m[1]!).filter((row) => row.includes('<td'));

for (const dialect of DIALECTS) {
  describe(`console Overview: recent deliveries and requests [${dialect}]`, () => {
    let t: TestApp;
    let owner: ConsoleBrowser;
    let token: string;
    let b: Builders;
    let secondSite: number;

    const createHook = async (siteId: number, targetUrl: string) => {
      const res = await send(t, 'POST', '/v1/hooks', token, {
        data: { type: 'hooks', attributes: { event: 'tag_added', target_url: targetUrl }, relationships: { site: { data: { type: 'sites', id: String(siteId) } } } },
      });
      assert.equal(res.statusCode, 201, res.body);
    };
    /** Tags a new contact of the site through the API: one delivery per tag_added hook of the site. */
    const tagSomeone = async (site: Builders, tagId: number) => {
      const contactId = await site.contact();
      const res = await send(t, 'POST', `/v1/contacts/${contactId}/relationships/tags`, token, { data: [{ type: 'contact_tags', id: String(tagId) }] });
      assert.equal(res.statusCode, 200, res.body);
    };
    const deliveryIds = async (siteId: number) => {
      const res = await t.get(`/v1/webhook_deliveries?filter[site_id]=${siteId}&page[size]=10`, token);
      assert.equal(res.statusCode, 200, res.body);
      return JSON.parse(res.body).data.map((d: { id: string }) => d.id) as string[];
    };

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      owner = await signInToConsole(t);
      b = builders(t);
      secondSite = await createSite(t.handle, { accountId: t.tenant.accountId, title: 'Second Site', subdomain: `second-${randomBytes(4).toString('hex')}` }, t.clock);
    });
    after(() => t.close());

    it('says so when the chosen site has no deliveries yet', async () => {
      const res = await owner.get(`/console?site=${secondSite}`);
      assert.equal(res.statusCode, 200, res.body);
      const deliveries = section(res.body, 'deliveries-heading');
      assert.ok(deliveries, 'a Recent deliveries section');
      assert.match(deliveries, /<h2 id="deliveries-heading">Recent deliveries<\/h2>/);
      assert.match(deliveries, /No webhook deliveries for this site yet/);
      assert.equal(bodyRows(deliveries).length, 0);
    });

    it('shows the chosen site\'s last 10 deliveries, newest first, with status, event, target, time and a link to each', async () => {
      await createHook(t.tenant.siteId, 'http://localhost:4000/first-site');
      await createHook(secondSite, 'http://localhost:4000/second-site');
      const vip = await b.tag('VIP');
      for (let i = 0; i < 12; i++) {
        await tagSomeone(b, vip);
        t.clock.advance(1);
      }
      const second = b.forSite(secondSite);
      await tagSomeone(second, await second.tag('Second'));

      const res = await owner.get(`/console?site=${t.tenant.siteId}`);
      assert.equal(res.statusCode, 200, res.body);
      const rows = bodyRows(section(res.body, 'deliveries-heading') ?? '');
      assert.equal(rows.length, 10, 'the last 10 of 12');
      const expected = await deliveryIds(t.tenant.siteId);
      assert.equal(expected.length, 10);
      assert.deepEqual(
        rows.map((row) => /href="\/console\/webhooks\/deliveries\/(\d+)\?site=(\d+)"/.exec(row)?.slice(1)),
        expected.map((id) => [id, String(t.tenant.siteId)]),
        'the same deliveries, in the same order, as the API lists',
      );
      for (const row of rows) {
        assert.match(row, /<span class="status-pending">pending<\/span>/);
        assert.match(row, /<code>tag_added<\/code>/);
        assert.match(row, /http:\/\/localhost:4000\/first-site/);
        assert.match(row, /<time datetime="2026-06-01T12:00:\d\d\.000Z">2026-06-01 12:00:\d\d UTC<\/time>/);
      }
      // The newest first: made at the last tick of the clock.
      assert.match(rows[0]!, /<time datetime="2026-06-01T12:00:11\.000Z">/);
      assert.doesNotMatch(res.body, /second-site/, 'no delivery of another site');

      const other = await owner.get(`/console?site=${secondSite}`);
      const otherRows = bodyRows(section(other.body, 'deliveries-heading') ?? '');
      assert.equal(otherRows.length, 1);
      const [secondId] = await deliveryIds(secondSite);
      assert.match(otherRows[0]!, new RegExp(`href="/console/webhooks/deliveries/${secondId}\\?site=${secondSite}"`));
    });

    it('shows the account\'s last 10 journaled requests at once (the buffer is written first), with a link to the journal', async () => {
      const sites = await t.get('/v1/sites', token);
      assert.equal(sites.statusCode, 200);
      const missing = await t.get('/v1/contacts/999999', token);
      assert.equal(missing.statusCode, 404);

      // No waiting for the journal's batch: the overview flushes it.
      const res = await owner.get('/console');
      assert.equal(res.statusCode, 200, res.body);
      const requests = section(res.body, 'requests-heading');
      assert.ok(requests, 'a Recent requests section in sandbox mode');
      assert.match(requests, /<h2 id="requests-heading">Recent requests<\/h2>/);
      assert.match(requests, /<a href="\/console\/requests">/);
      const rows = bodyRows(requests);
      assert.equal(rows.length, 10, 'the last 10 (the tagging above made more)');
      assert.match(rows[0]!, /<td>GET<\/td>\s*<td class="path"><code>\/v1\/contacts\/999999<\/code><\/td>\s*<td class="num"><span class="status-pending">404<\/span><\/td>/);
      assert.match(rows[1]!, /<td>GET<\/td>\s*<td class="path"><code>\/v1\/sites<\/code><\/td>\s*<td class="num"><span class="status-ok">200<\/span><\/td>/);
      for (const row of rows) {
        assert.ok(row.includes(`<a href="/console/requests?key=${t.tenant.clientId}"><code>${t.tenant.clientId}</code></a> <span class="muted">(test key)</span>`), 'the key, linked to its requests');
        assert.match(row, /<time datetime="[^"]+">/);
      }
      // The same entries as the API's journal, newest first.
      const journal = await t.get('/v1/test_helpers/requests?page[size]=10', token);
      const paths = JSON.parse(journal.body).data.map((e: { attributes: { path: string } }) => e.attributes.path);
      assert.deepEqual(
        rows.map((row) => /<td class="path"><code>([^<]*)<\/code>/.exec(row)?.[1]?.replace(/&amp;/g, '&')),
        paths,
      );
    });
  });

  describe(`console Overview in production mode [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect, { env: { MODE: 'production' } });
    });
    after(() => t.close());

    it('shows recent deliveries but no request journal', async () => {
      await t.get('/v1/sites', await t.token());
      const owner = await signInToConsole(t);
      const res = await owner.get('/console');
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(section(res.body, 'deliveries-heading'));
      assert.equal(section(res.body, 'requests-heading'), undefined);
      assert.doesNotMatch(res.body, /Recent requests/);
    });
  });
}
