// Stage 1 of a request: the raw query string becomes a ParsedQuery. Pure; knows the JSON:API
// parameter families but nothing of resources. Fastify's own query parser is not used because it
// flattens `filter[x]` into odd keys and silently merges repeats.
import { queryParameterProblem } from './control-characters.js';
import { invalidParameter } from './errors.js';

export interface ParsedQuery {
  /** `after`/`before`: cursor paging (docs/paging.md); `number`: numbered pages. */
  page: { number?: string; size?: string; after?: string; before?: string };
  sort?: string;
  include?: string;
  /** `fields[type]` → raw comma list. */
  fields: Map<string, string>;
  /** `filter[name]` → raw value; the values of a repeated `filter[name][]` joined by commas. */
  filters: Map<string, string>;
  /** Every parameter in request order (decoded), used to rebuild links. */
  pairs: Array<[string, string]>;
}

const FAMILY_KEY = /^([a-z_]+)\[([^\][]*)\]$/;
/** `filter[name][]`: a list filter, one value per repeat of the key. */
const LIST_FILTER_KEY = /^filter\[([^\][]+)\]\[\]$/;

export function parseQueryString(raw: string): ParsedQuery {
  const parsed: ParsedQuery = { page: {}, fields: new Map(), filters: new Map(), pairs: [] };
  if (raw === '') return parsed;
  const seen = new Set<string>();
  for (const [key, value] of new URLSearchParams(raw)) {
    // Over HTTP the app refuses these before any route (control-characters.ts); the engine's
    // other callers get the same rule. PostgreSQL cannot even store a NUL.
    const control = queryParameterProblem(key, value);
    if (control) throw control;
    const listFilter = LIST_FILTER_KEY.exec(key)?.[1];
    if (listFilter !== undefined) {
      if (parsed.filters.has(listFilter) && !seen.has(key)) {
        throw invalidParameter(key, `Give filter[${listFilter}] either as a list (filter[${listFilter}][]) or once, not both`);
      }
      seen.add(key);
      parsed.pairs.push([key, value]);
      const before = parsed.filters.get(listFilter);
      parsed.filters.set(listFilter, before === undefined ? value : `${before},${value}`);
      continue;
    }
    if (seen.has(key)) throw invalidParameter(key, `The parameter ${key} is given more than once`);
    seen.add(key);
    parsed.pairs.push([key, value]);
    if (key === 'sort') {
      parsed.sort = value;
      continue;
    }
    if (key === 'include') {
      parsed.include = value;
      continue;
    }
    const match = FAMILY_KEY.exec(key);
    const family = match?.[1];
    const member = match?.[2] ?? '';
    if (family === 'page' && (member === 'number' || member === 'size' || member === 'after' || member === 'before')) {
      parsed.page[member] = value;
    } else if (family === 'page') {
      throw invalidParameter(key, `Unknown page parameter ${key}; use page[number] and page[size], or page[after]/page[before] for cursor paging`);
    } else if (family === 'fields' && member !== '') {
      parsed.fields.set(member, value);
    } else if (family === 'filter' && member !== '') {
      if (parsed.filters.has(member)) {
        throw invalidParameter(key, `Give filter[${member}] either as a list (filter[${member}][]) or once, not both`);
      }
      parsed.filters.set(member, value);
    } else {
      throw invalidParameter(
        key,
        `Unknown query parameter ${key}; this API takes page[number], page[size], sort, include, fields[<type>] and filter[<name>]`,
      );
    }
  }
  return parsed;
}

/** Splits a comma list, trimming blanks; an empty string gives an empty list. */
export function splitList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
