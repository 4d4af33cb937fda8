// The answers Node's HTTP server gives before any route (or Fastify itself) sees a request: its
// parser refusing the bytes (400), a header block over the size limit (431), a request that is
// not whole by REQUEST_TIMEOUT_MS (408), and an Expect other than 100-continue (417). Node and
// Fastify write these with `application/json` or no body at all; here they are JSON:API error
// documents like every other error of the API. The request line may not have been read when the
// parser fails, so these answers cannot depend on the path: they take the API's form everywhere.
import { maxHeaderSize, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { ApiError } from './errors.js';
import { JSONAPI_MEDIA_TYPE } from './media-types.js';

/** What Node's parser error says, as the API's error. */
export function parserError(error: Error & { code?: string }): ApiError {
  const of = (status: number, code: string, detail: string) => new ApiError(status, [{ code, title: STATUS_CODES[status] ?? 'Bad Request', detail }]);
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return of(408, 'request_timeout', 'The request did not arrive whole within the time the server allows (REQUEST_TIMEOUT_MS)');
    case 'HPE_HEADER_OVERFLOW':
      return of(431, 'headers_too_large', `The request line and headers are larger than the server accepts (${maxHeaderSize} bytes)`);
    default:
      // HPE_INVALID_METHOD, HPE_INVALID_HEADER_TOKEN, ...: the code names what the parser refused.
      return of(400, 'malformed_request', `The request is not valid HTTP/1.1${error.code ? ` (${error.code})` : ''}`);
  }
}

/** The whole HTTP answer, written on the socket: there is no response object yet. */
export function rawErrorResponse(error: ApiError): string {
  const body = JSON.stringify(error.toDocument());
  return (
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\n` +
    `Content-Type: ${JSONAPI_MEDIA_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/**
 * Fastify's `clientErrorHandler`: as Fastify's own (nothing to answer on a reset or closed
 * socket; the socket is closed after the answer, since the parser cannot go on), with the API's body.
 */
export function answerParserError(this: { log: FastifyBaseLogger }, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // A client's mistake or a network fault, not the server's: trace, as Fastify does.
  this.log.trace({ err: error }, 'client error');
  if (socket.writable) socket.write(rawErrorResponse(parserError(error)));
  socket.destroy(error);
}

/**
 * Node answers an Expect other than 100-continue with a bare 417 unless the server listens for
 * `checkExpectation`; this listener gives the same 417 as a JSON:API error.
 */
export function answerUnmetExpectation(request: IncomingMessage, response: ServerResponse): void {
  const error = new ApiError(417, [
    { code: 'expectation_failed', title: 'Expectation Failed', detail: `Expect ${JSON.stringify(request.headers.expect)} cannot be met; only 100-continue is supported`, source: { header: 'Expect' } },
  ]);
  const body = JSON.stringify(error.toDocument());
  response.writeHead(417, { 'content-type': JSONAPI_MEDIA_TYPE, 'content-length': Buffer.byteLength(body) });
  response.end(body);
}
