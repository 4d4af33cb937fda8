// Media types as JSON:API 1.1 negotiates them ("Server Responsibilities"): the JSON:API media
// type takes only the `ext` and `profile` parameters; sitebiz supports no extension, so a request
// body that uses one is a 415, and an Accept header whose every JSON:API media type needs one (or
// carries another parameter) is a 406. Pure functions; http.ts applies them.

export const JSONAPI_MEDIA_TYPE = 'application/vnd.api+json';

/** The extensions sitebiz implements (JSON:API `ext`): none. */
const SUPPORTED_EXTENSIONS: ReadonlySet<string> = new Set();

export interface MediaType {
  /** `type/subtype`, lower-cased. */
  essence: string;
  /** Parameter names lower-cased, values unquoted; in the order given. */
  params: Array<[string, string]>;
}

/**
 * Reads `type/subtype; name=value; name="quoted; value"`. Quoted values may hold `;` and `,`;
 * `end` is where the media type stopped (a `,` between media ranges of an Accept header).
 */
function readMediaType(text: string, start: number): { mediaType: MediaType; end: number } {
  let i = start;
  const until = (stops: string) => {
    const from = i;
    while (i < text.length && !stops.includes(text[i]!)) i++;
    return text.slice(from, i).trim();
  };
  const essence = until(';,').toLowerCase();
  const params: Array<[string, string]> = [];
  while (i < text.length && text[i] === ';') {
    i++;
    const name = until('=;,').toLowerCase();
    let value = '';
    if (text[i] === '=') {
      i++;
      while (text[i] === ' ' || text[i] === '\t') i++;
      if (text[i] === '"') {
        i++;
        while (i < text.length && text[i] !== '"') {
          if (text[i] === '\\' && i + 1 < text.length) i++;
          value += text[i];
          i++;
        }
        i++;
        until(';,');
      } else value = until(';,');
    }
    if (name !== '') params.push([name, value]);
  }
  return { mediaType: { essence, params }, end: i };
}

export function parseMediaType(header: string): MediaType {
  return readMediaType(header, 0).mediaType;
}

/** The media ranges of an Accept header, each without its accept-params (`q` and what follows). */
export function parseAccept(header: string): MediaType[] {
  const ranges: MediaType[] = [];
  let i = 0;
  while (i < header.length) {
    const { mediaType, end } = readMediaType(header, i);
    const q = mediaType.params.findIndex(([name]) => name === 'q');
    if (mediaType.essence !== '') ranges.push({ essence: mediaType.essence, params: q < 0 ? mediaType.params : mediaType.params.slice(0, q) });
    i = end + 1;
  }
  return ranges;
}

/** The extension URIs of an `ext` value (a space-separated list); empty means none. */
const extensionsOf = (value: string) => value.split(/\s+/).filter((uri) => uri !== '');

/**
 * What a JSON:API media type asks that sitebiz cannot give: a parameter other than ext and
 * profile, or an extension it does not implement. Undefined when it can be served as is.
 */
export function jsonApiParameterProblem(mediaType: MediaType): string | undefined {
  for (const [name, value] of mediaType.params) {
    if (name === 'profile') continue; // Profiles may be ignored (JSON:API 1.1).
    if (name !== 'ext') {
      return `${JSONAPI_MEDIA_TYPE} takes no media type parameter other than ext and profile; ${name} was given`;
    }
    const unsupported = extensionsOf(value).filter((uri) => !SUPPORTED_EXTENSIONS.has(uri));
    if (unsupported.length > 0) return `The JSON:API extension ${unsupported.join(' ')} is not supported; this server supports none`;
  }
  return undefined;
}

/** JSON is UTF-8 (RFC 8259): a body declared in another charset is refused rather than misread. */
export function charsetProblem(mediaType: MediaType): string | undefined {
  const charset = mediaType.params.find(([name]) => name === 'charset')?.[1];
  if (charset === undefined || charset.toLowerCase() === 'utf-8') return undefined;
  return `Request bodies must be UTF-8; charset=${charset} is not accepted`;
}

/**
 * JSON:API 1.1: when Accept names the JSON:API media type and every instance of it asks for a
 * parameter or extension the server cannot give, the answer is a 406. An Accept header that
 * does not name the JSON:API media type at all is served anyway.
 */
export function acceptProblem(header: string | undefined): string | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const instances = parseAccept(header).filter((range) => range.essence === JSONAPI_MEDIA_TYPE);
  if (instances.length === 0) return undefined;
  const problems = instances.map(jsonApiParameterProblem);
  if (problems.some((p) => p === undefined)) return undefined;
  return `Accept allows only ${JSONAPI_MEDIA_TYPE} with parameters this server cannot serve: ${problems[0]}`;
}
