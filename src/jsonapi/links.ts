// Full URLs for `links` members, built from PUBLIC_URL and the request's own parameters.
import type { ParsedQuery } from './query-parser.js';

// Brackets and commas stay readable, as in the upstream examples (`fields[sites]=title,subdomain`).
const encodeKey = (key: string) => encodeURIComponent(key).replace(/%5B/g, '[').replace(/%5D/g, ']');
const encodeValue = (value: string) => encodeURIComponent(value).replace(/%2C/g, ',');

export function queryString(pairs: ReadonlyArray<readonly [string, string]>): string {
  if (pairs.length === 0) return '';
  return `?${pairs.map(([k, v]) => `${encodeKey(k)}=${encodeValue(v)}`).join('&')}`;
}

export interface PageLinks {
  self: string;
  first: string;
  prev: string | null;
  next: string | null;
  last: string;
}

/** Paging links that keep every other parameter of the request, page parameters first. */
export function pageLinks(base: string, query: ParsedQuery, page: { number: number; size: number }, totalPages: number): PageLinks {
  const others = query.pairs.filter(([k]) => k !== 'page[number]' && k !== 'page[size]');
  const at = (n: number) =>
    `${base}${queryString([['page[number]', String(n)], ['page[size]', String(page.size)], ...others])}`;
  const last = Math.max(totalPages, 1);
  return {
    self: at(page.number),
    first: at(1),
    prev: page.number > 1 ? at(Math.min(page.number - 1, last)) : null,
    next: page.number < totalPages ? at(page.number + 1) : null,
    last: at(last),
  };
}

export interface CursorLinks {
  self: string;
  /** The start of the list (`page[after]=`). */
  first: string;
  /** Null on the first page. */
  prev: string | null;
  /** Null on the last page. */
  next: string | null;
  /** The end of the list (`page[before]=`). */
  last: string;
}

/** Links of a cursor page: `prev` and `next` carry the cursors of the page's first and last records. */
export function cursorLinks(base: string, query: ParsedQuery, size: number, cursors: { before: string | null; after: string | null }): CursorLinks {
  const others = query.pairs.filter(([k]) => !k.startsWith('page['));
  const at = (key: 'page[after]' | 'page[before]', cursor: string) =>
    `${base}${queryString([[key, cursor], ['page[size]', String(size)], ...others])}`;
  // The request's own parameters in its order, but the size actually used (a larger one is clamped).
  const self = query.pairs.map(([k, v]): readonly [string, string] => (k === 'page[size]' ? [k, String(size)] : [k, v]));
  return {
    self: `${base}${queryString(self)}`,
    first: at('page[after]', ''),
    prev: cursors.before === null ? null : at('page[before]', cursors.before),
    next: cursors.after === null ? null : at('page[after]', cursors.after),
    last: at('page[before]', ''),
  };
}
