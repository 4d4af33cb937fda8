// Walking a list page by page, as a connector syncing a whole site does: with cursors
// (page[after], following links.next until it is null) or with page[number]. One request at a
// time, each a 2xx or the walk fails.
import { NotOk, listOf, type HttpClient, type JsonDocument } from './http-client.js';

/** The server does not know page[after] yet: a 400 naming the parameter. */
export class CursorsNotSupported extends Error {}

export interface WalkProgress {
  pages: number;
  records: number;
  /** page[after] of the next page; undefined on the last page. */
  nextCursor: string | undefined;
}

/**
 * Follows links.next from `firstPath` (which carries `page[after]=`) until the last page, until
 * `stop` says so after a page, or the deadline. Calls `onPage` with each page's records.
 */
export async function walkWithCursor(
  api: HttpClient,
  firstPath: string,
  options: { onPage?: (records: Array<{ id: string }>) => void; stop?: (progress: WalkProgress) => boolean; deadline?: number } = {},
): Promise<WalkProgress & { complete: boolean }> {
  const progress: WalkProgress = { pages: 0, records: 0, nextCursor: undefined };
  let path: string | undefined = firstPath;
  while (path !== undefined) {
    let document: JsonDocument;
    try {
      document = await api.json(path);
    } catch (error) {
      if (progress.pages === 0 && error instanceof NotOk && namesPageAfter(error)) throw new CursorsNotSupported(error.message);
      throw error;
    }
    const records = listOf(document);
    progress.pages += 1;
    progress.records += records.length;
    options.onPage?.(records);
    const next = document.links?.next;
    if (typeof next !== 'string') {
      progress.nextCursor = undefined;
      return { ...progress, complete: true };
    }
    const nextUrl = new URL(next);
    progress.nextCursor = nextUrl.searchParams.get('page[after]') ?? undefined;
    if (progress.nextCursor === undefined) throw new Error(`links.next of ${path} carries no page[after]: ${next}`);
    if (options.stop?.(progress) || (options.deadline !== undefined && Date.now() > options.deadline)) return { ...progress, complete: false };
    path = nextUrl.pathname + nextUrl.search;
  }
  return { ...progress, complete: true };
}

function namesPageAfter(error: NotOk): boolean {
  if (error.response.status !== 400) return false;
  try {
    const document = JSON.parse(error.response.body.toString('utf8')) as JsonDocument;
    return (document.errors ?? []).some((e) => e.source?.parameter === 'page[after]' || (e.detail ?? '').includes('page[after]'));
  } catch {
    return false;
  }
}
