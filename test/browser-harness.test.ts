// The browser test harness itself (test/support/browser.ts, axe.ts, createListeningTestApp):
// Chromium opens a page served under a strict Content-Security-Policy and axe still runs in it
// and finds what is wrong; a listening sitebiz on each database serves /docs and the API to the
// browser; screenshots are written only when asked. How the suites skip without Chromium is in
// test/test-runner.test.ts.
import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  axeViolations,
  describeInBrowser,
  expectNoSeriousAxeViolations,
  formatViolations,
  pageProblems,
  screenshot,
  SCREENSHOT_DIR,
  usePhoneViewport,
} from './support/browser.js';
import { createListeningTestApp, DIALECTS, type ListeningTestApp } from './support/harness.js';

// The console's kind of policy: scripts only from the page's origin, none inline, no eval.
const STRICT_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'";

const page = (title: string, body: string) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${title}</title><script src="/page.js"></script></head>
<body><main><h1>${title}</h1>${body}</main><script>document.body.dataset.inline = 'ran';</script></body>
</html>`;

const PAGES: Record<string, { type: string; body: string }> = {
  '/accessible': {
    type: 'text/html',
    body: page(
      'Sign in',
      '<img id="logo" src="/logo.svg" alt="sitebiz"><form><label for="email">Email</label>' +
        '<input id="email" name="email" type="email"><button type="submit">Sign in</button></form>',
    ),
  },
  // Two known critical violations: axe rules image-alt and label.
  '/image-without-alt': { type: 'text/html', body: page('Logo', '<img id="logo" src="/logo.svg">') },
  '/input-without-label': { type: 'text/html', body: page('Search', '<form><input id="query" name="q" type="text"></form>') },
  // Taller than the window: a full-page screenshot is taller than 800.
  '/long': { type: 'text/html', body: page('Long', Array.from({ length: 60 }, (_, i) => `<p>Paragraph ${i + 1}</p>`).join('')) },
  '/page.js': { type: 'text/javascript', body: "document.documentElement.dataset.external = 'ran';" },
  '/logo.svg': { type: 'image/svg+xml', body: '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><rect width="40" height="40" fill="#246"/></svg>' },
};

/** A throwaway server of PAGES, every answer under STRICT_CSP. */
async function startStrictServer(): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const found = PAGES[req.url ?? ''];
    res.writeHead(found ? 200 : 404, { 'content-type': found?.type ?? 'text/plain', 'content-security-policy': STRICT_CSP });
    res.end(found?.body ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Width and height from a PNG's header (IHDR). */
function pngSize(path: string): { width: number; height: number } {
  const png = readFileSync(path);
  assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG', `${path} is a PNG`);
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

describeInBrowser('browser harness', (browser) => {
  describe(`axe under a strict Content-Security-Policy (${STRICT_CSP})`, () => {
    let strict: Awaited<ReturnType<typeof startStrictServer>>;
    before(async () => {
      strict = await startStrictServer();
    });
    after(() => strict.close());

    it('the policy is in force: the page script from the origin runs, the inline one is refused, and so is an added <script>', async () => {
      const tab = await browser.newPage({ baseURL: strict.baseUrl });
      const response = await tab.goto('/accessible');
      assert.equal(response?.headers()['content-security-policy'], STRICT_CSP);
      assert.equal(await tab.getAttribute('html', 'data-external'), 'ran');
      assert.equal(await tab.getAttribute('body', 'data-inline'), null, 'the inline script did not run');
      // The way a test must not inject axe: a <script> element is the page's own code, under its policy.
      await tab.addScriptTag({ content: 'globalThis.addedByTag = true;' }).catch(() => {});
      assert.equal(await tab.evaluate(() => (globalThis as { addedByTag?: boolean }).addedByTag), undefined);
      const refusals = pageProblems(tab).filter((p) => p.includes('Content Security Policy'));
      assert.equal(refusals.length, 2, `both inline scripts were refused:\n${pageProblems(tab).join('\n')}`);
    });

    it('finds no serious violation on an accessible page', async () => {
      const tab = await browser.newPage({ baseURL: strict.baseUrl });
      await tab.goto('/accessible');
      await expectNoSeriousAxeViolations(tab);
      // axe did run in the page (through the DevTools protocol, which the policy does not cover).
      assert.match(await tab.evaluate(() => (globalThis as unknown as { axe: { version: string } }).axe.version), /^4\./);
    });

    it('reports an image without alternative text: rule, impact, help and the element', async () => {
      const tab = await browser.newPage({ baseURL: strict.baseUrl });
      await tab.goto('/image-without-alt');
      await assert.rejects(expectNoSeriousAxeViolations(tab), (error: Error) => {
        assert.match(error.message, /axe: 1 serious or critical violation\(s\) on http:\/\/127\.0\.0\.1:\d+\/image-without-alt:/);
        assert.match(error.message, /- image-alt \(critical\): Images must have alternative text\n {4}#logo\n {4}https:\/\/dequeuniversity\.com\/rules\/axe\/4\.\d+\/image-alt/);
        return true;
      });
    });

    it('reports a form field without a label, after a navigation (axe injected again)', async () => {
      const tab = await browser.newPage({ baseURL: strict.baseUrl });
      await tab.goto('/accessible');
      assert.deepEqual(await axeViolations(tab).then((all) => all.filter((v) => v.impact === 'critical')), []);
      await tab.goto('/input-without-label');
      const found = await axeViolations(tab);
      const label = found.find((v) => v.rule === 'label');
      assert.deepEqual(label && { impact: label.impact, targets: label.targets }, { impact: 'critical', targets: ['#query'] }, formatViolations(found));
      await assert.rejects(expectNoSeriousAxeViolations(tab), /- label \(critical\): Form elements must have labels\n {4}#query\n/);
    });

    it('takes full-page screenshots at 1280 wide, 390 on a phone, only when asked', async () => {
      const tab = await browser.newPage({ baseURL: strict.baseUrl });
      await tab.goto('/long');
      assert.equal(await screenshot(tab, 'harness-check', { enabled: false }), undefined);
      assert.equal(existsSync(join(SCREENSHOT_DIR, 'harness-check.png')), false, 'nothing written');

      const dir = mkdtempSync(join(tmpdir(), 'sitebiz-screenshots-'));
      try {
        const desktop = pngSize((await screenshot(tab, 'long', { enabled: true, dir }))!);
        assert.equal(desktop.width, 1280);
        assert.ok(desktop.height > 800, `the whole page, taller than the window: ${desktop.height}`);
        await usePhoneViewport(tab);
        const phone = pngSize((await screenshot(tab, 'long-phone', { enabled: true, dir }))!);
        assert.equal(phone.width, 390);
        assert.deepEqual(readdirSync(dir).sort(), ['long-phone.png', 'long.png']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      await assert.rejects(screenshot(tab, '../outside'), /screenshot name "..\/outside"/);
    });
  });

  for (const dialect of DIALECTS) {
    describe(`/docs and the API of a listening sitebiz [${dialect}]`, () => {
      let t: ListeningTestApp;
      before(async () => {
        t = await createListeningTestApp(dialect);
      });
      after(() => t.close());

      it('serves /docs to the browser, and axe runs on it', async (context) => {
        const tab = await browser.newPage({ baseURL: t.baseUrl });
        const response = await tab.goto('/docs');
        assert.equal(response?.status(), 200);
        assert.ok(response?.headers()['content-security-policy'], 'the reference page has a policy of its own');
        // The page is HTML rendered by sitebiz (src/docs/reference-page.ts): its operations are
        // there as it arrives.
        await tab.locator('article.operation[data-path="/v1/oauth/token"]').first().waitFor();
        assert.match(await tab.title(), /sitebiz/);
        // axe's findings on the reference page are reported here (test/api-reference.browser.test.ts
        // holds the page to the rest).
        const found = await axeViolations(tab);
        const summary = found.map((v) => `${v.rule} (${v.impact}, ${v.targets.length} element(s))`).join(', ');
        context.diagnostic(`axe on /docs [${dialect}]: ${found.length} violation(s): ${summary}`);
        assert.ok(found.every((v) => v.rule !== '' && v.targets.length > 0), formatViolations(found));
        assert.match(await tab.evaluate(() => (globalThis as unknown as { axe: { version: string } }).axe.version), /^4\./);
        const problems = pageProblems(tab);
        if (problems.length > 0) context.diagnostic(`console errors on /docs [${dialect}]:\n${problems.join('\n')}`);
      });

      it('the browser signs in to the API with the tenant key, and the links lead back to the listening address', async () => {
        const tab = await browser.newPage({ baseURL: t.baseUrl });
        // Any page of the app's origin will do.
        await tab.goto('/v1/version');
        const { clientId, clientSecret } = t.tenant;
        const answer = await tab.evaluate(
          async ({ clientId, clientSecret }) => {
            const token = await fetch('/v1/oauth/token', {
              method: 'POST',
              body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
            }).then((r) => r.json() as Promise<{ access_token: string }>);
            const sites = await fetch('/v1/sites', { headers: { authorization: `Bearer ${token.access_token}` } });
            return { status: sites.status, body: (await sites.json()) as { data: Array<{ id: string }>; links: { self: string } } };
          },
          { clientId, clientSecret },
        );
        assert.equal(answer.status, 200);
        assert.deepEqual(answer.body.data.map((site) => site.id), [String(t.tenant.siteId)]);
        assert.ok(answer.body.links.self.startsWith(`${t.baseUrl}/v1/sites`), answer.body.links.self);
      });
    });
  }
});
