// The console's Sandbox pages (/console/sandbox), driven as a signed-in owner over app.inject on a
// demo account with its seed snapshot: a checkout from the form makes the purchase the API then
// shows (a declined one records the failed payment), the clock's advance charges a renewal,
// reset and snapshots put data back, faults really fault API requests, the mailbox shows what a
// checkout sent; bad input comes back with the engine's problems and changes nothing; a post
// without the CSRF token is refused; production mode has no Sandbox page at all.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { builders } from '../support/builders.js';
import { signInToConsole, type ConsoleBrowser } from '../support/console.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { seedDemo } from '../support/snapshots.js';
import { send } from '../support/writes.js';

interface Offer {
  id: string;
  attributes: { title: string; currency: string; payment_type: string };
}

/** The text of the page's notice (what the last action did), unescaped enough for asserts. */
const noticeOf = (body: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(body)?.[1]?.replace(/&#39;/g, "'").replace(/&quot;/g, '"') ?? null;
/** The lines of the page's problem list. */
const problemsOf = (body: string) => [.../<div class="problems" role="alert"><ul>([\s\S]*?)<\/ul><\/div>/.exec(body)?.[1]?.matchAll(/<li>([\s\S]*?)<\/li>/g) ?? []].map((m) => m[1]!);

for (const dialect of DIALECTS) {
  describe(`console: sandbox [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let browser: ConsoleBrowser;
    let site: string;
    let oneTime: Offer[];
    let subscription: Offer;

    before(async () => {
      t = await createTestApp(dialect);
      await seedDemo(t);
      token = await t.token();
      browser = await signInToConsole(t);
      site = `site=${t.tenant.siteId}`;
      oneTime = (await t.get('/v1/offers?filter[payment_type_eq]=one_time&filter[currency_eq]=USD&sort=id&page[size]=2', token)).json().data;
      subscription = (await t.get('/v1/offers?filter[payment_type_eq]=subscription&sort=id&page[size]=1', token)).json().data[0];
      assert.equal(oneTime.length, 2, 'the demo sells one-time offers in USD');
      assert.ok(subscription, 'the demo sells a subscription');
    });
    after(() => t.close());

    const api = async (url: string) => {
      const res = await t.get(url, token);
      return { status: res.statusCode, doc: res.statusCode === 204 ? null : res.json() };
    };
    const count = async (url: string) => ((await api(url)).doc.meta.total_count as number);
    const checkout = (fields: Record<string, string | string[]>, options?: { csrf?: boolean }) =>
      browser.post(`/console/sandbox/checkout?${site}`, { payment_outcome: 'succeeded', ...fields }, options);

    it('is in the nav in sandbox mode, and its form offers the site\'s offers, with coupons and order bumps', async () => {
      const home = await browser.get(`/console?${site}`);
      assert.match(home.body, /<a href="\/console\/sandbox\?site=\d+"[^>]*>Sandbox<\/a>/);
      const page = await browser.get(`/console/sandbox?${site}`);
      assert.equal(page.statusCode, 200, page.body);
      const offers = (await api(`/v1/offers?filter[site_id]=${t.tenant.siteId}&page[size]=100`)).doc.data as Offer[];
      const select = /<select id="checkout-offer"[^>]*>([\s\S]*?)<\/select>/.exec(page.body)?.[1] ?? '';
      assert.equal([...select.matchAll(/<option value="(\d+)"/g)].length, offers.length, 'one option per offer of the site');
      for (const offer of offers) assert.match(page.body, new RegExp(`<input type="checkbox" name="order_bumps" value="${offer.id}"`));
      assert.match(page.body, /<option value="WELCOME10">/);
      assert.match(page.body, /<input type="radio" name="payment_outcome" value="declined"/);
      assert.match(page.body, /<dt>Account time<\/dt><dd><time datetime="2026-06-01T12:00:00.000Z">/);
      for (const sub of ['snapshots', 'faults', 'mailbox']) assert.match(page.body, new RegExp(`href="/console/sandbox/${sub}\\?site=`));
    });

    it('runs a checkout from the form: the purchase, its order bump, transactions and order, as the API then shows them', async () => {
      const [offer, bump] = oneTime as [Offer, Offer];
      const res = await checkout({ offer: offer.id, email: 'Ada@Example.com', name: 'Ada Lovelace', coupon_code: 'welcome10', order_bumps: [bump.id], quantity: '1' });
      assert.equal(res.statusCode, 200, res.body);
      const notice = noticeOf(res.body);
      const ids = /Checkout done: purchase (\d+), (\d+), order (\d+)\./.exec(notice ?? '');
      assert.ok(ids, `notice: ${notice}`);
      const [, purchaseId, bumpPurchaseId, orderId] = ids;

      const purchase = await api(`/v1/purchases/${purchaseId}?include=transactions,customer`);
      assert.equal(purchase.status, 200);
      assert.equal(purchase.doc.data.relationships.offer.data.id, offer.id);
      assert.equal(purchase.doc.data.attributes.coupon_code, 'WELCOME10');
      assert.equal(purchase.doc.data.attributes.source, 'checkout');
      const customer = purchase.doc.included.find((r: { type: string }) => r.type === 'customers');
      assert.equal(customer.attributes.email, 'ada@example.com');
      assert.equal(customer.attributes.name, 'Ada Lovelace');
      const charge = purchase.doc.included.find((r: { type: string }) => r.type === 'transactions');
      assert.equal(charge.attributes.state, 'succeeded');
      assert.equal((await api(`/v1/purchases/${bumpPurchaseId}`)).doc.data.relationships.offer.data.id, bump.id);
      const order = await api(`/v1/orders/${orderId}?include=order_items`);
      assert.equal(order.status, 200);
      assert.equal(order.doc.included.length, 2, 'one item per purchase');

      // The page shows what was made: the purchases, the charge and the order.
      assert.match(res.body, /<h2 id="result-heading">The checkout's records<\/h2>/);
      assert.match(res.body, new RegExp(`<th scope="row">${purchaseId}</th>`));
      assert.match(res.body, new RegExp(`<th scope="row">${charge.id}</th><td>charge</td><td class="status-ok">succeeded</td>`));
      assert.match(res.body, new RegExp(`<h3>Order ${order.doc.data.attributes.order_number}</h3>`));
    });

    it('a declined checkout records the failed payment and makes no purchase', async () => {
      const [offer] = oneTime as [Offer];
      const purchasesBefore = await count('/v1/purchases?page[size]=1');
      const res = await checkout({ offer: offer.id, email: 'declined@example.com', payment_outcome: 'declined' });
      assert.equal(res.statusCode, 200, res.body);
      const failed = /the failed payment is recorded \(transaction (\d+)\)/.exec(noticeOf(res.body) ?? '');
      assert.ok(failed, res.body);
      assert.match(res.body, /<h2 id="result-heading">Declined<\/h2>/);
      const transaction = await api(`/v1/transactions/${failed[1]}?include=customer`);
      assert.equal(transaction.doc.data.attributes.state, 'failed');
      assert.equal(transaction.doc.included[0].attributes.email, 'declined@example.com');
      assert.equal(await count('/v1/purchases?page[size]=1'), purchasesBefore, 'no purchase');
    });

    it('bad checkout input re-renders the form with the engine\'s problems and a 4xx, and writes nothing', async () => {
      const [offer, bump] = oneTime as [Offer, Offer];
      const contacts = await count('/v1/contacts?page[size]=1');
      const transactions = await count('/v1/transactions?page[size]=1');

      const noEmail = await checkout({ offer: offer.id, email: '', name: 'Nobody' });
      assert.equal(noEmail.statusCode, 422, noEmail.body);
      assert.ok(problemsOf(noEmail.body).some((p) => /email/.test(p)), noEmail.body);
      assert.match(noEmail.body, /<input id="checkout-name" name="name" value="Nobody"/, 'the form keeps what was typed');

      const coupon = await checkout({ offer: offer.id, email: 'coupon@example.com', coupon_code: 'FREEBIE' });
      assert.equal(coupon.statusCode, 422);
      assert.deepEqual(problemsOf(coupon.body), [
        'No coupon with code &quot;FREEBIE&quot;; the sandbox knows WELCOME10, SPRING25, PODCAST15, VIPFRIEND',
      ]);
      assert.match(coupon.body, /<option value="\d+" selected>/, 'the chosen offer stays chosen');

      const selfBump = await checkout({ offer: offer.id, email: 'bump@example.com', order_bumps: [offer.id, bump.id] });
      assert.equal(selfBump.statusCode, 422);
      assert.match(problemsOf(selfBump.body)[0]!, /is the offer bought; an order bump is another offer/);

      const noOffer = await checkout({ offer: '', email: 'nooffer@example.com' });
      assert.ok(noOffer.statusCode >= 400 && noOffer.statusCode < 500, String(noOffer.statusCode));
      assert.ok(problemsOf(noOffer.body).some((p) => /offer/.test(p)), noOffer.body);

      const quantity = await checkout({ offer: offer.id, email: 'many@example.com', quantity: 'lots' });
      assert.equal(quantity.statusCode, 422);
      assert.ok(problemsOf(quantity.body).some((p) => /quantity/.test(p)), quantity.body);

      assert.equal(await count('/v1/contacts?page[size]=1'), contacts, 'no contact written');
      assert.equal(await count('/v1/transactions?page[size]=1'), transactions, 'no transaction written');
    });

    it('the mailbox shows the welcome email of a checkout, newest first, and a double opt-in message with its link', async () => {
      const [offer] = oneTime as [Offer];
      const done = await checkout({ offer: offer.id, email: 'mailbox@example.com' });
      assert.equal(done.statusCode, 200, done.body);
      const form = await builders(t).form({ title: 'Sandbox newsletter', double_opt_in: true });
      t.clock.advance(1);
      const submitted = await send(t, 'POST', `/v1/forms/${form}/submit`, token, { data: { type: 'form_submissions', attributes: { name: 'Pat', email: 'pat-optin@example.com' } } });
      assert.equal(submitted.statusCode, 201, submitted.body);

      const page = await browser.get(`/console/sandbox/mailbox?${site}`);
      assert.equal(page.statusCode, 200, page.body);
      const summaries = [...page.body.matchAll(/<summary>([\s\S]*?)<\/summary>/g)].map((m) => m[1]!);
      assert.match(summaries[0]!, /Double opt-in<\/span> to <strong>pat-optin@example.com<\/strong>/, 'newest first');
      const welcome = summaries.findIndex((s) => /Welcome<\/span> to <strong>mailbox@example.com<\/strong>/.test(s));
      assert.ok(welcome > 0, 'the checkout\'s welcome email is listed');
      const { data } = (await api('/v1/test_helpers/messages?filter[kind]=double_opt_in&filter[to]=pat-optin@example.com')).doc;
      const url = data[0].attributes.confirmation_url as string;
      assert.ok(page.body.includes(`<a href="${url}">${url}</a>`), 'the confirmation link is a link');
      assert.match(page.body, /<pre>[^<]*mailbox@example.com|<pre>[\s\S]*?<\/pre>/, 'each message shows its body');

      const bad = await browser.get(`/console/sandbox/mailbox?${site}&page=zero`);
      assert.equal(bad.statusCode, 400);
    });

    it('advances the clock by P1M: the renewal of a subscription bought from the form is charged and shown', async () => {
      const bought = await checkout({ offer: subscription.id, email: 'monthly@example.com' });
      assert.equal(bought.statusCode, 200, bought.body);
      const purchaseId = /Checkout done: purchase (\d+)/.exec(noticeOf(bought.body) ?? '')![1];
      const customerId = (await api(`/v1/purchases/${purchaseId}`)).doc.data.relationships.customer.data.id as string;
      const charges = () => count(`/v1/transactions?filter[customer_id]=${customerId}&filter[action_eq]=subscription_charge&page[size]=1`);
      assert.equal(await charges(), 1);
      const before = (await api('/v1/test_helpers/clock')).doc.data.attributes.now as string;

      const res = await browser.post(`/console/sandbox/clock?${site}`, { advance_by: 'P1M' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(await charges(), 2, 'the renewal is charged');
      const clock = (await api('/v1/test_helpers/clock')).doc.data.attributes;
      assert.equal(clock.now, new Date(new Date(before).setUTCMonth(new Date(before).getUTCMonth() + 1)).toISOString());
      assert.match(noticeOf(res.body)!, /^The clock moved 30 days forward, from 2026-06-01 12:00:0\d UTC to 2026-07-01 12:00:0\d UTC\.$/);
      assert.match(res.body, /<h2 id="due-heading">What fell due<\/h2>/);
      const renewal = (await api(`/v1/transactions?filter[customer_id]=${customerId}&filter[action_eq]=subscription_charge&sort=-created_at&page[size]=1`)).doc.data[0];
      assert.match(res.body, new RegExp(`<th scope="row">${renewal.id}</th><td>subscription_charge</td><td class="status-ok">succeeded</td>`));
      assert.ok(res.body.includes('monthly@example.com'));
      assert.match(res.body, /<dt>Ahead by<\/dt><dd>30 days/);
    });

    it('refuses to move the clock back or by a bad duration, showing the problem and changing nothing', async () => {
      const before = (await api('/v1/test_helpers/clock')).doc.data.attributes.offset_seconds;
      const back = await browser.post(`/console/sandbox/clock?${site}`, { advance_to: '2020-01-01T00:00:00Z' });
      assert.equal(back.statusCode, 422, back.body);
      assert.match(problemsOf(back.body)[0]!, /^The account clock only moves forward/);
      const bad = await browser.post(`/console/sandbox/clock?${site}`, { advance_by: 'one month' });
      assert.equal(bad.statusCode, 422);
      assert.match(problemsOf(bad.body)[0]!, /^advance_by /);
      assert.match(bad.body, /<input id="advance-by" name="advance_by" value="one month"/);
      const neither = await browser.post(`/console/sandbox/clock?${site}`, {});
      assert.equal(neither.statusCode, 422);
      assert.equal((await api('/v1/test_helpers/clock')).doc.data.attributes.offset_seconds, before);
    });

    it('saves, restores and deletes a snapshot, each destructive step confirmed first', async () => {
      const saved = await browser.post(`/console/sandbox/snapshots?${site}`, { name: 'before-contact' });
      assert.equal(saved.statusCode, 303, saved.body);
      assert.equal(saved.headers.location, `/console/sandbox/snapshots?done=saved&${site}`);
      const list = await browser.get(saved.headers.location as string);
      assert.equal(noticeOf(list.body), 'The snapshot is saved.');
      assert.match(list.body, /<th scope="row">before-contact<\/th>/);
      assert.deepEqual(((await api('/v1/test_helpers/snapshots')).doc.data as Array<{ id: string }>).map((s) => s.id), ['seed', 'before-contact']);

      const duplicate = await browser.post(`/console/sandbox/snapshots?${site}`, { name: 'before-contact' });
      assert.equal(duplicate.statusCode, 409);
      const reserved = await browser.post(`/console/sandbox/snapshots?${site}`, { name: 'seed' });
      assert.equal(reserved.statusCode, 422);
      assert.equal(problemsOf(reserved.body).length, 1);
      const badName = await browser.post(`/console/sandbox/snapshots?${site}`, { name: '../x' });
      assert.equal(badName.statusCode, 422);
      assert.match(badName.body, /<input id="snapshot-name" name="name" value="..\/x"/);

      const created = await send(t, 'POST', '/v1/contacts', token, {
        data: { type: 'contacts', attributes: { email: 'after-snapshot@example.com' }, relationships: { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } } },
      });
      assert.equal(created.statusCode, 201);
      const contactId = created.json().data.id as string;

      const confirm = await browser.get(`/console/sandbox/snapshots/before-contact/restore?${site}`);
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, /<h3>What is kept<\/h3>/);
      assert.match(confirm.body, /<li><code>api_keys<\/code>: /);
      assert.match(confirm.body, /<li><code>webhook_deliveries<\/code>: /);
      assert.match(confirm.body, /<li><code>request_journal<\/code>: /);
      assert.match(confirm.body, /<form method="post" action="\/console\/sandbox\/snapshots\/before-contact\/restore\?site=\d+"/);
      assert.equal((await api(`/v1/contacts/${contactId}`)).status, 200, 'the confirmation page changes nothing');

      const restored = await browser.post(`/console/sandbox/snapshots/before-contact/restore?${site}`);
      assert.equal(restored.statusCode, 200, restored.body);
      assert.match(noticeOf(restored.body)!, /^Restored snapshot before-contact\. [\d,]+ rows put back in [\d,]+ ms/);
      assert.equal((await api(`/v1/contacts/${contactId}`)).status, 404, 'the contact made after the snapshot is gone');

      const confirmDelete = await browser.get(`/console/sandbox/snapshots/before-contact/delete?${site}`);
      assert.equal(confirmDelete.statusCode, 200);
      assert.match(confirmDelete.body, /can no longer be restored/);
      const deleted = await browser.post(`/console/sandbox/snapshots/before-contact/delete?${site}`);
      assert.equal(deleted.statusCode, 303);
      assert.equal(deleted.headers.location, `/console/sandbox/snapshots?done=deleted&${site}`);
      assert.deepEqual(((await api('/v1/test_helpers/snapshots')).doc.data as Array<{ id: string }>).map((s) => s.id), ['seed']);
      assert.equal((await browser.get(`/console/sandbox/snapshots/before-contact/restore?${site}`)).statusCode, 404);
      const seed = await browser.post(`/console/sandbox/snapshots/seed/delete?${site}`);
      assert.equal(seed.statusCode, 409, 'the seed cannot be deleted');
    });

    it('answers a control character in a snapshot name (path or form) with a 400 page, never a 500, and changes nothing', async () => {
      const before = ((await api('/v1/test_helpers/snapshots')).doc.data as Array<{ id: string }>).map((s) => s.id);
      const cases: Array<['GET' | 'POST', string, string]> = [
        ['GET', `/console/sandbox/snapshots/%00/restore?${site}`, 'U+0000'],
        ['POST', `/console/sandbox/snapshots/%00/restore?${site}`, 'U+0000'],
        ['GET', `/console/sandbox/snapshots/a%01/delete?${site}`, 'U+0001'],
        ['POST', `/console/sandbox/snapshots/seed%7F/delete?${site}`, 'U+007F'],
        ['POST', `/console/sandbox/snapshots/%C2%85/delete?${site}`, 'U+0085'],
      ];
      for (const [method, url, character] of cases) {
        const res = method === 'GET' ? await browser.get(url) : await browser.post(url);
        assert.equal(res.statusCode, 400, `${method} ${url}: ${res.body}`);
        assert.match(String(res.headers['content-type']), /^text\/html/, url);
        assert.deepEqual(problemsOf(res.body), [`The path holds the control character ${character}`], url);
      }
      const saved = await browser.post(`/console/sandbox/snapshots?${site}`, { name: 'a\u0000b' });
      assert.equal(saved.statusCode, 400, saved.body);
      assert.deepEqual(problemsOf(saved.body), ['The form field name holds the control character U+0000']);
      assert.deepEqual(((await api('/v1/test_helpers/snapshots')).doc.data as Array<{ id: string }>).map((s) => s.id), before);
    });

    it('resets to the seed after a confirmation naming what is replaced and kept; the key keeps working', async () => {
      const [offer] = oneTime as [Offer];
      const bought = await checkout({ offer: offer.id, email: 'before-reset@example.com' });
      const purchaseId = /Checkout done: purchase (\d+)/.exec(noticeOf(bought.body) ?? '')![1];
      assert.equal((await api(`/v1/purchases/${purchaseId}`)).status, 200);

      const confirm = await browser.get(`/console/sandbox/reset?${site}`);
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, /<h3>What is replaced<\/h3>[\s\S]*<code>purchases<\/code>/);
      assert.match(confirm.body, /<li><code>hooks<\/code>: /);
      const res = await browser.post(`/console/sandbox/reset?${site}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.match(noticeOf(res.body)!, /^Reset done: the data is as it was seeded\. [\d,]+ rows put back/);
      assert.equal((await api(`/v1/purchases/${purchaseId}`)).status, 404, 'the checkout since the seed is gone (and the token still works)');
      assert.equal((await api('/v1/test_helpers/clock')).doc.data.attributes.offset_seconds, 0, 'the clock is back where it was seeded');
    });

    it('creates a fault that really answers API requests, lists it, and deletes it; bad faults are refused', async () => {
      const created = await browser.post(`/console/sandbox/faults?${site}`, { method: 'GET', path: '/v1/contacts*', status: '503', latency_ms: '', times: '1', rate: '' });
      assert.equal(created.statusCode, 303, created.body);
      const faulted = await t.get('/v1/contacts?page[size]=1', token);
      assert.equal(faulted.statusCode, 503);
      assert.equal(faulted.json().errors[0].code, 'fault_injected');
      assert.equal((await t.get('/v1/contacts?page[size]=1', token)).statusCode, 200, 'times 1: spent');

      const page = await browser.get(created.headers.location as string);
      assert.equal(noticeOf(page.body), 'The fault is set up: it applies from the next matching API request on.');
      const faults = (await api('/v1/test_helpers/faults')).doc.data as Array<{ id: string; attributes: Record<string, unknown> }>;
      assert.equal(faults.length, 1);
      assert.deepEqual([faults[0]!.attributes.hits, faults[0]!.attributes.remaining], [1, 0]);
      assert.match(page.body, new RegExp(`<th scope="row">${faults[0]!.id}</th><td>GET</td><td><code>/v1/contacts\\*</code></td><td>503</td>`));

      const forever = await browser.post(`/console/sandbox/faults?${site}`, { method: '', path: '/v1/offers*', status: '429' });
      assert.equal(forever.statusCode, 303);
      assert.equal((await t.get('/v1/offers', token)).statusCode, 429);
      const id = ((await api('/v1/test_helpers/faults')).doc.data as Array<{ id: string }>)[1]!.id;
      const deleted = await browser.post(`/console/sandbox/faults/${id}/delete?${site}`);
      assert.equal(deleted.statusCode, 303);
      assert.equal((await t.get('/v1/offers', token)).statusCode, 200, 'deleted: the requests are served again');
      assert.equal((await browser.post(`/console/sandbox/faults/${id}/delete?${site}`)).statusCode, 404);

      const helpers = await browser.post(`/console/sandbox/faults?${site}`, { path: '/v1/test_helpers/clock', status: '500' });
      assert.equal(helpers.statusCode, 422);
      assert.deepEqual(problemsOf(helpers.body), ['The test helpers (/v1/test_helpers/*) are never faulted']);
      assert.match(helpers.body, /<input id="fault-path" name="path" value="\/v1\/test_helpers\/clock"/);
      const both = await browser.post(`/console/sandbox/faults?${site}`, { path: '/v1/contacts', status: '500', times: '2', rate: '0.5' });
      assert.equal(both.statusCode, 422);
      assert.deepEqual(problemsOf(both.body), ['Give times or rate, not both']);
      const nothing = await browser.post(`/console/sandbox/faults?${site}`, { path: '/v1/contacts', status: '' });
      assert.equal(nothing.statusCode, 422);
      const latency = await browser.post(`/console/sandbox/faults?${site}`, { path: '/v1/contacts', latency_ms: 'slow' });
      assert.equal(latency.statusCode, 422);
      assert.ok(problemsOf(latency.body).some((p) => /latency_ms/.test(p)), latency.body);
      assert.equal((await api('/v1/test_helpers/faults')).doc.data.length, 1, 'no fault was made by the refused forms');
    });

    it('refuses a post without the CSRF token (403) and changes nothing', async () => {
      const [offer] = oneTime as [Offer];
      const contacts = await count('/v1/contacts?page[size]=1');
      const res = await checkout({ offer: offer.id, email: 'forged@example.com' }, { csrf: false });
      assert.equal(res.statusCode, 403);
      assert.equal(await count('/v1/contacts?page[size]=1'), contacts);
      const clock = await browser.post(`/console/sandbox/clock?${site}`, { advance_by: 'P1Y' }, { csrf: false });
      assert.equal(clock.statusCode, 403);
      assert.equal((await api('/v1/test_helpers/clock')).doc.data.attributes.offset_seconds, 0);
      assert.equal((await browser.post(`/console/sandbox/reset?${site}`, {}, { csrf: false })).statusCode, 403);
      assert.equal((await browser.post(`/console/sandbox/faults?${site}`, { path: '/v1/contacts', status: '500' }, { csrf: false })).statusCode, 403);
      assert.equal((await api('/v1/test_helpers/faults')).doc.data.length, 1);
    });
  });

  describe(`console: no sandbox in production mode [${dialect}]`, () => {
    let t: TestApp;
    let browser: ConsoleBrowser;

    before(async () => {
      t = await createTestApp(dialect, { env: { MODE: 'production' } });
      browser = await signInToConsole(t);
    });
    after(() => t.close());

    it('has no Sandbox entry, and every sandbox page and action answers 404, changing nothing', async () => {
      const home = await browser.get('/console');
      assert.equal(home.statusCode, 200);
      assert.doesNotMatch(home.body, /\/console\/sandbox/);
      assert.doesNotMatch(home.body, />Sandbox</);
      for (const path of ['/console/sandbox', '/console/sandbox/snapshots', '/console/sandbox/faults', '/console/sandbox/mailbox', '/console/sandbox/reset']) {
        assert.equal((await browser.get(path)).statusCode, 404, path);
      }
      for (const path of ['/console/sandbox/checkout', '/console/sandbox/clock', '/console/sandbox/reset', '/console/sandbox/snapshots', '/console/sandbox/faults']) {
        assert.equal((await browser.post(path, { advance_by: 'P1M', name: 'x', path: '/v1/contacts', status: '500', email: 'x@example.com' })).statusCode, 404, path);
      }
      const account = await t.handle.db.selectFrom('accounts').select('clock_offset_ms').where('id', '=', t.tenant.accountId).executeTakeFirstOrThrow();
      assert.equal(Number(account.clock_offset_ms), 0);
      assert.equal((await t.handle.db.selectFrom('sandbox_faults').select('id').execute()).length, 0);
    });
  });
}
