// The text of request bodies is Unicode, checked before anything reads it: invalid UTF-8 bytes
// would otherwise become U+FFFD and be stored, and an escaped lone surrogate ("\ud800") is valid
// JSON that the two databases store differently (PostgreSQL refuses it, SQLite keeps it).
import { badRequest } from './errors.js';

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The body's bytes as text, or a 400 when they are not UTF-8. */
export function decodeUtf8(body: Buffer): string {
  try {
    return UTF8.decode(body);
  } catch {
    throw badRequest('invalid_utf8', `The request body is not valid UTF-8 (first bad byte at offset ${firstInvalidByte(body)})`);
  }
}

/** Where decoding first fails: the length of the longest prefix that decodes. */
function firstInvalidByte(body: Buffer): number {
  let low = 0;
  let high = body.length;
  // A prefix that decodes may end inside a character; the search finds the last good boundary.
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(body.subarray(0, mid), { stream: true });
      low = mid;
    } catch {
      high = mid - 1;
    }
  }
  return low;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const pointerSegment = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The JSON pointer of the first string (member name or value) holding a lone surrogate. Walks
 * with its own stack: JSON.parse accepts nesting deeper than a recursive walk could follow.
 */
export function loneSurrogateAt(value: unknown): string | undefined {
  const pending: Array<[unknown, string]> = [[value, '']];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, pointer] = next;
    if (typeof node === 'string') {
      if (LONE_SURROGATE.test(node)) return pointer;
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) pending.push([node[i], `${pointer}/${i}`]);
    } else if (typeof node === 'object' && node !== null) {
      const members = Object.entries(node);
      for (let i = members.length - 1; i >= 0; i--) {
        const [name, item] = members[i]!;
        const at = `${pointer}/${pointerSegment(name)}`;
        pending.push(LONE_SURROGATE.test(name) ? [name, at] : [item, at]);
      }
    }
  }
  return undefined;
}

/** Only an escape can put a surrogate in text decoded from valid UTF-8. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** A 400 for a parsed body holding a lone surrogate, pointing at it; `text` is what was parsed. */
export function refuseLoneSurrogates(text: string, value: unknown): void {
  if (!SURROGATE_ESCAPE.test(text)) return;
  const pointer = loneSurrogateAt(value);
  if (pointer === undefined) return;
  throw badRequest('invalid_unicode', 'The request body holds an unpaired UTF-16 surrogate escape (such as \\ud800), which is not a Unicode character', {
    pointer,
  });
}
