// The console's Webhooks pages over HTTP, signed in as a user would be, with a real local receiver:
// a hook made in the console shows its secret once, and that secret verifies the deliveries; a tag
// added through the API makes a delivery that the live fragment shows (and answers 204 while
// nothing changes); a delivery's page shows the receiver's status, headers and body excerpt;
// Redeliver makes another attempt that the receiver gets; delete (after a confirmation), enable
// and rotate work as the API's; bad input shows the engine's problems and creates nothing; a post
// without the CSRF token changes nothing; a user of another site sees none of this site's hooks.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createSite, createUser } from '../../src/domain/accounts.js';
import type { Lookup } from '../../src/webhooks/target-addresses.js';
import { builders } from '../support/builders.js';
import { signInToConsole, type ConsoleBrowser } from '../support/console.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { Receiver } from '../support/receiver.js';
import { addTag, createHook } from '../support/webhooks.js';
import { otherAccount } from '../support/writes.js';

const unescape = (text: string) => text.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');

/** The URL a live region polls (its hx-get), from a page. */
function pollUrlOf(page: string, regionId: string): string {
  const found = new RegExp(`<div id="${regionId}"[^>]*hx-get="([^"]+)"`).exec(page);
  assert.ok(found, `a live region ${regionId} with hx-get`);
  return unescape(found[1]!);
}

/** The secret a result page shows once. */
const secretOf = (page: string) => /<code id="hook-secret">(whsec_[A-Za-z0-9+/=]+)<\/code>/.exec(page)?.[1];

