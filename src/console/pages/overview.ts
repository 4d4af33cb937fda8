// Overview (/console): the account's sites with their counts, the mode, where the API and its
// reference are, and what happened lately: the chosen site's last webhook deliveries and, in
// sandbox mode, the last requests of the account's keys (the request journal).
import type { FastifyInstance } from 'fastify';
import type { Principal } from '../../auth/principal.js';
import { listApiKeys } from '../../domain/accounts.js';
import { html, type Html } from '../html.js';
import { CONSOLE_ROUTE, sessionOf, type ConsoleDeps, type ConsolePage, type ConsoleRenderer } from '../plugin.js';
import { timeHtml } from '../when.js';

/** The record types counted per site on the overview, as the API names them. */
const COUNTED = ['contacts', 'customers', 'offers', 'products', 'purchases', 'transactions'] as const;

/** How many deliveries and journaled requests the overview shows. */
const RECENT = 10;

export function overviewPage(renderer: ConsoleRenderer): ConsolePage {
  return {
    path: '/console',
    title: 'Overview',
    register(app: FastifyInstance, deps: ConsoleDeps) {
      app.get('/', CONSOLE_ROUTE, async (request, reply) => {
        const session = sessionOf(request);
        const sites = await renderer.sites(session);
        const { engine } = deps;
        // Each count is the list's total (kept per site, so one cheap query each).
        const counts = await Promise.all(
          sites.map(async (site) =>
            Promise.all(
              COUNTED.map(async (type) => {
                const doc = await engine.list(engine.registry.get(type), `filter[site_id]=${site.id}&page[size]=1`, session.principal);
                return doc.meta.total_count;
              }),
            ),
          ),
        );
        const siteId = await renderer.siteOf(request);
        const [deliveries, requests] = await Promise.all([recentDeliveries(deps, session.principal, siteId), recentRequests(deps, session.principal)]);
        const base = deps.config.publicUrl;
        const body = html`<section aria-labelledby="api-heading">
  <h2 id="api-heading">The API</h2>
  <dl class="facts">
    <dt>Mode</dt><dd>${deps.config.mode}${deps.config.mode === 'sandbox' ? ' (test helpers, the account clock and the request journal are on)' : ''}</dd>
    <dt>Base URL</dt><dd><code>${base}/v1</code></dd>
    <dt>Reference</dt><dd><a href="/docs">${base}/docs</a> (OpenAPI: <a href="/v1/openapi.json">/v1/openapi.json</a>)</dd>
    <dt>Tokens</dt><dd><code>POST ${base}/v1/oauth/token</code> with an API key's client id and secret</dd>
  </dl>
</section>
<section aria-labelledby="sites-heading">
  <h2 id="sites-heading">Sites</h2>
  <div class="table-scroll">
  <table>
    <caption>Records per site</caption>
    <thead><tr><th scope="col">Site</th>${COUNTED.map((t) => html`<th scope="col" class="num">${t}</th>`)}</tr></thead>
    <tbody>${sites.map(
      (site, i) => html`<tr><th scope="row"><a href="/console/data?site=${site.id}">${site.title}</a> <span class="muted">(${site.id})</span></th>${counts[i]!.map(
        (n) => html`<td class="num">${n.toLocaleString('en-US')}</td>`,
      )}</tr>`,
    )}</tbody>
  </table>
  </div>
</section>
${deliveries}
${requests}`;
        return renderer.page(request, reply, { title: 'Overview', active: '/console', body });
      });
    },
  };
}

/** Delivery statuses as the shared status classes show them. */
const DELIVERY_STATUS_CLASS: Record<string, string> = { succeeded: 'status-ok', failed: 'status-failed', cancelled: 'status-failed', pending: 'status-pending', retrying: 'status-pending' };

