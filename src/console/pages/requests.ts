// Requests (/console/requests, sandbox mode only): the request journal of the account's keys
// (docs/sandbox.md "The request journal"), newest first, live, filterable by status, path and key,
// each entry opening to its bodies, marked when the upstream API would not accept it (a sitebiz
// extension, docs/upstream-strict.md) and filterable on that. Read exactly as GET /v1/test_helpers/requests reads it: this
// process's buffered entries are written first, then the engine lists the `requests` resource with
// the session's principal, so the console sees the same entries, filters and redactions as the API.
//
// Live: the newest page carries a poller that asks every second for the entries written after
// the newest one shown (filter[after_id], in write order) and prepends them to the list (an
// out-of-band swap), so entries the user opened stay open. No new entry: 204, nothing is swapped.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { listApiKeys } from '../../domain/accounts.js';
import type { ResourceObject } from '../../jsonapi/document.js';
import { ApiError } from '../../jsonapi/errors.js';
import type { ListDocument } from '../../jsonapi/engine.js';
import { journalEntries } from '../../sandbox/journal.js';
import { JOURNAL_BODY_BYTES } from '../../sandbox/request-journal.js';
import { html, prettyJson, type Html } from '../html.js';
import { CONSOLE_ROUTE, queryOf, sessionOf, type ConsoleDeps, type ConsolePage, type ConsoleRenderer } from '../plugin.js';
import { timeHtml } from '../when.js';

const PATH = '/console/requests';
/** Entries per page of the list. */
const PAGE_SIZE = 50;
/** Entries per live poll at most; more wait for the next poll (a second later). */
const LIVE_BATCH = 100;

/** The page's filters, as the form names them, and the journal filter each one sets. */
interface JournalFilters {
  status: string;
  path: string;
  key: string;
  /** 'true', 'false' or '' (either). */
  upstream: string;
}

const FILTER_PARAMETERS: Record<keyof JournalFilters, { parameter: string; label: string }> = {
  status: { parameter: 'filter[status]', label: 'Status' },
  path: { parameter: 'filter[path_cont]', label: 'Path contains' },
  key: { parameter: 'filter[client_id]', label: 'Key' },
  upstream: { parameter: 'filter[upstream]', label: 'Upstream' },
};

function filtersOf(query: URLSearchParams): JournalFilters {
  const value = (name: string) => (query.get(name) ?? '').trim();
  const upstream = value('upstream');
  return { status: value('status'), path: value('path'), key: value('key'), upstream: upstream === 'true' || upstream === 'false' ? upstream : '' };
}

/** The journal's own query parameters for the filters the form was given (blank ones left out). */
function journalQuery(filters: JournalFilters, paging: Record<string, string>): string {
  const params = new URLSearchParams(paging);
  for (const [name, { parameter }] of Object.entries(FILTER_PARAMETERS)) {
    const value = filters[name as keyof JournalFilters];
    if (value !== '') params.set(parameter, value);
  }
  return params.toString();
}

/** The console URL of the page (or of its live fragment) with these filters. */
function pageUrl(path: string, filters: JournalFilters, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value !== '') params.set(name, value);
  for (const [name, value] of Object.entries(extra)) params.set(name, value);
  const query = params.toString();
  return query === '' ? path : `${path}?${query}`;
}

/** An engine error as lines for the page, naming the form field rather than the API parameter. */
function problemLines(error: ApiError): string[] {
  return error.errors.map((e) => {
    const field = Object.values(FILTER_PARAMETERS).find((f) => f.parameter === e.source?.parameter);
    return field ? `${field.label}: ${e.detail}` : e.detail;
  });
}

/** The cursor of a cursor link (links.next of a cursor page), or null. */
function cursorOf(link: string | null | undefined): string | null {
  if (!link) return null;
  return new URL(link).searchParams.get('page[after]');
}

