// Sandbox: faults (/console/sandbox/faults): the account's faults on demand, listed by the engine
// (the `faults` resource of GET /v1/test_helpers/faults), created and deleted by the functions the
// POST and DELETE routes call (createFault, deleteFault: the same checks, the same faults_version
// bump, so every process applies the change from the next request on).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createFault, deleteFault, FAULT_METHODS, faults } from '../../../sandbox/fault-routes.js';
import { FAULT_STATUSES, MAX_LATENCY_MS } from '../../../sandbox/faults.js';
import { html } from '../../html.js';
import { withSite } from '../../layout.js';
import { CONSOLE_ROUTE, formOf, queryOf, sessionOf } from '../../plugin.js';
import { attempt, csrfField, givenAttributes, numberField, readableTime, SANDBOX_PATH, sendSandboxPage, type Refusal, type SandboxContext } from './common.js';

const PATH = `${SANDBOX_PATH}/faults`;
const TITLE = 'Sandbox: faults';
/** The faults listed (an account rarely has more; the API pages the rest). */
const LISTED = 100;

const DONE: Record<string, string> = {
  created: 'The fault is set up: it applies from the next matching API request on.',
  deleted: 'The fault is deleted.',
};

/** The create form as typed. */
interface FaultFields {
  method: string;
  path: string;
  status: string;
  latency_ms: string;
  times: string;
  rate: string;
}

const EMPTY: FaultFields = { method: '', path: '', status: '503', latency_ms: '', times: '', rate: '' };

export function faultRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const { deps } = ctx;

  app.get('/sandbox/faults', CONSOLE_ROUTE, async (request, reply) => {
    const done = queryOf(request).get('done');
    return faultsPage(ctx, request, reply, { ...(done && DONE[done] ? { notice: DONE[done] } : {}) });
  });

  app.post('/sandbox/faults', CONSOLE_ROUTE, async (request, reply) => {
    const form = formOf(request);
    const fields: FaultFields = form.texts('method', 'path', 'status', 'latency_ms', 'times', 'rate');
    const document = {
      data: {
        type: 'faults',
        attributes: givenAttributes({
          method: fields.method,
          path: fields.path.trim(),
          status: numberField(fields.status),
          latency_ms: numberField(fields.latency_ms),
          times: numberField(fields.times),
          rate: numberField(fields.rate),
        }),
      },
    };
    const outcome = await attempt(() => createFault(deps, sessionOf(request).principal, document));
    if ('refused' in outcome) return faultsPage(ctx, request, reply, { fields, refusal: outcome.refused });
    return reply.redirect(withSite(`${PATH}?done=created`, await ctx.renderer.siteOf(request)), 303);
  });

  app.post<{ Params: { id: string } }>('/sandbox/faults/:id/delete', CONSOLE_ROUTE, async (request, reply) => {
    const outcome = await attempt(() => deleteFault(deps, sessionOf(request).principal, request.params.id));
    if ('refused' in outcome) return faultsPage(ctx, request, reply, { refusal: outcome.refused });
    return reply.redirect(withSite(`${PATH}?done=deleted`, await ctx.renderer.siteOf(request)), 303);
  });
}

interface PageState {
  fields?: FaultFields;
  refusal?: Refusal;
  notice?: string;
}

const option = (value: string, label: string, chosen: string) => html`<option value="${value}"${value === chosen ? html` selected` : ''}>${label}</option>`;
const orDash = (value: unknown) => (value === null || value === undefined ? '–' : String(value));

