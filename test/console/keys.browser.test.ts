// The Keys page in Chromium, with the keyboard alone: an owner creates a key (its secret shown once,
// copied with the copy button, then used against the API), rotates it and deletes it through the
// confirmation pages; axe finds no serious violation on any of them at desktop and phone widths,
// and the CSP blocks nothing. A user who is not an owner has no Keys link and gets 403.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { createUser } from '../../src/domain/accounts.js';
import { ConsoleSessions } from '../../src/console/sessions.js';
import { describeInBrowser, expectNoSeriousAxeViolations, pageProblems, screenshot, useDesktopViewport, usePhoneViewport } from '../support/browser.js';
import { createListeningTestApp, DIALECTS, type ListeningTestApp } from '../support/harness.js';

describeInBrowser('console Keys page in Chromium', (suite) => {
  for (const dialect of DIALECTS) {
    describe(dialect, () => {
      let t: ListeningTestApp;
      before(async () => {
        t = await createListeningTestApp(dialect);
      });
      after(() => t.close());

      const signIn = async (page: Page, userId = t.tenant.ownerId) => {
        const token = await new ConsoleSessions(t.handle, t.clock.now).createSignInLink(userId);
        await page.goto(`/console/link/${token}`);
        assert.equal(new URL(page.url()).pathname, '/console');
      };

      /** axe at desktop and phone widths (and a screenshot of the desktop one, from the SQLite run). */
      const checkPage = async (page: Page, name: string) => {
        await expectNoSeriousAxeViolations(page);
        if (dialect === 'sqlite') await screenshot(page, name);
        await usePhoneViewport(page);
        await expectNoSeriousAxeViolations(page);
        await useDesktopViewport(page);
      };

      /** Focuses the element and presses a key, as a keyboard user does after tabbing to it. */
      const press = async (page: Page, selector: string, key: string) => {
        await page.locator(selector).focus();
        await page.keyboard.press(key);
      };

      it('creates, rotates and deletes a key with the keyboard; the shown secret works against the API', async () => {
        const page = await suite.newPage({ baseURL: t.baseUrl });
        await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.baseUrl });
        await signIn(page);

        await press(page, 'nav a:text-is("Keys")', 'Enter');
        await page.waitForURL('**/console/keys?site=*');
        assert.equal(await page.locator('h1').textContent(), 'Keys');
        await checkPage(page, 'keys');

        await press(page, 'a:text-is("Create a key")', 'Enter');
        await page.waitForURL('**/console/keys/new?site=*');
        await checkPage(page, 'keys-new');
        await page.locator('#key-name').focus();
        await page.keyboard.type('Browser key');
        for (const permission of ['view:sites', 'view:contacts']) await press(page, `input[value="${permission}"]`, 'Space');
        await Promise.all([page.waitForURL('**/console/keys?site=*'), press(page, 'button:text-is("Create the key")', 'Enter')]);
        assert.equal(await page.locator('h1').textContent(), 'Key created');
        await checkPage(page, 'keys-created');

        const clientId = (await page.locator('#client-id').textContent())!;
        const clientSecret = (await page.locator('#client-secret').textContent())!;
        // The copy button puts the secret on the clipboard and says so.
        await press(page, 'button[data-copy="client-secret"]', 'Enter');
        await page.locator('dd:has(#client-secret) .copy-status').filter({ hasText: 'Copied.' }).waitFor();
        assert.equal(await page.evaluate('navigator.clipboard.readText()'), clientSecret);
        const me = await t.get('/v1/me', await t.tokenFor(clientId, clientSecret));
        assert.equal(me.statusCode, 200, me.body);

        // Rotate: the confirmation, then a new secret.
        await page.goto(`/console/keys?site=${t.tenant.siteId}`);
        await press(page, 'a[aria-label="Rotate the secret of Browser key"]', 'Enter');
        await page.waitForURL('**/rotate?site=*');
        assert.match((await page.locator('main').textContent()) ?? '', /What stops working/);
        await checkPage(page, 'keys-rotate');
        await press(page, 'button:text-is("Rotate the secret")', 'Enter');
        // The answer to the POST is at the same address: wait for its heading.
        await page.locator('h1:text-is("Key rotated")').waitFor();
        const newSecret = (await page.locator('#client-secret').textContent())!;
        assert.notEqual(newSecret, clientSecret);
        assert.equal((await t.get('/v1/me', await t.tokenFor(clientId, newSecret))).statusCode, 200);

        // Delete: the confirmation, then the list with a notice.
        await page.goto(`/console/keys?site=${t.tenant.siteId}`);
        await press(page, 'a[aria-label="Delete Browser key"]', 'Enter');
        await page.waitForURL('**/delete?site=*');
        await checkPage(page, 'keys-delete');
        await Promise.all([page.waitForURL('**/console/keys?done=deleted*'), press(page, 'button:text-is("Delete the key")', 'Enter')]);
        assert.match((await page.locator('.notice').textContent()) ?? '', /The key was deleted/);
        assert.equal(await page.locator('th[scope=row]:text-is("Browser key")').count(), 0);
        const refused = await t.request({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: newSecret } });
        assert.equal(refused.statusCode, 401);
        assert.deepEqual(pageProblems(page), [], 'no script error, nothing blocked by the CSP');
      });

      it('shows no Keys link to an administrator, and answers 403 at /console/keys', async () => {
        const adminId = await createUser(
          t.handle,
          { accountId: t.tenant.accountId, name: 'Ada Admin', email: `admin-${t.tenant.accountId}@example.com`, role: 'administrator', siteIds: [t.tenant.siteId] },
          t.clock,
        );
        const page = await suite.newPage({ baseURL: t.baseUrl });
        await signIn(page, adminId);
        assert.equal(await page.locator('nav a:text-is("Keys")').count(), 0);
        const response = await page.goto('/console/keys');
        assert.equal(response?.status(), 403);
        assert.equal(await page.locator('h1').textContent(), 'Not allowed');
        await expectNoSeriousAxeViolations(page);
      });
    });
  }
});
