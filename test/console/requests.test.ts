// The console's Requests page (/console/requests, sandbox mode): the request journal of the
// account's keys, newest first, as GET /v1/test_helpers/requests answers it; its live fragment
// answers only what was written after the newest entry shown; filters by status, path and key;
// bodies escaped, pretty-printed and redacted as the journal keeps them; no page in production.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PERMISSION_NAMES } from '../../src/auth/permissions.js';
import { signInToConsole, type ConsoleBrowser } from '../support/console.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';

interface Shown {
  id: string;
  status: number;
  method: string;
  path: string;
}

const ENTRY = /<li id="request-(\d+)"><details>\s*<summary><span class="status-\w+">(\d+)<\/span> <code>(\w+)<\/code> <code class="journal-path">([^<]*)<\/code>/g;

const unescape = (text: string) => text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The journal entries a page or fragment shows, in order. */
function entriesOf(body: string): Shown[] {
  return [...body.matchAll(ENTRY)].map((m) => ({ id: m[1]!, status: Number(m[2]), method: m[3]!, path: unescape(m[4]!) }));
}

/** The live poller's URL (hx-get), or undefined when the page has none. */
function pollerOf(body: string): string | undefined {
  const found = /<div id="journal-live" hx-get="([^"]+)"/.exec(body)?.[1];
  return found === undefined ? undefined : unescape(found);
}

