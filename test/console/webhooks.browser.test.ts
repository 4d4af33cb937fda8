// The Webhooks and Events pages in Chromium, with the delivery worker running and a real local
// receiver: a hook made with the keyboard shows its secret once, and that secret verifies what the
// receiver gets; deliveries appear in the open page without reloading, without taking the focus
// (and a focused row keeps it when the list changes); a delivery opens to the receiver's answer
// and Redeliver's attempt appears live; an event opens to its payload; the hook is deleted after its confirmation; axe finds no serious
// violation at desktop and phone widths, and nothing is blocked by the CSP.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { ConsoleSessions } from '../../src/console/sessions.js';
import { builders } from '../support/builders.js';
import { describeInBrowser, expectNoSeriousAxeViolations, pageProblems, screenshot, useDesktopViewport, usePhoneViewport } from '../support/browser.js';
import { createListeningTestApp, DIALECTS, type ListeningTestApp } from '../support/harness.js';
import { Receiver } from '../support/receiver.js';
import { addTag } from '../support/webhooks.js';

describeInBrowser('console webhooks and events in Chromium', (suite) => {
  for (const dialect of DIALECTS) {
    describe(dialect, () => {
      let t: ListeningTestApp;
      let token: string;
      let receiver: Receiver;
      before(async () => {
        // The worker runs as under `serve`: deliveries are attempted as soon as they are queued.
        t = await createListeningTestApp(dialect, { webhooks: { autoStart: true } });
        token = await t.token();
        receiver = await Receiver.start();
        receiver.react = () => ({ status: 202, body: 'received, thank you', headers: { 'x-receiver': 'browser-test' } });
      });
      after(async () => {
        await t.close();
        await receiver.close();
      });

      const tagNewContact = async (name: string) => {
        const b = builders(t);
        await addTag(t, token, await b.contact({ name }), await b.tag(`${name}'s tag`));
      };

      it('creates a hook with the keyboard, watches deliveries arrive live, opens one, redelivers it, and reads the event', async () => {
        const page = await suite.newPage({ baseURL: t.baseUrl });
        const link = await new ConsoleSessions(t.handle, t.clock.now).createSignInLink(t.tenant.ownerId);
        await page.goto(`/console/link/${link}`);
        await page.goto(`/console/webhooks?site=${t.tenant.siteId}`);
        assert.equal(await page.locator('h1').textContent(), 'Webhooks');
        await expectNoSeriousAxeViolations(page);

        // The form, with the keyboard: choose the event, type the URL, Enter.
        await page.focus('#hook-event');
        await page.selectOption('#hook-event', 'tag_added');
        await page.keyboard.press('Tab');
        assert.equal(await page.evaluate('document.activeElement?.id'), 'hook-target');
        await page.keyboard.type(receiver.url('/browser'));
        // The form posts to the page's own URL: wait for the answer's heading, not for a URL.
        await page.keyboard.press('Enter');
        await page.locator('h1', { hasText: 'Hook created' }).waitFor();
        const secret = ((await page.locator('#hook-secret').textContent()) ?? '').trim();
        assert.match(secret, /^whsec_/);
        await page.getByRole('button', { name: 'Copy the secret' }).focus();
        await page.keyboard.press('Enter');
        await page.locator('.copy-status', { hasText: /\S/ }).waitFor();
        await expectNoSeriousAxeViolations(page);
        if (dialect === 'sqlite') await screenshot(page, 'webhook-created');

        // The list, left open: a delivery appears without reloading and without taking the focus.
        await page.goto(`/console/webhooks?site=${t.tenant.siteId}`);
        await page.focus('#hook-target');
        await tagNewContact('Ada');
        await page.locator('#deliveries-live .status-ok', { hasText: 'succeeded' }).waitFor();
        assert.equal(await page.evaluate('document.activeElement?.id'), 'hook-target', 'the focus stays where the user left it');
        assert.match((await page.locator('#deliveries-live-status').textContent()) ?? '', /^Deliveries updated at \d\d:\d\d:\d\d UTC\.$/);
        await receiver.waitFor(1);
        const [first] = receiver.received;
        new Webhook(secret).verify(first!.body, first!.headers as Record<string, string>);

        // A focused row keeps the focus when the list changes under it.
        const firstLink = page.locator('#deliveries-live a[id^="delivery-link-"]').first();
        const firstId = await firstLink.getAttribute('id');
        await firstLink.focus();
        await tagNewContact('Grace');
        // (waitForFunction would evaluate a string in the page, which its CSP forbids: locators wait instead.)
        await page.locator('#deliveries-live a[id^="delivery-link-"]').nth(1).waitFor();
        await page.locator('#deliveries-live .status-ok', { hasText: /^succeeded$/ }).nth(1).waitFor();
        assert.equal(await page.evaluate('document.activeElement?.id'), firstId);
        await expectNoSeriousAxeViolations(page);
        if (dialect === 'sqlite') await screenshot(page, 'webhooks');
        await usePhoneViewport(page);
        await expectNoSeriousAxeViolations(page);
        await useDesktopViewport(page);

        // Open the focused delivery with Enter: the receiver's answer, then Redeliver.
        await Promise.all([page.waitForURL('**/console/webhooks/deliveries/*'), page.keyboard.press('Enter')]);
        assert.match((await page.locator('#delivery-live').textContent()) ?? '', /HTTP 202/);
        assert.equal((await page.locator('pre.answer-body').first().textContent())?.trim(), 'received, thank you');
        await page.getByText('Answer headers').first().focus();
        await page.keyboard.press('Enter');
        assert.match((await page.locator('#delivery-live details pre').first().textContent()) ?? '', /x-receiver: browser-test/);
        await expectNoSeriousAxeViolations(page);
        await page.getByRole('button', { name: 'Redeliver' }).focus();
        await Promise.all([page.waitForURL('**/console/webhooks/deliveries/*?done=redelivered*'), page.keyboard.press('Enter')]);
        assert.match((await page.locator('.notice').textContent()) ?? '', /queued for an attempt now/);
        await page.locator('#delivery-live strong', { hasText: 'Attempt 2' }).waitFor();
        await receiver.waitFor(3);
        const ids = receiver.received.map((r) => r.headers['webhook-id']);
        assert.equal(ids.filter((id) => id === ids[2]).length, 2, 'the redelivery carries the webhook-id of the delivery');
        await expectNoSeriousAxeViolations(page);
        if (dialect === 'sqlite') await screenshot(page, 'webhook-delivery');
        await usePhoneViewport(page);
        await expectNoSeriousAxeViolations(page);
        await useDesktopViewport(page);

        // The events, each opening to its payload with the keyboard.
        await page.goto(`/console/events?site=${t.tenant.siteId}`);
        assert.equal(await page.locator('ol.events > li').count(), 2);
        await page.locator('summary').first().focus();
        await page.keyboard.press('Enter');
        assert.notEqual(await page.locator('details').first().getAttribute('open'), null, 'opened');
        assert.match((await page.locator('details pre').first().textContent()) ?? '', /"name": "Grace"/);
        await expectNoSeriousAxeViolations(page);
        if (dialect === 'sqlite') await screenshot(page, 'events');
        await usePhoneViewport(page);
        await expectNoSeriousAxeViolations(page);
        await useDesktopViewport(page);

        // The hook's own page and the confirmation before deleting it.
        await page.goto(`/console/webhooks?site=${t.tenant.siteId}`);
        await Promise.all([page.waitForURL('**/console/webhooks/*'), page.getByRole('link', { name: 'tag_added' }).click()]);
        assert.equal(await page.locator('#deliveries-live a[id^="delivery-link-"]').count(), 2);
        await expectNoSeriousAxeViolations(page);
        await Promise.all([page.waitForURL('**/delete*'), page.getByRole('link', { name: 'Delete this hook…' }).click()]);
        await expectNoSeriousAxeViolations(page);
        await Promise.all([page.waitForURL('**/console/webhooks?done=deleted*'), page.getByRole('button', { name: 'Delete the hook' }).click()]);
        assert.match((await page.locator('.notice').textContent()) ?? '', /The hook was deleted/);
        assert.deepEqual(pageProblems(page), [], 'no script error and nothing blocked by the CSP');
      });
    });
  }
});
