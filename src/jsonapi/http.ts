// The HTTP edge of the API: media types, body parsing, the one error handler, 404 and 405.
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  ApiError,
  badRequest,
  internalError,
  methodNotAllowed,
  notAcceptable,
  notFound,
  payloadTooLarge,
  serviceUnavailable,
  unsupportedMediaType,
} from './errors.js';
import { decodeUtf8, refuseLoneSurrogates } from './body-text.js';
import { acceptProblem, charsetProblem, JSONAPI_MEDIA_TYPE, jsonApiParameterProblem, parseMediaType } from './media-types.js';

export { JSONAPI_MEDIA_TYPE };

/** Retry-After of a 503 while the database is unreachable: a restart takes seconds. */
const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Routes say how their errors are written: JSON:API documents, or RFC 6749 OAuth errors. */
export type ErrorFormat = 'jsonapi' | 'oauth';

declare module 'fastify' {
  interface FastifyContextConfig {
    errorFormat?: ErrorFormat;
    /** Set on the generated 405 routes: the methods the path does allow. */
    allowedMethods?: string[];
    /**
     * A route that is not part of the JSON:API (the console's HTML pages): no generated 405
     * route, its own scope answers unknown methods.
     */
    notJsonApi?: boolean;
  }
}

type Done = (err: Error | null, value?: unknown) => void;

/** A UTF-8 JSON body: bytes that are not UTF-8, or escapes of lone surrogates, are a 400. */
function parseJsonBody(body: Buffer, done: Done): void {
  try {
    const text = decodeUtf8(body);
    if (text.trim() === '') return done(null, undefined);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return done(badRequest('malformed_json', 'The request body is not valid JSON'));
    }
    refuseLoneSurrogates(text, value);
    done(null, value);
  } catch (error) {
    done(error as Error);
  }
}

/** The request's Content-Type, read as JSON:API 1.1 and RFC 8259 require (415 otherwise). */
function refusedContentType(request: FastifyRequest): ApiError | undefined {
  const mediaType = parseMediaType(String(request.headers['content-type'] ?? ''));
  const problem = mediaType.essence === JSONAPI_MEDIA_TYPE ? jsonApiParameterProblem(mediaType) : charsetProblem(mediaType);
  return problem === undefined ? undefined : unsupportedMediaType(problem);
}

/** JSON bodies: `application/vnd.api+json` and `application/json`; every other type is a 415. */
export function acceptJsonBodies(instance: FastifyInstance): void {
  instance.removeAllContentTypeParsers();
  const parse = (request: FastifyRequest, body: string | Buffer, done: Done) => {
    const refused = refusedContentType(request);
    if (refused) return done(refused);
    parseJsonBody(body as Buffer, done);
  };
  instance.addContentTypeParser(JSONAPI_MEDIA_TYPE, { parseAs: 'buffer' }, parse);
  instance.addContentTypeParser('application/json', { parseAs: 'buffer' }, parse);
}

/** Form bodies for the OAuth endpoints (JSON is accepted too). */
export function acceptFormBodies(instance: FastifyInstance): void {
  acceptJsonBodies(instance);
  instance.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (request, body, done) => {
    const refused = refusedContentType(request);
    if (refused) return done(refused);
    let params: URLSearchParams;
    try {
      params = new URLSearchParams(decodeUtf8(body as Buffer));
    } catch (error) {
      return done(error as Error);
    }
    // No prototype: a parameter named toString or constructor is just a parameter.
    const out: Record<string, string> = Object.create(null);
    for (const [k, v] of params) {
      // RFC 6749 §3.1: a parameter must not be sent more than once.
      if (Object.hasOwn(out, k)) return done(badRequest('invalid_request', `The parameter ${k} is given more than once`));
      out[k] = v;
    }
    done(null, out);
  });
}

/**
 * JSON:API media types on the way out and in: answers carry `application/vnd.api+json` with no
 * parameter (Fastify would add charset=utf-8, which JSON:API forbids), and a route that answers
 * in JSON:API refuses with a 406 an Accept header that only allows what it cannot send.
 */
export function negotiateJsonApiMediaType(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const produces = (request.routeOptions.schema as { produces?: readonly string[] } | undefined)?.produces;
    if (!produces?.includes(JSONAPI_MEDIA_TYPE)) return;
    const problem = acceptProblem(request.headers.accept);
    if (problem !== undefined) throw notAcceptable(problem);
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && parseMediaType(type).essence === JSONAPI_MEDIA_TYPE) reply.header('content-type', JSONAPI_MEDIA_TYPE);
    return payload;
  });
}

