// Every demo timestamp is relative to the clock's now, so windows such as "created in the last 30
// days" mean the same thing whenever the demo is seeded.

export const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

export class Timeline {
  constructor(readonly now: Date) {}

  /** `days` (fractions allowed) before now. */
  ago(days: number): Date {
    return new Date(this.now.getTime() - Math.round(days * DAY_MS));
  }

  /** `days` after now. */
  ahead(days: number): Date {
    return new Date(this.now.getTime() + Math.round(days * DAY_MS));
  }

  plusDays(date: Date, days: number): Date {
    return new Date(date.getTime() + Math.round(days * DAY_MS));
  }

  plusMinutes(date: Date, minutes: number): Date {
    return new Date(date.getTime() + Math.round(minutes * MINUTE_MS));
  }

  /** Calendar months later, keeping the time of day (billing dates). */
  plusMonths(date: Date, months: number): Date {
    const d = new Date(date.getTime());
    d.setUTCMonth(d.getUTCMonth() + months);
    return d;
  }

  daysAgoOf(date: Date): number {
    return (this.now.getTime() - date.getTime()) / DAY_MS;
  }

  isPast(date: Date): boolean {
    return date.getTime() <= this.now.getTime();
  }

  /** The later of two moments. */
  latest(...dates: Array<Date | null | undefined>): Date {
    let best: Date | undefined;
    for (const d of dates) if (d && (!best || d.getTime() > best.getTime())) best = d;
    if (!best) throw new Error('latest of no dates');
    return best;
  }
}
