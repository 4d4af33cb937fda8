// Live regions: a part of a page that htmx asks for again every second (hx-trigger="every 1s")
// and swaps in place when, and only when, what it shows has changed. The region's URL carries a
// fingerprint of what the browser shows (`seen`); the fragment route renders the region again and
// answers 204 No Content when the fingerprint is the same, which htmx swaps nothing for. So an
// unchanged list is never replaced under the reader: focus, scroll and selection stay, and the
// status line (a role="status" element outside the region, updated out of band) speaks only when
// something changed.
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { html, type Html } from './html.js';

/** How often a live region asks for its fragment. */
export const LIVE_TRIGGER = 'every 1s';

const fingerprintOf = (content: Html): string => createHash('sha256').update(content.text).digest('base64url').slice(0, 16);

export interface LiveRegion {
  /** The region's element id (the status line's is `<id>-status`). */
  id: string;
  /** The fragment route that renders the region again (a console URL, with its own query). */
  url: string;
  content: Html;
}

function regionElement(region: LiveRegion): Html {
  const src = `${region.url}${region.url.includes('?') ? '&' : '?'}seen=${fingerprintOf(region.content)}`;
  return html`<div id="${region.id}" class="live-region" hx-get="${src}" hx-trigger="${LIVE_TRIGGER}" hx-swap="outerHTML">${region.content}</div>`;
}

/** The region as first rendered on its page, with its status line before it. */
export function liveRegion(region: LiveRegion, what: string): Html {
  return html`<p class="live-status muted"><span id="${region.id}-status" role="status">Live: ${what} update here as they happen, without reloading.</span></p>
${regionElement(region)}`;
}

/**
 * Answers a live region's poll: 204 when the browser already shows `region.content` (its `seen`
 * fingerprint), else the region again and a status line saying when it changed.
 */
export function answerLivePoll(reply: FastifyReply, seen: string | null, region: LiveRegion, changedAt: Date, what: string): FastifyReply {
  if (seen === fingerprintOf(region.content)) return reply.code(204).send();
  const time = changedAt.toISOString().slice(11, 19);
  const fragment = html`${regionElement(region)}
<span id="${region.id}-status" hx-swap-oob="innerHTML">${what} updated at ${time} UTC.</span>`;
  return reply.type('text/html; charset=utf-8').send(fragment.text);
}
