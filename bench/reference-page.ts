// The reference-page suite (`npm run bench -- --suites reference-page`): how soon /docs shows its
// first operation in Chromium, against the pages it could have been (issue 22). For each page and
// each OpenAPI document, --reference-runs loads (default 5), alternating pages and documents load by
// load so that all share the machine's load of the moment, each in a fresh browser context (a
// first visit: nothing cached):
//
//   - first operation: from navigation start (performance.now() in the page) to the first frame
//     in which the page's first operation element is laid out (a requestAnimationFrame probe
//     added before the page's own scripts);
//   - settled: the end of the page's last long task (over 50 ms) once 2 s pass without one: until
//     then a click or a keystroke may wait;
//   - bytes: every response's headers and body as received (encoded) during the load;
//   - problems: console errors, uncaught errors and Content-Security-Policy violations.
//
// The pages: sitebiz's own /docs (src/docs/reference-page.ts); Swagger UI, the page before it;
// Scalar; Redoc. The other three come from their npm packages, fetched with `npm pack` into a
// cache directory (they are not dependencies of sitebiz) and served by a small server of this
// file under the same strict policy as /docs, with a nonce for styles: none of them can do without
// inline styles. Redoc's styled-components cannot take the nonce in its standalone bundle, so
// Redoc runs with style-src 'unsafe-inline' (and it has no "Try it": it is measured for the record).
// The documents: the one this checkout serves (/v1/openapi.json) and the upstream's
// (shared/reference/upstream-openapi-v1.1.0.yml: 420 KB, 414 $ref, 81 named schemas).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { extname, join, normalize } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { parse } from 'yaml';
import { REFERENCE_CSP, renderReferencePage } from '../src/docs/reference-page.js';
import { upstreamFilePath } from '../test/support/upstream.js';
import { HttpClient } from './http-client.js';
import { freePort, HOST, isRunning, registerTempDir, ROOT, sleep, startNode, stopChild } from './processes.js';
import { median } from './stats.js';

/** The compared packages, pinned: the figures are of these versions. */
const PACKAGES = {
  swagger: 'swagger-ui-dist@5.32.1', // the version @fastify/swagger-ui 5.2.6 served at /docs before
  scalar: '@scalar/api-reference@1.72.1',
  redoc: 'redoc@2.5.4',
} as const;

interface Candidate {
  name: string;
  /** The page's HTML for a document URL (the nonce is the response's). */
  page?: (documentUrl: string, nonce: string) => string;
  /** Where the page's files are, under /<key>/ of the bench's server. */
  root?: string;
  /** The page's first operation. */
  firstOperation: string;
  /** Relaxations of the strict policy this page needs to work at all. */
  styleSrc?: string;
}

export interface ReferencePageRow {
  page: string;
  document: string;
  firstOperationMs: number[];
  settledMs: number[];
  bytes: number[];
  problems: string[];
}

export interface ReferencePageResult {
  runs: number;
  documents: Array<{ name: string; bytes: number; refs: number }>;
  rows: ReferencePageRow[];
  chromium: string;
}

const CACHE = join(os.tmpdir(), 'sitebiz-bench-reference-pages');

/** The unpacked package (its `package/` directory), fetched once into the cache. */
function unpacked(spec: string): string {
  const dir = join(CACHE, spec.replace(/[/@]/g, '_'));
  const root = join(dir, 'package');
  if (existsSync(join(root, 'package.json'))) return root;
  mkdirSync(dir, { recursive: true });
  const tarball = execFileSync('npm', ['pack', spec, '--pack-destination', dir, '--silent'], { cwd: dir, encoding: 'utf8' }).trim().split('\n').pop()!;
  execFileSync('tar', ['xzf', join(dir, tarball), '-C', dir]);
  return root;
}

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png' };

/** Start-up scripts of the compared pages (files, as the policy allows no inline script). */
const INIT_SCRIPTS: Record<string, string> = {
  // What @fastify/swagger-ui's initializer configured at /docs before.
  'swagger.js': `window.ui = SwaggerUIBundle({ url: document.currentScript.dataset.url, dom_id: '#swagger-ui', deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], plugins: [SwaggerUIBundle.plugins.DownloadUrl], layout: 'StandaloneLayout',
  validatorUrl: null, docExpansion: 'list', filter: true, persistAuthorization: true });`,
  // The code-split build: only the chunks the page needs are loaded.
  'scalar.js': `import { createApiReference } from '/scalar/dist/browser/standalone.esm.js';
createApiReference('#app', { url: document.querySelector('script[data-url]').dataset.url });`,
};

