// Every console page in Chromium, signed in as the demo account's owner: axe finds no serious or
// critical violation at desktop and phone widths, the CSP blocks nothing the page needs, and the
// screenshots of docs/console.md are taken here.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { ConsoleSessions } from '../../src/console/sessions.js';
import { seedDemoData } from '../../src/demo/seed.js';
import { describeInBrowser, expectNoSeriousAxeViolations, pageProblems, screenshot, useDesktopViewport, usePhoneViewport } from '../support/browser.js';
import { createListeningTestApp, DIALECTS, type ListeningTestApp } from '../support/harness.js';

/** Signs the page's context in through a one-time link, as a newcomer does. */
export async function signInBrowser(page: Page, t: ListeningTestApp, userId = t.tenant.ownerId): Promise<void> {
  const token = await new ConsoleSessions(t.handle, t.clock.now).createSignInLink(userId);
  await page.goto(`/console/link/${token}`);
  assert.equal(new URL(page.url()).pathname, '/console');
}

/**
 * The pages to check: a name (of the screenshot too, unless another browser test takes that page's
 * screenshot in a more telling state) and a path (the site is added).
 */
const PAGES: ReadonlyArray<{ name: string; path: string; screenshotElsewhere?: true }> = [
  { name: 'overview', path: '/console', screenshotElsewhere: true },
  { name: 'webhooks', path: '/console/webhooks', screenshotElsewhere: true },
  { name: 'events', path: '/console/events', screenshotElsewhere: true },
  { name: 'keys', path: '/console/keys', screenshotElsewhere: true },
  { name: 'keys-new', path: '/console/keys/new', screenshotElsewhere: true },
  { name: 'sandbox', path: '/console/sandbox' },
  { name: 'sandbox-snapshots', path: '/console/sandbox/snapshots' },
  { name: 'sandbox-reset', path: '/console/sandbox/reset' },
  { name: 'sandbox-faults', path: '/console/sandbox/faults' },
  { name: 'sandbox-mailbox', path: '/console/sandbox/mailbox' },
  { name: 'requests', path: '/console/requests' },
  { name: 'data', path: '/console/data' },
  { name: 'data-customers', path: '/console/data?type=customers' },
  { name: 'data-contact', path: '/console/data/contacts/1' },
  { name: 'audit', path: '/console/audit' },
];

describeInBrowser('every console page in Chromium', (suite) => {
  for (const dialect of DIALECTS) {
    describe(dialect, () => {
      let t: ListeningTestApp;
      before(async () => {
        t = await createListeningTestApp(dialect);
        await seedDemoData(t.handle, { accountId: t.tenant.accountId, siteId: t.tenant.siteId }, t.clock);
        // A few requests of the tenant's key, for the journal.
        const token = await t.token();
        await t.request({ method: 'GET', url: `/v1/contacts?filter[site_id]=${t.tenant.siteId}&page[size]=2`, token });
        await t.request({ method: 'GET', url: '/v1/contacts/999999', token });
      });
      after(() => t.close());

      for (const { name, path, screenshotElsewhere } of PAGES) {
        it(`${name}: no serious accessibility violation at desktop and phone widths, nothing blocked`, async () => {
          const page = await suite.newPage({ baseURL: t.baseUrl });
          await signInBrowser(page, t);
          const url = `${path}${path.includes('?') ? '&' : '?'}site=${t.tenant.siteId}`;
          const response = await page.goto(url);
          assert.equal(response?.status(), 200, url);
          await expectNoSeriousAxeViolations(page);
          if (dialect === 'sqlite' && !screenshotElsewhere) await screenshot(page, name);
          await usePhoneViewport(page);
          await expectNoSeriousAxeViolations(page);
          await useDesktopViewport(page);
          assert.deepEqual(pageProblems(page), [], `${url}: no script error, nothing blocked by the CSP`);
        });
      }
    });
  }
});
