// The Bearer check in front of every protected route: resolves the principal or answers 401.
// The request is then counted against its API key's rate limit (a 401 against its address).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { unauthorized } from '../jsonapi/errors.js';
import type { Principal } from './principal.js';
import type { RateLimits } from './rate-limits.js';
import type { ApiKeyIdentity, TokenService } from './tokens.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    /**
     * The API key that authenticated an OAuth request with its client credentials or refresh
     * token (a Bearer request's key is its principal's); null otherwise. The sandbox's request
     * journal keeps the requests of a known key only.
     */
    clientKey: ApiKeyIdentity | null;
  }
}

const REALM = 'Bearer realm="sitebiz"';

const invalidToken = (detail: string) =>
  unauthorized(detail, `${REALM}, error="invalid_token", error_description="${detail.replace(/"/g, "'")}"`, 'invalid_token');

export function bearerAuthentication(tokens: TokenService, limits: RateLimits) {
  return async function authenticateAndCount(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    try {
      request.principal = await authenticate(tokens, request);
    } catch (error) {
      await limits.countRequest(request, reply);
      throw error;
    }
    await limits.countRequest(request, reply);
  };
}

async function authenticate(tokens: TokenService, request: FastifyRequest): Promise<Principal> {
  const header = request.headers.authorization;
  if (header === undefined || header === '') {
    throw unauthorized('An Authorization: Bearer <access_token> header is required', REALM);
  }
  const match = /^Bearer\s+([A-Za-z0-9._~+/=-]+)\s*$/i.exec(header);
  if (!match?.[1]) {
    throw unauthorized(
      'The Authorization header must be "Bearer <access_token>"',
      `${REALM}, error="invalid_request", error_description="malformed Authorization header"`,
      'invalid_request',
    );
  }
  const result = await tokens.authenticate(match[1], { readOnly: request.method === 'GET' || request.method === 'HEAD' });
  if (result === 'unknown') throw invalidToken('The access token is not valid');
  if (result === 'expired') throw invalidToken('The access token has expired; get a new one with the refresh token');
  if (result === 'revoked') throw invalidToken('The access token has been revoked');
  // A note of its own per request: what the engine reaches while answering it; the audit log's
  // actor carries the request's address.
  const actor = { kind: 'api_key', apiKeyId: result.apiKeyId, userId: result.userId, label: result.clientId ?? `key ${result.apiKeyId}`, address: request.ip } as const;
  return { ...result, touchedSites: new Set<number>(), actor };
}

/** The principal of an authenticated request (the hook has run). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('route is missing the authentication hook');
  return request.principal;
}
