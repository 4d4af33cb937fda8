// What the request journal keeps of a body or a query string: secrets and tokens replaced by
// "[redacted]", then cut at a size. Works on text, so that a body that is not JSON (or a JSON body
// cut short) is redacted too: a member whose name says it holds a secret loses its string value,
// and a webhook signing secret (whsec_...) is removed wherever it appears.

export const REDACTED = '[redacted]';

/** Names of members and query parameters whose values are secrets: client_secret, access_token, password, ... */
const SECRET_NAME = /secret|password|passwd|token|api_?key|authorization/i;
/** Names that match SECRET_NAME but hold nothing secret. */
const HARMLESS_NAMES = new Set(['token_type', 'token_type_hint']);

const isSecretName = (name: string) => SECRET_NAME.test(name) && !HARMLESS_NAMES.has(name.toLowerCase());

// "name" : "value" (the value's closing quote may be missing when the text was cut).
const JSON_MEMBER = /"((?:[^"\\]|\\.)*)"(\s*:\s*)"(?:[^"\\]|\\.)*(?:"|$)/g;
const SIGNING_SECRET = /whsec_[A-Za-z0-9+/=_-]*/g;
// name=value in a query string or a form body.
const QUERY_PAIR = /(^|[?&])([^=&#]*)=([^&#]*)/g;

/** A JSON text (or anything else) with the string values of secret members and every whsec_ secret redacted. */
export function redactText(text: string): string {
  // Most bodies name no secret at all: one scan tells, instead of matching every member.
  if (!SECRET_NAME.test(text) && !text.includes('whsec_')) return text;
  return text
    .replace(JSON_MEMBER, (whole, name: string, colon: string) => (isSecretName(name) ? `"${name}"${colon}"${REDACTED}"` : whole))
    .replace(SIGNING_SECRET, REDACTED);
}

/** A path with its query string, the values of secret parameters redacted. */
export function redactUrl(url: string): string {
  const at = url.indexOf('?');
  if (at < 0) return url;
  const query = url.slice(at).replace(QUERY_PAIR, (whole, lead: string, name: string) => {
    let decoded = name;
    try {
      decoded = decodeURIComponent(name.replace(/\+/g, ' '));
    } catch {
      // A malformed escape: judge the name as written.
    }
    return isSecretName(decoded) ? `${lead}${name}=${REDACTED}` : whole;
  });
  return url.slice(0, at) + query.replace(SIGNING_SECRET, REDACTED);
}

/** The text cut to at most `maxBytes` of UTF-8, at a whole character. */
export function cutToBytes(text: string, maxBytes: number): string {
  // Most bodies are ASCII and short: no encoding needed to know they fit.
  if (text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Back up over continuation bytes to the start of the character that does not fit.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
