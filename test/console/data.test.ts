// The console's Data page (/console/data?site=): contacts, customers, purchases and transactions
// of a site through the API's own engine: the rows the API lists for the same query, searched,
// filtered, sorted and paged with cursors; a filter the engine refuses is a problem on the page
// (400); one record at /console/data/<type>/<id>; a user limited to another site cannot browse
// this one; and a data page costs the statements of the API list it mirrors, no more.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSite, createUser } from '../../src/domain/accounts.js';
import { builders } from '../support/builders.js';
import { signInToConsole, type ConsoleBrowser } from '../support/console.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';

const CONTACTS = 30;

const unescape = (text: string) => text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The ids of the rows a data page lists, in order (each row's first cell links to its record). */
function rowIdsOf(body: string, type: string): string[] {
  return [...body.matchAll(new RegExp(`<tr><th scope="row"><a href="/console/data/${type}/(\\d+)\\?site=\\d+">`, 'g'))].map((m) => m[1]!);
}

/** A pager link (rel="next" / rel="prev"), unescaped, or undefined. */
function pagerLink(body: string, rel: 'next' | 'prev'): string | undefined {
  const found = new RegExp(`<a href="([^"]+)" rel="${rel}">`).exec(body)?.[1];
  return found === undefined ? undefined : unescape(found);
}

for (const dialect of DIALECTS) {
  describe(`console: data [${dialect}]`, () => {
    let t: TestApp;
    let c: ConsoleBrowser;
    let token: string;
    let site: number;
    let vip: number;
    const vipContacts: number[] = [];
    let courseA: number;
    let courseB: number;
    let ada: { id: number; contactId: number };
    let grace: { id: number; contactId: number };
    const adaPurchases: number[] = [];
    let refundId: number;
    let failedId: number;
    let deactivatedId: number;

    before(async () => {
      // The API's statements are compared with the console's: without the answer cache, whose
      // hits would leave the API's side with the token's statement only.
      t = await createTestApp(dialect, { env: { ANSWER_CACHE_MB: '0' } });
      site = t.tenant.siteId;
      const b = builders(t);
      vip = await b.tag('VIP');
      await b.tag('Newsletter');
      for (let i = 0; i < CONTACTS; i++) {
        const id = await b.contact({
          name: `Person ${String(i).padStart(2, '0')}`,
          email: `person${String(i).padStart(2, '0')}@example.com`,
          subscribed: i % 3 === 0,
          created_at: b.daysAgo(CONTACTS - i),
        });
        if (i % 5 === 0) {
          await b.tagging(id, vip);
          vipContacts.push(id);
        }
      }
      await b.contact({ name: '<i>Mallory</i> & Co', email: 'mallory@example.com' });
      courseA = await b.offer({ title: 'Course A' });
      courseB = await b.offer({ title: 'Course B' });
      ada = await b.customer({ name: 'Ada Lovelace', email: 'ada@example.com', created_at: b.daysAgo(3) });
      grace = await b.customer({ name: 'Grace Hopper', email: 'grace@example.com', created_at: b.daysAgo(2) });
      for (let i = 0; i < 3; i++) {
        const id = await b.purchase({ customerId: ada.id, offerId: courseA, amount_in_cents: 4900, created_at: b.daysAgo(2, -i * 1000) });
        adaPurchases.push(id);
        await b.transaction({ customerId: ada.id, offerId: courseA, amount_in_cents: 4900, purchaseIds: [id], created_at: b.daysAgo(2, -i * 1000) });
      }
      deactivatedId = await b.purchase({ customerId: grace.id, offerId: courseB, amount_in_cents: 9900, coupon_code: 'SPRING', deactivated: true });
      failedId = await b.transaction({ customerId: grace.id, offerId: courseB, amount_in_cents: 9900, state: 'failed' });
      refundId = await b.transaction({ customerId: ada.id, offerId: courseA, amount_in_cents: 4900, action: 'refund' });
      c = await signInToConsole(t);
      token = await t.token();
    });
    after(() => t.close());

    /** The ids the API lists for a query (cursor paging, as the console asks). */
    const apiIds = async (type: string, query: string): Promise<string[]> => {
      const res = await t.get(`/v1/${type}?filter[site_id]=${site}&page[size]=100&page[after]=${query}`, token);
      assert.equal(res.statusCode, 200, res.body);
      return (res.json() as { data: Array<{ id: string }> }).data.map((r) => r.id);
    };

    const page = async (url: string, status = 200) => {
      const res = await c.get(url);
      assert.equal(res.statusCode, status, `${url}: ${res.body.slice(0, 2000)}`);
      return res.body;
    };

    it('lists a site\'s contacts newest first, escaped, each linking to its record', async () => {
      const body = await page(`/console/data?site=${site}`);
      assert.match(body, /<a href="\/console\/data[^"]*" aria-current="page">Data<\/a>/);
      assert.match(body, /<a href="\/console\/data\?type=contacts&amp;site=\d+" aria-current="page">Contacts<\/a>/);
      const ids = rowIdsOf(body, 'contacts');
      assert.equal(ids.length, 25, 'a page of 25');
      assert.deepEqual(ids, (await apiIds('contacts', '&sort=-created_at')).slice(0, 25));
      assert.match(body, /&lt;i&gt;Mallory&lt;\/i&gt; &amp; Co/, 'names are text, never markup');
      assert.ok(!body.includes('<i>Mallory</i>'));
      assert.match(body, /role="status">3[3-9] contacts in this site\.<\/p>/);
      assert.match(body, /<th scope="col">Name<\/th><th scope="col">Email<\/th><th scope="col">Subscribed<\/th><th scope="col">Created<\/th>/);
    });

    it('searches and filters as the API does', async () => {
      const search = rowIdsOf(await page(`/console/data?site=${site}&search=person+07`), 'contacts');
      assert.equal(search.length, 1);
      assert.deepEqual(search, await apiIds('contacts', '&filter[search]=person%2007'));

      const tagged = await page(`/console/data?site=${site}&tag=${vip}&size=100`);
      assert.deepEqual(rowIdsOf(tagged, 'contacts').map(Number).sort((a, b) => a - b), vipContacts);
      assert.match(tagged, new RegExp(`<option value="${vip}" selected>VIP</option>`), 'the tag is chosen in the form');
      assert.match(tagged, /role="status">6 contacts match\.<\/p>/);

      const subscribed = rowIdsOf(await page(`/console/data?site=${site}&subscribed=true&size=100`), 'contacts');
      assert.equal(subscribed.length, 10);
      assert.deepEqual(subscribed, await apiIds('contacts', '&filter[subscribed]=true&sort=-created_at'));

      const byEmail = rowIdsOf(await page(`/console/data?site=${site}&email=mallory`), 'contacts');
      assert.equal(byEmail.length, 1);

      const customers = await page(`/console/data?site=${site}&type=customers&search=ada`);
      assert.equal(rowIdsOf(customers, 'customers').length, 1);
      assert.match(customers, /<td class="num">98\.0<\/td>/, 'net revenue: three charges less a refund, as the API renders it');

      const rich = rowIdsOf(await page(`/console/data?site=${site}&type=customers&revenue_over=50`), 'customers');
      assert.deepEqual(rich, [String(ada.id)]);
    });

    it('filters purchases by offer and state, and transactions by action, state and customer', async () => {
      const ofA = rowIdsOf(await page(`/console/data?site=${site}&type=purchases&offer=${courseA}`), 'purchases');
      assert.deepEqual(ofA.map(Number).sort((a, b) => a - b), adaPurchases);
      const offers = await page(`/console/data?site=${site}&type=purchases`);
      assert.match(offers, new RegExp(`<option value="${courseA}">Course A</option><option value="${courseB}">Course B</option>`), 'the site\'s offers are the choices');
      assert.match(offers, new RegExp(`<a href="/console/data/offers/${courseA}\\?site=${site}">offer ${courseA}</a>`), 'the offer links to its record');
      assert.deepEqual(rowIdsOf(await page(`/console/data?site=${site}&type=purchases&active=false`), 'purchases'), [String(deactivatedId)]);
      assert.deepEqual(rowIdsOf(await page(`/console/data?site=${site}&type=purchases&coupon=spring`), 'purchases'), [String(deactivatedId)]);
      assert.equal(rowIdsOf(await page(`/console/data?site=${site}&type=purchases&active=true`), 'purchases').length, 3);

      assert.deepEqual(rowIdsOf(await page(`/console/data?site=${site}&type=transactions&action=refund`), 'transactions'), [String(refundId)]);
      const failed = await page(`/console/data?site=${site}&type=transactions&state=failed`);
      assert.deepEqual(rowIdsOf(failed, 'transactions'), [String(failedId)]);
      assert.match(failed, /<span class="status-failed">failed<\/span>/);
      assert.match(failed, /<td class="num">\$99\.00<\/td>/);
      const ofGrace = rowIdsOf(await page(`/console/data?site=${site}&type=transactions&customer=${grace.id}`), 'transactions');
      assert.deepEqual(ofGrace, [String(failedId)]);
      const byName = rowIdsOf(await page(`/console/data?site=${site}&type=transactions&search=lovelace`), 'transactions');
      assert.equal(byName.length, 4, 'three charges and a refund of Ada');
    });

    it('sorts, and pages with cursors: each next page holds the next records, none twice, and previous goes back', async () => {
      const expected = await apiIds('contacts', '&sort=name');
      let url: string | undefined = `/console/data?site=${site}&sort=name&size=10`;
      const seen: string[][] = [];
      while (url) {
        const body = await page(url);
        seen.push(rowIdsOf(body, 'contacts'));
        url = pagerLink(body, 'next');
        if (url) assert.match(url, /^\/console\/data\?type=contacts&sort=name&size=10&after=[^&]+&site=\d+$/, 'a next link carries the cursor, the sort, the size and the site');
      }
      assert.equal(seen.length, Math.ceil(expected.length / 10));
      assert.deepEqual(seen.flat(), expected, 'every contact once, in name order');
      assert.equal(new Set(seen.flat()).size, seen.flat().length, 'no duplicates');

      const first = await page(`/console/data?site=${site}&sort=name&size=10`);
      assert.equal(pagerLink(first, 'prev'), undefined, 'nothing before the first page');
      const second = await page(pagerLink(first, 'next')!);
      const back = await page(pagerLink(second, 'prev')!);
      assert.deepEqual(rowIdsOf(back, 'contacts'), seen[0]);
      const last = /<a href="([^"]+)">Last<\/a>/.exec(first)?.[1];
      assert.ok(last);
      assert.deepEqual(rowIdsOf(await page(unescape(last)), 'contacts'), expected.slice(-10), 'the last page: the last 10');

      const byAmount = rowIdsOf(await page(`/console/data?site=${site}&type=transactions&sort=-amount_in_cents`), 'transactions');
      assert.deepEqual(byAmount, await apiIds('transactions', '&sort=-amount_in_cents'));
      assert.equal(byAmount[0], String(failedId), 'the largest amount first');
    });

    it('shows a filter or sort the engine refuses as a problem on the page, with 400', async () => {
      const revenue = await page(`/console/data?site=${site}&type=customers&revenue_over=lots`, 400);
      assert.match(revenue, /<div class="problems" role="alert"><ul><li>Net revenue over: filter\[net_revenue_greater_than\] must be an amount such as 25 or 25\.50, got &quot;lots&quot;<\/li>/);
      assert.match(revenue, /<input id="data-revenue-over" name="revenue_over" value="lots"/, 'the form keeps what was typed');
      assert.deepEqual(rowIdsOf(revenue, 'customers'), []);

      const sort = await page(`/console/data?site=${site}&sort=shoe_size`, 400);
      assert.match(sort, /<li>Sort: [^<]*shoe_size/);
      const cents = await page(`/console/data?site=${site}&type=transactions&min_cents=ten`, 400);
      assert.match(cents, /<li>Amount at least \(cents\): /);
      const cursor = await page(`/console/data?site=${site}&after=not-a-cursor`, 400);
      assert.match(cursor, /<li>Page: page\[after\] is not a cursor of this list/);
      await page(`/console/data?site=${site}&type=invoices`, 404);
    });

    it('shows one record: attributes as a definition list, relationships as links, and the lists that name it', async () => {
      const purchase = await page(`/console/data/purchases/${adaPurchases[0]}?site=${site}`);
      assert.match(purchase, new RegExp(`<h1>Purchase ${adaPurchases[0]}</h1>`));
      assert.match(purchase, /<dt>amount_in_cents<\/dt><dd>4900<\/dd>/);
      assert.match(purchase, /<dt>raw_extra_contact_information<\/dt><dd><pre>\{\}<\/pre><\/dd>/);
      assert.match(purchase, new RegExp(`<dt>offer</dt><dd><a href="/console/data/offers/${courseA}\\?site=${site}">offer ${courseA}</a></dd>`));
      assert.match(purchase, new RegExp(`<dt>customer</dt><dd><a href="/console/data/customers/${ada.id}\\?site=${site}">customer ${ada.id}</a></dd>`));

      const customer = await page(`/console/data/customers/${ada.id}?site=${site}`);
      assert.match(customer, /<dt>name<\/dt><dd>Ada Lovelace<\/dd>/);
      assert.match(customer, new RegExp(`<dt>contact</dt><dd><a href="/console/data/contacts/${ada.contactId}\\?site=${site}">contact ${ada.contactId}</a></dd>`));
      const purchasesOfAda = /<a href="(\/console\/data\?type=purchases&amp;customer=\d+&amp;site=\d+)">Purchases with customer/.exec(customer)?.[1];
      assert.ok(purchasesOfAda, 'a link to the customer\'s purchases');
      assert.deepEqual(rowIdsOf(await page(unescape(purchasesOfAda)), 'purchases').map(Number).sort((a, b) => a - b), adaPurchases);

      const mallory = await page(`/console/data?site=${site}&search=mallory`);
      const [malloryId] = rowIdsOf(mallory, 'contacts');
      const contact = await page(`/console/data/contacts/${malloryId}?site=${site}`);
      assert.match(contact, /<dt>name<\/dt><dd>&lt;i&gt;Mallory&lt;\/i&gt; &amp; Co<\/dd>/);

      await page(`/console/data/contacts/999999?site=${site}`, 404);
      await page(`/console/data/requests/1?site=${site}`, 404);
    });

    it('does not let a user limited to another site browse this one', async () => {
      const otherSite = await createSite(t.handle, { accountId: t.tenant.accountId, title: 'Second Site', subdomain: `second-${dialect}-${Date.now()}` }, t.clock);
      await builders(t, otherSite).contact({ name: 'Only There', email: 'only@example.com' });
      const assistant = await createUser(t.handle, { accountId: t.tenant.accountId, name: 'Sam Assistant', email: 'sam@example.com', role: 'assistant', siteIds: [otherSite] }, t.clock);
      const sam = await signInToConsole(t, assistant);

      const refused = await sam.get(`/console/data?site=${site}`);
      assert.equal(refused.statusCode, 404);
      assert.ok(!refused.body.includes('Person 0'), 'nothing of the site is shown');
      assert.equal((await sam.get(`/console/data?site=${site}&type=purchases`)).statusCode, 404);
      assert.equal((await sam.get(`/console/data/contacts/${ada.contactId}?site=${otherSite}`)).statusCode, 404, 'a record of this site is not found');
      assert.equal((await sam.get(`/console/data/contacts/${ada.contactId}`)).statusCode, 404);

      const own = await sam.get(`/console/data?site=${otherSite}`);
      assert.equal(own.statusCode, 200);
      assert.equal(rowIdsOf(own.body, 'contacts').length, 1);
      assert.ok(own.body.includes('Only There'));
      // Without ?site=, the user's own site.
      const byDefault = await sam.get('/console/data');
      assert.equal(byDefault.statusCode, 200);
      assert.ok(byDefault.body.includes('Only There') && !byDefault.body.includes('Person 0'));
    });

    it('issues the statements of the API list it mirrors, and only page overhead besides', async () => {
      const cases = [
        { type: 'contacts', console: `type=contacts&search=person+1&sort=name&size=10`, api: 'filter[search]=person%201&sort=name&fields[contacts]=name,email,subscribed,created_at&page[size]=10&page[after]=' },
        { type: 'customers', console: `type=customers&sort=-net_revenue`, api: 'sort=-net_revenue&fields[customers]=name,email,net_revenue,last_request_at,created_at&page[size]=25&page[after]=' },
        { type: 'purchases', console: `type=purchases&active=true`, api: 'filter[active]=true&sort=-created_at&fields[purchases]=created_at,amount_in_cents,currency,payment_type,deactivated_at,coupon_code&page[size]=25&page[after]=' },
        { type: 'transactions', console: `type=transactions&state=succeeded`, api: 'filter[state_eq]=succeeded&sort=-created_at&fields[transactions]=created_at,action,state,formatted_amount&page[size]=25&page[after]=' },
      ];
      for (const k of cases) {
        const consoleUrl = `/console/data?site=${site}&${k.console}`;
        const apiUrl = `/v1/${k.type}?filter[site_id]=${site}&${k.api}`;
        // Both once first, so that both find the same caches (filtered counts, compiled shapes).
        await page(consoleUrl);
        assert.equal((await t.get(apiUrl, token)).statusCode, 200);
        const viaConsole = await t.queries.during(() => c.get(consoleUrl));
        const viaApi = await t.queries.during(() => t.get(apiUrl, token));
        assert.equal(viaConsole.result.statusCode, 200);
        assert.equal(viaApi.result.statusCode, 200);
        assert.deepEqual(rowIdsOf(viaConsole.result.body, k.type), (viaApi.result.json() as { data: Array<{ id: string }> }).data.map((r) => r.id));

        // The API's statements, less its token check (the console checks its session instead).
        const [tokenCheck, ...listStatements] = viaApi.statements;
        assert.match(tokenCheck!, /from "oauth_grants"/);
        const extra = [...viaConsole.statements];
        for (const statement of listStatements) {
          const at = extra.indexOf(statement);
          assert.ok(at >= 0, `${k.type}: the console issues the API's statement ${statement}`);
          extra.splice(at, 1);
        }
        // Besides: the session and the sites it reaches (the API's token statement reads its sites
        // itself), the frame's site list, and a filter's choices (the site's tags, or its offers
        // with their products' linkage), at most 100 rows each whatever the list's size.
        const overhead = /from "console_sessions"|from "sites"|from "user_sites"|from "site_counters"|from "contact_tags"|from "offers"|from "offer_products"/;
        assert.deepEqual(extra.filter((s) => !overhead.test(s)), [], `${k.type}: nothing else`);
        assert.ok(!extra.some((s) => s.includes(`from "${k.type}"`)), `${k.type}: no other read of the listed table`);
        assert.ok(extra.length <= 6, `${k.type}: ${extra.length} statements of overhead`);
      }
    });
  });
}
