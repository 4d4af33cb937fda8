// When a failed delivery is tried again: Svix's schedule, counted from each failure (5 s, 5 min,
// 30 min, 2 h, 5 h, 10 h, 10 h; about 27 h in all), so a delivery gets 8 attempts before it is
// marked failed. Each wait is moved by up to 10% either way, so that deliveries which failed
// together (a receiver that was down) do not all come back in the same second.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The wait after the 1st, 2nd, ... failure of a round. */
export const RETRY_DELAYS_MS: readonly number[] = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];

/** How far a wait may move either way. */
export const RETRY_JITTER = 0.1;

/** No retry comes sooner than this after its failure, whatever the jitter. */
const MIN_DELAY_MS = SECOND;

/**
 * The wait before the next attempt after the `failures`-th failure of a round (1 for the first),
 * or undefined when the schedule is used up and the delivery has failed. `random` gives a number
 * in [0, 1), as Math.random does.
 */
export function retryDelayMs(failures: number, random: () => number = Math.random): number | undefined {
  const base = RETRY_DELAYS_MS[failures - 1];
  if (base === undefined) return undefined;
  const jitter = (random() * 2 - 1) * RETRY_JITTER * base;
  return Math.max(MIN_DELAY_MS, Math.round(base + jitter));
}
