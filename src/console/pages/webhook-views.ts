// Pieces of the Webhooks pages (src/console/pages/webhooks.ts): how a hook's state, a delivery's
// status and answer, times and secrets are shown. Only rendering: no engine calls here.
import type { ResourceObject } from '../../jsonapi/document.js';
import { html, type Html } from '../html.js';
import { withSite } from '../layout.js';
import { timeHtml } from '../when.js';

export const WEBHOOKS_PATH = '/console/webhooks';

export const hookUrl = (id: string | number, siteId: number | null): string => withSite(`${WEBHOOKS_PATH}/${id}`, siteId);
export const deliveryUrl = (id: string | number, siteId: number | null): string => withSite(`${WEBHOOKS_PATH}/deliveries/${id}`, siteId);

/** A record's attributes, read loosely (the engine renders JSON values). */
export const attrs = (record: ResourceObject): Record<string, unknown> => record.attributes;
const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** The id of a to-one relationship's linkage, or null. */
export function linkedId(record: ResourceObject, name: string): string | null {
  const data = record.relationships?.[name]?.data;
  return data && !Array.isArray(data) ? data.id : null;
}

/** An API timestamp as readable UTC in a <time>; `none` when there is none. */
export function when(value: unknown, none = 'none'): Html {
  return timeHtml(value, none);
}

/** A hook's state: enabled, enabled but failing since when, or disabled since when. */
export function hookState(hook: ResourceObject): Html {
  const a = attrs(hook);
  if (text(a.disabled_at)) return html`<span class="status-failed">Disabled</span> since ${when(a.disabled_at)}`;
  if (text(a.failing_since)) return html`<span class="status-pending">Enabled, failing</span> since ${when(a.failing_since)}`;
  return html`<span class="status-ok">Enabled</span>`;
}

const STATUS_CLASS: Record<string, string> = {
  succeeded: 'status-ok',
  pending: 'status-pending',
  retrying: 'status-pending',
  failed: 'status-failed',
  cancelled: 'status-failed',
};

export function deliveryStatus(status: unknown): Html {
  const name = String(status);
  return html`<span class="${STATUS_CLASS[name] ?? ''}">${name}</span>`;
}

/** At most `max` characters of a text, marked when cut. */
export function excerpt(value: string, max = 80): string {
  return value.length <= max ? value : `${value.slice(0, max - 1)}…`;
}

/** The receiver's last answer in a few words: its HTTP status, or why no answer counted. */
export function lastAnswer(delivery: ResourceObject): Html {
  const a = attrs(delivery);
  const status = typeof a.last_response_status === 'number' ? a.last_response_status : null;
  const error = text(a.last_error);
  if (status === null && !error) return html`<span class="muted">no attempt yet</span>`;
  return html`${status === null ? '' : html`<span class="${status >= 200 && status < 300 ? 'status-ok' : 'status-failed'}">HTTP ${status}</span>`}${
    error ? html`${status === null ? '' : ' '}<span class="muted">${excerpt(error)}</span>` : ''
  }`;
}

/** A table of deliveries, newest first; `withTarget` adds where each was posted (the site's list). */
export function deliveriesTable(deliveries: readonly ResourceObject[], siteId: number | null, caption: string, withTarget: boolean): Html {
  return html`<div class="table-scroll">
<table class="deliveries">
  <caption>${caption}</caption>
  <thead><tr><th scope="col">Delivery</th><th scope="col">Event</th>${withTarget ? html`<th scope="col">Target URL</th>` : ''}<th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col">Last answer</th><th scope="col">Created</th><th scope="col">Last attempt</th><th scope="col">Next attempt</th></tr></thead>
  <tbody>${deliveries.map((d) => {
    const a = attrs(d);
    // The link's id lets htmx give focus back to it when the region is swapped.
    return html`<tr>
    <th scope="row"><a id="delivery-link-${d.id}" href="${deliveryUrl(d.id, siteId)}">${d.id}</a></th>
    <td>${String(a.event)}</td>
    ${withTarget ? html`<td class="url">${String(a.target_url)}</td>` : ''}
    <td>${deliveryStatus(a.status)}</td>
    <td class="num">${String(a.attempt_count)}</td>
    <td>${lastAnswer(d)}</td>
    <td>${when(a.created_at)}</td>
    <td>${when(a.last_attempt_at, 'none yet')}</td>
    <td>${when(a.next_attempt_at)}</td>
  </tr>`;
  })}</tbody>
</table>
</div>`;
}

/** Response headers (name → value) as lines of `name: value`. */
export function headerLines(headers: unknown): string {
  if (!headers || typeof headers !== 'object') return '';
  return Object.entries(headers as Record<string, unknown>)
    .map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(', ') : String(value)}`)
    .join('\n');
}

/**
 * A signing secret, shown once, with a copy button, and how a receiver verifies deliveries with
 * it (the `standardwebhooks` package, as docs/webhooks.md "Verify a delivery" shows).
 */
export function secretOnce(secret: string, lead: Html): Html {
  return html`<section class="secret" aria-labelledby="secret-heading">
  <h2 id="secret-heading">Signing secret</h2>
  <p>${lead} <strong>Copy it now: it is shown only this once.</strong> sitebiz keeps it to sign deliveries but never shows it again; if it is lost, rotate the secret.</p>
  <p><code id="hook-secret">${secret}</code></p>
  <p><button type="button" data-copy="hook-secret">Copy the secret</button><span class="copy-status" role="status"></span></p>
</section>
<section aria-labelledby="verify-heading">
  <h2 id="verify-heading">Verify a delivery</h2>
  <p>Every delivery carries <code>webhook-id</code>, <code>webhook-timestamp</code> and <code>webhook-signature</code> headers
  (<a href="https://www.standardwebhooks.com/">Standard Webhooks</a>). Check them with the <code>standardwebhooks</code> package
  (<code>npm install standardwebhooks</code>; there are libraries for other languages), on the raw body, before parsing it:</p>
  <pre tabindex="0"><code>import { Webhook } from 'standardwebhooks';

const webhook = new Webhook(process.env.HOOK_SECRET); // the whsec_... secret above

// In the receiver, with the raw body (a string) and the request's headers:
const message = webhook.verify(body, headers); // throws unless a signature matches
// message.event, message.id, message.payload: answer 2xx at once, then do the work</code></pre>
  <p class="hint">verify also refuses a timestamp more than 5 minutes away, so an old delivery cannot be replayed. Deduplicate on
  <code>webhook-id</code>: a delivery may arrive more than once. More in sitebiz's <code>docs/webhooks.md</code> ("Verify a delivery")
  and the <a href="/docs#/Webhooks">API reference</a>.</p>
</section>`;
}
