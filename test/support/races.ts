// Racing requests: fire many requests at once through app.inject and look at what they answered.
// On PostgreSQL the requests share the app's connection pool, so their transactions truly overlap;
// on SQLite they queue for the write lock, which is the serial behaviour every race must match.
import type { Res } from './writes.js';

/** How many requests a race fires unless told otherwise. */
export const RACERS = 50;

/** Starts `n` requests together (request i is `make(i)`) and waits for every answer. */
export function race(make: (i: number) => Promise<Res>, n = RACERS): Promise<Res[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => make(i)));
}

/** Status → how many answered it, e.g. `{ 200: 49, 422: 1 }`, for one readable assertion. */
export function statuses(responses: readonly Res[]): Record<number, number> {
  const tally: Record<number, number> = {};
  for (const res of responses) tally[res.statusCode] = (tally[res.statusCode] ?? 0) + 1;
  return tally;
}

/** The bodies of answers outside `allowed`, for the message of a failed assertion. */
export function unexpected(responses: readonly Res[], allowed: readonly number[]): string {
  return responses
    .filter((res) => !allowed.includes(res.statusCode))
    .slice(0, 3)
    .map((res) => `${res.statusCode} ${res.body}`)
    .join('\n');
}