function candidates(): Record<string, Candidate> {
  return {
    sitebiz: { name: 'sitebiz /docs (server-rendered)', firstOperation: 'article.operation' },
    swagger: {
      name: `Swagger UI ${PACKAGES.swagger.split('@')[1]}`,
      root: unpacked(PACKAGES.swagger),
      firstOperation: '.opblock',
      page: (url) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Swagger UI</title><link rel="stylesheet" href="/swagger/swagger-ui.css"></head>
<body><div id="swagger-ui"></div><script src="/swagger/swagger-ui-bundle.js"></script><script src="/swagger/swagger-ui-standalone-preset.js"></script>
<script src="/init/swagger.js" data-url="${url}"></script></body></html>`,
    },
    scalar: {
      name: `Scalar ${PACKAGES.scalar.split('@')[2]}`,
      root: unpacked(PACKAGES.scalar),
      // An operation in the content column (the sidebar's entries come earlier); its element is a
      // section or a div depending on the document.
      firstOperation: 'main .endpoint, main [id*="/tag/"][id*="/POST/"], main [id*="/tag/"][id*="/GET/"]',
      // The bundle gives its stylesheet the nonce of meta[property=csp-nonce].
      page: (url, nonce) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Scalar</title><meta property="csp-nonce" content="${nonce}"></head>
<body><div id="app"></div><script type="module" src="/init/scalar.js" data-url="${url}"></script></body></html>`,
    },
    redoc: {
      name: `Redoc ${PACKAGES.redoc.split('@')[1]}`,
      root: unpacked(PACKAGES.redoc),
      firstOperation: '[data-section-id^="operation/"], [data-section-id*="/paths/"]',
      styleSrc: "'self' 'unsafe-inline'",
      page: (url) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Redoc</title></head>
<body><redoc spec-url="${url}"></redoc><script src="/redoc/bundles/redoc.standalone.js"></script></body></html>`,
    },
  };
}

/** sitebiz serving a fresh SQLite database of its own (the demo account), on a free port. */
async function startSitebiz(work: string): Promise<{ baseUrl: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = startNode('sitebiz serve (reference page)', ['bin/sitebiz.js', 'serve', '--port', String(port), '--host', HOST, '--database-url', `sqlite:${join(work, 'docs.db')}`], {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LOG_LEVEL: 'warn',
  });
  const baseUrl = `http://${HOST}:${port}`;
  const client = new HttpClient(baseUrl);
  const started = performance.now();
  try {
    for (;;) {
      if (!isRunning(child)) throw new Error(`${child.name} exited before it answered:\n${child.output()}`);
      try {
        if ((await client.send('/v1/version', { timeoutMs: 5000 })).status === 200) break;
      } catch {
        // not listening yet
      }
      if (performance.now() - started > 120_000) throw new Error(`${child.name} did not answer within 120 s:\n${child.output()}`);
      await sleep(50);
    }
  } finally {
    client.close();
  }
  return { baseUrl, stop: () => stopChild(child) };
}

/** The bench's server: the compared pages, their files and the documents, under a strict policy. */
async function startPageServer(pages: Record<string, Candidate>, documents: Record<string, string>): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const sitebizPages = new Map(Object.entries(documents).map(([name, text]) => [name, renderReferencePage(JSON.parse(text), '/sitebiz', `/doc/${name}.json`)]));
  const sitebizAssets = join(ROOT, 'src', 'docs', 'assets');
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://bench');
    const nonce = randomBytes(16).toString('base64');
    const [, first = '', ...rest] = url.pathname.split('/');
    const candidate = pages[first];
    const policy =
      first === 'sitebiz'
        ? REFERENCE_CSP
        : `default-src 'self'; script-src 'self'; style-src ${candidate?.styleSrc ?? `'self' 'nonce-${nonce}'`}; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; base-uri 'none'`;
    const send = (status: number, type: string, body: string | Buffer) => {
      response.writeHead(status, { 'content-type': type, 'content-security-policy': policy, 'cache-control': 'no-store' });
      response.end(body);
    };
    const documentName = url.searchParams.get('document') ?? '';
    if (rest.length === 1 && rest[0] === 'page') {
      if (first === 'sitebiz' && sitebizPages.has(documentName)) return send(200, 'text/html; charset=utf-8', sitebizPages.get(documentName)!);
      if (candidate?.page && documents[documentName]) return send(200, 'text/html; charset=utf-8', candidate.page(`/doc/${documentName}.json`, nonce));
    }
    if (first === 'doc' && documents[rest[0]?.replace(/\.json$/, '') ?? '']) return send(200, 'application/json', documents[rest[0]!.replace(/\.json$/, '')]!);
    if (first === 'init' && INIT_SCRIPTS[rest[0] ?? '']) return send(200, 'text/javascript', INIT_SCRIPTS[rest[0]!]!);
    const root = first === 'sitebiz' ? (rest[0] === 'assets' ? sitebizAssets : undefined) : candidate?.root;
    const relative = first === 'sitebiz' ? rest.slice(1).join('/') : rest.join('/');
    if (root && relative) {
      const file = normalize(join(root, relative));
      if (file.startsWith(root) && existsSync(file)) return send(200, TYPES[extname(file)] ?? 'application/octet-stream', readFileSync(file));
    }
    send(404, 'text/plain', 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  return {
    baseUrl: `http://${HOST}:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Added before the page's scripts: the first-operation probe, long tasks and CSP violations. */
const probe = (selector: string) => `(() => {
  window.__bench = { long: [], violations: [] };
  new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__bench.long.push(e.startTime + e.duration); }).observe({ type: 'longtask', buffered: true });
  document.addEventListener('securitypolicyviolation', (e) => window.__bench.violations.push(e.violatedDirective + ' ' + (e.sample || e.blockedURI)));
  const tick = () => {
    const found = document.querySelector(${JSON.stringify(selector)});
    if (found && found.getBoundingClientRect().height > 0) window.__bench.firstOperation = performance.now();
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})();`;

interface BenchWindow {
  __bench: { long: number[]; violations: string[]; firstOperation?: number };
}

async function loadOnce(browser: Browser, url: string, selector: string, timeoutMs: number): Promise<{ firstOperationMs: number; settledMs: number; bytes: number; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text().slice(0, 160));
    });
    page.on('pageerror', (error) => problems.push(`uncaught: ${error.message.slice(0, 160)}`));
    const sizes: Array<Promise<number>> = [];
    page.on('requestfinished', (request) => sizes.push(request.sizes().then((s) => s.responseHeadersSize + s.responseBodySize, () => 0)));
    await page.addInitScript(probe(selector));
    await page.goto(url, { waitUntil: 'commit' });
    await page.waitForFunction(() => (globalThis as unknown as BenchWindow).__bench?.firstOperation !== undefined, null, { timeout: timeoutMs, polling: 100 });
    // Settled: 2 s without a long task. Asked every 250 ms; a page busy in a long task answers
    // only after it, and its entry is delivered to the observer after that: so the answer waits a
    // moment in the page, and counts only when it came back at once.
    let settledMs = 0;
    for (const started = Date.now(); Date.now() - started < timeoutMs; ) {
      await sleep(250);
      const asked = Date.now();
      const state = await page.evaluate(async () => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return { now: performance.now(), last: Math.max(0, ...(globalThis as unknown as BenchWindow).__bench.long) };
      });
      settledMs = state.last;
      if (Date.now() - asked < 300 && state.now - state.last > 2000) break;
    }
    const found = await page.evaluate(() => (globalThis as unknown as BenchWindow).__bench);
    problems.push(...found.violations.map((v) => `CSP: ${v.slice(0, 160)}`));
    return { firstOperationMs: found.firstOperation!, settledMs, bytes: (await Promise.all(sizes)).reduce((a, b) => a + b, 0), problems };
  } finally {
    await context.close();
  }
}

export async function measureReferencePages(runs: number, options: { timeoutMs?: number; only?: string[] } = {}): Promise<ReferencePageResult> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const work = mkdtempSync(join(os.tmpdir(), 'sitebiz-reference-'));
  registerTempDir(work);
  console.log('  fetching the compared pages (npm pack, cached in %s)', CACHE);
  const pages = Object.fromEntries(Object.entries(candidates()).filter(([key]) => !options.only || options.only.includes(key)));
  const sitebiz = await startSitebiz(work);
  let pageServer: Awaited<ReturnType<typeof startPageServer>> | undefined;
  let browser: Browser | undefined;
  try {
    const served = await fetch(`${sitebiz.baseUrl}/v1/openapi.json`).then((r) => r.text());
    const documents: Record<string, string> = {
      served,
      upstream: JSON.stringify(parse(readFileSync(upstreamFilePath(), 'utf8'))),
    };
    pageServer = await startPageServer(pages, documents);
    const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
    browser = await chromium.launch({ executablePath, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
    const loads = [
      // The real thing: sitebiz's /docs as it serves it (its document only).
      ...('sitebiz' in pages ? [{ key: 'sitebiz', document: 'served (/docs of sitebiz)', url: `${sitebiz.baseUrl}/docs` }] : []),
      ...Object.keys(pages).flatMap((key) =>
        Object.keys(documents).map((document) => ({ key, document, url: `${pageServer!.baseUrl}/${key}/page?document=${document}` })),
      ),
    ];
    const rows: ReferencePageRow[] = loads.map((l) => ({ page: pages[l.key]!.name, document: l.document, firstOperationMs: [], settledMs: [], bytes: [], problems: [] }));
    // One unmeasured load of each: files read from disk once, sitebiz's page rendered once.
    for (const load of loads) await loadOnce(browser, load.url, pages[load.key]!.firstOperation, timeoutMs).catch(() => undefined);
    for (let run = 0; run < runs; run++) {
      // Alternate the order too, so that no page always follows the heaviest one.
      const order = run % 2 === 0 ? loads.map((_, i) => i) : loads.map((_, i) => loads.length - 1 - i);
      for (const index of order) {
        const load = loads[index]!;
        const row = rows[index]!;
        try {
          const result = await loadOnce(browser, load.url, pages[load.key]!.firstOperation, timeoutMs);
          row.firstOperationMs.push(result.firstOperationMs);
          row.settledMs.push(result.settledMs);
          row.bytes.push(result.bytes);
          // The same message with another nonce is the same problem.
          for (const problem of result.problems.map((p) => p.replace(/'nonce-[^']*'/g, "'nonce-…'"))) if (!row.problems.includes(problem)) row.problems.push(problem);
        } catch (error) {
          row.firstOperationMs.push(Number.POSITIVE_INFINITY);
          row.problems.push(`no first operation within ${timeoutMs / 1000} s: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
        }
        console.log(`  run ${run + 1}/${runs} ${row.page}, ${row.document}: first operation ${Math.round(row.firstOperationMs.at(-1)!)} ms, settled ${Math.round(row.settledMs.at(-1) ?? 0)} ms`);
      }
    }
    const refs = (text: string) => (text.match(/"\$ref"/g) ?? []).length;
    return {
      runs,
      documents: Object.entries(documents).map(([name, text]) => ({ name, bytes: Buffer.byteLength(text), refs: refs(text) })),
      rows,
      chromium: browser.version(),
    };
  } finally {
    await browser?.close();
    await pageServer?.close();
    await sitebiz.stop();
  }
}

const ms = (value: number) => (Number.isFinite(value) ? `${(value / 1000).toFixed(2)} s` : 'none');

export function referencePageSection(result: ReferencePageResult): string[] {
  const lines = [
    `Chromium ${result.chromium}, ${result.runs} loads per row in a fresh context each, pages alternating; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' / ')} at the end.`,
    `Documents: ${result.documents.map((d) => `${d.name} ${Math.round(d.bytes / 1024)} KB with ${d.refs} $ref`).join('; ')}.`,
    '',
    '| Page | Document | First operation, median | max | Settled, median | KB received | Problems |',
    '|---|---|--:|--:|--:|--:|---|',
  ];
  for (const row of result.rows) {
    const problems = row.problems.length === 0 ? 'none' : `${row.problems.length}: ${row.problems.slice(0, 2).join('; ').replace(/\|/g, '\\|')}`;
    lines.push(
      `| ${row.page} | ${row.document} | ${ms(median(row.firstOperationMs))} | ${ms(Math.max(...row.firstOperationMs))} | ${ms(median(row.settledMs))} | ${Math.round(median(row.bytes) / 1024)} | ${problems} |`,
    );
  }
  return lines;
}
