// Keys (/console/keys, owners only): the account's API keys, and creating, rotating and deleting
// them with the same domain functions as `sitebiz keys` (src/domain/accounts.ts), limited to the
// session's account: another account's key or user is unknown here (404), never touched. A new
// secret is shown once, on the page that answers the POST, and never again.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { auditActorOf } from '../../audit/audit-events.js';
import { tokenRequestCommand } from '../../auth/oauth-routes.js';
import { PERMISSIONS, PERMISSION_NAMES } from '../../auth/permissions.js';
import {
  AdminError,
  createApiKey,
  type CreatedApiKey,
  deleteApiKey,
  findApiKey,
  listApiKeys,
  listUsers,
  rotateApiKey,
  UnknownRecordError,
  type ApiKeySummary,
  type UserSummary,
} from '../../domain/accounts.js';
import { SANDBOX_PERMISSION } from '../../sandbox/part.js';
import { html, type Html } from '../html.js';
import { withSite } from '../layout.js';
import { CONSOLE_ROUTE, ConsoleProblem, formOf, queryOf, sessionOf, type ConsoleDeps, type ConsolePage, type ConsoleRenderer } from '../plugin.js';
import type { ConsoleSession } from '../sessions.js';
import { timeHtml } from '../when.js';

const KEYS = '/console/keys';

/** Owners, and only they, manage the account's keys. */
export const managesKeys = (session: ConsoleSession): boolean => session.user.role === 'owner';

/** The fixed notices of ?done= after a redirect. */
const NOTICES: Record<string, string> = {
  deleted: 'The key was deleted: its tokens stopped working, and its client id and secret get no new ones.',
};

/** A key's permissions are listed in full up to this many; more fold into a disclosure. */
const SHOWN_PERMISSIONS = 3;

interface KeyFormValues {
  name: string;
  userId: string;
  permissions: readonly string[];
}

type KeyParams = { Params: { id: string } };

