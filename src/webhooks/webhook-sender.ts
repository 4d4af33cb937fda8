// One HTTP attempt of a delivery, with node:http and node:https directly: redirects are never
// followed (a 3xx is the receiver's answer), and of the receiver's body only the first 2 KB are
// read, for the log; the rest is not read at all. Three deadlines, so that an attempt holds its
// slot (delivery-worker.ts) no longer than it needs to: the connection (name, TCP, TLS) within
// half the timeout and at most 5 s, the status line within the timeout, and after it the body
// within a second, never past the timeout.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { StringDecoder } from 'node:string_decoder';

/** How much of a receiver's answer is kept for the attempt log. */
export const RESPONSE_EXCERPT_BYTES = 2048;

/** How long the connection may take: half the timeout, at most 5 s. */
export const connectDeadlineMs = (timeoutMs: number): number => Math.min(5_000, Math.max(1, Math.round(timeoutMs / 2)));

/** How long the body may take after the status line (never past the timeout). */
export const BODY_DEADLINE_MS = 1_000;

export interface PostRequest {
  url: URL;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  /** Resolves the host (and refuses it in production mode); Node's resolver when absent. */
  lookup?: LookupFunction;
  agents: { http: http.Agent; https: https.Agent };
  /** Aborting ends the attempt at once (the worker stopping). */
  signal: AbortSignal;
}

export interface PostResult {
  /** The receiver's status; null when it did not answer (connection error, timeout, refusal). */
  status: number | null;
  headers: Record<string, string | string[] | undefined> | null;
  /** The first RESPONSE_EXCERPT_BYTES of the answer's body, as UTF-8 text. */
  body: string | null;
  /** Why there is no answer. */
  error: string | null;
  durationMs: number;
  /** The attempt was cut short by `signal`: it says nothing about the receiver. */
  abandoned: boolean;
}

class AttemptTimeout extends Error {}
class ConnectTimeout extends Error {}
class AttemptAbandoned extends Error {}

/**
 * POSTs `body` and resolves with the receiver's answer or why there is none; never rejects. An
 * answer counts from its status line: a body still arriving at the deadline is cut off, not failed.
 */
export function postWebhook(request: PostRequest): Promise<PostResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    let answer: { status: number; headers: http.IncomingHttpHeaders; chunks: Buffer[]; kept: number } | undefined;
    const connectMs = connectDeadlineMs(request.timeoutMs);
    let connectTimer: NodeJS.Timeout | undefined;
    const finish = (error: Error | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(connectTimer);
      request.signal.removeEventListener('abort', abandon);
      const durationMs = Math.round(performance.now() - started);
      // Once the status line is in, the receiver has answered, whatever cut the body short.
      if (answer) {
        const excerpt = new StringDecoder('utf8').write(Buffer.concat(answer.chunks));
        resolve({ status: answer.status, headers: { ...answer.headers }, body: excerpt, error: null, durationMs, abandoned: false });
      } else {
        resolve({ status: null, headers: null, body: null, error: describe(error, request.timeoutMs, connectMs), durationMs, abandoned: error instanceof AttemptAbandoned });
      }
    };

    const transport = request.url.protocol === 'https:' ? https : http;
    const outgoing = transport.request(
      request.url,
      {
        method: 'POST',
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
        agent: request.url.protocol === 'https:' ? request.agents.https : request.agents.http,
        ...(request.lookup ? { lookup: request.lookup } : {}),
      },
      (response) => {
        const got = { status: response.statusCode ?? 0, headers: response.headers, chunks: [] as Buffer[], kept: 0 };
        answer = got;
        // Answered: the body gets a second more, within the timeout; then it is cut off.
        clearTimeout(deadline);
        const left = request.timeoutMs - (performance.now() - started);
        deadline = setTimeout(() => outgoing.destroy(new AttemptTimeout()), Math.max(0, Math.min(BODY_DEADLINE_MS, left)));
        response.on('data', (chunk: Buffer) => {
          const part = chunk.subarray(0, RESPONSE_EXCERPT_BYTES - got.kept);
          got.chunks.push(part);
          got.kept += part.length;
          if (got.kept >= RESPONSE_EXCERPT_BYTES) {
            finish(null);
            // The rest is not wanted: closing the connection is cheaper than reading it.
            response.destroy();
          }
        });
        response.on('end', () => finish(null));
        response.on('error', () => finish(null));
        response.on('close', () => finish(null));
      },
    );
    outgoing.on('error', (error) => finish(error));
    outgoing.on('socket', (socket) => {
      // A kept-alive connection is made already; a new one must be within the connect deadline.
      if (!socket.connecting) return;
      connectTimer = setTimeout(() => outgoing.destroy(new ConnectTimeout()), connectMs);
      socket.once(request.url.protocol === 'https:' ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
    });
    let deadline = setTimeout(() => outgoing.destroy(new AttemptTimeout()), request.timeoutMs);
    const abandon = () => outgoing.destroy(new AttemptAbandoned());
    if (request.signal.aborted) abandon();
    else request.signal.addEventListener('abort', abandon, { once: true });
    outgoing.end(request.body);
  });
}

function describe(error: Error | null, timeoutMs: number, connectMs: number): string {
  if (error instanceof AttemptTimeout) return `no answer within ${timeoutMs} ms`;
  if (error instanceof ConnectTimeout) return `could not connect within ${connectMs} ms`;
  if (error instanceof AttemptAbandoned) return 'abandoned: sitebiz stopped during the attempt';
  return error?.message || 'the connection failed';
}