for (const dialect of DIALECTS) {
  describe(`console: requests [${dialect}]`, () => {
    let t: TestApp;
    let c: ConsoleBrowser;
    let token: string;

    before(async () => {
      t = await createTestApp(dialect);
      c = await signInToConsole(t);
      token = await t.token();
    });
    after(() => t.close());

    /** The journal's ids through the API, newest written first, with journal filters. */
    const apiIds = async (filters: string): Promise<string[]> => {
      const res = await t.get(`/v1/test_helpers/requests?sort=-id&page[size]=50${filters}`, token);
      assert.equal(res.statusCode, 200, res.body);
      return (res.json() as { data: Array<{ id: string }> }).data.map((e) => e.id);
    };

    it('lists the requests made with a key, newest first, each opening to its bodies, escaped, pretty-printed and redacted', async () => {
      const created = await t.request({
        method: 'POST',
        url: '/v1/contacts',
        token,
        payload: { data: { type: 'contacts', attributes: { email: 'bold@example.com', name: '<b>Bold</b> & co' }, relationships: { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } } } },
      });
      assert.equal(created.statusCode, 201, created.body);
      assert.equal((await t.get('/v1/contacts/999999', token)).statusCode, 404);

      const page = await c.get('/console/requests');
      assert.equal(page.statusCode, 200, page.body);
      assert.match(page.body, /<a href="\/console\/requests[^"]*" aria-current="page">Requests<\/a>/);
      const shown = entriesOf(page.body);
      assert.deepEqual(
        shown.slice(0, 3).map((e) => `${e.method} ${e.path} ${e.status}`),
        ['GET /v1/contacts/999999 404', 'POST /v1/contacts 201', 'POST /v1/oauth/token 200'],
      );
      assert.deepEqual(shown.map((e) => e.id), await apiIds(''), 'the same entries as the API, in write order');
      assert.ok(!shown.some((e) => e.path.startsWith('/console')), 'the console\'s own requests are not journaled');

      // The request body, pretty-printed and escaped: the name's markup is text, never markup.
      assert.match(page.body, /<pre>\{\n {2}&quot;data&quot;: \{\n {4}&quot;type&quot;: &quot;contacts&quot;/);
      assert.ok(page.body.includes('&quot;name&quot;: &quot;&lt;b&gt;Bold&lt;/b&gt; &amp; co&quot;'), 'the body is escaped');
      assert.ok(!page.body.includes('<b>Bold</b>'));
      // The token request's secrets as the journal stores them: redacted, never the real ones.
      assert.ok(page.body.includes('&quot;client_secret&quot;: &quot;[redacted]&quot;'));
      assert.ok(page.body.includes('&quot;access_token&quot;: &quot;[redacted]&quot;'));
      assert.ok(!page.body.includes(t.tenant.clientSecret), 'no client secret on the page');
      assert.ok(!page.body.includes(token), 'no access token on the page');
      // Each entry opens (details) to the key and request id.
      assert.match(page.body, new RegExp(`<dt>Key</dt><dd>test key <code>${t.tenant.clientId}</code></dd>`));
      assert.ok(page.body.includes(`<code>${String(created.headers['x-request-id'])}</code>`));
    });

    it('the live fragment answers only what was written after the newest entry shown, for prepending', async () => {
      const page = await c.get('/console/requests');
      const newest = entriesOf(page.body)[0]!;
      const poller = pollerOf(page.body);
      assert.equal(poller, `/console/requests/live?after=${newest.id}`);
      assert.match(page.body, /hx-trigger="every 1s" hx-swap="outerHTML"/);

      const quiet = await c.get(poller);
      assert.equal(quiet.statusCode, 204, 'nothing new: nothing to swap');
      assert.equal(quiet.body, '');

      await t.get('/v1/sites', token);
      await t.get('/v1/contacts?page[size]=1', token);
      const live = await c.get(poller);
      assert.equal(live.statusCode, 200, live.body);
      const fresh = entriesOf(live.body);
      assert.deepEqual(fresh.map((e) => `${e.method} ${e.path}`), ['GET /v1/contacts?page[size]=1', 'GET /v1/sites'], 'only the new entries, newest first');
      assert.ok(fresh.every((e) => Number(e.id) > Number(newest.id)));
      assert.match(live.body, /<ol hx-swap-oob="afterbegin:#journal-entries">/, 'prepended to the list, leaving opened entries alone');
      // The next poll asks from the newest entry now shown.
      const next = pollerOf(live.body);
      assert.equal(next, `/console/requests/live?after=${fresh[0]!.id}`);
      assert.match(live.body, /role="status">Live: [^<]*2 new requests/);
      assert.equal((await c.get(next)).statusCode, 204);
    });

    it('filters by status, path and key as the journal does; the live fragment keeps the filters', async () => {
      const other = await t.keyWith(t.tenant.ownerId, PERMISSION_NAMES);
      await t.get('/v1/contact_tags', other.token);
      await t.get('/v1/contacts/424242', other.token);
      await t.get('/v1/offers/424242', token);

      const byStatus = await c.get('/console/requests?status=404');
      assert.equal(byStatus.statusCode, 200);
      const notFound = entriesOf(byStatus.body);
      assert.ok(notFound.length >= 3);
      assert.ok(notFound.every((e) => e.status === 404));
      assert.deepEqual(notFound.map((e) => e.id), await apiIds('&filter[status]=404'));
      assert.match(byStatus.body, /<input id="journal-status" name="status" value="404"/, 'the form keeps the filter');

      const classes = entriesOf((await c.get('/console/requests?status=2xx')).body);
      assert.ok(classes.length > 0 && classes.every((e) => e.status >= 200 && e.status < 300));

      const byPath = entriesOf((await c.get('/console/requests?path=424242')).body);
      assert.deepEqual(byPath.map((e) => e.path), ['/v1/offers/424242', '/v1/contacts/424242'], 'path contains');

      const keyPage = await c.get(`/console/requests?key=${other.clientId}`);
      assert.match(keyPage.body, new RegExp(`<option value="${other.clientId}" selected>scoped key \\(${other.clientId}\\)</option>`));
      assert.match(keyPage.body, new RegExp(`<option value="${t.tenant.clientId}">test key`), 'every key of the account is a choice');
      const byKey = entriesOf(keyPage.body);
      assert.deepEqual(byKey.map((e) => `${e.method} ${e.path}`), ['GET /v1/contacts/424242', 'GET /v1/contact_tags', 'POST /v1/oauth/token']);
      assert.deepEqual(byKey.map((e) => e.id), await apiIds(`&filter[client_id]=${other.clientId}`));

      const both = entriesOf((await c.get(`/console/requests?key=${other.clientId}&status=4xx&path=contacts`)).body);
      assert.deepEqual(both.map((e) => e.path), ['/v1/contacts/424242']);

      // Live with a filter: another key's request is not news; this key's is.
      const poller = pollerOf(keyPage.body)!;
      assert.ok(poller.includes(`key=${other.clientId}`), poller);
      await t.get('/v1/sites', token);
      assert.equal((await c.get(poller)).statusCode, 204);
      await t.get('/v1/sites', other.token);
      const live = entriesOf((await c.get(poller)).body);
      assert.deepEqual(live.map((e) => `${e.method} ${e.path}`), ['GET /v1/sites']);
    });

    it('marks requests the upstream API would not accept, with the reason, and filters on it', async () => {
      await t.get('/v1/offers?filter[title_eq]=upstream-mark', token);
      await t.get('/v1/offers?filter[title_cont]=upstream-mark', token);
      const page = await c.get('/console/requests?upstream=false&path=upstream-mark');
      assert.equal(page.statusCode, 200);
      assert.deepEqual(entriesOf(page.body).map((e) => e.path), ['/v1/offers?filter[title_eq]=upstream-mark']);
      assert.match(page.body, /<span class="status-pending" title="filter\[title_eq\] is a sitebiz extension">not upstream<\/span>/);
      assert.match(page.body, /<dt>Upstream<\/dt><dd>No: filter\[title_eq\] is a sitebiz extension/);
      assert.match(page.body, /<option value="false" selected>Not upstream \(sitebiz extensions\)<\/option>/, 'the form keeps the filter');
      const upstream = await c.get('/console/requests?upstream=true&path=upstream-mark');
      assert.deepEqual(entriesOf(upstream.body).map((e) => e.path), ['/v1/offers?filter[title_cont]=upstream-mark']);
      assert.doesNotMatch(upstream.body, /not upstream<\/span>/);
      assert.deepEqual(entriesOf(page.body).map((e) => e.id), await apiIds('&filter[upstream]=false&filter[path]=/v1/offers?filter[title_eq]=upstream'));
    });

    it('shows a filter the journal refuses as a problem on the page, with 400', async () => {
      const bad = await c.get('/console/requests?status=abc');
      assert.equal(bad.statusCode, 400);
      assert.match(bad.body, /<div class="problems" role="alert"><ul><li>Status: filter\[status\] takes statuses such as 503 or classes such as 5xx, got &quot;abc&quot;<\/li>/);
      assert.match(bad.body, /<form method="get" action="\/console\/requests"/, 'the form is still there to correct it');
      assert.deepEqual(entriesOf(bad.body), []);
      assert.equal(pollerOf(bad.body), undefined);
    });

    it('pages to older requests with cursors, never repeating one; only the newest page is live', async () => {
      for (let i = 0; i < 55; i++) await t.get(`/v1/sites?page[size]=${i + 1}`, token);
      const first = await c.get('/console/requests');
      const firstIds = entriesOf(first.body).map((e) => e.id);
      assert.equal(firstIds.length, 50);
      const older = /<a href="(\/console\/requests\?older=[^"]+)">Older requests<\/a>/.exec(first.body)?.[1];
      assert.ok(older, 'a link to older requests');
      const second = await c.get(unescape(older));
      assert.equal(second.statusCode, 200);
      const secondIds = entriesOf(second.body).map((e) => e.id);
      assert.ok(secondIds.length > 0);
      assert.equal(new Set([...firstIds, ...secondIds]).size, firstIds.length + secondIds.length, 'no entry twice');
      const all = [...firstIds, ...secondIds].map(Number);
      assert.deepEqual(all, [...all].sort((a, b) => b - a), 'newest written first throughout');
      assert.equal(pollerOf(second.body), undefined, 'older pages are not live');
      assert.match(second.body, /<a href="\/console\/requests">Newest requests<\/a>/);
    });
  });

  describe(`console: no requests page in production mode [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect, { env: { MODE: 'production' } });
    });
    after(() => t.close());

    it('has no Requests entry in the navigation and answers 404 to its addresses', async () => {
      const c = await signInToConsole(t);
      await t.get('/v1/sites', await t.token());
      const home = await c.get('/console');
      assert.equal(home.statusCode, 200);
      assert.ok(!home.body.includes('href="/console/requests'), 'no nav entry');
      assert.equal((await c.get('/console/requests')).statusCode, 404);
      assert.equal((await c.get('/console/requests/live?after=0')).statusCode, 404);
    });
  });
}
