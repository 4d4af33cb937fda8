// Slow clients against a real listening server (short deadlines): a request whose body stalls is
// closed at the idle timeout, one whose body trickles in gets 408 at the request deadline, and one
// whose headers never end gets 408 too. Before these deadlines such connections were held for
// minutes.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from './support/harness.js';

const REQUEST_TIMEOUT_MS = 1_500;
const IDLE_TIMEOUT_MS = 700;

interface Outcome {
  /** What the server wrote before it closed the connection. */
  response: string;
  /** Milliseconds from the first byte sent to the close. */
  closedAfterMs: number;
}

/**
 * Opens a raw connection, writes `head`, then calls `trickle` every `everyMs` until the server
 * closes the connection or `giveUpMs` passes (which fails the test).
 */
function slowRequest(port: number, head: string, options: { everyMs?: number; trickle?: string; giveUpMs: number }): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let response = '';
    let timer: NodeJS.Timeout | undefined;
    const started = Date.now();
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server still held the connection after ${options.giveUpMs} ms; it wrote ${JSON.stringify(response)}`));
    }, options.giveUpMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (response += chunk));
    socket.on('error', () => {}); // a reset is a close too
    socket.on('close', () => {
      clearTimeout(giveUp);
      clearInterval(timer);
      resolve({ response, closedAfterMs: Date.now() - started });
    });
    socket.on('connect', () => {
      socket.write(head);
      if (options.everyMs && options.trickle) {
        timer = setInterval(() => {
          if (!socket.destroyed) socket.write(options.trickle!);
        }, options.everyMs);
      }
    });
  });
}

/** Node's 408 is written by the app's clientError handler: a JSON:API error, exactly that media type. */
function assertJsonApi408(response: string): void {
  const [head = '', body = ''] = response.split('\r\n\r\n');
  assert.match(head, /\r\nContent-Type: application\/vnd\.api\+json\r\n/i, head);
  assert.equal(JSON.parse(body).errors[0].status, '408');
}

const bodyHead = (length: number) =>
  'POST /v1/oauth/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n' +
  `Content-Length: ${length}\r\n\r\ngrant_type=client_credentials&client_id=`;

describe('slow clients (REQUEST_TIMEOUT_MS, IDLE_TIMEOUT_MS)', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await createTestApp('sqlite', {
      env: { REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS) },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });
  after(() => t.close());

  it('closes a connection whose body stalls after the headers, at the idle timeout', async () => {
    const outcome = await slowRequest(port, bodyHead(1000), { giveUpMs: 10_000 });
    assert.ok(outcome.closedAfterMs >= IDLE_TIMEOUT_MS - 50, `closed after ${outcome.closedAfterMs} ms`);
    assert.ok(outcome.closedAfterMs < REQUEST_TIMEOUT_MS + 1_000, `closed after ${outcome.closedAfterMs} ms`);
    assert.ok(outcome.response === '' || outcome.response.startsWith('HTTP/1.1 408'), outcome.response);
  });

  it('answers 408 to a body that trickles in (never idle) at the request deadline', async () => {
    const outcome = await slowRequest(port, bodyHead(100_000), { everyMs: 100, trickle: 'a', giveUpMs: 10_000 });
    assert.match(outcome.response, /^HTTP\/1\.1 408 /);
    assertJsonApi408(outcome.response);
    assert.ok(outcome.closedAfterMs >= REQUEST_TIMEOUT_MS - 50, `closed after ${outcome.closedAfterMs} ms`);
    assert.ok(outcome.closedAfterMs < REQUEST_TIMEOUT_MS + 1_500, `closed after ${outcome.closedAfterMs} ms`);
  });

  it('answers 408 to headers that trickle in and never end', async () => {
    const outcome = await slowRequest(port, 'GET /v1/version HTTP/1.1\r\nHost: 127.0.0.1\r\n', {
      everyMs: 100,
      trickle: 'X-Slow: a\r\n',
      giveUpMs: 10_000,
    });
    assert.match(outcome.response, /^HTTP\/1\.1 408 /);
    assertJsonApi408(outcome.response);
    assert.ok(outcome.closedAfterMs < REQUEST_TIMEOUT_MS + 1_500, `closed after ${outcome.closedAfterMs} ms`);
  });

  it('still serves a request that arrives in time, and keeps its connection open between requests', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/v1/version`);
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    // An idle keep-alive connection is not a stalled request: it lives past the idle timeout.
    const outcome = await slowRequest(port, 'GET /v1/version HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', { giveUpMs: IDLE_TIMEOUT_MS * 3 }).catch(
      (error: Error) => error,
    );
    assert.ok(outcome instanceof Error && /still held the connection/.test(outcome.message), 'the connection stays open');
  });
});
