// ISO 8601 durations (`P1Y2M10DT2H30M`, `P3W`, `PT90S`) for the account clock
// (POST /v1/test_helpers/clock/advance, `sitebiz clock advance`). Strict: the designators in
// order, each at most once, whole numbers only (seconds may take up to 3 decimals), at least
// one component, no sign (the clock never goes back). Weeks do not mix with other components, as
// ISO 8601 writes them. No npm package in our dependencies parses them (moment and luxon are not
// dependencies; a 30-line parser is cheaper than one).
//
// Years and months are calendar units: added to the UTC calendar date, a day past the end of the
// month lands on its last day (January 31 + P1M = February 28 or 29), as Temporal does. Weeks,
// days, hours, minutes and seconds are exact (a day is 24 hours: the account clock is UTC).

export interface IsoDuration {
  years: number;
  months: number;
  weeks: number;
  days: number;
  hours: number;
  minutes: number;
  /** May have up to 3 decimals. */
  seconds: number;
}

const PATTERN = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:[.,]\d{1,3})?)S)?)?$/;

/** Largest number a component may have: keeps every sum far inside a Date's range. */
const MAX_COMPONENT = 100_000_000;

/** The duration `text` names, or a reason it is not one. */
export function parseIsoDuration(text: string): { duration: IsoDuration } | { error: string } {
  const match = PATTERN.exec(text);
  const example = 'such as P32D, P1M, PT10M or P1Y2M3DT4H5M6S';
  if (!match || text === 'P' || text.endsWith('T')) return { error: `must be an ISO 8601 duration (${example}), got ${JSON.stringify(text)}` };
  const [, y, mo, w, d, h, mi, s] = match;
  const number = (v: string | undefined) => (v === undefined ? 0 : Number(v.replace(',', '.')));
  const duration: IsoDuration = { years: number(y), months: number(mo), weeks: number(w), days: number(d), hours: number(h), minutes: number(mi), seconds: number(s) };
  if (w !== undefined && [y, mo, d, h, mi, s].some((v) => v !== undefined)) return { error: `must not mix weeks with other components (ISO 8601), got ${JSON.stringify(text)}` };
  if (Object.values(duration).some((v) => v > MAX_COMPONENT)) return { error: `has a component above ${MAX_COMPONENT}, got ${JSON.stringify(text)}` };
  return { duration };
}

/** The last day of a UTC month (month 0-11, may run past 11). */
const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month + 1, 0)).getUTCDate();

/** `from` moved forward by `duration`: calendar years and months first, then the exact units. */
export function addIsoDuration(from: Date, duration: IsoDuration): Date {
  let at = from;
  const months = duration.years * 12 + duration.months;
  if (months > 0) {
    const year = at.getUTCFullYear();
    const month = at.getUTCMonth() + months;
    const day = Math.min(at.getUTCDate(), daysInMonth(year, month));
    at = new Date(Date.UTC(year, month, day, at.getUTCHours(), at.getUTCMinutes(), at.getUTCSeconds(), at.getUTCMilliseconds()));
  }
  const exactMs =
    ((duration.weeks * 7 + duration.days) * 24 * 3600 + duration.hours * 3600 + duration.minutes * 60) * 1000 + Math.round(duration.seconds * 1000);
  return new Date(at.getTime() + exactMs);
}
