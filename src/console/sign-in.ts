// Signing in to the console: email and password (throttled per address and per account), or a
// one-time link printed by `serve`, `init` and `sitebiz users sign-in-link`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { html } from './html.js';
import { verifyPassword } from './passwords.js';
import { findUserByEmail } from '../domain/accounts.js';
import { controlCharacterIn } from '../jsonapi/control-characters.js';
import { CONSOLE_ROUTE, ConsoleProblem, formOf, queryOf, SESSION_COOKIE, sessionCookieOptions, type ConsoleDeps, type ConsoleRenderer } from './plugin.js';

/**
 * Where to go after signing in: a console path of this server, never another site. A target
 * holding a control character (or U+2028/U+2029) is a 400, thrown before anything is written:
 * sent on, it made the Location header invalid, a 500 after the session row was written.
 * Other characters outside printable ASCII are percent-encoded, as a browser sends them.
 */
export function safeNext(next: string | null | undefined): string {
  if (!next) return '/console';
  const control = controlCharacterIn(next, 'redirect');
  if (control) throw new ConsoleProblem(400, `The page to open after signing in (next) holds the control character ${control}.`);
  if (!next.startsWith('/console') || next.startsWith('//') || next.includes('\\')) return '/console';
  try {
    return next.replace(/[^\x21-\x7E]+/g, (run) => encodeURIComponent(run));
  } catch {
    // A lone surrogate has no UTF-8 form (encodeURIComponent throws): no such page either.
    return '/console';
  }
}

export function signInRoutes(deps: ConsoleDeps, renderer: ConsoleRenderer) {
  const { sessions, database } = deps;

  function form(next: string, email = ''): ReturnType<typeof html> {
    return html`<form method="post" action="/console/sign-in" class="stack sign-in">
  <input type="hidden" name="next" value="${next}">
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="${email}">
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  <button type="submit">Sign in</button>
</form>
<p class="hint">No password yet? The owner's first sign-in link is printed by <code>npm start</code> on a new database;
<code>npm run sitebiz -- users sign-in-link</code> prints a new one, and
<code>npm run sitebiz -- users set-password --email &lt;email&gt; --password-stdin</code> sets a password.</p>`;
  }

  async function startSession(request: FastifyRequest, reply: FastifyReply, userId: number, next: string, method: 'password' | 'link'): Promise<FastifyReply> {
    // Checked before the session exists: a redirect that cannot be sent leaves no session behind.
    const location = safeNext(next);
    const token = await sessions.create(userId, { method, address: request.ip });
    reply.setCookie(SESSION_COOKIE, token, sessionCookieOptions(deps.config));
    return reply.redirect(location, 303);
  }

  return async function register(app: FastifyInstance): Promise<void> {
    app.get('/sign-in', CONSOLE_ROUTE, async (request, reply) => {
      const query = queryOf(request);
      const notice = query.get('signed_out') ? 'You are signed out.' : undefined;
      return renderer.page(request, reply, { title: 'Sign in', body: form(safeNext(query.get('next'))), ...(notice ? { notice } : {}) });
    });

    app.post('/sign-in', CONSOLE_ROUTE, async (request: FastifyRequest, reply) => {
      const body = formOf(request);
      const email = (body.get('email') ?? '').trim().toLowerCase();
      const password = body.get('password') ?? '';
      const next = safeNext(body.get('next'));
      const user = email ? await findUserByEmail(database, email) : undefined;
      const address = `ip:${request.ip}`;
      const subjects = [address, ...(user ? [`account:${user.accountId}`] : [])];
      // The attempt is taken before the hash, not recorded after it: otherwise every concurrent
      // attempt would pass the check while none had been counted yet.
      const until = await sessions.takeSignInAttempt(subjects);
      if (until) {
        deps.onRefusal?.('console_sign_in');
        const seconds = Math.max(1, Math.ceil((until.getTime() - deps.now().getTime()) / 1000));
        reply.header('retry-after', String(seconds));
        return renderer.page(request, reply, {
          title: 'Sign in',
          status: 429,
          problems: [`Too many failed sign-ins. Try again in ${Math.ceil(seconds / 60)} minute(s).`],
          body: form(next, email),
        });
      }
      // verifyPassword spends one hash's time even without a user, so timing tells nothing.
      const valid = await verifyPassword(password, user?.passwordHash);
      if (!user || !valid) {
        if (user) await sessions.signInFailed(user, request.ip);
        return renderer.page(request, reply, { title: 'Sign in', status: 401, problems: ['The email or the password is not right.'], body: form(next, email) });
      }
      await sessions.signInSucceeded(`account:${user.accountId}`, address);
      return startSession(request, reply, user.id, next, 'password');
    });

    // A one-time link: used on the first visit, then a redirect that takes the token out of the
    // address bar (and, with Referrer-Policy no-referrer, out of every later request).
    app.get('/link/:token', CONSOLE_ROUTE, async (request, reply) => {
      const { token } = request.params as { token: string };
      const userId = await sessions.useSignInLink(token);
      if (userId === null) {
        return renderer.page(request, reply, {
          title: 'Sign in',
          status: 410,
          problems: ['This sign-in link has been used or has expired. Links work once, for 15 minutes; npm run sitebiz -- users sign-in-link prints a new one.'],
          body: form('/console'),
        });
      }
      return startSession(request, reply, userId, '/console', 'link');
    });
  };
}