export function keysPage(renderer: ConsoleRenderer): ConsolePage {
  return {
    path: KEYS,
    title: 'Keys',
    visible: managesKeys,
    register(app: FastifyInstance, deps: ConsoleDeps) {
      const clock = { now: deps.now };
      const scopeOf = (session: ConsoleSession) => ({ accountId: session.user.accountId });

      /** The session's account's key with this id; a 404 page for any other id. */
      async function keyOf(session: ConsoleSession, rawId: string): Promise<ApiKeySummary> {
        const key = /^\d{1,15}$/.test(rawId) ? await findApiKey(deps.database, rawId, scopeOf(session)) : undefined;
        if (!key) throw new ConsoleProblem(404, `There is no API key ${rawId} in this account.`);
        return key;
      }

      const usersById = async (session: ConsoleSession) => new Map((await listUsers(deps.database, session.user.accountId)).map((u) => [u.id, u]));

      app.get(`/keys`, CONSOLE_ROUTE, async (request, reply) => {
        const session = sessionOf(request);
        const siteId = await renderer.siteOf(request);
        const [keys, users] = await Promise.all([listApiKeys(deps.database, scopeOf(session)), usersById(session)]);
        const done = queryOf(request).get('done');
        const notice = done ? NOTICES[done] : undefined;
        const body = html`<p>API keys let integrations call the API: each acts as one user of the account, with the permissions checked when it was made.
Its client id and secret get tokens at <code>POST ${deps.config.publicUrl}/v1/oauth/token</code>.</p>
<p><a class="button" href="${withSite(`${KEYS}/new`, siteId)}">Create a key</a></p>
${keys.length === 0 ? html`<p>The account has no API keys yet.</p>` : keyTable(keys, users, siteId)}`;
        return renderer.page(request, reply, { title: 'Keys', active: KEYS, body, ...(notice ? { notice } : {}) });
      });

      app.get(`/keys/new`, CONSOLE_ROUTE, async (request, reply) => {
        const session = sessionOf(request);
        return renderForm(request, reply, session, { name: '', userId: String(session.user.id), permissions: [] });
      });

      app.post(`/keys`, CONSOLE_ROUTE, async (request, reply) => {
        const session = sessionOf(request);
        const form = formOf(request);
        const values: KeyFormValues = { name: form.get('name') ?? '', userId: form.get('user_id') ?? '', permissions: form.all('permissions') };
        const users = await usersById(session);
        const user = /^\d{1,15}$/.test(values.userId) ? users.get(Number(values.userId)) : undefined;
        const problems = keyFormProblems(values, user);
        // A user outside the account is as unknown as one that does not exist: a 404, nothing made.
        const status = user ? 422 : 404;
        if (problems.length > 0) return renderForm(request, reply, session, values, problems, status);
        let created: CreatedApiKey;
        try {
          created = await createApiKey(
            deps.database,
            { userId: user!.id, name: values.name, permissions: values.permissions, accountId: session.user.accountId, actor: auditActorOf(session.principal) },
            clock,
          );
        } catch (error) {
          if (!(error instanceof AdminError)) throw error;
          return renderForm(request, reply, session, values, [capitalized(error.message)], error instanceof UnknownRecordError ? 404 : 422);
        }
        const body = html`<p>The key <strong>${created.name}</strong> acts as ${user!.name} (${user!.email}) with ${permissionCount(created.permissions.length)}.</p>
${credentials(deps, created.clientId, created.clientSecret)}
<p><a href="${withSite(KEYS, await renderer.siteOf(request))}">Back to the keys</a></p>`;
        return renderer.page(request, reply, { title: 'Key created', active: KEYS, body });
      });

      app.get<KeyParams>(`/keys/:id/rotate`, CONSOLE_ROUTE, async (request, reply) => {
        const session = sessionOf(request);
        const key = await keyOf(session, request.params.id);
        const siteId = await renderer.siteOf(request);
        const body = html`<p>Rotate the secret of the key <strong>${key.name}</strong> (client id <code>${key.client_id}</code>)?</p>
<h2>What stops working</h2>
<ul>
  <li>Every access token and refresh token granted with this key stops working at once.</li>
  <li>Integrations that use the key's current secret cannot get new tokens until they are given the new one, which the next page shows once.</li>
</ul>
<p>The client id, the user and the permissions stay as they are.</p>
${confirmForm(session, withSite(`${KEYS}/${key.id}/rotate`, siteId), 'Rotate the secret', withSite(KEYS, siteId))}`;
        return renderer.page(request, reply, { title: `Rotate the key ${key.name}?`, active: KEYS, body });
      });

      app.post<KeyParams>(`/keys/:id/rotate`, CONSOLE_ROUTE, async (request, reply) => {
        const session = sessionOf(request);
        const key = await keyOf(session, request.params.id);
        const rotated = await unknownAs404(() => rotateApiKey(deps.database, String(key.id), clock, scopeOf(session), auditActorOf(session.principal)));
        const body = html`<p>The key <strong>${key.name}</strong> has a new secret. The tokens granted with the old one were revoked, and the old secret gets no new ones.</p>
${credentials(deps, rotated.clientId, rotated.clientSecret)}
<p><a href="${withSite(KEYS, await renderer.siteOf(request))}">Back to the keys</a></p>`;
        return renderer.page(request, reply, { title: 'Key rotated', active: KEYS, body });
      });

      app.get<KeyParams>(`/keys/:id/delete`, CONSOLE_ROUTE, async (request, reply) => {
        const session = sessionOf(request);
        const key = await keyOf(session, request.params.id);
        const siteId = await renderer.siteOf(request);
        const body = html`<p>Delete the key <strong>${key.name}</strong> (client id <code>${key.client_id}</code>)?</p>
<h2>What stops working</h2>
<ul>
  <li>Every access token and refresh token granted with this key stops working at once.</li>
  <li>Its client id and secret get no new tokens: integrations that use this key stop until they are given another key.</li>
</ul>
<p>This cannot be undone.</p>
${confirmForm(session, withSite(`${KEYS}/${key.id}/delete`, siteId), 'Delete the key', withSite(KEYS, siteId))}`;
        return renderer.page(request, reply, { title: `Delete the key ${key.name}?`, active: KEYS, body });
      });

      app.post<KeyParams>(`/keys/:id/delete`, CONSOLE_ROUTE, async (request, reply) => {
        const session = sessionOf(request);
        const key = await keyOf(session, request.params.id);
        await unknownAs404(() => deleteApiKey(deps.database, String(key.id), scopeOf(session), auditActorOf(session.principal), clock));
        return reply.redirect(withSite(`${KEYS}?done=deleted`, await renderer.siteOf(request)), 303);
      });

      async function renderForm(
        request: FastifyRequest,
        reply: FastifyReply,
        session: ConsoleSession,
        values: KeyFormValues,
        problems: string[] = [],
        status = 200,
      ): Promise<FastifyReply> {
        const users = await listUsers(deps.database, session.user.accountId);
        const siteId = await renderer.siteOf(request);
        const body = keyForm(deps, session, users, values, withSite(KEYS, siteId));
        return renderer.page(request, reply, { title: 'Create a key', active: KEYS, body, problems, status });
      }
    },
  };
}

