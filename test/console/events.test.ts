// The console's Events page over HTTP, signed in: a site's webhook events as GET /v1/events lists
// them, newest first, each opening (<details>) to its payload as pretty, escaped JSON; cursor pages
// forwards and back; a filter by event type; an edited cursor is a 400 with the engine's problem;
// and a user limited to another site sees none of this site's events.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createSite, createUser } from '../../src/domain/accounts.js';
import { builders } from '../support/builders.js';
import { signInToConsole, type ConsoleBrowser } from '../support/console.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { addTag } from '../support/webhooks.js';
import { send } from '../support/writes.js';

const unescape = (text: string) => text.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');

/** The events on a page, in order: event id and type, from each <details> summary. */
function eventsOn(page: string): Array<{ id: string; event: string }> {
  return [...page.matchAll(/<li><details>\s*<summary><strong>([a-z_]+)<\/strong>[^]*?\(event (\d+)\)<\/span><\/summary>/g)].map((m) => ({ id: m[2]!, event: m[1]! }));
}

const linkTo = (page: string, text: string) => {
  const found = new RegExp(`<a href="([^"]+)">${text}</a>`).exec(page)?.[1];
  return found === undefined ? undefined : unescape(found);
};

for (const dialect of DIALECTS) {
  describe(`console events [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let console_: ConsoleBrowser;

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      console_ = await signInToConsole(t);
    });
    after(() => t.close());

    const freshSite = () => createSite(t.handle, { accountId: t.tenant.accountId, title: 'Eventful', subdomain: `events-${randomBytes(4).toString('hex')}` }, t.clock);
    const apiEvents = async (siteId: number, query = '') => {
      const res = await t.get(`/v1/events?filter[site_id]=${siteId}&page[size]=100${query}`, token);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data as Array<{ id: string; attributes: { event: string; payload: unknown } }>;
    };

    it('lists the site\'s events newest first, each opening to its payload as pretty, escaped JSON', async () => {
      const site = await freshSite();
      const b = builders(t).forSite(site);
      const contactId = await b.contact({ name: '<script>alert("x")</script> & Co' });
      const tagId = await b.tag('VIP');
      await addTag(t, token, contactId, tagId);
      t.clock.advance(60);
      const removed = await send(t, 'DELETE', `/v1/contacts/${contactId}/relationships/tags`, token, { data: [{ type: 'contact_tags', id: String(tagId) }] });
      assert.equal(removed.statusCode, 200, removed.body);

      const page = await console_.get(`/console/events?site=${site}`);
      assert.equal(page.statusCode, 200, page.body);
      assert.match(page.body, /<a href="\/console\/events\?site=\d+" aria-current="page">Events<\/a>/);
      const api = await apiEvents(site);
      assert.deepEqual(eventsOn(page.body), api.map((e) => ({ id: e.id, event: e.attributes.event })), 'the API\'s events, in its order');
      assert.deepEqual(api.map((e) => e.attributes.event), ['tag_removed', 'tag_added'], 'newest first');
      assert.match(page.body, /2 events\./);
      assert.equal((page.body.match(/<details>/g) ?? []).length, 2);
      assert.ok(!page.body.includes('<script>alert'), 'nothing from a payload reaches the page unescaped');
      const pres = [...page.body.matchAll(/<pre tabindex="0">([^<]*)<\/pre>/g)].map((m) => JSON.parse(unescape(m[1]!)));
      assert.deepEqual(pres, api.map((e) => e.attributes.payload), 'each payload, whole');
      assert.match(page.body, /&lt;script&gt;alert\(\\&quot;x\\&quot;\)&lt;\/script&gt; &amp; Co/);
      assert.match(page.body, /\n {2}\{\n {4}&quot;id&quot;: &quot;\d+&quot;,\n {4}&quot;type&quot;: &quot;contacts&quot;/, 'pretty-printed');
      assert.match(page.body, new RegExp(`<summary><strong>tag_added</strong>, record ${contactId}, <time datetime="`));
    });

    it('pages with cursors like the API, forwards and back, and filters by event type', async () => {
      const site = await freshSite();
      const b = builders(t).forSite(site);
      const tagId = await b.tag('Paged');
      for (let i = 0; i < 27; i++) {
        t.clock.advance(1);
        await addTag(t, token, await b.contact(), tagId);
      }
      const contactId = await b.contact();
      await addTag(t, token, contactId, tagId);
      t.clock.advance(1);
      const removed = await send(t, 'DELETE', `/v1/contacts/${contactId}/relationships/tags`, token, { data: [{ type: 'contact_tags', id: String(tagId) }] });
      assert.equal(removed.statusCode, 200, removed.body);
      const all = (await apiEvents(site)).map((e) => e.id);
      assert.equal(all.length, 29);

      const first = await console_.get(`/console/events?site=${site}`);
      assert.deepEqual(eventsOn(first.body).map((e) => e.id), all.slice(0, 25));
      assert.equal(linkTo(first.body, 'Newer events'), undefined, 'the newest page has nothing newer');
      const olderUrl = linkTo(first.body, 'Older events');
      assert.ok(olderUrl);
      const second = await console_.get(olderUrl);
      assert.equal(second.statusCode, 200, second.body);
      assert.deepEqual(eventsOn(second.body).map((e) => e.id), all.slice(25));
      assert.equal(linkTo(second.body, 'Older events'), undefined, 'the last page');
      const newerUrl = linkTo(second.body, 'Newer events');
      assert.ok(newerUrl);
      const back = await console_.get(newerUrl);
      assert.deepEqual(eventsOn(back.body).map((e) => e.id), all.slice(0, 25), 'back to the newest page');
      assert.equal(linkTo(second.body, 'Newest events'), `/console/events?site=${site}`);

      const filtered = await console_.get(`/console/events?site=${site}&event=tag_removed`);
      assert.deepEqual(eventsOn(filtered.body), [{ id: all[0]!, event: 'tag_removed' }]);
      assert.match(filtered.body, /<option value="tag_removed" selected>/);
      assert.match(filtered.body, /1 event of type tag_removed\./);
      // An unknown type is no filter at all (only declared types reach the engine).
      const unknown = await console_.get(`/console/events?site=${site}&event=nonsense`);
      assert.equal(eventsOn(unknown.body).length, 25);

      const edited = await console_.get(`/console/events?site=${site}&after=not-a-cursor`);
      assert.equal(edited.statusCode, 400);
      assert.match(edited.body, /<div class="problems" role="alert"><ul><li>[^<]*page\[after\]/);
      // A cursor of another site's list does not work here either.
      const otherSite = await freshSite();
      const cursor = new URL(`http://x${olderUrl}`).searchParams.get('after')!;
      const crossed = await console_.get(`/console/events?site=${otherSite}&after=${encodeURIComponent(cursor)}`);
      assert.equal(crossed.statusCode, 400);
    });

    it('shows a user limited to another site none of this site\'s events', async () => {
      const site = await freshSite();
      const b = builders(t).forSite(site);
      await addTag(t, token, await b.contact({ name: 'Secret Sam' }), await b.tag('Hidden'));
      const theirSite = await freshSite();
      const assistant = await createUser(
        t.handle,
        { accountId: t.tenant.accountId, name: 'Ed Assistant', email: `ed-${randomBytes(3).toString('hex')}@example.com`, role: 'assistant', siteIds: [theirSite] },
        t.clock,
      );
      const theirs = await signInToConsole(t, assistant);
      const page = await theirs.get(`/console/events?site=${site}`);
      assert.equal(page.statusCode, 200);
      assert.ok(!page.body.includes('Secret Sam'));
      assert.deepEqual(eventsOn(page.body), []);
      assert.match(page.body, new RegExp(`<input type="hidden" name="site" value="${theirSite}">`), 'their own site instead');
      assert.match(page.body, /No event yet/);
    });
  });
}
