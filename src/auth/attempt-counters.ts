// Allowances of attempts at a secret, taken before the secret is checked and given back when it
// was right, so that concurrent guesses cannot all pass a limit none of them has counted yet.
// @fastify/rate-limit counts requests, which are never given back; this counts failures, which
// need a take of several keys at once (all or none) and a give-back, neither of which its stores
// offer. In-process, or in Redis when REDIS_URL is set (one Lua script per operation, so a take is
// atomic across processes); like the request counts, the Redis counts fail open.
import type { Redis } from 'ioredis';

export interface AttemptLimit {
  key: string;
  max: number;
}

export type Take = { taken: true } | { taken: false; retryAfterMs: number };

export interface AttemptCounters {
  /**
   * Takes one attempt under every key, or none when any has no attempt left in its window (then
   * how long until the last of those windows ends). A window starts at its key's first attempt.
   */
  take(limits: readonly AttemptLimit[], windowMs: number): Promise<Take>;
  /** Gives one attempt back under every key (it was not a failure); a key not counted stays so. */
  giveBack(keys: readonly string[]): Promise<void>;
}

/** One process's counts; at most `capacity` keys, the least recently counted forgotten first. */
export function localAttemptCounters(capacity: number, now: () => number = () => Date.now()): AttemptCounters {
  const counts = new Map<string, { attempts: number; windowEnd: number }>();
  const live = (key: string) => {
    const count = counts.get(key);
    if (count && count.windowEnd > now()) return count;
    counts.delete(key);
    return undefined;
  };
  return {
    async take(limits, windowMs) {
      const full = limits.map(({ key, max }) => ({ count: live(key), max })).filter(({ count, max }) => count !== undefined && count.attempts >= max);
      if (full.length > 0) return { taken: false, retryAfterMs: Math.max(...full.map(({ count }) => count!.windowEnd - now())) };
      for (const { key } of limits) {
        const count = live(key) ?? { attempts: 0, windowEnd: now() + windowMs };
        count.attempts++;
        // Map keeps insertion order: re-inserting makes the key the most recent.
        counts.delete(key);
        counts.set(key, count);
      }
      while (counts.size > capacity) counts.delete(counts.keys().next().value!);
      return { taken: true };
    },
    async giveBack(keys) {
      for (const key of keys) {
        const count = live(key);
        if (count && count.attempts > 0) count.attempts--;
      }
    },
  };
}

// KEYS: the keys; ARGV[1]: the window in ms, ARGV[1 + i]: the max of KEYS[i]. Returns 0 when taken,
// else the milliseconds until the longest full window ends.
const TAKE = `
local window = tonumber(ARGV[1])
local wait = 0
for i, key in ipairs(KEYS) do
  local attempts = tonumber(redis.call('GET', key) or '0')
  if attempts >= tonumber(ARGV[i + 1]) then
    local ttl = redis.call('PTTL', key)
    if ttl < 1 then ttl = 1 end
    if ttl > wait then wait = ttl end
  end
end
if wait > 0 then return wait end
for _, key in ipairs(KEYS) do
  if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, window) end
end
return 0
`;

// DECR keeps the key's expiry; a key that is gone (its window over) is not made again.
const GIVE_BACK = `
for _, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') > 0 then redis.call('DECR', key) end
end
return 0
`;

/**
 * Counts shared by every process through Redis, under `prefix`. The keys of one take are in one
 * script, which Redis runs alone: no other take sees a half-taken state.
 */
export function redisAttemptCounters(redis: Redis, prefix: string, onError: (error: unknown) => void): AttemptCounters {
  const keysOf = (keys: readonly string[]) => keys.map((key) => prefix + key);
  return {
    async take(limits, windowMs) {
      try {
        const wait = Number(await redis.eval(TAKE, limits.length, ...keysOf(limits.map((l) => l.key)), windowMs, ...limits.map((l) => l.max)));
        return wait > 0 ? { taken: false, retryAfterMs: wait } : { taken: true };
      } catch (error) {
        // Fail open, as the request counts do (skipOnError): Redis away must not stop every client from getting tokens.
        onError(error);
        return { taken: true };
      }
    },
    async giveBack(keys) {
      try {
        await redis.eval(GIVE_BACK, keys.length, ...keysOf(keys));
      } catch (error) {
        onError(error);
      }
    },
  };
}
