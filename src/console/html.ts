// HTML for the console's server-rendered pages: a tagged template that escapes every value it is
// given unless the value is already Html (made by this template or by raw()). Arrays are joined,
// and null, undefined and false render nothing, so conditions and lists read naturally:
//   html`<ul>${items.map((i) => html`<li>${i.name}</li>`)}</ul>`
// Nothing reaches a page unescaped by accident: raw() is the only way around, and it is for
// trusted constants.

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type HtmlValue = Html | string | number | bigint | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function render(value: HtmlValue): string {
  if (value instanceof Html) return value.text;
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Trusted markup, used as is. Never pass it anything that came from a request or the database. */
export const raw = (text: string): Html => new Html(text);

/** A JSON value pretty-printed for a <pre> (escaped like any text). */
export const prettyJson = (value: unknown): string => JSON.stringify(value, null, 2);
