// Entity tags of read answers (RFC 9110, 8.8.3) and conditional GETs: a client that sends back
// the tag it has in If-None-Match gets 304 Not Modified, with no body, while the answer is the
// same. Polling integrations re-read the same lists all day; most of those reads change nothing.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { JSONAPI_MEDIA_TYPE } from './media-types.js';

/**
 * A weak tag of the answer's identity bytes: equal tags, equal documents. Weak because the same
 * document goes out as identity, gzip or brotli bytes (src/compression.ts), and a strong tag
 * names exact bytes: RFC 9110 (8.8.3.3) wants a content-coded representation to carry another
 * strong tag than the identity one. A weak tag may be shared by representations that mean the
 * same, so one tag serves every coding, and a 304 or a HEAD carries the tag its 200 carried,
 * whatever the coding. Nothing here compares strongly (no If-Match, no Range).
 */
export function entityTag(body: string | Buffer): string {
  return `W/"${createHash('sha1').update(body).digest('base64url')}"`;
}

const opaqueTag = (tag: string) => (tag.startsWith('W/') ? tag.slice(2) : tag);

/**
 * Whether If-None-Match names this tag (`*` names any). Weak comparison, as RFC 9110 asks for
 * If-None-Match: `W/"x"` and `"x"` match either.
 */
export function noneMatchNames(header: string, etag: string): boolean {
  const wanted = opaqueTag(etag);
  for (const part of header.split(',')) {
    const tag = part.trim();
    if (tag === '*' || opaqueTag(tag) === wanted) return true;
  }
  return false;
}

/** Adds `accept-encoding` to the answer's Vary, in lower case: @fastify/compress looks for that spelling before adding its own. */
function varyByEncoding(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  const current = Array.isArray(vary) ? vary.join(', ') : vary === undefined ? '' : String(vary);
  if (!/accept-encoding/i.test(current)) reply.header('vary', current === '' ? 'accept-encoding' : `${current}, accept-encoding`);
}

export interface ConditionalReadOptions {
  /**
   * Answers of at least this many bytes are compressed for clients that ask (src/compression.ts):
   * they say `Vary: Accept-Encoding` whatever this client asked, and so does their 304, which
   * carries the Vary its 200 would have (RFC 9110, 15.4.5). Absent: compression is off.
   */
  compressedFromBytes?: number;
}

/**
 * Every successful GET (and HEAD) answered with a JSON:API document gets an ETag (the route's
 * own, when it has one from the answer cache; one of its bytes otherwise), and is a 304 when the
 * request's If-None-Match names it.
 */
export function conditionalReads(app: FastifyInstance, options: ConditionalReadOptions = {}): void {
  const { compressedFromBytes } = options;
  app.addHook('onSend', async (request, reply, payload) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || reply.statusCode !== 200) return payload;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    const type = reply.getHeader('content-type');
    if (typeof type !== 'string' || !type.startsWith(JSONAPI_MEDIA_TYPE)) return payload;
    let etag = reply.getHeader('etag');
    if (typeof etag !== 'string') reply.header('etag', (etag = entityTag(payload)));
    if (compressedFromBytes !== undefined && Buffer.byteLength(payload) >= compressedFromBytes) varyByEncoding(reply);
    const ifNoneMatch = request.headers['if-none-match'];
    if (ifNoneMatch === undefined || !noneMatchNames(ifNoneMatch, etag)) return payload;
    reply.code(304);
    reply.removeHeader('content-type');
    return '';
  });
}
