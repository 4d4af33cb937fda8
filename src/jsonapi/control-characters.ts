// Control characters in the text of a request are refused in one place, before any route reads
// them: a 400 in the route's own form (a JSON:API error on /v1, RFC 6749 on the OAuth endpoints,
// an error page in the console). PostgreSQL cannot store a NUL at all, so without this the same
// request was a 404 on SQLite and a 500 on PostgreSQL; the other controls mean nothing in a name
// and break what they are copied into (a Location header, a log line).
//
// Which characters (docs/upstream-divergences.md, "Control characters"):
// - path segments, query parameter names and values, form field names: C0 (U+0000-U+001F), DEL
//   (U+007F) and C1 (U+0080-U+009F);
// - form field values (free text, such as a note typed in a textarea): the same but tab, LF and CR;
// - redirect targets: as names, and also U+2028 and U+2029, which some readers take as line ends.
// JSON bodies are not checked here: JSON carries any character as an escape, and each string the
// API stores is checked where its document is read (a NUL is a 422 at its attribute).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, badRequest, invalidParameter } from './errors.js';
import { parseMediaType } from './media-types.js';

const PATTERNS = {
  name: /[\u0000-\u001F\u007F-\u009F]/,
  text: /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/,
  redirect: /[\u0000-\u001F\u007F-\u009F\u2028\u2029]/,
} as const;

/** Where a text is used, which decides the characters it may not hold. */
export type TextRole = keyof typeof PATTERNS;

/** The first character `text` may not hold in its role, written U+XXXX; undefined when none. */
export function controlCharacterIn(text: string, role: TextRole): string | undefined {
  const found = PATTERNS[role].exec(text)?.[0];
  return found === undefined ? undefined : `U+${found.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** A name as it can be echoed in an error (and stored by the request journal): without its controls. */
const printable = (name: string) => name.replace(/[\u0000-\u001F\u007F-\u009F\u2028\u2029]/g, '');

/**
 * Whether the raw URL may hold a control character: one percent-encoded (C1 is %C2%80-%C2%9F in
 * UTF-8) or written raw (app.inject passes those; Node's parser refuses them). A cheap test
 * every request takes; only a hit decodes the URL to say where.
 */
const CONTROL_IN_URL = /%[01][0-9A-Fa-f]|%7[Ff]|%[Cc]2%[89][0-9A-Fa-f]|[\u0000-\u001F\u007F-\u009F]/;

/** The 400 for a control character in the request's path or query, or undefined. */
export function urlProblem(url: string): ApiError | undefined {
  if (!CONTROL_IN_URL.test(url)) return undefined;
  const at = url.indexOf('?');
  const path = at < 0 ? url : url.slice(0, at);
  if (CONTROL_IN_URL.test(path)) {
    let decoded = path;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      // Not valid percent-encoding: the router answers that one itself.
      return undefined;
    }
    const found = controlCharacterIn(decoded, 'name');
    if (found) return badRequest('control_character', `The path holds the control character ${found}`);
  }
  for (const [key, value] of new URLSearchParams(at < 0 ? '' : url.slice(at + 1))) {
    const problem = queryParameterProblem(key, value);
    if (problem) return problem;
  }
  return undefined;
}

/** The 400 for a control character in a decoded query parameter, naming it; or undefined. */
export function queryParameterProblem(key: string, value: string): ApiError | undefined {
  const found = controlCharacterIn(key, 'name') ?? controlCharacterIn(value, 'name');
  return found === undefined ? undefined : invalidParameter(printable(key), `The parameter ${printable(key)} holds the control character ${found}`);
}

/** The 400 for a control character in a parsed form body (field names, then values), or undefined. */
export function formProblem(request: FastifyRequest): ApiError | undefined {
  if (parseMediaType(String(request.headers['content-type'] ?? '')).essence !== 'application/x-www-form-urlencoded') return undefined;
  const body = request.body;
  if (typeof body !== 'object' || body === null) return undefined;
  for (const [name, value] of Object.entries(body)) {
    const found = controlCharacterIn(name, 'name') ?? (Array.isArray(value) ? value : [value]).map((v) => (typeof v === 'string' ? controlCharacterIn(v, 'text') : undefined)).find(Boolean);
    if (found) return badRequest('control_character', `The form field ${printable(name)} holds the control character ${found}`);
  }
  return undefined;
}

/**
 * Refuses control characters in every route's path, query and form body (call on the root
 * instance, before the routes): the URL as the request arrives, a form once it is parsed.
 */
export function refuseControlCharacters(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const problem = urlProblem(request.url);
    if (problem) throw problem;
  });
  app.addHook('preValidation', async (request) => {
    const problem = formProblem(request);
    if (problem) throw problem;
  });
}
