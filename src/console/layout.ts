// The frame of every console page: head (assets served by sitebiz itself), skip link, header
// with the account, site picker and sign-out, the navigation, and the page's main content.
import type { Mode } from '../config.js';
import { html, type Html, type HtmlValue } from './html.js';
import type { ConsoleSession } from './sessions.js';

export interface NavEntry {
  path: string;
  title: string;
}

export interface SiteChoice {
  id: number;
  title: string;
}

export interface PageFrame {
  title: string;
  /** The nav entry to mark as current (its path). */
  active?: string;
  body: HtmlValue;
  /** Shown above the body: what the last action did. */
  notice?: string;
  /** Shown above the body: what went wrong. */
  problems?: readonly string[];
}

export interface FrameContext {
  mode: Mode;
  session: ConsoleSession | null;
  csrfToken?: string;
  nav: readonly NavEntry[];
  sites: readonly SiteChoice[];
  siteId: number | null;
  /** The page's path, to keep the site picker on the same page. */
  path: string;
}

const ASSETS = '/console/assets';

export function documentShell(title: string, content: HtmlValue, csrfToken?: string): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="htmx-config" content='{"allowEval":false,"allowScriptTags":false,"includeIndicatorStyles":false,"historyCacheSize":0,"selfRequestsOnly":true}'>
${csrfToken ? html`<meta name="csrf-token" content="${csrfToken}">` : ''}
<title>${title} · sitebiz console</title>
<link rel="stylesheet" href="${ASSETS}/console.css">
<link rel="icon" href="${ASSETS}/favicon.svg" type="image/svg+xml">
<script src="${ASSETS}/htmx.min.js" defer></script>
<script src="${ASSETS}/console.js" type="module"></script>
</head>
<body>
${content}
</body>
</html>`;
}

/** Links keep the chosen site. */
export function withSite(path: string, siteId: number | null): string {
  if (siteId === null) return path;
  return `${path}${path.includes('?') ? '&' : '?'}site=${siteId}`;
}

export function renderFrame(ctx: FrameContext, frame: PageFrame): Html {
  const { session } = ctx;
  const header = html`<header class="top">
  <a class="skip" href="#main">Skip to content</a>
  <a class="brand" href="${withSite('/console', ctx.siteId)}">sitebiz <span class="mode mode-${ctx.mode}">${ctx.mode}</span></a>
  ${
    session
      ? html`<div class="who">
    ${ctx.sites.length > 0 ? siteSelector(ctx) : ''}
    <span class="user">${session.user.name} <span class="role">(${session.user.role}, ${session.user.accountName})</span></span>
    <form method="post" action="/console/sign-out" class="inline">
      <input type="hidden" name="_csrf" value="${session.csrfToken}">
      <button type="submit" class="link">Sign out</button>
    </form>
  </div>`
      : ''
  }
</header>`;
  const nav = session
    ? html`<nav aria-label="Console">
  <ul>${ctx.nav.map(
    (entry) => html`<li><a href="${withSite(entry.path, ctx.siteId)}"${entry.path === frame.active ? html` aria-current="page"` : ''}>${entry.title}</a></li>`,
  )}</ul>
</nav>`
    : '';
  const problems = frame.problems && frame.problems.length > 0
    ? html`<div class="problems" role="alert"><ul>${frame.problems.map((p) => html`<li>${p}</li>`)}</ul></div>`
    : '';
  const notice = frame.notice ? html`<p class="notice" role="status">${frame.notice}</p>` : '';
  return documentShell(
    frame.title,
    html`${header}
<div class="layout">
${nav}
<main id="main" tabindex="-1">
<h1>${frame.title}</h1>
${notice}${problems}
${frame.body}
</main>
</div>`,
    session?.csrfToken,
  );
}

function siteSelector(ctx: FrameContext): Html {
  return html`<form method="get" action="${ctx.path}" class="inline site-picker">
  <label for="site-picker">Site</label>
  <select id="site-picker" name="site">
    ${ctx.sites.map((s) => html`<option value="${s.id}"${s.id === ctx.siteId ? html` selected` : ''}>${s.title} (${s.id})</option>`)}
  </select>
  <button type="submit">Show</button>
</form>`;
}