/** The chosen site's last deliveries, newest first, through the engine's webhook_deliveries list. */
async function recentDeliveries(deps: ConsoleDeps, principal: Principal, siteId: number | null): Promise<Html> {
  const { engine } = deps;
  const resource = engine.registry.find('webhook_deliveries');
  if (!resource || siteId === null) return html``;
  const doc = await engine.list(resource, `filter[site_id]=${siteId}&page[size]=${RECENT}&fields[webhook_deliveries]=event,status,target_url,last_response_status,created_at`, principal);
  const rows = doc.data.map((delivery) => {
    const a = delivery.attributes;
    const status = String(a.status);
    const href = `/console/webhooks/deliveries/${delivery.id}?site=${siteId}`;
    return html`<tr>
      <td><span class="${DELIVERY_STATUS_CLASS[status] ?? ''}">${status}</span>${a.last_response_status === null ? '' : html` <span class="muted">(${String(a.last_response_status)})</span>`}</td>
      <td><code>${String(a.event)}</code></td>
      <td class="target">${String(a.target_url)}</td>
      <td>${timeHtml(String(a.created_at))}</td>
      <td><a href="${href}" aria-label="Open delivery ${delivery.id}">Open</a></td>
    </tr>`;
  });
  return html`<section aria-labelledby="deliveries-heading">
  <h2 id="deliveries-heading">Recent deliveries</h2>
  ${
    rows.length === 0
      ? html`<p>No webhook deliveries for this site yet. They are made when an event matches one of its hooks (<a href="/console/webhooks?site=${siteId}">Webhooks</a>).</p>`
      : html`<div class="table-scroll">
  <table>
    <caption>The last ${RECENT} webhook deliveries of this site, newest first</caption>
    <thead><tr><th scope="col">Status</th><th scope="col">Event</th><th scope="col">Target</th><th scope="col">Made</th><th scope="col">Delivery</th></tr></thead>
    <tbody>${rows}</tbody>
  </table>
  </div>`
  }
</section>`;
}

/**
 * Sandbox mode: the account's last journaled requests, newest first. Like GET
 * /v1/test_helpers/requests, this process's buffered entries are written first, then the
 * engine lists the journal's `requests` resource.
 */
async function recentRequests(deps: ConsoleDeps, principal: Principal): Promise<Html> {
  const { engine, journal } = deps;
  const resource = engine.registry.find('requests');
  if (!journal || !resource) return html``;
  await journal.flush();
  const [doc, keys] = await Promise.all([
    engine.list(resource, `page[size]=${RECENT}&fields[requests]=method,path,status,client_id,created_at`, principal),
    listApiKeys(deps.database, { accountId: principal.accountId }),
  ]);
  // Named as on the Requests page; a deleted key's entries keep its client id alone.
  const keyNames = new Map(keys.map((k) => [k.client_id, k.name]));
  const rows = doc.data.map((entry) => {
    const a = entry.attributes;
    const status = Number(a.status);
    const clientId = String(a.client_id);
    const keyName = keyNames.get(clientId);
    return html`<tr>
      <td>${String(a.method)}</td>
      <td class="path"><code>${String(a.path)}</code></td>
      <td class="num"><span class="${status >= 500 ? 'status-failed' : status >= 400 ? 'status-pending' : 'status-ok'}">${status}</span></td>
      <td><a href="/console/requests?key=${clientId}"><code>${clientId}</code></a>${keyName ? html` <span class="muted">(${keyName})</span>` : ''}</td>
      <td>${timeHtml(String(a.created_at))}</td>
    </tr>`;
  });
  return html`<section aria-labelledby="requests-heading">
  <h2 id="requests-heading">Recent requests</h2>
  ${
    rows.length === 0
      ? html`<p>No requests journaled yet: the requests of the account's keys appear here.</p>`
      : html`<div class="table-scroll">
  <table>
    <caption>The last ${RECENT} requests of the account's keys, newest first</caption>
    <thead><tr><th scope="col">Method</th><th scope="col">Path</th><th scope="col" class="num">Status</th><th scope="col">Key</th><th scope="col">Time</th></tr></thead>
    <tbody>${rows}</tbody>
  </table>
  </div>`
  }
  <p><a href="/console/requests">The whole request journal</a></p>
</section>`;
}
