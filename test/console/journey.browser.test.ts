// The newcomer's journey through the console, in Chromium, as the issue tells it: sign in with the
// printed link, create a key and use its secret against the API, point hooks at a local receiver,
// fire a checkout from the Sandbox page and watch its three deliveries arrive live in the page
// already open, open one and redeliver it, move the clock a month, reset, read the journal of what
// the key sent, and sign out. Also: a change without the CSRF token is refused, and every page on
// the way passes axe.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { ConsoleSessions } from '../../src/console/sessions.js';
import { describeInBrowser, expectNoSeriousAxeViolations, pageProblems } from '../support/browser.js';
import { createListeningTestApp, DIALECTS, type ListeningTestApp } from '../support/harness.js';
import { Receiver } from '../support/receiver.js';
import { seedDemo } from '../support/snapshots.js';

const CHECKOUT_EVENTS = ['purchase', 'payment_succeeded', 'order_created'] as const;

describeInBrowser('the console journey in Chromium', (suite) => {
  for (const dialect of DIALECTS) {
    describe(dialect, () => {
      let t: ListeningTestApp;
      let receiver: Receiver;
      before(async () => {
        // The worker runs as under `serve`: deliveries go out as soon as they are queued.
        t = await createListeningTestApp(dialect, { webhooks: { autoStart: true } });
        await seedDemo(t);
        receiver = await Receiver.start();
      });
      after(async () => {
        await t.close();
        await receiver.close();
      });

      const site = () => `site=${t.tenant.siteId}`;
      const heading = (page: Page) => page.locator('h1').textContent();

      it('goes from the sign-in link to deliveries, the clock, a reset and the journal, then signs out', async () => {
        const page = await suite.newPage({ baseURL: t.baseUrl });
        const link = await new ConsoleSessions(t.handle, t.clock.now).createSignInLink(t.tenant.ownerId);
        await page.goto(`/console/link/${link}`);
        assert.equal(await heading(page), 'Overview');
        await expectNoSeriousAxeViolations(page);

        // A key, from the Keys page; its secret works against the API.
        await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Keys' }).click();
        await page.getByRole('link', { name: 'Create a key' }).click();
        await page.fill('#key-name', 'journey');
        for (const permission of ['view:sites', 'view:contacts', 'view:hooks']) await page.check(`input[value="${permission}"]`);
        await page.getByRole('button', { name: 'Create the key' }).click();
        await page.locator('h1:text-is("Key created")').waitFor();
        await expectNoSeriousAxeViolations(page);
        const clientId = (await page.locator('#client-id').textContent())!.trim();
        const clientSecret = (await page.locator('#client-secret').textContent())!.trim();
        const token = await t.tokenFor(clientId, clientSecret);
        const me = await t.get('/v1/me', token);
        assert.equal(me.statusCode, 200);
        assert.equal((await t.get(`/v1/contacts?filter[site_id]=${t.tenant.siteId}&page[size]=1`, token)).statusCode, 200);

        // Three hooks to the local receiver, one per event of a checkout.
        for (const event of CHECKOUT_EVENTS) {
          await page.goto(`/console/webhooks?${site()}`);
          await page.selectOption('#hook-event', event);
          await page.fill('#hook-target', receiver.url(`/${event}`));
          await page.keyboard.press('Enter');
          await page.locator('h1', { hasText: 'Hook created' }).waitFor();
          assert.match((await page.locator('#hook-secret').textContent()) ?? '', /whsec_/);
        }

        // The Webhooks page stays open in its own tab while the checkout runs in another.
        const watcher = await page.context().newPage();
        await watcher.goto(`/console/webhooks?${site()}`);
        assert.equal(await watcher.locator('#deliveries-live a[id^="delivery-link-"]').count(), 0);

        await page.goto(`/console/sandbox?${site()}`);
        await expectNoSeriousAxeViolations(page);
        const offer = await page.locator('#checkout-offer option').nth(0).getAttribute('value');
        await page.selectOption('#checkout-offer', offer!);
        await page.fill('#checkout-email', 'journey@example.com');
        await page.getByRole('button', { name: 'Run the checkout' }).click();
        await page.locator('#result-heading').waitFor();
        assert.equal(await page.locator('#result-heading').textContent(), "The checkout's records");
        await expectNoSeriousAxeViolations(page);

        // The three deliveries appear in the open page, without a reload.
        await watcher.locator('#deliveries-live a[id^="delivery-link-"]').nth(2).waitFor({ timeout: 10_000 });
        await watcher.locator('#deliveries-live .status-ok', { hasText: 'succeeded' }).nth(2).waitFor({ timeout: 10_000 });
        await receiver.waitFor(3);
        assert.deepEqual(receiver.received.map((r) => r.path).sort(), CHECKOUT_EVENTS.map((e) => `/${e}`).sort());
        await expectNoSeriousAxeViolations(watcher);

        // Open one and redeliver it.
        await Promise.all([watcher.waitForURL('**/console/webhooks/deliveries/*'), watcher.locator('#deliveries-live a[id^="delivery-link-"]').first().click()]);
        await watcher.getByRole('button', { name: 'Redeliver' }).click();
        await watcher.waitForURL('**?done=redelivered*');
        await receiver.waitFor(4);
        await watcher.locator('#delivery-live strong', { hasText: 'Attempt 2' }).waitFor();
        await expectNoSeriousAxeViolations(watcher);
        await watcher.close();

        // A month later.
        await page.goto(`/console/sandbox?${site()}`);
        const before = (await page.locator('dt:text-is("Account time") + dd time').getAttribute('datetime'))!;
        await page.fill('#advance-by', 'P1M');
        await page.getByRole('button', { name: 'Advance by' }).click();
        await page.locator('#due-heading').waitFor();
        const later = (await page.locator('dt:text-is("Account time") + dd time').getAttribute('datetime'))!;
        const days = (Date.parse(later) - Date.parse(before)) / 86_400_000;
        assert.ok(days >= 28 && days <= 32, `the clock moved a month (${before} → ${later})`);
        await expectNoSeriousAxeViolations(page);

        // A change without the session's CSRF token is refused, and changes nothing.
        const forged = await page.request.post(`/console/sandbox/clock?${site()}`, { form: { advance_by: 'P1Y' }, maxRedirects: 0 });
        assert.equal(forged.status(), 403);
        await page.goto(`/console/sandbox?${site()}`);
        assert.equal(await page.locator('dt:text-is("Account time") + dd time').getAttribute('datetime').then((v) => Date.parse(v!) - Date.parse(later) < 60_000), true);

        // Reset, after its confirmation: the checkout's contact is gone, the key still works.
        await page.goto(`/console/sandbox/reset?${site()}`);
        await expectNoSeriousAxeViolations(page);
        await page.getByRole('button', { name: 'Reset the account' }).click();
        await page.locator('.notice').waitFor();
        const after = await t.get(`/v1/contacts?filter[site_id]=${t.tenant.siteId}&filter[email_contains]=journey@example.com`, await t.tokenFor(clientId, clientSecret));
        assert.equal(after.statusCode, 200);
        assert.equal(after.json().data.length, 0, 'the reset took the checkout away');

        // The journal shows what the key sent.
        await page.goto('/console/requests');
        const meEntry = page.locator('ol.journal > li', { hasText: '/v1/me' }).first();
        await meEntry.waitFor();
        assert.match((await meEntry.locator('summary').textContent()) ?? '', /200 GET \/v1\/me .* · journey · /, 'the request of the key named journey');
        await meEntry.locator('summary').click();
        assert.match((await meEntry.locator('pre').last().textContent()) ?? '', /"role_level": "OWNER"/, 'its response body');
        await expectNoSeriousAxeViolations(page);

        // Sign out: the console is closed to this browser again.
        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.waitForURL('**/console/sign-in?signed_out=1');
        await page.goto('/console/keys');
        assert.equal(new URL(page.url()).pathname, '/console/sign-in');
        assert.deepEqual(pageProblems(page), [], 'no script error, nothing blocked by the CSP');
      });
    });
  }
});
