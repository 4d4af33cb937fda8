// Target 3: a connector syncing every contact of the site, one page of 100 at a time: with
// cursors (links.next until null), timed in full and checked (every record once, as many as
// meta.total_count); and beside it with page[number], walked for a limited time and, if that
// does not finish, extrapolated from pages sampled evenly over the rest of the list.
import { CursorsNotSupported, walkWithCursor } from './cursor-walk.js';
import { listOf, totalCount, type HttpClient } from './http-client.js';
import type { MemorySampler } from './memory.js';

const PAGE = 100;
/** Pages timed, spread over the part of the list a capped page[number] walk did not reach. */
const EXTRAPOLATION_SAMPLES = 20;

export interface WalkFigures {
  /** Seconds for the whole list: measured when `complete`, otherwise estimated. */
  seconds: number;
  complete: boolean;
  pages: number;
  records: number;
  /** How the estimate was made, when the walk did not finish. */
  method?: string;
}

export interface BulkSyncResult {
  totalCount: number;
  /** undefined: the server does not support page[after] yet. */
  cursor: (WalkFigures & { duplicates: number }) | undefined;
  pageNumber: WalkFigures;
  problems: string[];
}

export interface BulkSyncOptions {
  /** The cursor walk stops here (and the estimate is linear: cursor pages cost the same). */
  cursorSeconds: number;
  /** The page[number] walk stops here. */
  pageNumberSeconds: number;
}

export async function measureBulkSync(api: HttpClient, siteId: string, memory: MemorySampler, options: BulkSyncOptions): Promise<BulkSyncResult> {
  const base = `/v1/contacts?filter[site_id]=${siteId}&page[size]=${PAGE}`;
  const total = totalCount(await api.json(base), `GET ${base}`);
  const problems: string[] = [];

  memory.phase('one request at a time: bulk sync walks');
  let cursor: BulkSyncResult['cursor'];
  try {
    const seen = new Set<string>();
    let duplicates = 0;
    const started = performance.now();
    const walk = await walkWithCursor(api, `${base}&page[after]=`, {
      onPage: (records) => {
        for (const { id } of records) {
          if (seen.has(id)) duplicates += 1;
          else seen.add(id);
        }
      },
      deadline: Date.now() + options.cursorSeconds * 1000,
    });
    const elapsed = (performance.now() - started) / 1000;
    cursor = walk.complete
      ? { seconds: elapsed, complete: true, pages: walk.pages, records: walk.records, duplicates }
      : {
          seconds: (elapsed / walk.records) * total,
          complete: false,
          pages: walk.pages,
          records: walk.records,
          duplicates,
          method: `stopped after ${options.cursorSeconds} s and ${walk.records.toLocaleString('en-US')} records; estimated at the same rate`,
        };
    if (duplicates > 0) problems.push(`the cursor walk returned ${duplicates} record(s) twice`);
    if (walk.complete && walk.records !== total) problems.push(`the cursor walk saw ${walk.records} records; meta.total_count is ${total}`);
  } catch (error) {
    if (!(error instanceof CursorsNotSupported)) throw error;
  }
  console.log(cursor ? `    cursor walk: ${describe(cursor)}` : '    cursor walk: page[after] not supported');

  const pageNumber = await walkByPageNumber(api, base, total, options.pageNumberSeconds);
  if (pageNumber.complete && pageNumber.records !== total) problems.push(`the page[number] walk saw ${pageNumber.records} records; meta.total_count is ${total}`);
  console.log(`    page[number] walk: ${describe(pageNumber)}`);
  memory.pause();
  return { totalCount: total, cursor, pageNumber, problems };
}

async function walkByPageNumber(api: HttpClient, base: string, total: number, capSeconds: number): Promise<WalkFigures> {
  const pages = Math.ceil(total / PAGE);
  const started = performance.now();
  const deadline = started + capSeconds * 1000;
  let records = 0;
  let page = 0;
  while (page < pages && performance.now() < deadline) {
    page += 1;
    records += listOf(await api.json(`${base}&page[number]=${page}`)).length;
  }
  const walked = (performance.now() - started) / 1000;
  if (page === pages) return { seconds: walked, complete: true, pages, records };

  // A page[number] walk may get slower as it goes deeper (an OFFSET scan), so the rest is not
  // assumed to cost what the first pages did: pages spread evenly over it are timed instead.
  const remaining = pages - page;
  const sampled: number[] = [];
  for (let i = 0; i < EXTRAPOLATION_SAMPLES; i++) {
    const number = page + 1 + Math.floor(((i + 0.5) * remaining) / EXTRAPOLATION_SAMPLES);
    const t0 = performance.now();
    await api.ok(`${base}&page[number]=${number}`);
    sampled.push((performance.now() - t0) / 1000);
  }
  const meanRest = sampled.reduce((a, b) => a + b, 0) / sampled.length;
  return {
    seconds: walked + meanRest * remaining,
    complete: false,
    pages: page,
    records,
    method:
      `walked pages 1-${page} in ${walked.toFixed(1)} s (the ${capSeconds} s cap); the other ${remaining.toLocaleString('en-US')} pages ` +
      `estimated from ${EXTRAPOLATION_SAMPLES} pages spread over them (mean ${(meanRest * 1000).toFixed(1)} ms a page)`,
  };
}

function describe(walk: WalkFigures): string {
  return walk.complete
    ? `${walk.records.toLocaleString('en-US')} records in ${walk.pages.toLocaleString('en-US')} pages, ${walk.seconds.toFixed(1)} s`
    : `about ${walk.seconds.toFixed(0)} s for the whole list (${walk.method})`;
}
