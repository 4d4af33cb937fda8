// Sandbox: the mailbox (/console/sandbox/mailbox): the emails sitebiz would have sent in the site,
// newest first, through the engine's `messages` resource (GET /v1/test_helpers/messages), each
// expandable to its body; a double opt-in message's confirmation link is a link.
import type { FastifyInstance } from 'fastify';
import { html } from '../../html.js';
import { withSite } from '../../layout.js';
import { CONSOLE_ROUTE, queryOf, sessionOf } from '../../plugin.js';
import { readableTime, SANDBOX_PATH, sendSandboxPage, type SandboxContext } from './common.js';

const PATH = `${SANDBOX_PATH}/mailbox`;
const PAGE_SIZE = 25;

const KIND_NAMES: Record<string, string> = {
  customer_welcome: 'Welcome',
  double_opt_in: 'Double opt-in',
  receipt: 'Receipt',
};

export function mailboxRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const { engine } = ctx.deps;
  const messages = engine.registry.get('messages');

  app.get('/sandbox/mailbox', CONSOLE_ROUTE, async (request, reply) => {
    const siteId = await ctx.renderer.siteOf(request);
    const title = 'Sandbox: mailbox';
    if (siteId === null) return sendSandboxPage(ctx, request, reply, { title, section: PATH, body: html`<p>You reach no site, so there is no mailbox to show.</p>` });
    // The page number goes to the engine as typed: it says what is wrong with a bad one.
    const page = queryOf(request).get('page') ?? '1';
    const list = await engine.list(messages, `filter[site_id]=${siteId}&page[size]=${PAGE_SIZE}&page[number]=${encodeURIComponent(page)}`, sessionOf(request).principal);
    const meta = list.meta as { total_count: number; total_pages: number; current_page: number };
    const pageLink = (n: number) => withSite(`${PATH}?page=${n}`, siteId);
    const body = html`<section aria-labelledby="mailbox-heading">
  <h2 id="mailbox-heading">Outgoing messages</h2>
  <p class="hint">What sitebiz would have emailed in this site (nothing is really sent), newest first: welcome emails, receipts of checkouts and renewals, double opt-in confirmations. Open one to read it.</p>
  ${
    list.data.length === 0
      ? html`<p>${meta.total_count === 0 ? 'No messages yet. A checkout sends a welcome email and a receipt.' : 'No messages on this page.'}</p>`
      : html`<p>${meta.total_count.toLocaleString('en-US')} message${meta.total_count === 1 ? '' : 's'}${meta.total_pages > 1 ? `; page ${meta.current_page} of ${meta.total_pages}` : ''}.</p>
  <ol class="mailbox">${list.data.map((message) => {
    const a = message.attributes;
    const kind = String(a.kind);
    return html`<li><details>
      <summary><span class="mailbox-when">${readableTime(a.created_at)}</span> <span class="mailbox-kind">${KIND_NAMES[kind] ?? kind}</span> to <strong>${String(a.to)}</strong>: ${String(a.subject)}</summary>
      <pre>${String(a.body ?? '')}</pre>
      ${
        typeof a.confirmation_url === 'string'
          ? html`<p>Confirmation link (confirms the subscription when followed, once): <a href="${a.confirmation_url}">${a.confirmation_url}</a>. ${a.confirmed_at ? `Confirmed ${readableTime(a.confirmed_at)}.` : 'Not confirmed yet.'}</p>`
          : ''
      }
      <p class="hint">Message ${message.id}, kind <code>${kind}</code>.</p>
    </details></li>`;
  })}</ol>`
  }
  ${
    meta.total_pages > 1
      ? html`<nav class="pager" aria-label="Mailbox pages">${meta.current_page > 1 ? html`<a href="${pageLink(meta.current_page - 1)}" rel="prev">Newer</a>` : ''}<span>Page ${meta.current_page} of ${meta.total_pages}</span>${
          meta.current_page < meta.total_pages ? html`<a href="${pageLink(meta.current_page + 1)}" rel="next">Older</a>` : ''
        }</nav>`
      : ''
  }
</section>`;
    return sendSandboxPage(ctx, request, reply, { title, section: PATH, body });
  });
}
