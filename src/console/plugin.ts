// The console at /console (docs/console.md): server-rendered pages for people in a browser, on
// the same engine, domain code and rules as the API. This file is the frame every page shares:
// security headers, assets, sessions and CSRF, sign-in and sign-out, errors as pages. Each page
// is one module in ./pages, listed in CONSOLE_PAGES.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import type { RefusedLimit } from '../auth/rate-limits.js';
import type { TokenService } from '../auth/tokens.js';
import type { Config } from '../config.js';
import type { DatabaseHandle } from '../db/connect.js';
import { ApiError } from '../jsonapi/errors.js';
import type { JsonApiEngine } from '../jsonapi/engine.js';
import type { RequestJournal } from '../sandbox/request-journal.js';
import type { DeliveryWorker } from '../webhooks/delivery-worker.js';
import { html, type Html } from './html.js';
import { documentShell, renderFrame, type NavEntry, type PageFrame, type SiteChoice } from './layout.js';
import { ConsoleSessions, csrfTokenMatches, type ConsoleSession } from './sessions.js';
import { signInRoutes } from './sign-in.js';

/** What the console's pages work with: the app's own engine and services. */
export interface ConsoleDeps {
  config: Config;
  engine: JsonApiEngine;
  database: DatabaseHandle;
  webhooks: DeliveryWorker;
  tokens: TokenService;
  sessions: ConsoleSessions;
  now: () => Date;
  /** Sandbox mode only. */
  journal?: RequestJournal;
  /** Told of each sign-in the throttle refuses with 429 (metrics). */
  onRefusal?: (limit: RefusedLimit) => void;
}

/** One page (or group of pages) of the console. */
export interface ConsolePage {
  /** The nav entry's path, e.g. /console/keys. */
  path: string;
  title: string;
  /** Whether the signed-in user sees this page (and its nav entry); default: everyone. */
  visible?: (session: ConsoleSession, deps: ConsoleDeps) => boolean;
  /** Registers the page's routes in the signed-in scope, under the prefix /console (so '/keys' is /console/keys). */
  register(app: FastifyInstance, deps: ConsoleDeps): void | Promise<void>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in console session (console routes only). */
    consoleSession: ConsoleSession | null;
  }
}

/** Every console route's options: kept out of the API reference and the JSON:API 405 routes. */
export const CONSOLE_ROUTE = { schema: { hide: true }, config: { notJsonApi: true } } satisfies RouteShorthandOptions;

export const SESSION_COOKIE = 'sitebiz_console';
const ASSETS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'assets');
const HTMX_FILE = createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js');

/**
 * The Content-Security-Policy of every console answer: scripts, styles and everything else only
 * from sitebiz itself (no inline script or style, no eval), no framing, forms post only here.
 */
const CSP_DIRECTIVES = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  fontSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  upgradeInsecureRequests: null,
};

/** The query string of a console request (the app's router leaves queries to each route). */
export function queryOf(request: FastifyRequest): URLSearchParams {
  const at = request.url.indexOf('?');
  return new URLSearchParams(at < 0 ? '' : request.url.slice(at + 1));
}

/** A console form post's fields. */
export interface FormFields {
  /** A field given once (a repeated field keeps its last value); undefined when absent. */
  get(name: string): string | undefined;
  /** Every value of a repeated field (checkboxes). */
  all(name: string): string[];
  /** The named fields as typed, '' for an absent one: what a form re-renders after a refusal. */
  texts<Name extends string>(...names: Name[]): Record<Name, string>;
}

/** The body of a console form post. */
export function formOf(request: FastifyRequest): FormFields {
  const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<string, unknown>;
  // Only strings count: a form sends nothing else (the scope parses form bodies only; this also
  // keeps any other shape from reaching a page as a value it does not expect).
  const strings = (name: string): string[] => {
    const value = Object.hasOwn(body, name) ? body[name] : undefined;
    return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
  };
  return {
    get(name) {
      return strings(name).at(-1);
    },
    all(name) {
      return strings(name);
    },
    texts(...names) {
      return Object.fromEntries(names.map((name) => [name, strings(name).at(-1) ?? ''])) as Record<(typeof names)[number], string>;
    },
  };
}

/** The signed-in session of a console route in the signed-in scope. */
export function sessionOf(request: FastifyRequest): ConsoleSession {
  if (!request.consoleSession) throw new Error('console route outside the signed-in scope');
  return request.consoleSession;
}

