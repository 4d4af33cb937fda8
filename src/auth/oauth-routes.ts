// POST /v1/oauth/token and POST /v1/oauth/revoke. Errors are RFC 6749 §5.2 objects
// ({"error": ..., "error_description": ...}), chosen per route by `errorFormat: 'oauth'`.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../jsonapi/errors.js';
import { acceptFormBodies } from '../jsonapi/http.js';
import { bearerAuthentication, principalOf } from './authenticate.js';
import type { RateLimits } from './rate-limits.js';
import type { TokenService } from './tokens.js';

const oauthError = (status: number, code: string, detail: string, headers: Record<string, string> = {}) =>
  new ApiError(status, [{ code, title: code, detail }], headers);

function readParams(request: FastifyRequest): Record<string, string> {
  const body = request.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw oauthError(400, 'invalid_request', 'The request body must be form fields or a JSON object');
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (typeof v !== 'string') throw oauthError(400, 'invalid_request', `The parameter ${k} must be a string`);
    out[k] = v;
  }
  return out;
}

/** HTTP Basic client authentication (RFC 6749 §2.3.1): form-encoded id and secret. */
function basicCredentials(request: FastifyRequest): { clientId: string; clientSecret: string } | undefined {
  const header = request.headers.authorization;
  if (!header || !/^basic\s/i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw oauthError(400, 'invalid_request', 'The Basic Authorization header is malformed');
  try {
    return {
      clientId: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      clientSecret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    throw oauthError(400, 'invalid_request', 'The Basic Authorization header is malformed');
  }
}

const tokenResponseSchema = {
  type: 'object',
  properties: {
    access_token: { type: 'string' },
    refresh_token: { type: 'string' },
    token_type: { type: 'string', enum: ['Bearer'] },
    expires_in: { type: 'integer' },
  },
} as const;

const oauthErrorSchema = {
  type: 'object',
  properties: { error: { type: 'string' }, error_description: { type: 'string' } },
} as const;

export function oauthRoutes(tokens: TokenService, limits: RateLimits) {
  return async function register(app: FastifyInstance): Promise<void> {
    acceptFormBodies(app);

    app.post(
      '/oauth/token',
      {
        config: { errorFormat: 'oauth' },
        schema: {
          tags: ['Authentication'],
          summary: 'Get access and refresh tokens',
          description:
            'grant_type=client_credentials with client_id and client_secret (in the body or HTTP Basic), or grant_type=refresh_token with refresh_token. Form-encoded or JSON.',
          response: { 200: tokenResponseSchema, 400: oauthErrorSchema, 401: oauthErrorSchema },
        },
      },
      async (request, reply) => {
        const params = readParams(request);
        const basic = basicCredentials(request);
        reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
        const grantType = params.grant_type;
        if (grantType === undefined || grantType === '') throw oauthError(400, 'invalid_request', 'grant_type is required');

        if (grantType === 'client_credentials') {
          if (basic && (params.client_id !== undefined || params.client_secret !== undefined)) {
            throw oauthError(400, 'invalid_request', 'Send client credentials either with HTTP Basic or in the body, not both');
          }
          const clientId = basic?.clientId ?? params.client_id;
          const clientSecret = basic?.clientSecret ?? params.client_secret;
          if (!clientId || !clientSecret) {
            throw oauthError(400, 'invalid_request', 'client_id and client_secret are required for grant_type=client_credentials');
          }
          // Guessing secrets: after too many failures the client id and the address get 429s,
          // whatever the secret, so that the answer tells nothing until the minute is over.
          await limits.refuseWhileFailing(request, clientId);
          const issued = await tokens.grantForClient(clientId, clientSecret);
          if (!issued) {
            await limits.recordFailure(request, clientId);
            throw oauthError(401, 'invalid_client', 'Unknown client_id or wrong client_secret', basic ? { 'www-authenticate': 'Basic realm="sitebiz"' } : {});
          }
          return reply.type('application/json').send(issued);
        }

        if (grantType === 'refresh_token') {
          const refreshToken = params.refresh_token;
          if (!refreshToken) throw oauthError(400, 'invalid_request', 'refresh_token is required for grant_type=refresh_token');
          const issued = await tokens.refresh(refreshToken);
          if (!issued) throw oauthError(400, 'invalid_grant', 'The refresh token is unknown, expired, revoked or already used');
          return reply.type('application/json').send(issued);
        }

        throw oauthError(
          400,
          'unsupported_grant_type',
          `grant_type ${JSON.stringify(grantType)} is not supported; use client_credentials or refresh_token`,
        );
      },
    );

    app.post(
      '/oauth/revoke',
      {
        config: { errorFormat: 'oauth' },
        onRequest: bearerAuthentication(tokens, limits),
        schema: {
          tags: ['Authentication'],
          summary: 'Revoke a token',
          description:
            'token= an access or refresh token of the calling API key; both tokens of that grant stop working. 200 with an empty body, also for an unknown token (RFC 7009).',
          security: [{ Bearer: [] }],
          response: { 200: { type: 'null', description: 'Revoked (empty body)' }, 400: oauthErrorSchema, 401: oauthErrorSchema },
        },
      },
      async (request, reply) => {
        const params = readParams(request);
        if (!params.token) throw oauthError(400, 'invalid_request', 'token is required');
        await tokens.revoke(params.token, principalOf(request).apiKeyId);
        return reply.code(200).send();
      },
    );
  };
}
