// Walks a list of the source by page number (page[number], and page[size] where the list takes
// it), the only paging the upstream API has. The first page says how many there are
// (meta.total_pages); the others are fetched several at a time (the client bounds the requests in
// flight), each handed to `write` as it arrives, one write at a time, in whatever order the pages
// arrive: each page is checked off on its own. Pages already written are not fetched again (the
// first is, for the count). A list that does not say its page count is followed by links.next.
import type { UpstreamClient, UpstreamDocument, UpstreamRecord } from './upstream-client.js';

export const PAGE_SIZE = 100;

export interface WalkOptions {
  client: UpstreamClient;
  path: string;
  params: Record<string, string>;
  pageSize: boolean;
  /** Pages already written (skipped, except the first, which is fetched for the count). */
  written: ReadonlySet<number>;
  /** Pages fetched ahead of their write at most (memory stays bounded). */
  window: number;
  /** Writes one page (its records, its number); called one at a time. */
  write(page: number, records: UpstreamRecord[]): Promise<void>;
  /** The first page, when it was asked for ahead (while the previous list was written). */
  first?: Promise<UpstreamDocument>;
  /** Called with the list's size once the first page is read. */
  onTotal?(totalRecords: number | undefined, totalPages: number | undefined): void;
}

/** Asks for one page of a list. */
export function fetchListPage(client: UpstreamClient, list: Pick<WalkOptions, 'path' | 'params' | 'pageSize'>, page: number): Promise<UpstreamDocument> {
  return client.get(list.path, {
    ...list.params,
    'page[number]': String(page),
    ...(list.pageSize ? { 'page[size]': String(PAGE_SIZE) } : {}),
  });
}

export async function walkList(options: WalkOptions): Promise<void> {
  const fetchPage = (page: number): Promise<UpstreamDocument> => fetchListPage(options.client, options, page);
  const writes = new WriteQueue(options.write);
  const first = await (options.first ?? fetchPage(1));
  const totalPages = first.meta?.total_pages;
  options.onTotal?.(first.meta?.total_count, totalPages);
  if (!options.written.has(1)) writes.add(1, recordsOf(first));

  if (totalPages === undefined) {
    // No count: one page after another while the source says there is a next.
    let doc = first;
    for (let page = 2; doc.links?.next && recordsOf(doc).length > 0; page++) {
      doc = await fetchPage(page);
      if (!options.written.has(page)) writes.add(page, recordsOf(doc));
      await writes.drained(options.window);
    }
    await writes.drained(0);
    return;
  }

  const todo: number[] = [];
  for (let page = 2; page <= totalPages; page++) if (!options.written.has(page)) todo.push(page);
  let next = 0;
  let failure: unknown;
  const worker = async () => {
    while (next < todo.length && failure === undefined) {
      const page = todo[next++]!;
      try {
        const doc = await fetchPage(page);
        writes.add(page, recordsOf(doc));
        await writes.drained(options.window);
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.window) }, worker));
  // Pages fetched before a failure are still written: less to fetch when the import goes on.
  await writes.drained(0).catch((error: unknown) => {
    failure ??= error;
  });
  if (failure !== undefined) throw failure;
}

function recordsOf(doc: UpstreamDocument): UpstreamRecord[] {
  if (Array.isArray(doc.data)) return doc.data;
  return doc.data ? [doc.data] : [];
}

/** Pages written one at a time, in the order they were added; the first failure stops the rest. */
class WriteQueue {
  private tail: Promise<void> = Promise.resolve();
  private pending = 0;
  private failure: unknown;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly write: (page: number, records: UpstreamRecord[]) => Promise<void>) {}

  add(page: number, records: UpstreamRecord[]): void {
    this.pending++;
    this.tail = this.tail.then(async () => {
      try {
        if (this.failure === undefined) await this.write(page, records);
      } catch (error) {
        this.failure ??= error;
      } finally {
        this.pending--;
        for (const wake of this.waiters.splice(0)) wake();
      }
    });
  }

  /** Resolves once at most `limit` pages wait for their write; throws the first write failure. */
  async drained(limit: number): Promise<void> {
    while (this.pending > limit && this.failure === undefined) await new Promise<void>((resolve) => this.waiters.push(resolve));
    if (this.failure !== undefined) throw this.failure;
  }
}
