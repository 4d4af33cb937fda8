// Events (/console/events?site=<id>): the webhook events of a site, as GET /v1/events lists them
// (the `events` resource over the outbox, src/resources/events.ts): every event whether or not a
// hook received it, newest first, in cursor pages like the API's, each opening to its payload.
// Read through the engine with the session's principal: the same tenancy and permissions.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ResourceObject } from '../../jsonapi/document.js';
import { ApiError } from '../../jsonapi/errors.js';
import type { ListDocument } from '../../jsonapi/engine.js';
import { html, prettyJson, type Html } from '../html.js';
import { withSite } from '../layout.js';
import { CONSOLE_ROUTE, problemsOf, queryOf, sessionOf, type ConsoleDeps, type ConsolePage, type ConsoleRenderer } from '../plugin.js';
import { when } from './webhook-views.js';

const EVENTS_PATH = '/console/events';
const PAGE_SIZE = 25;

/** The console URL of a page of events with the chosen event type (and a cursor). */
function eventsUrl(siteId: number, event: string, cursor: { after?: string; before?: string } = {}): string {
  const params = new URLSearchParams();
  if (event !== '') params.set('event', event);
  if (cursor.after !== undefined) params.set('after', cursor.after);
  if (cursor.before !== undefined) params.set('before', cursor.before);
  const query = params.toString();
  return withSite(query === '' ? EVENTS_PATH : `${EVENTS_PATH}?${query}`, siteId);
}

/** A cursor from a cursor page's link, or null when there is no such page. */
function cursorOf(link: string | null | undefined, key: 'page[after]' | 'page[before]'): string | null {
  return link ? new URL(link).searchParams.get(key) : null;
}

// A long payload scrolls inside its <pre>; tabindex lets keyboard users scroll it too.
function eventItem(event: ResourceObject): Html {
  const a = event.attributes;
  return html`<li><details>
  <summary><strong>${String(a.event)}</strong>${a.resource_id === null ? '' : html`, record ${String(a.resource_id)}`}, ${when(a.created_at)} <span class="muted">(event ${event.id})</span></summary>
  <pre tabindex="0">${prettyJson(a.payload)}</pre>
</details></li>`;
}

export function eventsPage(renderer: ConsoleRenderer): ConsolePage {
  return {
    path: EVENTS_PATH,
    title: 'Events',
    register(app: FastifyInstance, deps: ConsoleDeps) {
      const { engine } = deps;
      const events = engine.registry.get('events');
      const eventNames = events.attributes.event?.enumValues ?? [];

      app.get('/events', CONSOLE_ROUTE, async (request: FastifyRequest, reply) => {
        const siteId = await renderer.siteOf(request);
        if (siteId === null) {
          return renderer.page(request, reply, { title: 'Events', active: EVENTS_PATH, body: html`<p>Your user reaches no site of the account, so there are no events to show. An owner can give you sites.</p>` });
        }
        const query = queryOf(request);
        // Only the declared event types reach the engine's filter; anything else shows every event.
        const asked = query.get('event') ?? '';
        const event = eventNames.includes(asked) ? asked : '';
        const before = query.get('before');
        const after = query.get('after');
        const params = new URLSearchParams({ 'filter[site_id]': String(siteId), 'page[size]': String(PAGE_SIZE) });
        if (event !== '') params.set('filter[event_eq]', event);
        if (before !== null) params.set('page[before]', before);
        else params.set('page[after]', after ?? '');

        const filterForm = html`<form method="get" action="${EVENTS_PATH}" class="row">
  <input type="hidden" name="site" value="${siteId}">
  <label for="events-type">Event<select id="events-type" name="event">
    <option value=""${event === '' ? html` selected` : ''}>Every event</option>
    ${eventNames.map((name) => html`<option value="${name}"${name === event ? html` selected` : ''}>${name}</option>`)}
  </select></label>
  <button type="submit">Show</button>
</form>`;

        let doc: ListDocument;
        try {
          doc = await engine.list(events, params.toString(), sessionOf(request).principal);
        } catch (error) {
          // A cursor that is not one of this list's (edited, or from another site): say so, as the API does.
          if (!(error instanceof ApiError) || error.status !== 400) throw error;
          return renderer.page(request, reply, {
            title: 'Events',
            active: EVENTS_PATH,
            body: html`${filterForm}<p><a href="${eventsUrl(siteId, event)}">Newest events</a></p>`,
            problems: problemsOf(error) ?? [],
            status: 400,
          });
        }
        const newer = cursorOf(doc.links.prev, 'page[before]');
        const older = cursorOf(doc.links.next, 'page[after]');
        const total = doc.meta.total_count;
        const body = html`<p>Every event of the site that webhooks deliver, whether or not a hook received it, newest first: integrations reconcile against this list
(<code>GET /v1/events</code>). Open one to see its payload, the records as the API rendered them when it happened.</p>
${filterForm}
<section aria-labelledby="events-heading">
  <h2 id="events-heading">${event === '' ? 'Events' : `${event} events`}</h2>
  <p class="muted">${total.toLocaleString('en-US')} ${total === 1 ? 'event' : 'events'}${event === '' ? '' : ` of type ${event}`}.</p>
  ${doc.data.length === 0 ? html`<p>${before !== null || (after ?? '') !== '' ? 'No more events this way.' : 'No event yet. Tags added or removed, form submissions and purchases make them.'}</p>` : ''}
  <ol class="events">${doc.data.map(eventItem)}</ol>
  <nav class="pager" aria-label="Event pages">
    ${newer !== null || before !== null || (after ?? '') !== '' ? html`<a href="${eventsUrl(siteId, event)}">Newest events</a>` : ''}
    ${newer !== null ? html`<a href="${eventsUrl(siteId, event, { before: newer })}">Newer events</a>` : ''}
    ${older !== null ? html`<a href="${eventsUrl(siteId, event, { after: older })}">Older events</a>` : ''}
  </nav>
</section>`;
        return renderer.page(request, reply, { title: 'Events', active: EVENTS_PATH, body });
      });
    },
  };
}
