// The console's sign-in and overview in Chromium: keyboard only, a strict CSP that blocks
// nothing the pages need, axe on desktop and phone widths, and a signed-out cookie that opens
// nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashPassword } from '../../src/console/passwords.js';
import { describeInBrowser, expectNoSeriousAxeViolations, pageProblems, screenshot, usePhoneViewport } from '../support/browser.js';
import { createListeningTestApp, DIALECTS, type ListeningTestApp } from '../support/harness.js';

const PASSWORD = 'a browser-typed password';

describeInBrowser('console sign-in in Chromium', (suite) => {
  for (const dialect of DIALECTS) {
    describe(dialect, () => {
      let t: ListeningTestApp;
      let email: string;
      before(async () => {
        t = await createListeningTestApp(dialect);
        email = `owner-${t.tenant.accountId}@example.com`;
        await t.handle.db.updateTable('users').set({ password_hash: await hashPassword(PASSWORD) }).where('id', '=', t.tenant.ownerId).execute();
      });
      after(() => t.close());

      it('signs in with the keyboard alone, lands on the overview, and signs out', async () => {
        const page = await suite.newPage({ baseURL: t.baseUrl });
        await page.goto('/console');
        assert.match(new URL(page.url()).pathname, /^\/console\/sign-in$/);
        await expectNoSeriousAxeViolations(page);
        if (dialect === 'sqlite') await screenshot(page, 'sign-in');

        // The first Tab reaches the skip link; the form follows.
        await page.keyboard.press('Tab');
        assert.equal(await page.locator(':focus').textContent(), 'Skip to content');
        await page.focus('#email');
        await page.keyboard.type(email);
        await page.keyboard.press('Tab');
        await page.keyboard.type(PASSWORD);
        await Promise.all([page.waitForURL('**/console'), page.keyboard.press('Enter')]);
        assert.equal(await page.locator('h1').textContent(), 'Overview');
        assert.match((await page.locator('table').first().textContent()) ?? '', /Test Site/);
        await expectNoSeriousAxeViolations(page);
        if (dialect === 'sqlite') await screenshot(page, 'overview');

        await usePhoneViewport(page);
        await expectNoSeriousAxeViolations(page);
        if (dialect === 'sqlite') await screenshot(page, 'overview-phone');

        const cookies = await page.context().cookies();
        const session = cookies.find((c) => c.name === 'sitebiz_console');
        assert.ok(session?.httpOnly && session.sameSite === 'Strict' && session.path === '/console');
        assert.equal(await page.evaluate('document.cookie'), '', 'the page script cannot read the session cookie');

        await page.getByRole('button', { name: 'Sign out' }).focus();
        await Promise.all([page.waitForURL('**/console/sign-in?signed_out=1'), page.keyboard.press('Enter')]);
        assert.match((await page.locator('[role=status]').textContent()) ?? '', /signed out/);
        await page.goto('/console');
        assert.match(new URL(page.url()).pathname, /^\/console\/sign-in$/);
        assert.deepEqual(pageProblems(page), [], 'no script error and nothing blocked by the CSP');
      });

      it('shows a wrong password as a problem, in the form, without a session', async () => {
        const page = await suite.newPage({ baseURL: t.baseUrl });
        await page.goto('/console/sign-in');
        await page.fill('#email', email);
        await page.fill('#password', 'certainly not it');
        await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]')]);
        assert.match((await page.locator('[role=alert]').textContent()) ?? '', /not right/);
        assert.equal(await page.inputValue('#email'), email, 'the email is kept');
        await expectNoSeriousAxeViolations(page);
        await t.handle.db.deleteFrom('console_sign_in_failures').execute();
      });
    });
  }
});
