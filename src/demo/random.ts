// A small seeded pseudo-random generator, so the demo data is the same on every run. Never
// Math.random: the same code must give the same rows (and so the same ids) everywhere.

/** The seed of every random stream of the demo. */
export const DEMO_SEED = 20_260_101;

/** mulberry32: 32 bits of state, fast, and good enough for picking names and amounts. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Mixes a base seed with a stream label and an index, so each person gets a stream of its own. */
export function seedOf(base: number, stream: string, index = 0): number {
  let h = (base ^ 0x9e3779b9) >>> 0;
  for (const ch of `${stream}#${index}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  h ^= h >>> 16;
  return Math.imul(h, 0x85ebca6b) >>> 0;
}

const TOKEN_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

export class Rng {
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = mulberry32(seed);
  }

  /** A float in [0, 1). */
  float(): number {
    return this.next();
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Picks by weight: [[value, weight], ...]. */
  weighted<T>(choices: ReadonlyArray<readonly [T, number]>): T {
    const total = choices.reduce((sum, [, w]) => sum + w, 0);
    let r = this.next() * total;
    for (const [value, weight] of choices) {
      r -= weight;
      if (r < 0) return value;
    }
    return choices[choices.length - 1]![0];
  }

  /** `count` distinct items, in a random order. */
  sample<T>(items: readonly T[], count: number): T[] {
    const pool = [...items];
    const out: T[] = [];
    while (out.length < count && pool.length > 0) out.push(pool.splice(Math.floor(this.next() * pool.length), 1)[0] as T);
    return out;
  }

  /** Letters and digits without look-alikes (no 0/O, 1/l/I), as in checkout tokens. */
  token(length: number): string {
    let s = '';
    for (let i = 0; i < length; i++) s += TOKEN_ALPHABET[Math.floor(this.next() * TOKEN_ALPHABET.length)];
    return s;
  }

  /** The pattern with each # replaced by a random digit, as in phone numbers. */
  digits(pattern: string): string {
    let s = '';
    for (const ch of pattern) s += ch === '#' ? String(Math.floor(this.next() * 10)) : ch;
    return s;
  }
}