/** Turns any thrown error into a clean 4xx/5xx body; never a stack trace. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    const format = request.routeOptions.config?.errorFormat ?? 'jsonapi';
    const apiError = toApiError(error, request, format);
    if (apiError.status === 503) request.log.warn({ err: error }, 'database unavailable');
    else if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendError(reply, apiError, format);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? request.url;
    return sendError(reply, notFound(`No route ${request.method} ${path}`), 'jsonapi');
  });
}

export function sendError(reply: FastifyReply, error: ApiError, format: ErrorFormat): FastifyReply {
  reply.code(error.status).headers(error.headers);
  if (format === 'oauth') {
    const first = error.errors[0];
    const code = first?.code && OAUTH_CODES.has(first.code) ? first.code : (OAUTH_CODE_OF_STATUS[error.status] ?? 'invalid_request');
    return reply.type('application/json').header('cache-control', 'no-store').send({ error: code, error_description: first?.detail });
  }
  return reply.type(JSONAPI_MEDIA_TYPE).send(error.toDocument());
}

const OAUTH_CODES = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_token',
  'slow_down',
  'temporarily_unavailable',
]);

/** The OAuth error of an error that has none of its own. */
const OAUTH_CODE_OF_STATUS: Record<number, string> = {
  401: 'invalid_token',
  // Registered for the device flow (RFC 8628 §3.5): the nearest OAuth error to "too many requests".
  429: 'slow_down',
  // RFC 6749 §4.1.2.1.
  503: 'temporarily_unavailable',
};

/**
 * Fastify's framework errors (a path that is not valid percent-encoding, an over-long path
 * parameter) are answered before any route is found; without this they get Fastify's own body.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const apiError = toApiError(error, request, 'jsonapi');
  if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
  // No route means none of the app's onSend hooks run, among them the one that drops the
  // `charset=utf-8` Fastify adds to a JSON type it sends as text; bytes keep the type as set.
  reply.code(apiError.status).headers(apiError.headers).type(JSONAPI_MEDIA_TYPE);
  void reply.send(Buffer.from(JSON.stringify(apiError.toDocument())));
}

function toApiError(error: FastifyError | ApiError, request: FastifyRequest, format: ErrorFormat): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as FastifyError;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': {
      // Fastify's message does not name the type; the request does.
      const given = request.headers['content-type'] || 'missing';
      const accepted = format === 'oauth' ? 'application/x-www-form-urlencoded or application/json' : JSONAPI_MEDIA_TYPE;
      return unsupportedMediaType(`Content-Type ${JSON.stringify(given)} is not accepted; send ${accepted}`);
    }
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return badRequest('invalid_content_length', 'The request body size does not match its Content-Length');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      // The error does not carry the limit; the route's options do.
      return payloadTooLarge(request.routeOptions.bodyLimit ?? request.server.initialConfig.bodyLimit ?? 0);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return badRequest('empty_body', 'The request body is empty');
  }
  if (request.server.database?.traits.isUnavailable(error)) {
    return serviceUnavailable('The database cannot be reached right now; retry shortly', DATABASE_RETRY_AFTER_SECONDS);
  }
  const status = fastifyError.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return new ApiError(status, [{ code: 'bad_request', title: STATUS_CODES[status] ?? 'Bad Request', detail: fastifyError.message }]);
  }
  return internalError();
}

/**
 * JSON:API wants a 405 (with Allow) for a known path and an unknown method. Fastify answers 404,
 * so every route is tracked, and once all are known (call the returned function after the last
 * route plugin is registered) each path gets a route for the methods it lacks.
 */
export function trackRoutesForMethodNotAllowed(app: FastifyInstance): () => void {
  const byUrl = new Map<string, { methods: Set<string>; errorFormat: ErrorFormat }>();
  app.addHook('onRoute', (route) => {
    if (route.config?.allowedMethods || route.config?.notJsonApi) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    let entry = byUrl.get(route.url);
    if (!entry) byUrl.set(route.url, (entry = { methods: new Set(), errorFormat: route.config?.errorFormat ?? 'jsonapi' }));
    for (const m of methods) entry.methods.add(m);
  });
  return () => app.register(async (last) => {
    for (const [url, { methods, errorFormat }] of byUrl) {
      if (url.includes('*')) continue;
      const missing = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => !methods.has(m) && !(m === 'GET' && methods.has('HEAD')));
      if (missing.length === 0) continue;
      const allowed = [...methods].sort();
      last.route({
        method: missing,
        url,
        config: { allowedMethods: allowed, errorFormat },
        schema: { hide: true },
        handler: async (request) => {
          throw methodNotAllowed(request.method, url, allowed);
        },
      });
    }
  });
}
