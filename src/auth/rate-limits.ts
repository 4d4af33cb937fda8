// Rate limits: requests a minute per API key on every /v1 route, and failed client
// authentications a minute per client_id and per source address at /v1/oauth/token. Requests are
// counted by @fastify/rate-limit, failures by attempt-counters.ts (a failure is taken before the
// secret is checked and given back when it was right); both in-process, or in Redis when
// REDIS_URL is set, so that every process shares one count. This file decides what is counted
// under which key, which headers an answer carries, and how a 429 reads. docs/operations.md
// describes the behaviour.
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import { redactUrl, type Config } from '../config.js';
import { localAttemptCounters, redisAttemptCounters } from './attempt-counters.js';
import { ApiError, tooManyRequests } from '../jsonapi/errors.js';

/** Every limit counts over a fixed window of one minute, starting at the first count. */
const WINDOW_MS = 60_000;
/** Keys the in-process store remembers at once (least recently used out first). */
const LOCAL_KEYS = 10_000;
/** Redis must answer a count within this; otherwise the request goes on uncounted (fail open). */
const REDIS_COMMAND_TIMEOUT_MS = 250;
/** How long the app waits for its first Redis connection before it serves anyway. */
const REDIS_FIRST_CONNECTION_MS = 2_000;

export interface RateLimits {
  /**
   * Counts a /v1 request: against its API key once authenticated, otherwise against its source
   * address. Sets RateLimit-Limit, -Remaining and -Reset; throws a 429 past the limit. Counts a
   * request once, however often it is called.
   */
  countRequest(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** Whether countRequest has counted this request. */
  counted(request: FastifyRequest): boolean;
  /**
   * Before a client secret is checked: takes one failure for the client id and one for the
   * address, both or neither, and throws a 429 when either has none left this minute. Taking
   * first is what makes the limit hold for concurrent guesses. A right secret gives it back.
   */
  takeClientAuthentication(request: FastifyRequest, clientId: string): Promise<ClientAuthentication>;
}

export interface ClientAuthentication {
  /** The secret was right: the failure taken in advance is given back. */
  succeeded(): Promise<void>;
}

type Limiter = ReturnType<FastifyInstance['createRateLimit']>;

export interface RateLimitOptions {
  /** Redis key prefix (tests use one of their own); default `sitebiz:ratelimit:`. */
  redisNamespace?: string;
  /** Told of every 429 given: past the request limit, or while failed authentications are locked out (metrics). */
  onRefusal?: (limit: RefusedLimit) => void;
}

/** A 429's cause: RATE_LIMIT, the AUTH_FAILURE_LIMIT lockout, or the console's sign-in throttle (src/console/sign-in.ts). */
export const REFUSED_LIMITS = ['requests', 'auth_failures', 'console_sign_in'] as const;
export type RefusedLimit = (typeof REFUSED_LIMITS)[number];

/**
 * Registers @fastify/rate-limit on the app (no global hook: the calls below decide where counting
 * happens) and returns the limits of the configuration.
 */
export async function installRateLimits(app: FastifyInstance, config: Config, options: RateLimitOptions = {}): Promise<RateLimits> {
  const redis = config.redisUrl ? connectRedis(app, config.redisUrl) : undefined;
  // Counting starts with the first request: wait (briefly) for Redis, whose client queues nothing.
  if (redis) await firstConnection(redis, REDIS_FIRST_CONNECTION_MS);
  await app.register(rateLimit, {
    global: false,
    cache: LOCAL_KEYS,
    // Redis down or slow: the request is served uncounted rather than failed (logged by connectRedis).
    skipOnError: true,
    ...(redis ? { redis, nameSpace: options.redisNamespace ?? 'sitebiz:ratelimit:' } : {}),
  });

  const countedRequests = new WeakSet<FastifyRequest>();
  const minute = { timeWindow: WINDOW_MS };
  const requests = app.createRateLimit({ ...minute, max: config.rateLimitPerMinute, keyGenerator: requestKey });
  const failures = redis
    ? redisAttemptCounters(redis, options.redisNamespace ?? 'sitebiz:ratelimit:', (err) => app.log.debug({ err }, 'a failed-authentication count was skipped (Redis)'))
    : localAttemptCounters(LOCAL_KEYS);

  return {
    async countRequest(request, reply) {
      if (config.rateLimitPerMinute === 0 || countedRequests.has(request)) return;
      countedRequests.add(request);
      const state = await requests(request);
      if (state.isAllowed) return;
      reply.header('ratelimit-limit', state.max).header('ratelimit-remaining', state.remaining).header('ratelimit-reset', state.ttlInSeconds);
      if (state.isExceeded) {
        options.onRefusal?.('requests');
        const who = request.principal ? 'this API key' : 'this address before authentication';
        throw tooManyRequests(
          `More than ${state.max} requests a minute for ${who}; retry in ${state.ttlInSeconds} s`,
          state.ttlInSeconds,
        );
      }
    },
    counted: (request) => countedRequests.has(request),

    async takeClientAuthentication(request, clientId) {
      if (config.authFailuresPerMinute === 0) return { succeeded: async () => {} };
      const keys = [`fail:client:${clientId}`, `fail:ip:${normalizeIP(request.ip)}`];
      const take = await failures.take(
        keys.map((key) => ({ key, max: config.authFailuresPerMinute })),
        WINDOW_MS,
      );
      if (!take.taken) {
        options.onRefusal?.('auth_failures');
        const retryAfter = Math.max(1, Math.ceil(take.retryAfterMs / 1000));
        // RFC 6749 form (the route's errorFormat); slow_down is the registered OAuth error for this.
        throw new ApiError(
          429,
          [
            {
              code: 'slow_down',
              title: 'Too Many Requests',
              detail: `More than ${config.authFailuresPerMinute} failed client authentications a minute for this client_id or from this address; retry in ${retryAfter} s`,
            },
          ],
          { 'retry-after': String(retryAfter) },
        );
      }
      return { succeeded: () => failures.giveBack(keys) };
    },
  };
}

/**
 * Resolves once Redis is ready, or after `timeoutMs` (then requests go on uncounted until it is,
 * as when it goes away later).
 */
async function firstConnection(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    redis.once('ready', done);
  });
}

/** The API key behind the Bearer token once authenticated; the source address before. */
function requestKey(request: FastifyRequest): string {
  return request.principal ? `req:key:${request.principal.apiKeyId}` : `req:ip:${normalizeIP(request.ip)}`;
}

/**
 * A Redis client that never queues: while Redis is unreachable a count fails at once and the
 * request goes on uncounted. One log line when Redis goes away, one when it is back.
 */
function connectRedis(app: FastifyInstance, url: string): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 2_000,
    // Keep trying to reconnect, at most every 2 s.
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  const shown = redactUrl(url);
  let reachable = true;
  redis.on('error', (error: Error) => {
    if (!reachable) return;
    reachable = false;
    app.log.error({ err: error, redis: shown }, 'Redis is unreachable: rate limits are not enforced until it is back');
  });
  redis.on('ready', () => {
    if (reachable) return;
    reachable = true;
    app.log.info({ redis: shown }, 'Redis is back: rate limits are enforced again');
  });
  app.addHook('onClose', async () => {
    redis.disconnect();
  });
  return redis;
}