export function requestsPage(renderer: ConsoleRenderer): ConsolePage {
  return {
    path: PATH,
    title: 'Requests',
    // The journal exists in sandbox mode only (the app makes it there and nowhere else).
    visible: (_session, deps) => deps.journal !== undefined,
    register(app: FastifyInstance, deps: ConsoleDeps) {
      const journal = deps.journal;
      const resource = deps.engine.registry.find(journalEntries.type);
      // Production mode (or an app without the sandbox's resources): no page at all.
      if (!journal || !resource) return;

      /** Journal entries as GET /v1/test_helpers/requests lists them: this process's buffer first. */
      const read = async (request: FastifyRequest, query: string): Promise<ListDocument> => {
        await journal.flush();
        return deps.engine.list(resource, query, sessionOf(request).principal);
      };
      const keyNames = async (request: FastifyRequest) =>
        new Map((await listApiKeys(deps.database, { accountId: sessionOf(request).user.accountId })).map((k) => [k.client_id, k.name]));

      app.get('/requests', CONSOLE_ROUTE, async (request, reply) => {
        const query = queryOf(request);
        const filters = filtersOf(query);
        const older = query.get('older');
        const keys = await listApiKeys(deps.database, { accountId: sessionOf(request).user.accountId });
        const names = new Map(keys.map((k) => [k.client_id, k.name]));
        const form = filterForm(filters, keys);
        if (!journal.enabled) {
          return renderer.page(request, reply, {
            title: 'Requests',
            active: PATH,
            body: html`<p>The request journal is off on this server (<code>REQUEST_JOURNAL_SIZE=0</code>): no request is recorded. Set it to the number of requests to keep per account (1000 by default) and restart.</p>`,
          });
        }
        let doc: ListDocument;
        try {
          // Newest written first; cursor pages so that "older" never repeats or skips an entry.
          doc = await read(request, journalQuery(filters, { sort: '-id', 'page[size]': String(PAGE_SIZE), 'page[after]': older ?? '' }));
        } catch (error) {
          if (!(error instanceof ApiError) || error.status !== 400) throw error;
          return renderer.page(request, reply, { title: 'Requests', active: PATH, body: form, problems: problemLines(error), status: 400 });
        }
        const newestId = doc.data[0]?.id ?? (older ? null : '0');
        const nextCursor = cursorOf(doc.links.next);
        const filtered = Object.values(filters).some((v) => v !== '');
        const body = html`${form}
<section aria-labelledby="journal-heading">
  <h2 id="journal-heading">${older ? 'Older requests' : 'Latest requests'}</h2>
  <p class="muted">${doc.meta.total_count.toLocaleString('en-US')} ${doc.meta.total_count === 1 ? 'request' : 'requests'} ${filtered ? 'match' : 'in the journal'} (the newest ${deps.config.requestJournalSize.toLocaleString('en-US')} of the account are kept). Open one to see its bodies; secrets are shown as the journal keeps them, "[redacted]".</p>
  ${older || newestId === null ? html`<p class="muted">New requests appear live on the <a href="${pageUrl(PATH, filters)}">newest page</a>.</p>` : poller(filters, newestId, '', doc.data.length === 0)}
  ${doc.data.length === 0 ? html`<p id="journal-empty">${filtered ? 'No request matches these filters yet.' : 'No request yet: requests made with an API key of this account appear here.'}</p>` : ''}
  <ol id="journal-entries" class="journal">${doc.data.map((entry) => entryItem(entry, names))}</ol>
  <nav class="pager" aria-label="Journal pages">
    ${older ? html`<a href="${pageUrl(PATH, filters)}">Newest requests</a>` : ''}
    ${nextCursor ? html`<a href="${pageUrl(PATH, filters, { older: nextCursor })}">Older requests</a>` : ''}
  </nav>
</section>`;
        return renderer.page(request, reply, { title: 'Requests', active: PATH, body });
      });

      // The live list's poll: the entries written after `after` (an entry id), with the page's filters.
      app.get('/requests/live', CONSOLE_ROUTE, async (request, reply) => {
        const query = queryOf(request);
        const filters = filtersOf(query);
        const after = query.get('after') ?? '';
        const doc = await read(request, journalQuery(filters, { 'filter[after_id]': after, sort: 'id', 'page[size]': String(LIVE_BATCH) }));
        if (doc.data.length === 0) return reply.code(204).send();
        const names = await keyNames(request);
        const newest = doc.data[doc.data.length - 1]!;
        const count = doc.data.length;
        const fragment = html`${poller(filters, newest.id, `${count} new ${count === 1 ? 'request' : 'requests'} at the top (last at ${String(newest.attributes.created_at)}).`, false)}
<ol hx-swap-oob="afterbegin:#journal-entries">${[...doc.data].reverse().map((entry) => entryItem(entry, names))}</ol>
${query.get('empty') === '1' ? html`<p id="journal-empty" hx-swap-oob="delete"></p>` : ''}`;
        return reply.type('text/html; charset=utf-8').send(fragment.text);
      });
    },
  };
}

/** The element that polls for newer entries; each answer with news replaces it with one that asks from the new newest. */
function poller(filters: JournalFilters, newestId: string, news: string, empty: boolean): Html {
  const url = pageUrl(`${PATH}/live`, filters, { after: newestId, ...(empty ? { empty: '1' } : {}) });
  return html`<div id="journal-live" hx-get="${url}" hx-trigger="every 1s" hx-swap="outerHTML">
  <p class="muted" role="status">Live: new requests appear at the top as they come. ${news}</p>
</div>`;
}

