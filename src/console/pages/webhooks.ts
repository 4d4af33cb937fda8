// Webhooks (/console/webhooks?site=<id>): a site's hooks, made, deleted, enabled and given a new
// secret through the engine's `hooks` resource with the session's principal, exactly as
// POST /v1/hooks and its actions do (same validation, target-address policy and permissions);
// and the delivery log (`webhook_deliveries` and their attempts) with redelivery. Lists of
// deliveries are live: htmx polls a fragment route every second (src/console/live-region.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ResourceObject } from '../../jsonapi/document.js';
import { ApiError } from '../../jsonapi/errors.js';
import type { ListDocument } from '../../jsonapi/engine.js';
import { html, prettyJson, type Html } from '../html.js';
import { withSite } from '../layout.js';
import { answerLivePoll, liveRegion, type LiveRegion } from '../live-region.js';
import { CONSOLE_ROUTE, ConsoleProblem, formOf, problemsOf, queryOf, sessionOf, type ConsoleDeps, type ConsolePage, type ConsoleRenderer } from '../plugin.js';
import {
  attrs,
  deliveriesTable,
  deliveryStatus,
  deliveryUrl,
  headerLines,
  hookState,
  hookUrl,
  lastAnswer,
  linkedId,
  secretOnce,
  when,
  WEBHOOKS_PATH,
} from './webhook-views.js';

/** Hooks per page of the list (a site has a few; more get page links). */
const HOOKS_PAGE_SIZE = 50;
/** Deliveries per page; the newest page is the live one. */
const DELIVERIES_PAGE_SIZE = 20;
/** Attempts shown on a delivery's page (8 per round of retries; redeliveries add more). */
const ATTEMPTS_SHOWN = 100;

/** Whose deliveries a list shows: one hook's, or a whole site's. */
type DeliveriesOf = { hookId: string } | { siteId: number };

/** What a `?done=` code after a change says (fixed texts: nothing from the URL is shown). */
const DONE_NOTICES: Record<string, string> = {
  deleted: 'The hook was deleted: nothing more is delivered to it. Its deliveries stay in the log below.',
  enabled: 'The hook is enabled: events from now on are delivered to it.',
  redelivered: 'The delivery is queued for an attempt now: the attempt appears below in a moment.',
};

const noticeOf = (request: FastifyRequest): string | undefined => DONE_NOTICES[queryOf(request).get('done') ?? ''];

/** A cursor from a cursor page's link (`page[after]` of links.next, `page[before]` of links.prev). */
function cursorOf(link: string | null | undefined, key: 'page[after]' | 'page[before]'): string | null {
  return link ? new URL(link).searchParams.get(key) : null;
}

/** An id from a route parameter: digits, or a 404 page (the engine would say the same). */
function idParam(request: FastifyRequest, noun: string): string {
  const id = (request.params as { id: string }).id;
  if (!/^\d{1,15}$/.test(id)) throw new ConsoleProblem(404, `There is no ${noun} ${JSON.stringify(id)}.`);
  return id;
}

/** The site a form names in its hidden `site` field: digits or nothing (the engine checks the rest). */
function formSite(request: FastifyRequest): string {
  const site = formOf(request).get('site') ?? '';
  return /^\d{1,15}$/.test(site) ? site : '';
}

