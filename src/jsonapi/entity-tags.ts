// Entity tags of read answers (RFC 9110, 8.8.3) and conditional GETs: a client that sends back
// the tag it has in If-None-Match gets 304 Not Modified, with no body, while the answer is the
// same. Polling integrations re-read the same lists all day; most of those reads change nothing.
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { JSONAPI_MEDIA_TYPE } from './media-types.js';

/** A strong tag of the body's bytes: equal tags, equal answers. */
export function entityTag(body: string | Buffer): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

/**
 * Whether If-None-Match names this tag (`*` names any). Weak comparison, as RFC 9110 asks for
 * If-None-Match: `W/"x"` matches `"x"`.
 */
export function noneMatchNames(header: string, etag: string): boolean {
  for (const part of header.split(',')) {
    const tag = part.trim();
    if (tag === '*' || (tag.startsWith('W/') ? tag.slice(2) : tag) === etag) return true;
  }
  return false;
}

/**
 * Every successful GET (and HEAD) answered with a JSON:API document gets an ETag (the route's
 * own, when it has one from the answer cache; one of its bytes otherwise), and is a 304 when the
 * request's If-None-Match names it.
 */
export function conditionalReads(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || reply.statusCode !== 200) return payload;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    const type = reply.getHeader('content-type');
    if (typeof type !== 'string' || !type.startsWith(JSONAPI_MEDIA_TYPE)) return payload;
    let etag = reply.getHeader('etag');
    if (typeof etag !== 'string') reply.header('etag', (etag = entityTag(payload)));
    const ifNoneMatch = request.headers['if-none-match'];
    if (ifNoneMatch === undefined || !noneMatchNames(ifNoneMatch, etag)) return payload;
    reply.code(304);
    reply.removeHeader('content-type');
    return '';
  });
}
