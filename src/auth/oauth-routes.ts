// POST /v1/oauth/token and POST /v1/oauth/revoke. Errors are RFC 6749 §5.2 objects
// ({"error": ..., "error_description": ...}), chosen per route by `errorFormat: 'oauth'`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../jsonapi/errors.js';
import { acceptFormBodies } from '../jsonapi/http.js';
import { bearerAuthentication, principalOf } from './authenticate.js';
import type { RateLimits } from './rate-limits.js';
import type { TokenService } from './tokens.js';
import { named } from '../jsonapi/schema-names.js';

/** A shell command that gets a token with a key's credentials (printed by the CLI, shown by the console). */
export function tokenRequestCommand(baseUrl: string, clientId: string, clientSecret: string): string {
  return `curl -s -X POST ${baseUrl}/v1/oauth/token -d grant_type=client_credentials -d client_id=${clientId} -d client_secret=${clientSecret}`;
}

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

/**
 * Client credentials as RFC 6749 §2.3.1 lets a client send them: HTTP Basic, or `client_id` and
 * `client_secret` in the body, never both. Undefined when the request carries neither.
 */
function clientCredentials(
  request: FastifyRequest,
  params: Record<string, string>,
): { clientId: string | undefined; clientSecret: string | undefined; basic: boolean } | undefined {
  const basic = basicCredentials(request);
  const inBody = params.client_id !== undefined || params.client_secret !== undefined;
  if (basic && inBody) throw oauthError(400, 'invalid_request', 'Send client credentials either with HTTP Basic or in the body, not both');
  if (basic) return { ...basic, basic: true };
  if (inBody) return { clientId: params.client_id, clientSecret: params.client_secret, basic: false };
  return undefined;
}

const invalidClient = (basic: boolean) =>
  oauthError(401, 'invalid_client', 'Unknown client_id or wrong client_secret', basic ? { 'www-authenticate': 'Basic realm="sitebiz"' } : {});

/**
 * The API key asking to revoke. Standard OAuth libraries authenticate the client (RFC 7009 §2.1:
 * HTTP Basic, or id and secret in the body); the upstream contract sends an access token of the
 * key as Bearer instead. Both are accepted, one at a time.
 */
async function revokingKeyId(
  request: FastifyRequest,
  reply: FastifyReply,
  params: Record<string, string>,
  tokens: TokenService,
  limits: RateLimits,
): Promise<number> {
  const client = clientCredentials(request, params);
  if (!client) {
    await bearerAuthentication(tokens, limits)(request, reply);
    return principalOf(request).apiKeyId;
  }
  if (!client.basic && request.headers.authorization !== undefined) {
    throw oauthError(400, 'invalid_request', 'Send either an Authorization header or client credentials in the body, not both');
  }
  if (!client.clientId || !client.clientSecret) throw oauthError(400, 'invalid_request', 'client_id and client_secret are both required');
  // The same throttle as the token endpoint: revoke must not become a way to guess secrets.
  const attempt = await limits.takeClientAuthentication(request, client.clientId);
  const key = await tokens.clientKey(client.clientId, client.clientSecret);
  if (key === undefined) throw invalidClient(client.basic);
  await attempt.succeeded();
  request.clientKey = key;
  return key.id;
}

const tokenResponseSchema = named('oauth_token_response', {
  type: 'object',
  properties: {
    access_token: { type: 'string' },
    refresh_token: { type: 'string' },
    token_type: { type: 'string', enum: ['Bearer'] },
    expires_in: { type: 'integer' },
  },
} as const);

/** An OAuth error answer (RFC 6749 §5.2). */
const oauthErrorSchema = named('oauth_error', {
  type: 'object',
  properties: { error: { type: 'string' }, error_description: { type: 'string' } },
} as const);

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
            'grant_type=client_credentials with client_id and client_secret (in the body or HTTP Basic), or grant_type=refresh_token with refresh_token. Form-encoded or JSON. A refresh token works once: the refresh replaces its grant with a new one. A refresh token presented again answers 400 invalid_grant and revokes every grant refreshed from the same client_credentials grant (its family), access tokens included.',
          response: {
            200: { ...tokenResponseSchema, description: 'The access token, its refresh token and its lifetime in seconds' },
            400: { ...oauthErrorSchema, description: 'invalid_request, unsupported_grant_type or invalid_grant (RFC 6749 §5.2)' },
            401: { ...oauthErrorSchema, description: 'invalid_client: an unknown client_id or a wrong client_secret' },
          },
        },
      },
      async (request, reply) => {
        const params = readParams(request);
        reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
        const grantType = params.grant_type;
        if (grantType === undefined || grantType === '') throw oauthError(400, 'invalid_request', 'grant_type is required');

        if (grantType === 'client_credentials') {
          const client = clientCredentials(request, params);
          if (!client?.clientId || !client.clientSecret) {
            throw oauthError(400, 'invalid_request', 'client_id and client_secret are required for grant_type=client_credentials');
          }
          // Guessing secrets: after too many failures the client id and the address get 429s,
          // whatever the secret, so that the answer tells nothing until the minute is over. The
          // failure is taken before the check, so that concurrent guesses cannot all pass.
          const attempt = await limits.takeClientAuthentication(request, client.clientId);
          const issued = await tokens.grantForClient(client.clientId, client.clientSecret);
          if (!issued) throw invalidClient(client.basic);
          await attempt.succeeded();
          request.clientKey = issued.key;
          return reply.type('application/json').send(issued.tokens);
        }

        if (grantType === 'refresh_token') {
          const refreshToken = params.refresh_token;
          if (!refreshToken) throw oauthError(400, 'invalid_request', 'refresh_token is required for grant_type=refresh_token');
          const issued = await tokens.refresh(refreshToken);
          if (!issued) throw oauthError(400, 'invalid_grant', 'The refresh token is unknown, expired, revoked or already used');
          request.clientKey = issued.key;
          return reply.type('application/json').send(issued.tokens);
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
        schema: {
          tags: ['Authentication'],
          summary: 'Revoke a token',
          description:
            'token= an access or refresh token of the calling API key (token_type_hint is accepted and not needed); both tokens of that grant stop working. 200 with an empty body, also for an unknown token or one of another key, which is left alone (RFC 7009). ' +
            'The key is named by a Bearer access token of it (the upstream contract) or, as RFC 7009 clients do, by its client credentials: HTTP Basic, or client_id and client_secret in the body. Form-encoded or JSON.',
          security: [{ Bearer: [] }, { ClientBasic: [] }],
          response: {
            200: { type: 'object', additionalProperties: false, description: 'Revoked: the body is an empty JSON object, which RFC 7009 clients ignore' },
            400: { ...oauthErrorSchema, description: 'invalid_request: no token, or client credentials given two ways (RFC 6749 §5.2)' },
            401: { ...oauthErrorSchema, description: 'invalid_client, or a missing or invalid Bearer token' },
          },
        },
      },
      async (request, reply) => {
        const params = readParams(request);
        const apiKeyId = await revokingKeyId(request, reply, params, tokens, limits);
        if (!params.token) throw oauthError(400, 'invalid_request', 'token is required');
        await tokens.revoke(params.token, apiKeyId);
        // The upstream documents an empty body. An empty body labelled JSON is not JSON, and
        // simple-oauth2 (through wreck's strict JSON mode) fails a success that is not labelled
        // JSON: an empty object is both, and RFC 7009 clients ignore the body anyway.
        return reply.code(200).type('application/json').send('{}');
      },
    );
  };
}