export function webhooksPage(renderer: ConsoleRenderer): ConsolePage {
  return {
    path: WEBHOOKS_PATH,
    title: 'Webhooks',
    register(app: FastifyInstance, deps: ConsoleDeps) {
      const { engine } = deps;
      const hooks = engine.registry.get('hooks');
      const deliveries = engine.registry.get('webhook_deliveries');
      /** The events a hook can subscribe to, as the hooks resource declares them. */
      const eventNames = hooks.attributes.event?.enumValues ?? [];
      const principalOf = (request: FastifyRequest) => sessionOf(request).principal;

      const csrf = (request: FastifyRequest) => html`<input type="hidden" name="_csrf" value="${sessionOf(request).csrfToken}">`;

      // ---- Deliveries: the site's log and one hook's, newest first; the newest page is live.

      /** Where a list of deliveries lives: the hook's page, or the site's delivery log. */
      const deliveriesPath = (of: DeliveriesOf) => ('hookId' in of ? `${WEBHOOKS_PATH}/${of.hookId}` : `${WEBHOOKS_PATH}/deliveries`);

      /** A page of deliveries: of one hook (its related list) or of the site. */
      function listDeliveries(request: FastifyRequest, of: DeliveriesOf, paging: string): Promise<ListDocument> {
        const query = `page[size]=${DELIVERIES_PAGE_SIZE}&${paging}`;
        return 'hookId' in of
          ? engine.related(hooks, of.hookId, 'deliveries', query, principalOf(request))
          : engine.list(deliveries, `filter[site_id]=${of.siteId}&${query}`, principalOf(request));
      }

      /** The newest deliveries as a live region (the page and its poll render it alike). */
      async function liveDeliveries(request: FastifyRequest, of: DeliveriesOf, siteId: number): Promise<LiveRegion> {
        const doc = await listDeliveries(request, of, 'page[after]=');
        const total = doc.meta.total_count;
        const more = cursorOf(doc.links.next, 'page[after]');
        const olderUrl = withSite(`${deliveriesPath(of)}?older=${encodeURIComponent(more ?? '')}`, siteId);
        const content =
          doc.data.length === 0
            ? html`<p>No delivery yet. Each event of the site that matches a hook makes one, at once.</p>`
            : html`<p class="muted">${total.toLocaleString('en-US')} ${total === 1 ? 'delivery' : 'deliveries'} in all${more ? html`; the newest ${doc.data.length} are shown (<a href="${olderUrl}">older deliveries</a>)` : ''}.</p>
${deliveriesTable(doc.data, siteId, 'Newest deliveries first', !('hookId' in of))}`;
        const url = 'hookId' in of ? `${WEBHOOKS_PATH}/deliveries/live?hook=${of.hookId}` : `${WEBHOOKS_PATH}/deliveries/live?site=${siteId}`;
        return { id: 'deliveries-live', url, content };
      }

      /** An older page of deliveries (static: only the newest page is live). */
      async function olderDeliveries(request: FastifyRequest, of: DeliveriesOf, siteId: number, older: string): Promise<Html> {
        const base = deliveriesPath(of);
        const doc = await listDeliveries(request, of, `page[after]=${encodeURIComponent(older)}`);
        const next = cursorOf(doc.links.next, 'page[after]');
        return html`${doc.data.length === 0 ? html`<p>No older delivery.</p>` : deliveriesTable(doc.data, siteId, 'Older deliveries, newest first', !('hookId' in of))}
<nav class="pager" aria-label="Delivery pages">
  <a href="${withSite(base, siteId)}">Newest deliveries</a>
  ${next ? html`<a href="${withSite(`${base}?older=${encodeURIComponent(next)}`, siteId)}">Older deliveries</a>` : ''}
</nav>`;
      }

      // ---- The hooks of a site, and the form for a new one.

      async function hooksPage(
        request: FastifyRequest,
        reply: FastifyReply,
        options: { problems?: string[]; status?: number; values?: { event: string; target_url: string } } = {},
      ): Promise<FastifyReply> {
        const siteId = await renderer.siteOf(request);
        if (siteId === null) {
          return renderer.page(request, reply, { title: 'Webhooks', active: WEBHOOKS_PATH, body: html`<p>Your user reaches no site of the account, so there are no webhooks to show. An owner can give you sites.</p>` });
        }
        const pageNumber = Math.max(1, Math.min(Number(queryOf(request).get('page')) || 1, 100_000));
        const list = await engine.list(hooks, `filter[site_id]=${siteId}&page[size]=${HOOKS_PAGE_SIZE}&page[number]=${pageNumber}`, principalOf(request));
        const meta = list.meta as { total_pages: number; current_page: number; total_count: number };
        const values = options.values ?? { event: '', target_url: '' };
        const live = await liveDeliveries(request, { siteId }, siteId);
        const body = html`<section aria-labelledby="hooks-heading">
  <h2 id="hooks-heading">Hooks</h2>
  ${
    list.data.length === 0
      ? html`<p>This site has no hook yet. Create one below: every event of its kind in the site is then posted to its URL, signed.</p>`
      : html`<div class="table-scroll">
  <table>
    <caption>Hooks of the site, newest first</caption>
    <thead><tr><th scope="col">Event</th><th scope="col">Target URL</th><th scope="col">State</th><th scope="col">Created</th></tr></thead>
    <tbody>${list.data.map((hook) => {
      const a = attrs(hook);
      return html`<tr><th scope="row"><a href="${hookUrl(hook.id, siteId)}">${String(a.event)}</a>${a.resource_id === null ? '' : html` <span class="muted">(record ${String(a.resource_id)} only)</span>`}</th><td class="url">${String(a.target_url)}</td><td>${hookState(hook)}</td><td>${when(a.created_at)}</td></tr>`;
    })}</tbody>
  </table>
  </div>`
  }
  ${
    meta.total_pages > 1
      ? html`<nav class="pager" aria-label="Hook pages">
    ${meta.current_page > 1 ? html`<a href="${withSite(`${WEBHOOKS_PATH}?page=${meta.current_page - 1}`, siteId)}">Previous hooks</a>` : ''}
    <span>Page ${meta.current_page} of ${meta.total_pages}</span>
    ${meta.current_page < meta.total_pages ? html`<a href="${withSite(`${WEBHOOKS_PATH}?page=${meta.current_page + 1}`, siteId)}">More hooks</a>` : ''}
  </nav>`
      : ''
  }
</section>
<section aria-labelledby="new-hook-heading">
  <h2 id="new-hook-heading">New hook</h2>
  <form method="post" action="${withSite(WEBHOOKS_PATH, siteId)}" class="stack">
    ${csrf(request)}
    <input type="hidden" name="site" value="${siteId}">
    <label for="hook-event">Event</label>
    <select id="hook-event" name="event" required>
      <option value=""${values.event === '' ? html` selected` : ''}>Choose an event</option>
      ${eventNames.map((name) => html`<option value="${name}"${values.event === name ? html` selected` : ''}>${name}</option>`)}
    </select>
    <label for="hook-target">Target URL</label>
    <input id="hook-target" name="target_url" type="url" required inputmode="url" autocomplete="off" placeholder="https://example.com/hooks" value="${values.target_url}" aria-describedby="hook-target-hint">
    <p id="hook-target-hint" class="hint">${
      deps.config.mode === 'production'
        ? 'An absolute http or https URL of a public address: production mode refuses local and private ones.'
        : 'An absolute http or https URL. Sandbox mode accepts local receivers such as http://127.0.0.1:4000/hooks.'
    }</p>
    <div><button type="submit">Create hook</button></div>
  </form>
</section>
<section aria-labelledby="deliveries-heading">
  <h2 id="deliveries-heading">Latest deliveries of the site</h2>
  ${liveRegion(live, 'new deliveries and their status')}
</section>`;
        return renderer.page(request, reply, {
          title: 'Webhooks',
          active: WEBHOOKS_PATH,
          body,
          notice: noticeOf(request),
          ...(options.problems ? { problems: options.problems } : {}),
          ...(options.status ? { status: options.status } : {}),
        });
      }

      app.get('/webhooks', CONSOLE_ROUTE, (request, reply) => hooksPage(request, reply));

      app.post('/webhooks', CONSOLE_ROUTE, async (request, reply) => {
        const form = formOf(request);
        const values = { event: (form.get('event') ?? '').trim(), target_url: (form.get('target_url') ?? '').trim() };
        const site = formSite(request);
        let created: ResourceObject;
        try {
          // The body POST /v1/hooks takes; the engine validates it as it does for the API.
          created = (
            await engine.create(
              hooks,
              { data: { type: 'hooks', attributes: values, relationships: { site: { data: { type: 'sites', id: site } } } } },
              principalOf(request),
            )
          ).data;
        } catch (error) {
          const problems = problemsOf(error);
          if (!(error instanceof ApiError) || !problems) throw error;
          return hooksPage(request, reply, { problems, status: error.status, values });
        }
        const siteId = Number(linkedId(created, 'site'));
        const secret = String(created.meta?.signing_secret ?? '');
        const a = attrs(created);
        return renderer.page(request, reply, {
          title: 'Hook created',
          active: WEBHOOKS_PATH,
          status: 201,
          notice: `The hook for ${String(a.event)} events is created: they are posted to ${String(a.target_url)}.`,
          body: html`${secretOnce(secret, html`Receivers check each delivery's signature with this secret.`)}
<p><a href="${hookUrl(created.id, siteId)}">Go to the hook and its deliveries</a> · <a href="${withSite(WEBHOOKS_PATH, siteId)}">Back to the webhooks</a></p>`,
        });
      });

      // ---- One hook: its details, actions and deliveries.

      /** The hook (404 page when the session does not reach it), and its site. */
      async function findHook(request: FastifyRequest): Promise<{ hook: ResourceObject; siteId: number }> {
        const hook = (await engine.show(hooks, idParam(request, 'hook'), '', principalOf(request))).data;
        return { hook, siteId: Number(linkedId(hook, 'site')) };
      }

      /** A record page asked for with another site (the site picker): that site's webhooks instead. */
      function otherSiteAsked(request: FastifyRequest, reply: FastifyReply, siteId: number): FastifyReply | null {
        const asked = queryOf(request).get('site');
        if (asked === null || asked === String(siteId)) return null;
        return reply.redirect(withSite(WEBHOOKS_PATH, /^\d{1,15}$/.test(asked) ? Number(asked) : null), 303);
      }

      app.get('/webhooks/:id', CONSOLE_ROUTE, async (request, reply) => {
        const { hook, siteId } = await findHook(request);
        const elsewhere = otherSiteAsked(request, reply, siteId);
        if (elsewhere) return elsewhere;
        const a = attrs(hook);
        const older = queryOf(request).get('older');
        const deliveriesPart = older
          ? await olderDeliveries(request, { hookId: hook.id }, siteId, older)
          : liveRegion(await liveDeliveries(request, { hookId: hook.id }, siteId), 'new deliveries and their status');
        const disabled = typeof a.disabled_at === 'string';
        const body = html`<section aria-labelledby="hook-heading">
  <h2 id="hook-heading">Hook ${hook.id}</h2>
  <dl class="facts">
    <dt>Event</dt><dd>${String(a.event)}</dd>
    <dt>Target URL</dt><dd><code>${String(a.target_url)}</code></dd>
    <dt>Limited to</dt><dd>${a.resource_id === null ? 'every event of its kind in the site' : `record ${String(a.resource_id)}`}</dd>
    <dt>State</dt><dd>${hookState(hook)}</dd>
    <dt>Created</dt><dd>${when(a.created_at)}</dd>
    <dt>Changed</dt><dd>${when(a.updated_at)}</dd>
  </dl>
</section>
<section class="hook-actions" aria-labelledby="hook-actions-heading">
  <h2 id="hook-actions-heading">Change it</h2>
  ${
    disabled
      ? html`<form method="post" action="${withSite(`${WEBHOOKS_PATH}/${hook.id}/enable`, siteId)}" class="row">
    ${csrf(request)}
    <p>Its deliveries failed for 5 days, so it was disabled: events are not delivered to it. Enabling it delivers the events from now on.</p>
    <button type="submit">Enable the hook</button>
  </form>`
      : ''
  }
  <form method="post" action="${withSite(`${WEBHOOKS_PATH}/${hook.id}/rotate-secret`, siteId)}" class="row">
    ${csrf(request)}
    <p>A new signing secret is shown once; the current one keeps signing beside it for 24 hours, so receivers can switch without missing a delivery.</p>
    <button type="submit" class="secondary">Rotate the signing secret</button>
  </form>
  <p><a href="${withSite(`${WEBHOOKS_PATH}/${hook.id}/delete`, siteId)}">Delete this hook…</a></p>
</section>
<section aria-labelledby="deliveries-heading">
  <h2 id="deliveries-heading">${older ? 'Older deliveries' : 'Deliveries'}</h2>
  ${deliveriesPart}
</section>
<p><a href="${withSite(WEBHOOKS_PATH, siteId)}">Back to the webhooks of the site</a></p>`;
        return renderer.page(request, reply, { title: `Webhook: ${String(a.event)}`, active: WEBHOOKS_PATH, body, notice: noticeOf(request) });
      });

      app.get('/webhooks/:id/delete', CONSOLE_ROUTE, async (request, reply) => {
        const { hook, siteId } = await findHook(request);
        const a = attrs(hook);
        const body = html`<section aria-labelledby="confirm-heading">
  <h2 id="confirm-heading">Delete hook ${hook.id}?</h2>
  <p>Deleting it stops the delivery of <strong>${String(a.event)}</strong> events to <code>${String(a.target_url)}</code>:</p>
  <ul>
    <li>no event from now on is delivered to it;</li>
    <li>its deliveries not yet made or waiting for a retry are cancelled;</li>
    <li>its signing secret is gone, so its deliveries can no longer be redelivered.</li>
  </ul>
  <p>Its deliveries stay in the log. This cannot be undone: a new hook gets a new secret.</p>
  <form method="post" action="${withSite(`${WEBHOOKS_PATH}/${hook.id}/delete`, siteId)}" class="row">
    ${csrf(request)}
    <button type="submit" class="danger">Delete the hook</button>
    <a href="${hookUrl(hook.id, siteId)}">Keep it</a>
  </form>
</section>`;
        return renderer.page(request, reply, { title: 'Delete a webhook', active: WEBHOOKS_PATH, body });
      });

      app.post('/webhooks/:id/delete', CONSOLE_ROUTE, async (request, reply) => {
        const { siteId } = await findHook(request);
        await engine.delete(hooks, idParam(request, 'hook'), principalOf(request));
        return reply.redirect(withSite(`${WEBHOOKS_PATH}?done=deleted`, siteId), 303);
      });

      app.post('/webhooks/:id/enable', CONSOLE_ROUTE, async (request, reply) => {
        const id = idParam(request, 'hook');
        const { document } = await engine.action(hooks, id, 'enable', undefined, principalOf(request));
        return reply.redirect(withSite(`${hookUrl(id, null)}?done=enabled`, Number(linkedId(document.data, 'site'))), 303);
      });

      app.post('/webhooks/:id/rotate-secret', CONSOLE_ROUTE, async (request, reply) => {
        const id = idParam(request, 'hook');
        const { document } = await engine.action(hooks, id, 'rotate_secret', undefined, principalOf(request));
        const siteId = Number(linkedId(document.data, 'site'));
        return renderer.page(request, reply, {
          title: 'New signing secret',
          active: WEBHOOKS_PATH,
          notice: `Hook ${id} has a new signing secret. The previous one keeps signing beside it for 24 hours.`,
          body: html`${secretOnce(String(document.data.meta?.signing_secret ?? ''), html`Deliveries are signed with this secret from now on.`)}
<p><a href="${hookUrl(id, siteId)}">Back to the hook</a></p>`,
        });
      });

      // ---- The site's whole delivery log, paged (the webhooks page shows its newest, live).

      app.get('/webhooks/deliveries', CONSOLE_ROUTE, async (request, reply) => {
        const siteId = await renderer.siteOf(request);
        if (siteId === null) return reply.redirect(WEBHOOKS_PATH, 303);
        const older = queryOf(request).get('older');
        const part = older
          ? await olderDeliveries(request, { siteId }, siteId, older)
          : liveRegion(await liveDeliveries(request, { siteId }, siteId), 'new deliveries and their status');
        const body = html`<section aria-labelledby="deliveries-heading">
  <h2 id="deliveries-heading">${older ? 'Older deliveries' : 'Latest deliveries'} of the site</h2>
  ${part}
</section>
<p><a href="${withSite(WEBHOOKS_PATH, siteId)}">Back to the webhooks of the site</a></p>`;
        return renderer.page(request, reply, { title: 'Webhook deliveries', active: WEBHOOKS_PATH, body });
      });

      // The live lists' poll: the newest page of the site's (?site=) or a hook's (?hook=) deliveries.
      app.get('/webhooks/deliveries/live', CONSOLE_ROUTE, async (request, reply) => {
        const query = queryOf(request);
        const hookId = query.get('hook');
        let region: LiveRegion;
        if (hookId !== null) {
          if (!/^\d{1,15}$/.test(hookId)) throw new ConsoleProblem(404, 'There is no such hook.');
          const hook = (await engine.show(hooks, hookId, '', principalOf(request))).data;
          region = await liveDeliveries(request, { hookId }, Number(linkedId(hook, 'site')));
        } else {
          const siteId = await renderer.siteOf(request);
          if (siteId === null) throw new ConsoleProblem(404, 'Your user reaches no site.');
          region = await liveDeliveries(request, { siteId }, siteId);
        }
        return answerLivePoll(reply, query.get('seen'), region, engine.now(principalOf(request)), 'Deliveries');
      });

      // ---- One delivery: what it is, its attempts with the receiver's answers, and redelivery.

      /** The parts of a delivery that change (status, timing, attempts), as a live region. */
      async function deliveryProgress(request: FastifyRequest, delivery: ResourceObject, siteId: number): Promise<LiveRegion> {
        const a = attrs(delivery);
        const attempts = await engine.related(deliveries, delivery.id, 'attempts', `sort=-attempt_number&page[size]=${ATTEMPTS_SHOWN}`, principalOf(request));
        const total = attempts.meta.total_count;
        const content = html`<dl class="facts">
  <dt>Status</dt><dd>${deliveryStatus(a.status)}</dd>
  <dt>Attempts</dt><dd>${String(a.attempt_count)}</dd>
  <dt>Last answer</dt><dd>${lastAnswer(delivery)}</dd>
  <dt>${a.status === 'succeeded' ? 'Delivered' : 'Last attempt'}</dt><dd>${when(a.last_attempt_at, 'none yet')}</dd>
  <dt>Next attempt</dt><dd>${when(a.next_attempt_at)}</dd>
</dl>
<h3>Attempts</h3>
${
  attempts.data.length === 0
    ? html`<p>No attempt yet.</p>`
    : html`${total > attempts.data.length ? html`<p class="muted">The newest ${attempts.data.length} of ${total} attempts are shown.</p>` : ''}
<ol class="attempts" reversed>${attempts.data.map((attempt) => {
        const t = attrs(attempt);
        const status = typeof t.response_status === 'number' ? t.response_status : null;
        const headers = headerLines(t.response_headers);
        const bodyText = typeof t.response_body === 'string' ? t.response_body : '';
        // Long answers scroll inside their <pre>s, which tabindex lets keyboard users scroll.
        return html`<li class="attempt">
  <p><strong>Attempt ${String(t.attempt_number)}</strong>, ${when(t.started_at)}, ${String(t.duration_ms)} ms:
  ${status === null ? html`<span class="status-failed">no answer</span>` : html`<span class="${status >= 200 && status < 300 ? 'status-ok' : 'status-failed'}">HTTP ${status}</span>`}
  ${typeof t.error === 'string' ? html`<span class="muted">${t.error}</span>` : ''}</p>
  ${headers ? html`<details><summary>Answer headers</summary><pre tabindex="0">${headers}</pre></details>` : ''}
  ${status !== null ? html`<p class="answer-label">Answer body${bodyText.length >= 2048 ? ' (its first 2 KB)' : ''}:</p>${bodyText === '' ? html`<p class="muted">empty</p>` : html`<pre class="answer-body" tabindex="0">${bodyText}</pre>`}` : ''}
</li>`;
      })}</ol>`
}`;
        return { id: 'delivery-live', url: `${WEBHOOKS_PATH}/deliveries/${delivery.id}/live?site=${siteId}`, content };
      }

      async function findDelivery(request: FastifyRequest, include = ''): Promise<{ delivery: ResourceObject; included: ResourceObject[]; siteId: number }> {
        const doc = await engine.show(deliveries, idParam(request, 'delivery'), include, principalOf(request));
        return { delivery: doc.data, included: doc.included ?? [], siteId: Number(linkedId(doc.data, 'site')) };
      }

      async function deliveryPage(request: FastifyRequest, reply: FastifyReply, options: { problems?: string[]; status?: number } = {}): Promise<FastifyReply> {
        const { delivery, included, siteId } = await findDelivery(request, 'include=hook,source_event');
        const a = attrs(delivery);
        const hookId = linkedId(delivery, 'hook');
        const hook = included.find((r) => r.type === 'hooks');
        const event = included.find((r) => r.type === 'events');
        const progress = await deliveryProgress(request, delivery, siteId);
        const body = html`<section aria-labelledby="delivery-heading">
  <h2 id="delivery-heading">Delivery ${delivery.id}</h2>
  <dl class="facts">
    <dt>Event</dt><dd>${String(a.event)}${a.resource_id === null ? '' : html` <span class="muted">(record ${String(a.resource_id)})</span>`}</dd>
    <dt>Hook</dt><dd>${hook ? html`<a href="${hookUrl(hook.id, siteId)}">Hook ${hook.id}</a> (${hookState(hook)})` : html`hook ${hookId ?? ''}, deleted`}</dd>
    <dt>Target URL</dt><dd><code>${String(a.target_url)}</code></dd>
    <dt>webhook-id</dt><dd><code>${String(a.webhook_id)}</code> <span class="muted">(the same on every attempt)</span></dd>
    <dt>Created</dt><dd>${when(a.created_at)}</dd>
  </dl>
  <form method="post" action="${withSite(`${WEBHOOKS_PATH}/deliveries/${delivery.id}/redeliver`, siteId)}" class="row">
    ${csrf(request)}
    <button type="submit">Redeliver</button>
    <span class="hint">An attempt now, with the same webhook-id and body; the retry schedule starts again.</span>
  </form>
</section>
<section aria-labelledby="progress-heading">
  <h2 id="progress-heading">Status and attempts</h2>
  ${liveRegion(progress, 'the status and new attempts')}
</section>
${
  event
    ? html`<section aria-labelledby="payload-heading">
  <h2 id="payload-heading">What is posted</h2>
  <details>
    <summary>The body of event ${event.id}</summary>
    <pre tabindex="0">${prettyJson({ id: attrs(event).resource_id, event: attrs(event).event, payload: attrs(event).payload })}</pre>
  </details>
</section>`
    : ''
}
<p><a href="${hookId && hook ? hookUrl(hookId, siteId) : withSite(WEBHOOKS_PATH, siteId)}">Back to ${hook ? 'the hook' : 'the webhooks of the site'}</a></p>`;
        return renderer.page(request, reply, {
          title: `Webhook delivery ${delivery.id}`,
          active: WEBHOOKS_PATH,
          body,
          notice: noticeOf(request),
          ...(options.problems ? { problems: options.problems } : {}),
          ...(options.status ? { status: options.status } : {}),
        });
      }

      app.get('/webhooks/deliveries/:id', CONSOLE_ROUTE, async (request, reply) => {
        const { siteId } = await findDelivery(request);
        return otherSiteAsked(request, reply, siteId) ?? deliveryPage(request, reply);
      });

      app.get('/webhooks/deliveries/:id/live', CONSOLE_ROUTE, async (request, reply) => {
        const { delivery, siteId } = await findDelivery(request);
        return answerLivePoll(reply, queryOf(request).get('seen'), await deliveryProgress(request, delivery, siteId), engine.now(principalOf(request)), 'Status and attempts');
      });

      app.post('/webhooks/deliveries/:id/redeliver', CONSOLE_ROUTE, async (request, reply) => {
        const id = idParam(request, 'delivery');
        let siteId: number;
        try {
          const { document } = await engine.action(deliveries, id, 'redeliver', undefined, principalOf(request));
          siteId = Number(linkedId(document.data, 'site'));
        } catch (error) {
          // A deleted or disabled hook's delivery: the page again, saying why (422), nothing changed.
          if (error instanceof ApiError && error.status === 422) return deliveryPage(request, reply, { problems: problemsOf(error) ?? [], status: 422 });
          throw error;
        }
        return reply.redirect(withSite(`${WEBHOOKS_PATH}/deliveries/${id}?done=redelivered`, siteId), 303);
      });
    },
  };
}