/** An error a console action shows on its page rather than as an error page. */
export class ConsoleProblem extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The readable lines of an engine error (its details), for a form's problem list. */
export function problemsOf(error: unknown): string[] | null {
  if (error instanceof ApiError) return error.errors.map((e) => e.detail);
  if (error instanceof ConsoleProblem) return [error.message];
  return null;
}

export interface ConsoleRenderer {
  /** Sends a whole page in the console's frame. */
  page(request: FastifyRequest, reply: FastifyReply, frame: PageFrame & { status?: number }): Promise<FastifyReply>;
  /** The sites the session reaches (id and title), through the engine. */
  sites(session: ConsoleSession): Promise<SiteChoice[]>;
  /** The chosen site: ?site= if the session reaches it, else its first site, else null. */
  siteOf(request: FastifyRequest): Promise<number | null>;
}

/** The console's routes (register with prefix /console); `pagesOf` lists the pages (src/console/pages/index.ts consolePages). */
export function consoleRoutes(deps: ConsoleDeps, pagesOf: (renderer: ConsoleRenderer) => readonly ConsolePage[]) {
  const secureCookie = deps.config.publicUrl.startsWith('https:');
  const navFor = (session: ConsoleSession): NavEntry[] =>
    pages.filter((p) => !p.visible || p.visible(session, deps)).map((p) => ({ path: p.path, title: p.title }));

  const sitesCache = new WeakMap<ConsoleSession, Promise<SiteChoice[]>>();
  const renderer: ConsoleRenderer = {
    sites(session) {
      let found = sitesCache.get(session);
      if (!found) {
        found = deps.engine.list(deps.engine.registry.get('sites'), 'page[size]=100', session.principal).then((doc) =>
          doc.data.map((s) => ({ id: Number(s.id), title: String((s.attributes as Record<string, unknown>).title ?? s.id) })),
        );
        sitesCache.set(session, found);
      }
      return found;
    },
    async siteOf(request) {
      const session = sessionOf(request);
      const asked = queryOf(request).get('site');
      const reachable = session.principal.siteIds;
      if (asked && /^\d{1,15}$/.test(asked) && reachable.includes(Number(asked))) return Number(asked);
      return reachable[0] ?? null;
    },
    async page(request, reply, frame) {
      const session = request.consoleSession;
      const path = request.url.split('?')[0]!;
      const body = renderFrame(
        {
          mode: deps.config.mode,
          session,
          nav: session ? navFor(session) : [],
          sites: session ? await renderer.sites(session) : [],
          siteId: session ? await renderer.siteOf(request) : null,
          path,
        },
        frame,
      );
      return reply.code(frame.status ?? 200).type('text/html; charset=utf-8').send(body.text);
    },
  };

  const pages = pagesOf(renderer);

  return async function register(app: FastifyInstance): Promise<void> {
    app.decorateRequest('consoleSession', null);
    await app.register(helmet, {
      global: true,
      contentSecurityPolicy: { useDefaults: false, directives: CSP_DIRECTIVES },
      referrerPolicy: { policy: 'no-referrer' },
      crossOriginEmbedderPolicy: false,
      frameguard: { action: 'deny' },
      // HSTS only makes sense (and only takes effect) behind https.
      strictTransportSecurity: secureCookie ? { maxAge: 15_552_000, includeSubDomains: false } : false,
    });
    await app.register(cookie);
    // Console changes are HTML forms: application/x-www-form-urlencoded only (the app's JSON
    // parsers are for the API); any other body is a 415.
    app.removeAllContentTypeParsers();
    await app.register(formbody);
    app.addHook('onSend', async (_request, reply, payload) => {
      // Pages carry secrets (a new key's) and per-user data: never stored by a cache.
      if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
      return payload;
    });

    app.setErrorHandler(async (error, request, reply) => {
      if (error instanceof ApiError || error instanceof ConsoleProblem) {
        const status = error.status;
        const lines = problemsOf(error) ?? [];
        return renderer.page(request, reply, { title: status === 404 ? 'Not found' : status === 403 ? 'Not allowed' : 'That did not work', body: '', problems: lines, status });
      }
      const status = (error as { statusCode?: number }).statusCode;
      if (status && status >= 400 && status < 500) {
        return renderer.page(request, reply, { title: 'That did not work', body: '', problems: [(error as Error).message], status });
      }
      request.log.error({ err: error }, 'console request failed');
      return renderer.page(request, reply, { title: 'Something went wrong', body: html`<p>The server could not answer this page. The log has the details (request id ${request.id}).</p>`, status: 500 });
    });
    app.setNotFoundHandler(async (request, reply) => renderer.page(request, reply, { title: 'Not found', body: html`<p>There is no console page at this address. <a href="/console">Go to the overview</a>.</p>`, status: 404 }));

    await app.register(fastifyStatic, { root: ASSETS_DIR, prefix: '/assets/', decorateReply: false, schemaHide: true, cacheControl: true, maxAge: 0 });
    app.get('/assets/htmx.min.js', CONSOLE_ROUTE, async (_request, reply) => {
      return reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(await readAsset(HTMX_FILE));
    });

    // Every console change is a POST; each must come from a console page itself. The browser says
    // where a request comes from (Sec-Fetch-Site, Origin); a cross-site one is refused before
    // anything else, including sign-in (login CSRF). Signed-in posts also need the session's token.
    app.addHook('preHandler', async (request) => {
      if (request.method !== 'POST') return;
      if (isCrossSite(request)) throw new ConsoleProblem(403, 'This form was sent from another site; the console only takes forms from its own pages.');
    });

    await app.register(signInRoutes(deps, renderer));

    await app.register(async (signedIn) => {
      signedIn.addHook('preHandler', async (request, reply) => {
        const session = await deps.sessions.load(request.cookies[SESSION_COOKIE]);
        if (!session) {
          if (request.method === 'GET' && !request.headers['hx-request']) {
            const next = request.url.startsWith('/console') ? request.url : '/console';
            return reply.redirect(`/console/sign-in?next=${encodeURIComponent(next)}`, 303);
          }
          throw new ConsoleProblem(401, 'Your console session has ended; sign in again.');
        }
        // The audit log names the signed-in user and this request's address for what the page does.
        const actor = { kind: 'console_user', userId: session.user.id, label: session.user.email, address: request.ip } as const;
        request.consoleSession = { ...session, principal: { ...session.principal, actor } };
        if (request.method === 'POST') {
          const presented = request.headers['x-csrf-token'] ?? formOf(request).get('_csrf');
          if (!csrfTokenMatches(presented, session.csrfToken)) {
            throw new ConsoleProblem(403, 'This form is out of date or did not come from the console (its CSRF token is missing or wrong). Reload the page and try again.');
          }
        }
      });
      signedIn.post('/sign-out', CONSOLE_ROUTE, async (request, reply) => {
        await deps.sessions.signOut(sessionOf(request), request.ip);
        reply.clearCookie(SESSION_COOKIE, { path: '/console' });
        return reply.redirect('/console/sign-in?signed_out=1', 303);
      });
      for (const page of pages) {
        await signedIn.register(async (scope) => {
          if (page.visible) {
            const visible = page.visible;
            scope.addHook('preHandler', async (request) => {
              const session = request.consoleSession;
              if (session && !visible(session, deps)) throw new ConsoleProblem(403, `The ${page.title} page is not open to your role (${session.user.role}).`);
            });
          }
          await page.register(scope, { ...deps });
        });
      }
    });
  };

  /**
   * Whether a POST came from another site. Browsers say so in Sec-Fetch-Site (every current
   * one); without it, the Origin header decides. "Origin: null" is what Chromium sends for a
   * same-origin form under Referrer-Policy no-referrer, so it is not taken as cross-site: the
   * signed-in scope's CSRF token still guards every change.
   */
  function isCrossSite(request: FastifyRequest): boolean {
    const site = request.headers['sec-fetch-site'];
    if (site !== undefined) return site !== 'same-origin' && site !== 'none';
    const origin = request.headers.origin;
    if (origin === undefined || origin === 'null') return false;
    try {
      const url = new URL(origin);
      return url.host !== request.headers.host && url.origin !== new URL(deps.config.publicUrl).origin;
    } catch {
      return true;
    }
  }
}

const assetCache = new Map<string, Promise<Buffer>>();
/** A file read once, on first use, then served from memory. */
function readAsset(path: string): Promise<Buffer> {
  let found = assetCache.get(path);
  if (!found) {
    found = readFile(path);
    assetCache.set(path, found);
  }
  return found;
}

/** The session cookie's attributes: HttpOnly, SameSite=Strict, Secure behind https, the console's path only. */
export function sessionCookieOptions(config: Config) {
  return { path: '/console', httpOnly: true, sameSite: 'strict' as const, secure: config.publicUrl.startsWith('https:') };
}

export type { Html };
export { documentShell };
