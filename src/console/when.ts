// Times on console pages: the API's ISO 8601 UTC text, shown to the second in UTC (the server
// cannot know the reader's zone without a script), in a <time> element that keeps the exact value.
import { html, type Html } from './html.js';

/** `2026-06-01T12:00:00.000Z` (or a Date) → `2026-06-01 12:00:00 UTC`; text that is no time is shown as it is. */
export function utcText(value: string | Date): string {
  const at = value instanceof Date ? value : new Date(value);
  return Number.isNaN(at.getTime()) ? String(value) : `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A time for a page; `absent` stands for anything that is no time text (null: never, not yet). */
export function timeHtml(value: unknown, absent = '—'): Html {
  if (typeof value !== 'string' || value === '') return html`<span class="muted">${absent}</span>`;
  return html`<time datetime="${value}">${utcText(value)}</time>`;
}
