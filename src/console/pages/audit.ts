// Audit log (/console/audit, owners only): the account's administrative actions, as
// GET /v1/audit_events lists them (src/resources/audit-events.ts), newest first, with the API's
// filters (action, from and to dates) and numbered pages. Read through the engine with the
// session's principal: the same tenancy and rules as the API.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ResourceObject } from '../../jsonapi/document.js';
import { ApiError } from '../../jsonapi/errors.js';
import type { ListDocument } from '../../jsonapi/engine.js';
import { html, prettyJson, type Html } from '../html.js';
import { withSite } from '../layout.js';
import { CONSOLE_ROUTE, problemsOf, queryOf, type ConsoleDeps, type ConsolePage, type ConsoleRenderer } from '../plugin.js';
import type { ConsoleSession } from '../sessions.js';
import { timeHtml } from '../when.js';

const AUDIT_PATH = '/console/audit';
const PAGE_SIZE = 50;

/** Owners, and only they, read the whole account's audit log. */
export const readsAuditLog = (session: ConsoleSession): boolean => session.user.role === 'owner';

interface AuditFilters {
  action: string;
  /** YYYY-MM-DD, inclusive; '' for none. */
  from: string;
  /** YYYY-MM-DD, inclusive; '' for none. */
  to: string;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The console URL of a page of the log with these filters. */
function auditUrl(siteId: number | null, filters: AuditFilters, page = 1): string {
  const params = new URLSearchParams();
  if (filters.action !== '') params.set('action', filters.action);
  if (filters.from !== '') params.set('from', filters.from);
  if (filters.to !== '') params.set('to', filters.to);
  if (page > 1) params.set('page', String(page));
  const query = params.toString();
  return withSite(query === '' ? AUDIT_PATH : `${AUDIT_PATH}?${query}`, siteId);
}

/** The day after a YYYY-MM-DD, as the exclusive end of "to" (the whole day is in). */
function dayAfter(date: string): string {
  const next = new Date(`${date}T00:00:00.000Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  return next.toISOString();
}

function actorHtml(a: Record<string, unknown>): Html {
  const kind = String(a.actor_kind);
  const what = kind === 'api_key' ? 'API key' : kind === 'console_user' ? 'console' : kind === 'cli' ? 'CLI' : 'sitebiz';
  return html`${String(a.actor_label)} <span class="muted">(${what})</span>`;
}

function auditRow(event: ResourceObject): Html {
  const a = event.attributes;
  const details = a.details && typeof a.details === 'object' && Object.keys(a.details).length > 0 ? a.details : null;
  return html`<tr>
    <td>${timeHtml(a.created_at)}</td>
    <th scope="row"><code>${String(a.action)}</code></th>
    <td>${actorHtml(a)}</td>
    <td>${a.target_type === null ? html`<span class="muted">—</span>` : html`${String(a.target_type)} ${String(a.target_id)}`}</td>
    <td>${a.source_address === null ? html`<span class="muted">—</span>` : String(a.source_address)}</td>
    <td>${details ? html`<details><summary>Details</summary><pre tabindex="0">${prettyJson(details)}</pre></details>` : ''}</td>
  </tr>`;
}

export function auditPage(renderer: ConsoleRenderer): ConsolePage {
  return {
    path: AUDIT_PATH,
    title: 'Audit log',
    visible: readsAuditLog,
    register(app: FastifyInstance, deps: ConsoleDeps) {
      const { engine } = deps;
      const resource = engine.registry.get('audit_events');
      const actions = resource.attributes.action?.enumValues ?? [];

      app.get('/audit', CONSOLE_ROUTE, async (request: FastifyRequest, reply) => {
        const session = request.consoleSession!;
        const siteId = await renderer.siteOf(request);
        const query = queryOf(request);
        // Only declared actions and whole dates reach the engine; anything else is no filter.
        const asked = query.get('action') ?? '';
        const filters: AuditFilters = {
          action: actions.includes(asked) ? asked : '',
          from: DATE.test(query.get('from') ?? '') ? query.get('from')! : '',
          to: DATE.test(query.get('to') ?? '') ? query.get('to')! : '',
        };
        const pageText = query.get('page') ?? '1';
        const page = /^\d{1,6}$/.test(pageText) && Number(pageText) >= 1 ? Number(pageText) : 1;
        const params = new URLSearchParams({ 'page[size]': String(PAGE_SIZE), 'page[number]': String(page) });
        if (filters.action !== '') params.set('filter[action_eq]', filters.action);
        if (filters.from !== '') params.set('filter[created_at_gte]', `${filters.from}T00:00:00.000Z`);
        if (filters.to !== '') params.set('filter[created_at_lt]', dayAfter(filters.to));

        const filterForm = html`<form method="get" action="${AUDIT_PATH}" class="row">
  ${siteId === null ? '' : html`<input type="hidden" name="site" value="${siteId}">`}
  <label for="audit-action">Action<select id="audit-action" name="action">
    <option value=""${filters.action === '' ? html` selected` : ''}>Every action</option>
    ${actions.map((name) => html`<option value="${name}"${name === filters.action ? html` selected` : ''}>${name}</option>`)}
  </select></label>
  <label for="audit-from">From<input id="audit-from" name="from" type="date" value="${filters.from}"></label>
  <label for="audit-to">To<input id="audit-to" name="to" type="date" value="${filters.to}"></label>
  <button type="submit">Show</button>
</form>`;

        let doc: ListDocument;
        try {
          doc = await engine.list(resource, params.toString(), session.principal);
        } catch (error) {
          if (!(error instanceof ApiError) || error.status !== 400) throw error;
          return renderer.page(request, reply, { title: 'Audit log', active: AUDIT_PATH, body: filterForm, problems: problemsOf(error) ?? [], status: 400 });
        }
        const total = doc.meta.total_count;
        const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
        const body = html`<p>Who created, rotated or deleted API keys, changed webhooks, set passwords, signed in (or failed to), restored snapshots or reset the sandbox, and when,
newest first; the same list as <code>GET /v1/audit_events</code> (permission <code>view:audit_events</code>). Times are UTC. Rows older than ${deps.config.auditRetentionDays === 0 ? 'any age are kept' : `${deps.config.auditRetentionDays} days are removed`} (<code>AUDIT_RETENTION_DAYS</code>).</p>
${filterForm}
<section aria-labelledby="audit-heading">
  <h2 id="audit-heading">${filters.action === '' ? 'Audit events' : `${filters.action} events`}</h2>
  <p class="muted">${total.toLocaleString('en-US')} ${total === 1 ? 'event' : 'events'}${pages > 1 ? `, page ${page} of ${pages}` : ''}.</p>
  ${
    doc.data.length === 0
      ? html`<p>No audit event${filters.action !== '' || filters.from !== '' || filters.to !== '' ? ' matches these filters' : ' yet'}.</p>`
      : html`<div class="table-scroll"><table class="audit">
  <caption>Audit events</caption>
  <thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">Who</th><th scope="col">Record</th><th scope="col">Address</th><th scope="col">Details</th></tr></thead>
  <tbody>${doc.data.map(auditRow)}</tbody>
</table></div>`
  }
  <nav class="pager" aria-label="Audit log pages">
    ${page > 1 ? html`<a href="${auditUrl(siteId, filters, page - 1)}">Newer events</a>` : ''}
    ${page < pages ? html`<a href="${auditUrl(siteId, filters, page + 1)}">Older events</a>` : ''}
  </nav>
</section>`;
        return renderer.page(request, reply, { title: 'Audit log', active: AUDIT_PATH, body });
      });
    },
  };
}
