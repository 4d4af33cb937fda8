// Compression of answers (issue 22): gzip or brotli, whichever the client's Accept-Encoding
// prefers (brotli on a tie), for every text answer above a size threshold: JSON:API documents,
// the OpenAPI document, the reference page and the console's pages and assets. @fastify/compress
// does the work; this file holds the choices, so that entity-tags.ts and the tests read the same
// threshold.
//
// Compressing answers that hold secrets beside text an attacker chose can leak the secrets through
// the answers' sizes (BREACH), but only where the attacker can make a victim's browser send
// requests that carry the victim's credentials: the API takes Bearer tokens, which no other site
// can attach, and the console's session cookie is SameSite=Strict, so a request from another site
// gets the sign-in page.
import compress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';
import type { Readable } from 'node:stream';
import { constants } from 'node:zlib';

/**
 * Bodies smaller than this go as they are. A kilobyte is about where gzip's framing (18 bytes)
 * and the CPU stop paying for themselves: the OAuth answers, errors and empty pages stay under it,
 * a page of 100 contacts (60 to 100 KB) is far above it.
 */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/**
 * Brotli's quality for answers made per request. The default, 11, is meant for files compressed
 * once: on a page of 100 contacts (100 KB) it took 320 ms, where quality 4 took 0.56 ms and
 * gzip's default level 0.60 ms, for 6.5 KB, 8.2 KB and 9.2 KB. Quality 5 saves another 10 % of
 * the bytes for twice the time of 4 (bench/RESULTS.md, section 17).
 */
export const BROTLI_QUALITY = 4;

/**
 * Answers up to this size are compressed in one call on the request's own thread, larger ones as
 * a stream through zlib's thread pool. The plugin's default on 2 cores is 8 KB, which sent a page
 * of 100 contacts down the stream path: there brotli added 5.2 ms of the server's CPU to each
 * request, against 0.9 ms in one call; gzip 1.3 ms either way (bench/RESULTS.md, section 17;
 * measured, not dissected). Every answer the API makes, the 1.2 MB OpenAPI document
 * included, fits under this (1.2 MB in one call: 3.5 ms brotli, 9 ms gzip); files the console and
 * /docs serve from disk are streams and keep the stream path.
 */
export const SYNC_COMPRESSION_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The content codings offered, in the server's order of preference where the client's
 * Accept-Encoding ranks them alike (as browsers do): brotli first, smaller than gzip and, at
 * quality 4, no slower.
 */
export const CONTENT_CODINGS = ['br', 'gzip'] as const;

/**
 * Registers compression for every route added after it (the plugin hooks each route as it is
 * added, and its onSend runs after the app's own onSend hooks: entity tags, the request journal
 * and the console's headers see the identity body).
 */
/** Media types worth compressing: text (but not event streams), JSON, XML and YAML. */
export const COMPRESSIBLE_TYPES = /^text\/(?!event-stream)|[+/](?:json|text|xml|yaml)(?:;|$)/;

export async function compressAnswers(app: FastifyInstance): Promise<void> {
  await app.register(compress, {
    globalCompression: true,
    // Compressed request bodies are not taken: nothing sends them, and a small compressed body
    // that inflates to the body limit costs CPU for nothing. A Content-Encoding on a request is
    // left to the parsers as before.
    globalDecompression: false,
    encodings: [...CONTENT_CODINGS],
    // The plugin's own list (text/*, JSON, XML) plus YAML, so /v1/openapi.yaml (about 500 KB)
    // is compressed too.
    customTypes: COMPRESSIBLE_TYPES,
    threshold: COMPRESSION_THRESHOLD_BYTES,
    syncThreshold: SYNC_COMPRESSION_MAX_BYTES,
    brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
  });
  // A 304 or 204 has no body (RFC 9110, 6.4.1), but @fastify/static answers a 304 with an empty
  // stream, which the plugin would wrap in a coding and announce in Content-Encoding. An app hook
  // runs before the plugin's route hook: the stream is closed and the answer goes bare.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode !== 304 && reply.statusCode !== 204) return payload;
    if (isStream(payload)) {
      payload.destroy();
      return null;
    }
    return payload;
  });
}

const isStream = (payload: unknown): payload is Readable => typeof (payload as Readable | null)?.pipe === 'function' && typeof (payload as Readable).destroy === 'function';
