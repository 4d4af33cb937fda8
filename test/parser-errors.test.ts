// What Node's HTTP server answers before any route runs (src/jsonapi/parser-errors.ts): a header
// block over 16 KB (431), bytes that are not HTTP (400), an Expect other than 100-continue (417),
// and the router's 414 over a real connection. app.inject() goes around Node's parser, so these
// talk to a listening server over raw sockets. Each answer is a JSON:API error document whose
// Content-Type is exactly application/vnd.api+json. No database is involved past the app's start.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from './support/harness.js';

interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/** Writes `request` on a new connection and reads what the server answers until it closes. */
function rawRequest(port: number, request: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer and no close within 5 s; got ${JSON.stringify(Buffer.concat(chunks).toString('latin1'))}`));
    }, 5_000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {}); // the server may reset after answering
    socket.on('close', () => {
      clearTimeout(giveUp);
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1] ?? 0), headers, body: rest.join('\r\n\r\n') });
    });
    socket.on('connect', () => socket.write(request, 'latin1'));
  });
}

/** The answer is one JSON:API error of `status` under exactly the JSON:API media type; returns it. */
function jsonApiError(answer: RawAnswer, status: number, label: string): { status: string; code: string; title: string; detail: string } {
  assert.equal(answer.status, status, `${label}: ${answer.status} ${answer.body}`);
  assert.equal(answer.headers.get('content-type'), 'application/vnd.api+json', label);
  assert.equal(Number(answer.headers.get('content-length')), Buffer.byteLength(answer.body), label);
  const body = JSON.parse(answer.body) as { errors: Array<{ status: string; code: string; title: string; detail: string }> };
  assert.deepEqual(Object.keys(body), ['errors'], label);
  assert.equal(body.errors.length, 1, label);
  assert.equal(body.errors[0]!.status, String(status), label);
  return body.errors[0]!;
}

describe("answers of Node's HTTP server, over raw connections", () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await createTestApp('sqlite');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });
  after(() => t.close());

  it('431 for a header block over the limit, as a JSON:API error', async () => {
    const answer = await rawRequest(port, `GET /v1/version HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    const error = jsonApiError(answer, 431, '431');
    assert.equal(error.title, 'Request Header Fields Too Large');
    assert.equal(error.code, 'headers_too_large');
    assert.equal(answer.headers.get('connection'), 'close');
  });

  it('431 too for a request line over the limit (3,000 × é percent-encoded is 18,000 bytes)', async () => {
    const answer = await rawRequest(port, `GET /v1/orders/${'%C3%A9'.repeat(3000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    jsonApiError(answer, 431, 'long request line');
  });

  it('400 for bytes that are not HTTP, and for a control character in the request line', async () => {
    for (const request of ['GARBAGE\r\n\r\n', 'GET /v1/orders/a\x01b HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 'GET /v1/version HTTP/1.1\r\nBad Header: x\r\n\r\n']) {
      const error = jsonApiError(await rawRequest(port, request), 400, JSON.stringify(request));
      assert.equal(error.code, 'malformed_request');
      assert.match(error.detail, /^The request is not valid HTTP\/1\.1 \(HPE_[A-Z_]+\)$/);
    }
  });

  it('417 for an Expect other than 100-continue, as a JSON:API error', async () => {
    const answer = await rawRequest(port, 'GET /v1/version HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: something-else\r\nConnection: close\r\n\r\n');
    const error = jsonApiError(answer, 417, '417');
    assert.equal(error.code, 'expectation_failed');
    // Expect: 100-continue still works.
    const continued = await rawRequest(port, 'GET /v1/version HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n');
    assert.notEqual(continued.status, 417);
  });

  it('414 for a path parameter over the router limit, over a real connection too', async () => {
    // 1,000 × é percent-encoded (6,000 bytes) fits the header limit and reaches the router.
    const answer = await rawRequest(port, `GET /v1/orders/${'%C3%A9'.repeat(1000)} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    jsonApiError(answer, 414, '414');
  });
});
