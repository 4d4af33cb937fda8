// Per-process caches of answers that are expensive on a large site and cheap to check: the exact
// count of a filtered list, what a filter's probe learned (how many rows a text index proposes),
// and where numbered pages start (so page 2,000 is a seek from a known
// position, not an OFFSET of 50,000 rows). Every entry is stored under the data version of the
// sites it was computed from (src/db/site-counters.ts); an entry whose version is not the current
// one is never used. The versions live in the database, so a write through any process, or
// any other writer, retires the entries of every process at once.
import type { CursorPosition } from './cursors.js';

/** A bounded map that forgets the least recently used entry first. */
export class LruMap<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K);
  }

  get size(): number {
    return this.map.size;
  }
}

interface Versioned<T> {
  version: string;
  value: T;
}

/** Answers computed from a site's data, each used only at the data version it was computed at. */
export class VersionedCache<T> {
  private readonly entries: LruMap<string, Versioned<T>>;

  constructor(capacity: number) {
    this.entries = new LruMap(capacity);
  }

  get(key: string, version: string): T | undefined {
    const entry = this.entries.get(key);
    return entry && entry.version === version ? entry.value : undefined;
  }

  set(key: string, version: string, value: T): void {
    this.entries.set(key, { version, value });
  }
}

/** Filtered counts: query text and parameters → count, at one data version. */
export class CountCache extends VersionedCache<number> {
  constructor() {
    super(10_000);
  }
}

/** Where each numbered page of a list starts: the position of the last record before it. */
export class PageBoundaryCache {
  private readonly entries = new LruMap<string, Versioned<Map<number, CursorPosition>>>(2_000);
  /** Boundaries kept per list and page size; sequential walks need only the latest few. */
  private static readonly PER_LIST = 256;

  /** The nearest known start at or before `page` (page 1 always starts at the beginning). */
  nearest(key: string, version: string, page: number): { page: number; after: CursorPosition | null } {
    const entry = this.entries.get(key);
    let best: { page: number; after: CursorPosition | null } = { page: 1, after: null };
    if (!entry || entry.version !== version) return best;
    for (const [known, after] of entry.value) if (known <= page && known > best.page) best = { page: known, after };
    return best;
  }

  remember(key: string, version: string, page: number, after: CursorPosition): void {
    let entry = this.entries.get(key);
    if (!entry || entry.version !== version) {
      entry = { version, value: new Map() };
      this.entries.set(key, entry);
    }
    entry.value.set(page, after);
    if (entry.value.size > PageBoundaryCache.PER_LIST) entry.value.delete(entry.value.keys().next().value as number);
  }
}

/**
 * A read's answer as sent: the serialized document, UTF-8 (sent as it is, and counted in the bytes
 * it takes), and the entity tag that names it.
 */
export interface CachedAnswer {
  body: Buffer;
  etag: string;
}

/**
 * Whole answers of lists and shows, at the data version of the sites they were read from: the
 * same request asked again before anything it read has changed is answered without reading a
 * record (polling integrations, dashboards, a page many clients open). Bounded by total size as
 * well as by count, since a page of 100 records with includes is 100 KB or more; an answer
 * larger than an eighth of the budget is not kept.
 */
export class AnswerCache {
  private readonly entries = new Map<string, Versioned<CachedAnswer>>();
  private size = 0;

  constructor(private readonly maxBytes: number) {}

  /** False with ANSWER_CACHE_MB=0: then nothing is kept, and no version need be read for it. */
  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  get(key: string, version: string): CachedAnswer | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.version !== version) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, version: string, answer: CachedAnswer): void {
    this.forget(key);
    if (answer.body.length > this.maxBytes / 8) return;
    this.entries.set(key, { version, value: answer });
    this.size += answer.body.length;
    while (this.size > this.maxBytes) this.forget(this.entries.keys().next().value as string);
  }

  private forget(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.size -= entry.value.body.length;
  }
}
