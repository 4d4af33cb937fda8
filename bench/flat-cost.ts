// Target 2: the median latency of common requests, one at a time (as the issue's table was taken
// with curl), so that the same request at two sizes shows whether its cost grows with the site.
import type { HttpClient } from './http-client.js';
import type { MemorySampler } from './memory.js';
import { contactsPath, type SiteFacts } from './site-facts.js';
import { median, percentile } from './stats.js';

export interface Shape {
  /** The same at every size: the row of the table. */
  key: string;
  /** undefined: the server does not support this request yet. */
  path: string | undefined;
  /** What differs from the key at this size (a shorter list, the depth of the cursor). */
  note?: string;
}

export interface ShapeTiming {
  shape: Shape;
  samples: number;
  medianMs: number;
  p90Ms: number;
  /** meta.total_count of the answer, where it has one: shows a filter matched (or not). */
  matches: number | undefined;
}

export interface SamplingOptions {
  /** Measured requests per shape, at most. */
  samples: number;
  /** ... and no longer than this (at least three requests are measured whatever it takes). */
  secondsPerShape: number;
}

const INCLUDE = 'include=contact,offers,products';

export function shapesFor(facts: SiteFacts): Shape[] {
  const base = contactsPath(facts.siteId);
  const q = encodeURIComponent;
  const site = `filter[site_id]=${facts.siteId}`;
  return [
    { key: 'contacts, page 1', path: base },
    { key: 'contacts, sort=name', path: `${base}&sort=name` },
    {
      key: 'contacts, page[number]=2000',
      path: `${base}&page[number]=${facts.deepPageNumber}`,
      ...(facts.deepPageNumber < 2000 ? { note: `page ${facts.deepPageNumber}, the last` } : {}),
    },
    facts.deepCursor
      ? { key: 'contacts, cursor page deep in the set', path: `${base}&page[after]=${q(facts.deepCursor.cursor)}`, note: `after ${facts.deepCursor.depth.toLocaleString('en-US')} contacts` }
      : { key: 'contacts, cursor page deep in the set', path: undefined },
    { key: 'contacts, filter[has_tag_id]', path: `${base}&filter[has_tag_id]=${facts.tagId}`, note: `tag ${facts.tagId}` },
    { key: 'contacts, filter[search] (a common name)', path: `${base}&filter[search]=${q(facts.commonName)}`, note: facts.commonName },
    { key: 'contacts, filter[email_contains] (match)', path: `${base}&filter[email_contains]=${q(facts.emailFragment)}`, note: facts.emailFragment },
    { key: 'contacts, filter[email_contains]=zzqx (no match)', path: `${base}&filter[email_contains]=zzqx` },
    // The account also holds the site the write load creates, so every list names its site.
    { key: 'GET /v1/purchases?filter[site_id]=S', path: `/v1/purchases?${site}` },
    { key: 'GET /v1/transactions?filter[site_id]=S', path: `/v1/transactions?${site}` },
    { key: `GET /v1/customers?filter[site_id]=S&${INCLUDE}`, path: `/v1/customers?${site}&${INCLUDE}` },
    { key: `GET /v1/customers/<id>?${INCLUDE}`, path: `/v1/customers/${facts.customerId}?${INCLUDE}`, note: `customer ${facts.customerId}` },
    // The console's Data page is the API's list behind an HTML page: at any size it should cost
    // what "contacts, page 1" and the search cost, plus the page around them.
    { key: 'console: Data, contacts page 1', path: `/console/data?site=${facts.siteId}` },
    { key: 'console: Data, contacts search (a common name)', path: `/console/data?site=${facts.siteId}&type=contacts&search=${q(facts.commonName)}`, note: facts.commonName },
  ];
}

export async function measureFlatCost(api: HttpClient, shapes: Shape[], memory: MemorySampler, options: SamplingOptions): Promise<ShapeTiming[]> {
  const timings: ShapeTiming[] = [];
  memory.phase('one request at a time: flat-cost shapes');
  for (const shape of shapes) {
    if (shape.path === undefined) {
      timings.push({ shape, samples: 0, medianMs: Number.NaN, p90Ms: Number.NaN, matches: undefined });
      continue;
    }
    // Two unmeasured requests first: the first use of a shape may prepare statements.
    for (let i = 0; i < 2; i++) await api.ok(shape.path);
    const latencies: number[] = [];
    let matches: number | undefined;
    const deadline = performance.now() + options.secondsPerShape * 1000;
    while (latencies.length < options.samples && (latencies.length < 3 || performance.now() < deadline)) {
      const started = performance.now();
      const res = await api.ok(shape.path);
      latencies.push(performance.now() - started);
      if (matches === undefined && shape.path.startsWith('/v1/')) matches = (JSON.parse(res.body.toString('utf8')) as { meta?: { total_count?: number } }).meta?.total_count;
    }
    const sorted = Float64Array.from(latencies).sort();
    const timing = { shape, samples: latencies.length, medianMs: median(latencies), p90Ms: percentile(sorted, 90), matches };
    console.log(`    ${shape.key}: median ${timing.medianMs.toFixed(2)} ms over ${timing.samples}${matches !== undefined ? `, ${matches} matching` : ''}`);
    timings.push(timing);
  }
  memory.pause();
  return timings;
}