async function faultsPage(ctx: SandboxContext, request: FastifyRequest, reply: FastifyReply, state: PageState): Promise<FastifyReply> {
  const siteId = await ctx.renderer.siteOf(request);
  const list = await ctx.deps.engine.list(faults, `page[size]=${LISTED}`, sessionOf(request).principal);
  const f = state.fields ?? EMPTY;
  const body = html`<section aria-labelledby="faults-heading">
  <h2 id="faults-heading">Faults</h2>
  <p class="hint">API requests of the account's keys whose method and path match a fault get its answer (a JSON:API error with code <code>fault_injected</code>) or its delay. The oldest matching fault applies. <code>/v1/test_helpers/*</code> and the token endpoint are never faulted; neither is this console.</p>
  ${
    list.data.length === 0
      ? html`<p>No faults: every request is served normally.</p>`
      : html`<div class="table-scroll" tabindex="0" role="region" aria-label="Faults of the account"><table>
    <caption>Faults of the account, oldest first${list.meta.total_count > list.data.length ? ` (the first ${list.data.length} of ${list.meta.total_count})` : ''}</caption>
    <thead><tr><th scope="col">Fault</th><th scope="col">Method</th><th scope="col">Path</th><th scope="col">Status</th><th scope="col" class="num">Latency (ms)</th><th scope="col" class="num">Times (left)</th><th scope="col" class="num">Rate</th><th scope="col" class="num">Hits</th><th scope="col">Created (account time)</th><th scope="col">Delete</th></tr></thead>
    <tbody>${list.data.map((fault) => {
      const a = fault.attributes;
      const spent = a.remaining === 0;
      return html`<tr><th scope="row">${fault.id}</th><td>${a.method === null ? 'any' : String(a.method)}</td><td><code>${String(a.path)}</code></td><td>${orDash(a.status)}</td><td class="num">${orDash(a.latency_ms)}</td>
        <td class="num">${a.times === null ? 'every match' : html`${String(a.times)} (${String(a.remaining)} left)${spent ? html` <span class="muted">spent</span>` : ''}`}</td><td class="num">${orDash(a.rate)}</td><td class="num">${String(a.hits)}</td><td>${readableTime(a.created_at)}</td>
        <td><form method="post" action="${withSite(`${PATH}/${fault.id}/delete`, siteId)}" class="inline">${csrfField(request)}<button type="submit" class="secondary" aria-label="Delete fault ${fault.id}">Delete</button></form></td></tr>`;
    })}</tbody>
  </table></div>`
  }
</section>
<section aria-labelledby="new-fault-heading">
  <h2 id="new-fault-heading">New fault</h2>
  <form method="post" action="${withSite(PATH, siteId)}" class="stack sandbox-form">
    ${csrfField(request)}
    <label for="fault-method">Method</label>
    <select id="fault-method" name="method">${option('', 'Any method', f.method)}${FAULT_METHODS.map((m) => option(m, m, f.method))}</select>
    <label for="fault-path">Path pattern</label>
    <input id="fault-path" name="path" value="${f.path}" required placeholder="/v1/contacts*" aria-describedby="fault-path-hint" autocomplete="off">
    <p class="hint" id="fault-path-hint">A path under <code>/v1/</code> without query string; <code>*</code> stands for any text, slashes included (<code>/v1/contacts*</code> matches <code>/v1/contacts</code> and <code>/v1/contacts/12/tags</code>).</p>
    <label for="fault-status">Status</label>
    <select id="fault-status" name="status">${option('', 'None (only a delay)', f.status)}${FAULT_STATUSES.map((s) => option(String(s), String(s), f.status))}</select>
    <label for="fault-latency">Latency in ms <span class="muted">(optional, 0 to ${MAX_LATENCY_MS.toLocaleString('en-US')})</span></label>
    <input id="fault-latency" name="latency_ms" type="number" min="0" max="${MAX_LATENCY_MS}" value="${f.latency_ms}">
    <fieldset>
      <legend>How often <span class="muted">(one or neither: neither faults every match until deleted)</span></legend>
      <label for="fault-times">Times: only this many requests</label>
      <input id="fault-times" name="times" type="number" min="1" value="${f.times}">
      <label for="fault-rate">Rate: this share of the matching requests (above 0, at most 1)</label>
      <input id="fault-rate" name="rate" type="number" min="0" max="1" step="any" value="${f.rate}">
    </fieldset>
    <div><button type="submit">Create the fault</button></div>
  </form>
</section>`;
  return sendSandboxPage(ctx, request, reply, {
    title: TITLE,
    section: PATH,
    body,
    notice: state.notice,
    refusal: state.refusal,
  });
}
