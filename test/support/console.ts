// A signed-in console user for tests that drive the console over app.inject: signs in with a
// one-time link (as a newcomer does), keeps the session cookie, and sends the CSRF token with
// every form post, as the console's own pages do.
import type { LightMyRequestResponse } from 'fastify';
import { ConsoleSessions } from '../../src/console/sessions.js';
import type { TestApp } from './harness.js';

export interface ConsoleBrowser {
  /** The session cookie, `sitebiz_console=<token>`. */
  cookie: string;
  csrfToken: string;
  get(url: string): Promise<LightMyRequestResponse>;
  /** A form post (application/x-www-form-urlencoded) with the session's CSRF token added unless `csrf: false`. */
  post(url: string, fields?: Record<string, string | readonly string[]>, options?: { csrf?: boolean; headers?: Record<string, string> }): Promise<LightMyRequestResponse>;
}

export function formBody(fields: Record<string, string | readonly string[]>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    for (const v of typeof value === 'string' ? [value] : value) params.append(name, v);
  }
  return params.toString();
}

/** Signs the user (default: the tenant's owner) in through a one-time link. */
export async function signInToConsole(t: TestApp, userId = t.tenant.ownerId): Promise<ConsoleBrowser> {
  const token = await new ConsoleSessions(t.handle, t.clock.now).createSignInLink(userId);
  const link = await t.app.inject({ method: 'GET', url: `/console/link/${token}` });
  if (link.statusCode !== 303) throw new Error(`sign-in link answered ${link.statusCode}: ${link.body}`);
  const setCookie = [link.headers['set-cookie']].flat().find((c) => c?.startsWith('sitebiz_console='));
  if (!setCookie) throw new Error('the sign-in link set no session cookie');
  const cookie = setCookie.split(';')[0]!;
  const home = await t.app.inject({ method: 'GET', url: '/console', headers: { cookie } });
  const csrfToken = /<meta name="csrf-token" content="([^"]+)">/.exec(home.body)?.[1];
  if (!csrfToken) throw new Error(`no CSRF token on the overview (${home.statusCode})`);
  return {
    cookie,
    csrfToken,
    get: (url) => t.app.inject({ method: 'GET', url, headers: { cookie } }),
    post: (url, fields = {}, options = {}) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...options.headers },
        payload: formBody(options.csrf === false ? fields : { _csrf: csrfToken, ...fields }),
      }),
  };
}
