// Errors are values: a stable code, an HTTP status, a title, a detail and a source. One error
// handler (installErrorHandling in jsonapi/http.ts) renders them; only what is answered before
// any route (the router's errors in http.ts, Node's in parser-errors.ts) writes their documents itself.

export interface ErrorSource {
  /** JSON Pointer to the offending member of the request document. */
  pointer?: string;
  /** Name of the offending query parameter. */
  parameter?: string;
  /** Name of the offending request header. */
  header?: string;
}

export interface ErrorObject {
  status: string;
  code: string;
  title: string;
  detail: string;
  source?: ErrorSource;
}

export class ApiError extends Error {
  readonly errors: ErrorObject[];
  readonly status: number;
  /** Extra response headers (WWW-Authenticate, Allow, Retry-After). */
  readonly headers: Record<string, string>;

  /** Each error takes `status` unless it carries its own (several problems of different kinds). */
  constructor(status: number, errors: Array<Omit<ErrorObject, 'status'> & { status?: string }>, headers: Record<string, string> = {}) {
    super(errors.map((e) => e.detail).join('; '));
    this.name = 'ApiError';
    this.status = status;
    this.errors = errors.map((e) => ({ status: String(status), ...e }));
    this.headers = headers;
  }

  toDocument(): { errors: ErrorObject[] } {
    return { errors: this.errors };
  }
}

const one = (status: number, code: string, title: string, detail: string, source?: ErrorSource) =>
  new ApiError(status, [source ? { code, title, detail, source } : { code, title, detail }]);

export const badRequest = (code: string, detail: string, source?: ErrorSource) =>
  one(400, code, 'Bad Request', detail, source);

export const invalidParameter = (parameter: string, detail: string) =>
  one(400, 'invalid_parameter', 'Invalid Query Parameter', detail, { parameter });

/** `code` follows RFC 6750: invalid_request (malformed), invalid_token (bad, expired, revoked). */
export const unauthorized = (detail: string, wwwAuthenticate: string, code = 'unauthorized') =>
  new ApiError(401, [{ code, title: 'Unauthorized', detail }], {
    'www-authenticate': wwwAuthenticate,
  });

export const forbidden = (detail: string) => one(403, 'forbidden', 'Forbidden', detail);

export const notFound = (detail: string, source?: ErrorSource) => one(404, 'not_found', 'Not Found', detail, source);

export const methodNotAllowed = (method: string, path: string, allowed: string[]) =>
  new ApiError(
    405,
    [{ code: 'method_not_allowed', title: 'Method Not Allowed', detail: `${method} is not allowed on ${path}; use ${allowed.join(', ')}` }],
    { allow: allowed.join(', ') },
  );

export const notAcceptable = (detail: string) => one(406, 'not_acceptable', 'Not Acceptable', detail, { header: 'Accept' });

export const unsupportedMediaType = (detail: string) =>
  one(415, 'unsupported_media_type', 'Unsupported Media Type', detail, { header: 'Content-Type' });

export const payloadTooLarge = (limit: number) =>
  one(413, 'payload_too_large', 'Payload Too Large', `The request body is larger than the limit of ${limit} bytes`);

export const internalError = () =>
  one(500, 'internal_error', 'Internal Server Error', 'The server could not complete the request; it has been logged');

/** A request document that is well formed but breaks a rule (a taken email, a blank name). */
export const unprocessable = (code: string, detail: string, pointer: string) =>
  one(422, code, 'Unprocessable Entity', detail, { pointer });

/** Past a rate limit; the RateLimit-* headers are already on the reply. */
export const tooManyRequests = (detail: string, retryAfterSeconds: number) =>
  new ApiError(429, [{ code: 'rate_limited', title: 'Too Many Requests', detail }], {
    'retry-after': String(retryAfterSeconds),
  });

/** The database cannot be reached (restarting, unreachable, out of connections): try again soon. */
export const serviceUnavailable = (detail: string, retryAfterSeconds: number) =>
  new ApiError(503, [{ code: 'service_unavailable', title: 'Service Unavailable', detail }], {
    'retry-after': String(retryAfterSeconds),
  });
