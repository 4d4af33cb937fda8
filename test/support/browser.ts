// End-to-end tests in a real browser: Playwright (playwright-core, which downloads no browser)
// driving the machine's Chromium, Debian's `chromium` package by default.
//
// Where Chromium is: $CHROMIUM_PATH, else /usr/bin/chromium. Without it the browser suites are
// skipped and counted in the summary's `skipped`, as PostgreSQL and the upstream document are;
// in CI (CI set) a missing Chromium fails them instead, so CI cannot pass without running them.
// bin/run-tests.js prints which it is at the start of a run (the same lookup, kept in step).
//
// One browser per describeInBrowser suite (launching costs about half a second); each test gets
// fresh contexts (no cookies or storage shared between tests), closed after the test.
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, afterEach, before, describe, it } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export { axeViolations, expectNoSeriousAxeViolations, formatViolations, seriousAxeViolations, type AxeViolation } from './axe.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';
const INSTALL_HINT = 'apt-get install -y chromium, or set CHROMIUM_PATH';

/** The Chromium the tests would use, and whether it is there (an executable file). */
export function chromiumLookup(env: NodeJS.ProcessEnv = process.env): { path: string; found: boolean } {
  const path = env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH;
  try {
    accessSync(path, constants.X_OK);
    return { path, found: statSync(path).isFile() };
  } catch {
    return { path, found: false };
  }
}

const lookup = chromiumLookup();

/** The browser the suites launch, or null when there is none. */
export const BROWSER: { executablePath: string } | null = lookup.found ? { executablePath: lookup.path } : null;

/**
 * Why the browser suites do not run here; undefined when they run (or, in CI, fail).
 * TEST_BROWSER_SUITES=off skips them on purpose: CI's second run (Node 24) leaves them to the first,
 * since they test pages and Chromium, which no Node version changes (.ci/run).
 */
export const BROWSER_SKIP_REASON: string | undefined =
  process.env.TEST_BROWSER_SUITES === 'off'
    ? 'TEST_BROWSER_SUITES=off: another run of this CI ran them'
    : BROWSER || process.env.CI
      ? undefined
      : `browser tests skipped: no Chromium at ${lookup.path} (${INSTALL_HINT})`;

export const DESKTOP_VIEWPORT = { width: 1280, height: 800 } as const;
export const PHONE_VIEWPORT = { width: 390, height: 844 } as const;

export interface NewPageOptions {
  /** Resolves relative URLs of page.goto, e.g. a ListeningTestApp's baseUrl. */
  baseURL?: string;
}

export interface BrowserSuite {
  /**
   * A page in a context of its own, desktop-sized (1280x800), English, UTC, light scheme, no
   * motion: the same every run, for screenshots. Closed after the test.
   */
  newPage(options?: NewPageOptions): Promise<Page>;
  /** The suite's browser, for what newPage does not cover (close what you open). */
  readonly browser: Browser;
}

/**
 * A suite that needs the browser. Put the DIALECTS loop inside it, so a test file launches
 * one browser. Without Chromium it is a single skipped test (node's summary counts skipped
 * tests, not skipped suites), or, in CI, a single failing one.
 */
export function describeInBrowser(name: string, fn: (suite: BrowserSuite) => void): void {
  if (BROWSER_SKIP_REASON) {
    it(name, { skip: BROWSER_SKIP_REASON }, () => {});
    return;
  }
  if (!BROWSER) {
    it(name, () => {
      throw new Error(`no Chromium at ${lookup.path}, and CI must run the browser tests (${INSTALL_HINT})`);
    });
    return;
  }
  const executablePath = BROWSER.executablePath;
  describe(name, () => {
    let browser: Browser | undefined;
    const contexts: BrowserContext[] = [];
    const suite: BrowserSuite = {
      get browser() {
        if (!browser) throw new Error('the browser is launched before the first test: use it inside tests and hooks');
        return browser;
      },
      async newPage(options = {}) {
        const context = await suite.browser.newContext({
          viewport: { ...DESKTOP_VIEWPORT },
          deviceScaleFactor: 1,
          locale: 'en-US',
          timezoneId: 'UTC',
          colorScheme: 'light',
          reducedMotion: 'reduce',
          ...(options.baseURL ? { baseURL: options.baseURL } : {}),
        });
        contexts.push(context);
        const page = await context.newPage();
        recordProblems(page);
        return page;
      },
    };
    before(async () => {
      // Chromium's sandbox refuses to start as root (CI and this machine run as root).
      const args = process.getuid?.() === 0 ? ['--no-sandbox'] : [];
      browser = await chromium.launch({ executablePath, args });
    });
    afterEach(async () => {
      await Promise.all(contexts.splice(0).map((context) => context.close()));
    });
    after(async () => {
      await Promise.all(contexts.splice(0).map((context) => context.close()));
      await browser?.close();
    });
    fn(suite);
  });
}

// ---------------------------------------------------------------------------------------------
// What went wrong inside a page

const problems = new WeakMap<Page, string[]>();

function recordProblems(page: Page): void {
  const seen: string[] = [];
  problems.set(page, seen);
  page.on('pageerror', (error) => seen.push(`uncaught: ${error.message}`));
  // Chromium reports what the Content-Security-Policy refused (an inline script, a stylesheet
  // from elsewhere) as console errors; a page broken by its own policy shows up here.
  page.on('console', (message) => {
    if (message.type() === 'error') seen.push(`console: ${message.text()}`);
  });
}

/** The uncaught errors and console errors of a page from newPage, so far. */
export function pageProblems(page: Page): string[] {
  const seen = problems.get(page);
  if (!seen) throw new Error('pageProblems: the page does not come from a BrowserSuite.newPage');
  return [...seen];
}

// ---------------------------------------------------------------------------------------------
// Viewports and screenshots

/** A phone's size (390x844): the page lays out as on a phone (media queries, wrapping). */
export async function usePhoneViewport(page: Page): Promise<void> {
  await page.setViewportSize({ ...PHONE_VIEWPORT });
}

export async function useDesktopViewport(page: Page): Promise<void> {
  await page.setViewportSize({ ...DESKTOP_VIEWPORT });
}

export const SCREENSHOT_DIR = join(repoRoot, 'docs', 'console');

export interface ScreenshotOptions {
  /** Default: CONSOLE_SCREENSHOTS=1, so an ordinary test run never changes the tree. */
  enabled?: boolean;
  /** Default: docs/console of the repository. */
  dir?: string;
}

/**
 * A full-page PNG of the page at its current viewport, as `<dir>/<name>.png`, when screenshots
 * are enabled (`CONSOLE_SCREENSHOTS=1 node bin/run-tests.js test/console/...`). Returns the
 * file written, or undefined. Names are checked either way, so a bad one fails every run.
 */
export async function screenshot(page: Page, name: string, options: ScreenshotOptions = {}): Promise<string | undefined> {
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(name)) throw new Error(`screenshot name ${JSON.stringify(name)}: use lowercase words joined by "-"`);
  const enabled = options.enabled ?? process.env.CONSOLE_SCREENSHOTS === '1';
  if (!enabled) return undefined;
  const dir = options.dir ?? SCREENSHOT_DIR;
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.png`);
  // No caret and no running animations: the same page gives the same picture.
  await page.screenshot({ path, fullPage: true, animations: 'disabled', caret: 'hide' });
  return path;
}