/** What is wrong with a create form, as sentences for its problem list (empty: nothing). */
function keyFormProblems(values: KeyFormValues, user: UserSummary | undefined): string[] {
  const problems: string[] = [];
  if (values.name.trim() === '') problems.push('Give the key a name: it tells you later which integration uses it.');
  if (!user) problems.push(`Choose the key's user among the account's users (${values.userId === '' ? 'none was chosen' : `user ${values.userId} is not one of them`}).`);
  if (values.permissions.length === 0) problems.push('Check at least one permission: a key without any can do nothing.');
  const unknown = values.permissions.filter((p) => !PERMISSION_NAMES.includes(p));
  if (unknown.length > 0) problems.push(`Unknown permission${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}.`);
  return problems;
}

/** A rotate or delete key's missing by the time of the POST (deleted meanwhile) is a 404 too. */
async function unknownAs404<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof UnknownRecordError) throw new ConsoleProblem(404, capitalized(error.message));
    throw error;
  }
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1) + (text.endsWith('.') ? '' : '.');

const permissionCount = (n: number) => (n === 1 ? '1 permission' : `${n} permissions`);

function keyTable(keys: readonly ApiKeySummary[], users: ReadonlyMap<number, UserSummary>, siteId: number | null): Html {
  return html`<div class="table-scroll">
<table class="keys">
  <caption>API keys (${keys.length})</caption>
  <thead><tr>
    <th scope="col">Name</th><th scope="col">Client id</th><th scope="col">User</th><th scope="col">Permissions</th>
    <th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Rotated</th><th scope="col">Actions</th>
  </tr></thead>
  <tbody>${keys.map((key) => {
    const user = users.get(key.user_id);
    return html`<tr>
    <th scope="row">${key.name}</th>
    <td><code>${key.client_id}</code></td>
    <td>${user ? html`${user.name}<br><span class="muted">${user.email}</span>` : html`user ${key.user_id}`}</td>
    <td>${permissionList(key.permissions)}</td>
    <td>${timeHtml(key.created_at)}</td>
    <td>${timeHtml(key.last_used_at, 'never')}</td>
    <td>${timeHtml(key.rotated_at, 'never')}</td>
    <td class="actions">
      <a href="${withSite(`${KEYS}/${key.id}/rotate`, siteId)}" aria-label="Rotate the secret of ${key.name}">Rotate</a>
      <a href="${withSite(`${KEYS}/${key.id}/delete`, siteId)}" aria-label="Delete ${key.name}">Delete</a>
    </td>
  </tr>`;
  })}</tbody>
</table>
</div>`;
}

function permissionList(permissions: readonly string[]): Html {
  const list = html`<ul class="permission-list">${permissions.map((p) => html`<li><code>${p}</code></li>`)}</ul>`;
  if (permissions.length <= SHOWN_PERMISSIONS) return permissions.length === 0 ? html`<span class="muted">none</span>` : list;
  const every = PERMISSION_NAMES.every((p) => permissions.includes(p));
  return html`<details><summary>${every ? `all ${permissions.length}` : permissionCount(permissions.length)}</summary>${list}</details>`;
}