function filterForm(filters: JournalFilters, keys: ReadonlyArray<{ client_id: string; name: string }>): Html {
  return html`<section aria-labelledby="journal-filters-heading">
  <h2 id="journal-filters-heading">Filter</h2>
  <form method="get" action="${PATH}" class="row">
    <label for="journal-status">Status <input id="journal-status" name="status" value="${filters.status}" placeholder="4xx, 5xx or 404" size="12" aria-describedby="journal-status-hint"></label>
    <label for="journal-path">Path contains <input id="journal-path" name="path" value="${filters.path}" placeholder="/v1/contacts" size="24"></label>
    <label for="journal-key">Key <select id="journal-key" name="key">
      <option value="">Every key</option>
      ${keys.map((k) => html`<option value="${k.client_id}"${k.client_id === filters.key ? html` selected` : ''}>${k.name} (${k.client_id})</option>`)}
      ${filters.key !== '' && !keys.some((k) => k.client_id === filters.key) ? html`<option value="${filters.key}" selected>${filters.key} (deleted key)</option>` : ''}
    </select></label>
    <label for="journal-upstream">Upstream <select id="journal-upstream" name="upstream">
      ${[['', 'Any request'], ['true', 'Upstream requests'], ['false', 'Not upstream (sitebiz extensions)']].map(([value, label]) => html`<option value="${value}"${value === filters.upstream ? html` selected` : ''}>${label}</option>`)}
    </select></label>
    <button type="submit">Filter</button>
    <a href="${PATH}">Clear</a>
  </form>
  <p id="journal-status-hint" class="hint">Status: one status (404), a class (4xx) or several, comma-separated (4xx,5xx).</p>
</section>`;
}

function entryItem(entry: ResourceObject, keyNames: ReadonlyMap<string, string>): Html {
  const a = entry.attributes as {
    method: string;
    path: string;
    status: number;
    duration_ms: number;
    client_id: string;
    request_id: string;
    request_body: string | null;
    response_body: string | null;
    created_at: string;
    upstream: boolean | null;
    upstream_reason: string | null;
  };
  const keyName = keyNames.get(a.client_id);
  const statusClass = a.status >= 400 ? 'status-failed' : 'status-ok';
  return html`<li id="request-${entry.id}"><details>
  <summary><span class="${statusClass}">${a.status}</span> <code>${a.method}</code> <code class="journal-path">${a.path}</code> ${a.upstream === false ? html`<span class="status-pending" title="${a.upstream_reason ?? ''}">not upstream</span> ` : ''}<span class="muted">${formatMs(a.duration_ms)} · ${keyName ?? a.client_id} · ${timeHtml(a.created_at)}</span></summary>
  <dl class="facts">
    <dt>Key</dt><dd>${keyName ? html`${keyName} ` : ''}<code>${a.client_id}</code></dd>
    <dt>Request id</dt><dd><code>${a.request_id}</code> (X-Request-Id, in the server's log)</dd>
    <dt>Arrived</dt><dd>${timeHtml(a.created_at)}</dd>
    <dt>Duration</dt><dd>${formatMs(a.duration_ms)}</dd>
    <dt>Upstream</dt><dd>${a.upstream === null ? 'Not known (recorded before sitebiz marked requests)' : a.upstream ? 'Yes: the upstream API defines everything this request used' : html`No: ${a.upstream_reason ?? ''} (with UPSTREAM_STRICT on, a sitebiz extension is refused)`}</dd>
  </dl>
  <h3>Request body</h3>
  ${bodyBlock(a.request_body)}
  <h3>Response body</h3>
  ${bodyBlock(a.response_body)}
</details></li>`;
}

function formatMs(ms: number): string {
  return `${ms < 10 ? ms.toFixed(1) : Math.round(ms).toLocaleString('en-US')} ms`;
}

/** A body as the journal keeps it: pretty-printed when it is JSON, else as text (escaped either way). */
function bodyBlock(text: string | null): Html {
  if (text === null) return html`<p class="muted">None.</p>`;
  let shown = text;
  let json = false;
  try {
    shown = prettyJson(JSON.parse(text));
    json = true;
  } catch {
    // Not JSON, or JSON cut short at the journal's size limit: shown as kept.
  }
  const cut = !json && Buffer.byteLength(text, 'utf8') > JOURNAL_BODY_BYTES - 4;
  return html`<pre>${shown}</pre>${cut ? html`<p class="hint">Cut at ${JOURNAL_BODY_BYTES.toLocaleString('en-US')} bytes, as the journal keeps bodies.</p>` : ''}`;
}
