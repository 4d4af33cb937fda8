// The API reference at /docs in Chromium, as a newcomer uses it: the operations show, nothing is
// blocked by the page's policy and nothing fails in its script, the search narrows the 120
// operations, a schema opens, and "Try it" with a bearer token answers GET /v1/contacts, with the
// token still there after a reload. How soon the page shows its first operation is measured in
// the bench (`npm run bench -- --suites reference-page`), not here.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { describeInBrowser, pageProblems } from './support/browser.js';
import { createListeningTestApp, DIALECTS, type ListeningTestApp } from './support/harness.js';

/** Added before the page's own script: every Content-Security-Policy violation, kept in the page. */
const RECORD_VIOLATIONS = `window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + (e.sample || e.blockedURI)));`;

const violations = (page: Page) => page.evaluate(() => (globalThis as unknown as { __violations: string[] }).__violations);

describeInBrowser('the API reference at /docs in Chromium', (suite) => {
  for (const dialect of DIALECTS) {
    describe(dialect, () => {
      let t: ListeningTestApp;
      before(async () => {
        t = await createListeningTestApp(dialect);
      });
      after(() => t.close());

      it('shows the operations, searches them, and tries GET /v1/contacts with a bearer token', async () => {
        const page = await suite.newPage({ baseURL: t.baseUrl });
        await page.addInitScript(RECORD_VIOLATIONS);
        const response = await page.goto('/docs');
        assert.equal(response?.status(), 200);
        assert.doesNotMatch(response!.headers()['content-security-policy'] ?? '', /unsafe/, 'a strict policy');
        await page.locator('article.operation').first().waitFor();
        assert.match(await page.title(), /^sitebiz: /);
        assert.equal(await page.locator('header img[alt="sitebiz"]').count(), 1, "sitebiz's logo");
        const all = await page.locator('article.operation').count();
        const document = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{ paths: Record<string, Record<string, unknown>> }>();
        const operations = Object.values(document.paths).flatMap((item) => Object.keys(item).filter((key) => ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'].includes(key)));
        assert.ok(operations.length >= 120, `${operations.length} operations in the document`);
        assert.equal(all, operations.length, 'every operation of the document');

        await page.fill('#search', 'list contacts');
        const shown = page.locator('article.operation:visible');
        assert.ok((await shown.count()) < 10, 'the search narrows the list');
        assert.ok(await page.locator('#op-get-v1-contacts').isVisible(), 'and keeps GET /v1/contacts');
        assert.match((await page.textContent('#search-count')) ?? '', new RegExp(`of ${all} operations`));

        const operation = page.locator('#op-get-v1-contacts');
        await operation.locator('details.schema').first().locator('summary').click();
        await operation.locator('ul.properties code', { hasText: 'data' }).first().waitFor();

        await page.fill('#token', await t.token());
        await operation.locator('details.try > summary').click();
        await operation.locator('input[data-name="filter[site_id]"]').fill(String(t.tenant.siteId));
        await operation.locator('input[data-name="page[size]"]').fill('2');
        await operation.locator('form.try-form button[type="submit"]').click();
        const status = operation.locator('.answer-status');
        await status.waitFor();
        assert.match((await status.textContent()) ?? '', /^200 .*GET \/v1\/contacts\?/);
        const body = JSON.parse((await operation.locator('.answer-body').textContent()) ?? '') as { data: unknown[] };
        assert.ok(Array.isArray(body.data) && body.data.length <= 2, 'the answer is the page of contacts');

        assert.deepEqual(await violations(page), [], 'no Content-Security-Policy violation');
        // The token is kept across visits (localStorage), until Forget.
        await page.reload();
        assert.notEqual(await page.inputValue('#token'), '');
        await page.click('#forget-token');
        assert.equal(await page.evaluate(() => Object.keys((globalThis as unknown as { localStorage: object }).localStorage).length), 0, 'Forget removes it');

        assert.deepEqual(await violations(page), [], 'none after a reload either');
        assert.deepEqual(pageProblems(page), [], 'no console error, no uncaught error');
      });
    });
  }
});