function keyForm(deps: ConsoleDeps, session: ConsoleSession, users: readonly UserSummary[], values: KeyFormValues, action: string): Html {
  const sandboxNote =
    deps.config.mode === 'sandbox'
      ? 'This server is in sandbox mode: the key can use the test helpers.'
      : 'This server is in production mode, which has no test helpers: this permission gives nothing here.';
  return html`<form method="post" action="${action}" class="stack key-form">
  <input type="hidden" name="_csrf" value="${session.csrfToken}">
  <label for="key-name">Name</label>
  <input id="key-name" name="name" value="${values.name}" required autocomplete="off" aria-describedby="key-name-hint">
  <p id="key-name-hint" class="hint">Which integration uses it, such as “CRM sync”.</p>
  <label for="key-user">User</label>
  <select id="key-user" name="user_id" aria-describedby="key-user-hint">
    ${users.map((u) => html`<option value="${u.id}"${String(u.id) === values.userId ? html` selected` : ''}>${u.name} (${u.email}, ${u.role})</option>`)}
  </select>
  <p id="key-user-hint" class="hint">The key acts as this user: it reaches the user's sites (an owner's: every site), with the permissions below.</p>
  <fieldset>
    <legend>Permissions</legend>
    <p class="hint">The key can do what is checked here and nothing else.</p>
    ${PERMISSIONS.map((p) => {
      const id = `permission-${p.name.replace(/[^a-z0-9]+/g, '-')}`;
      return html`<label class="check" for="${id}"><input type="checkbox" id="${id}" name="permissions" value="${p.name}"${values.permissions.includes(p.name) ? html` checked` : ''}>
      <span><code>${p.name}</code>: ${p.description}${p.name === SANDBOX_PERMISSION ? html` <strong>${sandboxNote}</strong>` : ''}</span></label>`;
    })}
  </fieldset>
  <div><button type="submit">Create the key</button> <a href="${action}">Cancel</a></div>
</form>`;
}

/** A new secret, shown once: the ids with copy buttons and a curl line for a token. */
function credentials(deps: ConsoleDeps, clientId: string, clientSecret: string): Html {
  const base = deps.config.publicUrl;
  return html`<section class="secret" aria-labelledby="credentials-heading">
  <h2 id="credentials-heading">The key's credentials</h2>
  <p><strong>Copy the client secret now: it is shown only this once and cannot be shown again.</strong>
  sitebiz keeps only its hash. If it is lost, rotate the key to get a new one.</p>
  <dl class="facts">
    <dt>client_id</dt>
    <dd><code id="client-id">${clientId}</code> <button type="button" class="secondary" data-copy="client-id" aria-label="Copy the client id">Copy</button><span class="copy-status" role="status"></span></dd>
    <dt>client_secret</dt>
    <dd><code id="client-secret">${clientSecret}</code> <button type="button" class="secondary" data-copy="client-secret" aria-label="Copy the client secret">Copy</button><span class="copy-status" role="status"></span></dd>
  </dl>
  <h3>Get a token</h3>
  <div class="command">
    <pre><code id="token-command">${tokenRequestCommand(base, clientId, clientSecret)}</code></pre>
    <button type="button" class="secondary" data-copy="token-command" aria-label="Copy the token command">Copy</button><span class="copy-status" role="status"></span>
  </div>
  <p>Then call the API with the <code>access_token</code> of its answer, for example
  <code>curl -s -H "Authorization: Bearer &lt;access_token&gt;" ${base}/v1/me</code>.</p>
</section>`;
}

function confirmForm(session: ConsoleSession, action: string, label: string, cancel: string): Html {
  return html`<form method="post" action="${action}" class="row">
  <input type="hidden" name="_csrf" value="${session.csrfToken}">
  <button type="submit" class="danger">${label}</button>
  <a href="${cancel}">Cancel</a>
</form>`;
}