for (const dialect of DIALECTS) {
  describe(`console webhooks [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let receiver: Receiver;
    let console_: ConsoleBrowser;

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      receiver = await Receiver.start();
      console_ = await signInToConsole(t);
    });
    after(async () => {
      await t.close();
      await receiver.close();
    });

    /** A site of its own per test, so that one test's hooks never see another's events. */
    const freshSite = () => createSite(t.handle, { accountId: t.tenant.accountId, title: 'Hooked', subdomain: `hooked-${randomBytes(4).toString('hex')}` }, t.clock);
    const apiHooks = async (siteId: number) => {
      const res = await t.get(`/v1/hooks?filter[site_id]=${siteId}`, token);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data as Array<{ id: string; attributes: Record<string, unknown> }>;
    };
    const apiDelivery = async (id: string) => (await t.get(`/v1/webhook_deliveries/${id}`, token)).json().data;
    /** Creates a hook in the console; answers the result page and the secret on it. */
    const createInConsole = async (siteId: number, event: string, targetUrl: string) => {
      const res = await console_.post(`/console/webhooks?site=${siteId}`, { site: String(siteId), event, target_url: targetUrl });
      assert.equal(res.statusCode, 201, res.body);
      const secret = secretOf(res.body);
      assert.ok(secret, 'the secret is on the page');
      const hookId = /href="\/console\/webhooks\/(\d+)\?site=/.exec(res.body)?.[1];
      assert.ok(hookId, 'a link to the new hook');
      return { page: res.body, secret, hookId };
    };
    /** A new contact of the site tagged through the API: one tag_added event. */
    const tagNewContact = async (siteId: number, contact: Parameters<ReturnType<typeof builders>['contact']>[0] = {}) => {
      const b = builders(t).forSite(siteId);
      const contactId = await b.contact(contact);
      await addTag(t, token, contactId, await b.tag(`Tag ${randomBytes(3).toString('hex')}`));
      return contactId;
    };

    it('lists the events hooks take, creates a hook with the API\'s rules, and shows its secret once, with how to verify it', async () => {
      const site = await freshSite();
      const page = await console_.get(`/console/webhooks?site=${site}`);
      assert.equal(page.statusCode, 200, page.body);
      assert.match(page.body, /<a href="\/console\/webhooks\?site=\d+" aria-current="page">Webhooks<\/a>/);
      const options = [...page.body.matchAll(/<option value="([a-z_]+)">/g)].map((m) => m[1]);
      assert.deepEqual(options, ['purchase', 'payment_succeeded', 'order_created', 'form_submission', 'tag_added', 'tag_removed']);
      assert.match(page.body, /has no hook yet/);

      const { page: result, secret, hookId } = await createInConsole(site, 'tag_added', receiver.url('/created'));
      assert.match(result, /<button type="button" data-copy="hook-secret">/);
      assert.match(result, /import \{ Webhook \} from 'standardwebhooks';\n\nconst webhook = new Webhook\(process\.env\.HOOK_SECRET\)/, 'how to verify, with the standardwebhooks package');
      assert.match(result, /href="\/docs#\/Webhooks"/);
      assert.match(result, /shown only this once/);

      const [hook, ...others] = await apiHooks(site);
      assert.equal(others.length, 0);
      assert.equal(hook!.id, hookId);
      assert.deepEqual([hook!.attributes.event, hook!.attributes.target_url], ['tag_added', receiver.url('/created')]);
      // Never again: not on the list, not on the hook's page, not in the API.
      const list = await console_.get(`/console/webhooks?site=${site}`);
      assert.ok(!list.body.includes(secret));
      assert.match(list.body, new RegExp(`<a href="/console/webhooks/${hookId}\\?site=${site}">tag_added</a>`));
      assert.match(list.body, /<span class="status-ok">Enabled<\/span>/);
      const shown = await console_.get(`/console/webhooks/${hookId}?site=${site}`);
      assert.equal(shown.statusCode, 200);
      assert.ok(!shown.body.includes(secret));
      assert.ok(!(await t.get(`/v1/hooks/${hookId}`, token)).body.includes(secret));

      // The secret shown is the one deliveries are signed with.
      await tagNewContact(site);
      await t.app.webhooks.runDue();
      const [request] = receiver.received.filter((r) => r.path === '/created');
      assert.ok(request, 'delivered');
      new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
    });

    it('shows a new delivery and its changes in the live fragment, 204 while nothing changes; the delivery page shows the receiver\'s answer', async () => {
      const site = await freshSite();
      receiver.react = (r) => (r.path === '/answers' ? { status: 202, body: 'thanks <from> the receiver', headers: { 'x-receiver': 'console-test' } } : { status: 200 });
      const { hookId } = await createInConsole(site, 'tag_added', receiver.url('/answers'));

      const page = await console_.get(`/console/webhooks?site=${site}`);
      const poll = pollUrlOf(page.body, 'deliveries-live');
      assert.match(poll, new RegExp(`^/console/webhooks/deliveries/live\\?site=${site}&seen=`));
      assert.match(page.body, /hx-trigger="every 1s"/);
      assert.match(page.body, /<span id="deliveries-live-status" role="status">/);
      assert.match(page.body, /No delivery yet/);
      const unchanged = await console_.get(poll);
      assert.equal(unchanged.statusCode, 204, 'nothing new: nothing to swap');
      assert.equal(unchanged.body, '');

      const contactId = await tagNewContact(site);
      const fresh = await console_.get(poll);
      assert.equal(fresh.statusCode, 200, fresh.body);
      assert.match(String(fresh.headers['content-type']), /^text\/html/);
      const rows = [...fresh.body.matchAll(/<a id="delivery-link-(\d+)" href="\/console\/webhooks\/deliveries\/(\d+)\?site=\d+">/g)];
      assert.equal(rows.length, 1, 'one delivery row');
      const deliveryId = rows[0]![1]!;
      assert.match(fresh.body, /<span class="status-pending">pending<\/span>/);
      assert.match(fresh.body, /no attempt yet/);
      assert.match(fresh.body, /<span id="deliveries-live-status" hx-swap-oob="innerHTML">Deliveries updated at \d\d:\d\d:\d\d UTC\.<\/span>/);
      // The fragment replaces the region with one that knows what it now shows.
      const next = pollUrlOf(fresh.body, 'deliveries-live');
      assert.notEqual(next, poll);
      assert.equal((await console_.get(next)).statusCode, 204);

      await t.app.webhooks.runDue();
      const delivered = await console_.get(next);
      assert.equal(delivered.statusCode, 200);
      assert.match(delivered.body, /<span class="status-ok">succeeded<\/span>/);
      assert.match(delivered.body, /HTTP 202/);
      // The hook's own page polls its deliveries the same way.
      const hookPage = await console_.get(`/console/webhooks/${hookId}?site=${site}`);
      const hookPoll = pollUrlOf(hookPage.body, 'deliveries-live');
      assert.match(hookPoll, new RegExp(`^/console/webhooks/deliveries/live\\?hook=${hookId}&seen=`));
      assert.equal((await console_.get(hookPoll)).statusCode, 204);
      assert.match(hookPage.body, new RegExp(`id="delivery-link-${deliveryId}"`));

      const detail = await console_.get(`/console/webhooks/deliveries/${deliveryId}?site=${site}`);
      assert.equal(detail.statusCode, 200, detail.body);
      assert.match(detail.body, /<span class="status-ok">succeeded<\/span>/);
      assert.match(detail.body, /<strong>Attempt 1<\/strong>/);
      assert.match(detail.body, /<span class="status-ok">HTTP 202<\/span>/);
      assert.match(detail.body, /x-receiver: console-test/, 'the answer\'s headers');
      assert.match(detail.body, /<pre class="answer-body" tabindex="0">thanks &lt;from&gt; the receiver<\/pre>/, 'the answer\'s body, escaped');
      const api = await apiDelivery(deliveryId);
      assert.ok(detail.body.includes(api.attributes.webhook_id), 'its webhook-id');
      assert.match(detail.body, new RegExp(`&quot;id&quot;: &quot;${contactId}&quot;`), 'the body posted: the event and its payload');
      assert.match(detail.body, /<form method="post" action="\/console\/webhooks\/deliveries\/\d+\/redeliver\?site=\d+"/);
      assert.match(detail.body, /<button type="submit">Redeliver<\/button>/);
      const detailPoll = pollUrlOf(detail.body, 'delivery-live');
      assert.equal((await console_.get(detailPoll)).statusCode, 204, 'the delivery page polls too, quietly');
    });

    it('Redeliver makes a new attempt that the receiver gets, with the same webhook-id', async () => {
      const site = await freshSite();
      receiver.react = (r) => (r.path === '/again' ? { status: 500, body: 'not now' } : { status: 200 });
      await createInConsole(site, 'tag_added', receiver.url('/again'));
      await tagNewContact(site);
      await t.app.webhooks.runDue();
      const [first] = receiver.received.filter((r) => r.path === '/again');
      assert.ok(first);
      const deliveryId = String((await t.get(`/v1/webhook_deliveries?filter[site_id]=${site}`, token)).json().data[0].id);
      const detail = await console_.get(`/console/webhooks/deliveries/${deliveryId}?site=${site}`);
      assert.match(detail.body, /<span class="status-pending">retrying<\/span>/);
      assert.match(detail.body, /<span class="status-failed">HTTP 500<\/span>/);
      assert.match(detail.body, /not now/);
      const poll = pollUrlOf(detail.body, 'delivery-live');

      receiver.react = () => ({ status: 200, body: 'ok now' });
      const res = await console_.post(`/console/webhooks/deliveries/${deliveryId}/redeliver?site=${site}`);
      assert.equal(res.statusCode, 303, res.body);
      assert.equal(res.headers.location, `/console/webhooks/deliveries/${deliveryId}?done=redelivered&site=${site}`);
      assert.equal((await apiDelivery(deliveryId)).attributes.status, 'pending');
      await t.app.webhooks.runDue();
      const attempts = receiver.received.filter((r) => r.path === '/again');
      assert.equal(attempts.length, 2, 'the receiver got the redelivery');
      assert.equal(attempts[1]!.headers['webhook-id'], first.headers['webhook-id']);
      assert.equal(attempts[1]!.body, first.body);

      const after = await console_.get(res.headers.location as string);
      assert.match(after.body, /<p class="notice" role="status">The delivery is queued for an attempt now/);
      assert.match(after.body, /<strong>Attempt 2<\/strong>/);
      assert.match(after.body, /ok now/);
      const changed = await console_.get(poll);
      assert.equal(changed.statusCode, 200, 'the page that was open sees the new attempt');
      assert.match(changed.body, /<span class="status-ok">succeeded<\/span>/);
      assert.equal((await apiDelivery(deliveryId)).attributes.attempt_count, 2);
    });

    it('deletes a hook after a confirmation naming what stops; its deliveries stay, and cannot be redelivered', async () => {
      const site = await freshSite();
      const { hookId } = await createInConsole(site, 'tag_added', receiver.url('/deleted'));
      await tagNewContact(site);
      await t.app.webhooks.runDue();
      const deliveryId = String((await t.get(`/v1/hooks/${hookId}/deliveries`, token)).json().data[0].id);

      const confirm = await console_.get(`/console/webhooks/${hookId}/delete?site=${site}`);
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, /stops the delivery of <strong>tag_added<\/strong> events to <code>http:\/\/127\.0\.0\.1:\d+\/deleted<\/code>/);
      assert.match(confirm.body, new RegExp(`<form method="post" action="/console/webhooks/${hookId}/delete\\?site=${site}"`));
      assert.equal((await apiHooks(site)).length, 1, 'the confirmation page deletes nothing');

      const res = await console_.post(`/console/webhooks/${hookId}/delete?site=${site}`);
      assert.equal(res.statusCode, 303, res.body);
      assert.equal(res.headers.location, `/console/webhooks?done=deleted&site=${site}`);
      assert.equal((await t.get(`/v1/hooks/${hookId}`, token)).statusCode, 404);
      const list = await console_.get(res.headers.location as string);
      assert.match(list.body, /The hook was deleted/);
      assert.match(list.body, /has no hook yet/);
      assert.match(list.body, new RegExp(`id="delivery-link-${deliveryId}"`), 'its delivery stays in the log');

      const detail = await console_.get(`/console/webhooks/deliveries/${deliveryId}?site=${site}`);
      assert.match(detail.body, new RegExp(`hook ${hookId}, deleted`));
      const again = await console_.post(`/console/webhooks/deliveries/${deliveryId}/redeliver?site=${site}`);
      assert.equal(again.statusCode, 422);
      assert.match(again.body, /<div class="problems" role="alert"><ul><li>Delivery \d+ belongs to hook \d+, which was deleted/);
      assert.equal((await console_.get(`/console/webhooks/${hookId}?site=${site}`)).statusCode, 404);
    });

    it('shows a failing and a disabled hook as such, and enables the disabled one', async () => {
      const site = await freshSite();
      const hook = await createHook(t, token, { event: 'tag_removed', targetUrl: receiver.url('/flaky'), siteId: site });
      const encode = (iso: string) => t.handle.traits.encodeTimestamp(new Date(iso));
      // What 5 days of failures leave behind (the worker's own path is tested in test/webhooks/retries.test.ts).
      await t.handle.db.updateTable('hooks').set({ failing_since: encode('2026-05-26T08:00:00.000Z') }).where('id', '=', hook.id).execute();
      let list = await console_.get(`/console/webhooks?site=${site}`);
      assert.match(list.body, /<span class="status-pending">Enabled, failing<\/span> since <time datetime="2026-05-26T08:00:00.000Z">2026-05-26 08:00:00 UTC<\/time>/);
      await t.handle.db.updateTable('hooks').set({ disabled_at: encode('2026-05-31T08:00:00.000Z') }).where('id', '=', hook.id).execute();
      list = await console_.get(`/console/webhooks?site=${site}`);
      assert.match(list.body, /<span class="status-failed">Disabled<\/span> since <time datetime="2026-05-31T08:00:00.000Z">/);
      const page = await console_.get(`/console/webhooks/${hook.id}?site=${site}`);
      assert.match(page.body, new RegExp(`<form method="post" action="/console/webhooks/${hook.id}/enable\\?site=${site}"`));

      const res = await console_.post(`/console/webhooks/${hook.id}/enable?site=${site}`);
      assert.equal(res.statusCode, 303, res.body);
      assert.equal(res.headers.location, `/console/webhooks/${hook.id}?done=enabled&site=${site}`);
      const attributes = (await t.get(`/v1/hooks/${hook.id}`, token)).json().data.attributes;
      assert.equal(attributes.disabled_at, null);
      assert.equal(attributes.failing_since, null);
      const after = await console_.get(res.headers.location as string);
      assert.match(after.body, /The hook is enabled/);
      assert.match(after.body, /<span class="status-ok">Enabled<\/span>/);
      assert.ok(!after.body.includes('/enable?'), 'no Enable button on an enabled hook');
    });

    it('rotates the secret: the new one is shown once and signs the next delivery', async () => {
      const site = await freshSite();
      const { secret: old, hookId } = await createInConsole(site, 'tag_added', receiver.url('/rotated'));
      const res = await console_.post(`/console/webhooks/${hookId}/rotate-secret?site=${site}`);
      assert.equal(res.statusCode, 200, res.body);
      const secret = secretOf(res.body);
      assert.ok(secret && secret !== old, 'a new secret');
      assert.match(res.body, /keeps signing beside it for 24 hours/);
      await tagNewContact(site);
      await t.app.webhooks.runDue();
      const [request] = receiver.received.filter((r) => r.path === '/rotated');
      assert.ok(request);
      new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
    });

    it('shows the engine\'s problems for bad input with a 4xx and the values given, and creates nothing', async () => {
      const site = await freshSite();
      const cases: Array<{ event: string; target_url: string; status: number; problem: RegExp }> = [
        { event: 'tag_added', target_url: 'not a url', status: 422, problem: /target_url must be an absolute http or https URL/ },
        { event: 'tag_added', target_url: 'ftp://example.com/in', status: 422, problem: /target_url must be an http or https URL, not ftp/ },
        { event: 'tag_added', target_url: 'https://user:pw@example.com/in', status: 422, problem: /must not carry a user name or password/ },
        { event: 'tag_exploded', target_url: 'https://example.com/in', status: 422, problem: /event must be one of purchase, payment_succeeded/ },
        { event: '', target_url: '', status: 422, problem: /event is required<\/li><li>target_url is required/ },
      ];
      for (const c of cases) {
        const res = await console_.post(`/console/webhooks?site=${site}`, { site: String(site), event: c.event, target_url: c.target_url });
        assert.equal(res.statusCode, c.status, `${c.event} ${c.target_url}: ${res.body.slice(0, 200)}`);
        assert.match(res.body, /<div class="problems" role="alert">/);
        assert.match(res.body, c.problem);
        assert.ok(res.body.includes(`value="${c.target_url.replace(/&/g, '&amp;')}"`), 'the form keeps what was typed');
        assert.match(res.body, /<form method="post" action="\/console\/webhooks\?site=\d+" class="stack">/, 'the form again');
        assert.equal(secretOf(res.body), undefined);
      }
      // A site the user does not reach (another account's) is a 404, as in the API.
      const other = (await otherAccount(t)).siteId;
      const foreign = await console_.post(`/console/webhooks?site=${site}`, { site: String(other), event: 'tag_added', target_url: 'https://example.com/in' });
      assert.equal(foreign.statusCode, 404);
      assert.match(foreign.body, /No sites record with id/);
      assert.deepEqual(await apiHooks(site), []);
      assert.equal((await t.handle.db.selectFrom('hooks').select('id').where('site_id', '=', other).execute()).length, 0);
    });

    it('refuses a post without the CSRF token (403) and changes nothing', async () => {
      const site = await freshSite();
      const hook = await createHook(t, token, { event: 'tag_added', targetUrl: receiver.url('/csrf'), siteId: site });
      await tagNewContact(site);
      const deliveryId = String((await t.get(`/v1/hooks/${hook.id}/deliveries`, token)).json().data[0].id);
      const posts: Array<[string, Record<string, string>]> = [
        [`/console/webhooks?site=${site}`, { site: String(site), event: 'tag_added', target_url: 'https://example.com/x' }],
        [`/console/webhooks/${hook.id}/delete?site=${site}`, {}],
        [`/console/webhooks/${hook.id}/rotate-secret?site=${site}`, {}],
        [`/console/webhooks/${hook.id}/enable?site=${site}`, {}],
        [`/console/webhooks/deliveries/${deliveryId}/redeliver?site=${site}`, {}],
      ];
      const before = await t.handle.db.selectFrom('hooks').selectAll().where('site_id', '=', site).execute();
      for (const [url, fields] of posts) {
        const res = await console_.post(url, fields, { csrf: false });
        assert.equal(res.statusCode, 403, url);
        assert.match(res.body, /CSRF token is missing or wrong/);
        const wrong = await console_.post(url, { ...fields, _csrf: 'not-the-token' }, { csrf: false });
        assert.equal(wrong.statusCode, 403, url);
      }
      assert.deepEqual(await t.handle.db.selectFrom('hooks').selectAll().where('site_id', '=', site).execute(), before, 'no hook made, deleted or changed');
      assert.equal((await apiDelivery(deliveryId)).attributes.status, 'pending');
    });

    it('pages older deliveries with cursors; only the newest page is live; the site picker leaves a record of another site', async () => {
      const site = await freshSite();
      const hook = await createHook(t, token, { event: 'tag_added', targetUrl: receiver.url('/many'), siteId: site });
      for (let i = 0; i < 22; i++) {
        t.clock.advance(1);
        await tagNewContact(site);
      }
      const ids = (await t.get(`/v1/hooks/${hook.id}/deliveries?page[size]=22`, token)).json().data.map((d: { id: string }) => d.id) as string[];
      const rowIds = (body: string) => [...body.matchAll(/<a id="delivery-link-(\d+)"/g)].map((m) => m[1]);
      for (const first of [`/console/webhooks/${hook.id}?site=${site}`, `/console/webhooks/deliveries?site=${site}`]) {
        const page = await console_.get(first);
        assert.equal(page.statusCode, 200, page.body);
        assert.deepEqual(rowIds(page.body), ids.slice(0, 20), 'the newest 20, newest first');
        assert.match(page.body, /22 deliveries in all; the newest 20 are shown/);
        const older = /<a href="([^"]+)">older deliveries<\/a>/.exec(page.body)?.[1];
        assert.ok(older, first);
        const next = await console_.get(unescape(older));
        assert.equal(next.statusCode, 200, next.body);
        assert.deepEqual(rowIds(next.body), ids.slice(20), 'the 2 oldest');
        assert.ok(!next.body.includes('hx-get'), 'an older page is not live');
        assert.match(next.body, /Newest deliveries<\/a>/);
      }
      const edited = await console_.get(`/console/webhooks/deliveries?site=${site}&older=not-a-cursor`);
      assert.equal(edited.statusCode, 400);
      assert.match(edited.body, /<div class="problems" role="alert">/);
      const moved = await console_.get(`/console/webhooks/${hook.id}?site=${t.tenant.siteId}`);
      assert.equal(moved.statusCode, 303);
      assert.equal(moved.headers.location, `/console/webhooks?site=${t.tenant.siteId}`);
    });

    it('shows a user limited to another site none of this site\'s hooks or deliveries', async () => {
      const site = await freshSite();
      const hook = await createHook(t, token, { event: 'tag_added', targetUrl: receiver.url('/private-site'), siteId: site });
      await tagNewContact(site);
      const deliveryId = String((await t.get(`/v1/hooks/${hook.id}/deliveries`, token)).json().data[0].id);
      const theirSite = await freshSite();
      const assistant = await createUser(
        t.handle,
        { accountId: t.tenant.accountId, name: 'Asa Assistant', email: `asa-${randomBytes(3).toString('hex')}@example.com`, role: 'assistant', siteIds: [theirSite] },
        t.clock,
      );
      const theirs = await signInToConsole(t, assistant);

      const list = await theirs.get(`/console/webhooks?site=${site}`);
      assert.equal(list.statusCode, 200);
      assert.ok(!list.body.includes('/private-site'), 'not this site\'s hooks');
      assert.match(list.body, new RegExp(`<input type="hidden" name="site" value="${theirSite}">`), 'their own site instead');
      assert.ok(!list.body.includes(`delivery-link-${deliveryId}`));
      for (const url of [
        `/console/webhooks/${hook.id}?site=${site}`,
        `/console/webhooks/${hook.id}/delete?site=${site}`,
        `/console/webhooks/deliveries/${deliveryId}?site=${site}`,
        `/console/webhooks/deliveries/${deliveryId}/live?site=${site}`,
        `/console/webhooks/deliveries/live?hook=${hook.id}`,
      ]) {
        const res = await theirs.get(url);
        assert.equal(res.statusCode, 404, url);
        assert.ok(!res.body.includes('/private-site'), url);
      }
      const siteFeed = await theirs.get(`/console/webhooks/deliveries/live?site=${site}&seen=x`);
      assert.ok(!siteFeed.body.includes(`delivery-link-${deliveryId}`), 'the site feed falls back to their own site');
      for (const url of [`/console/webhooks/${hook.id}/delete`, `/console/webhooks/${hook.id}/rotate-secret`, `/console/webhooks/deliveries/${deliveryId}/redeliver`]) {
        assert.equal((await theirs.post(url)).statusCode, 404, url);
      }
      const made = await theirs.post(`/console/webhooks?site=${theirSite}`, { site: String(site), event: 'tag_added', target_url: 'https://example.com/in' });
      assert.equal(made.statusCode, 404);
      assert.equal((await apiHooks(site)).length, 1, 'the hook is still there, and no other was made');
    });
  });

  describe(`console webhooks in production mode [${dialect}]`, () => {
    let t: TestApp;
    let console_: ConsoleBrowser;
    const ADDRESSES: Record<string, string[]> = { 'receiver.example': ['93.184.216.34'], 'internal.example': ['10.0.0.5'] };
    const lookup: Lookup = async (hostname) => {
      const found = ADDRESSES[hostname];
      if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return found.map((address) => ({ address, family: 4 }));
    };
    before(async () => {
      t = await createTestApp(dialect, { env: { MODE: 'production' }, webhooks: { lookup } });
      console_ = await signInToConsole(t);
    });
    after(() => t.close());

    it('refuses private targets with the reason, and takes public ones', async () => {
      const site = t.tenant.siteId;
      const page = await console_.get(`/console/webhooks?site=${site}`);
      assert.match(page.body, /production mode refuses local and private ones/);
      for (const [url, reason] of [
        ['http://127.0.0.1:4000/hooks', /127\.0\.0\.1 is a loopback address/],
        ['https://internal.example/in', /internal\.example resolves to 10\.0\.0\.5, a private address/],
      ] as const) {
        const res = await console_.post(`/console/webhooks?site=${site}`, { site: String(site), event: 'tag_added', target_url: url });
        assert.equal(res.statusCode, 422, res.body);
        assert.match(res.body, /target_url is refused in production mode/);
        assert.match(res.body, reason);
      }
      assert.equal((await t.handle.db.selectFrom('hooks').select('id').execute()).length, 0, 'nothing created');
      const ok = await console_.post(`/console/webhooks?site=${site}`, { site: String(site), event: 'purchase', target_url: 'https://receiver.example/hooks' });
      assert.equal(ok.statusCode, 201, ok.body);
      assert.ok(secretOf(ok.body));
    });
  });
}
