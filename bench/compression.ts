// The compression suite (`npm run bench -- --suites compression`, issue 22): what gzip and brotli
// (src/compression.ts) cost and save on a page of 100 contacts, and what they save on the OpenAPI
// document.
//
//   - The page (`page[size]=100` of the dataset's site) under concurrent load, asked without
//     Accept-Encoding, with `gzip` and with `br`, in one server and one run: rounds take the three
//     in every order in turn (the 6 orders of 3), so drift of a shared machine's load hits each
//     alike, and each round gives its own ratios to identity; the median ratio is the figure to
//     read. Requests/s, and the server's CPU time per request from /proc (utime + stime of the
//     serving process: less sensitive to what else the machine runs than requests/s), with the
//     answer cache on (the default: a repeated page costs little but the compression) and off.
//   - Bytes of each answer's body as sent, checked to decode to exactly the identity body.
//   - The levels: one call of zlib on the page's identity bytes, in the bench's own process, for
//     gzip at levels 1, 6 (the default) and 9 and brotli at qualities 1 to 6 and 11 (the default):
//     bytes and ms per call, what BROTLI_QUALITY in src/compression.ts was chosen from.
//   - The OpenAPI document (`/v1/openapi.json`, the document `/docs` loads): its bytes identity,
//     gzip and br, the server's time to send each (median of a few, one at a time), and its
//     `$ref` count.
import os from 'node:os';
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync, gzipSync } from 'node:zlib';
import type { Dataset } from './datasets.js';
import { HttpClient, type HttpResponse } from './http-client.js';
import { runLoad, type LoadGeneratorName } from './load.js';
import { cpuMs, stopChild } from './processes.js';
import { startServer } from './sitebiz-server.js';
import { median, permutations, ratioText } from './stats.js';

export const CODINGS = [
  { label: 'identity', acceptEncoding: undefined },
  { label: 'gzip', acceptEncoding: 'gzip' },
  { label: 'br', acceptEncoding: 'br' },
] as const;
type Coding = (typeof CODINGS)[number];

export interface CompressionOptions {
  generator: LoadGeneratorName;
  connections: number;
  /** Measured seconds per coding, split over the rounds. */
  seconds: number;
  rounds: number;
  warmupSeconds: number;
}

export interface CodingLoad {
  coding: Coding;
  /** Body bytes of one answer as sent. */
  bytes: number;
  /** Requests/s of each round. */
  rps: number[];
  /** Server CPU ms per request of each round. */
  cpuMsPerRequest: number[];
}

export interface PageResult {
  answerCache: boolean;
  loads: CodingLoad[];
}

export interface DocumentFigures {
  path: string;
  refs: number;
  rows: Array<{ coding: Coding; bytes: number; medianMs: number }>;
}

export interface LevelFigures {
  name: string;
  bytes: number;
  ms: number;
}

export interface CompressionResult {
  dataset: Dataset;
  path: string;
  pages: PageResult[];
  levels: LevelFigures[];
  document: DocumentFigures;
}

const PAGE_SIZE = 100;
const DOCUMENT_SAMPLES = 7;

export async function measureCompression(dataset: Dataset, options: CompressionOptions): Promise<CompressionResult> {
  const path = `/v1/contacts?filter%5Bsite_id%5D=${dataset.credentials.siteId}&page%5Bsize%5D=${PAGE_SIZE}`;
  const pages: PageResult[] = [];
  let document: DocumentFigures | undefined;
  let levels: LevelFigures[] | undefined;
  for (const answerCache of [true, false]) {
    const server = await startServer(dataset, { workers: '1', readyTimeoutMs: 15 * 60_000, extraArgs: answerCache ? [] : ['--answer-cache-mb', '0'] });
    try {
      const pid = server.child.process.pid!;
      const loads: CodingLoad[] = [];
      const identity = (await server.api.ok(path)).body;
      levels ??= measureLevels(identity);
      for (const coding of CODINGS) loads.push({ coding, bytes: (await sentBody(server.api, path, coding, identity)).length, rps: [], cpuMsPerRequest: [] });
      const run = async (load: CodingLoad, seconds: number, measured: boolean) => {
        const cpuBefore = cpuMs(pid);
        const result = await runLoad(options.generator, {
          label: `GET page of ${PAGE_SIZE}, ${load.coding.label}`,
          url: server.baseUrl + path,
          method: 'GET',
          headers: { authorization: `Bearer ${server.accessToken}`, ...(load.coding.acceptEncoding ? { 'accept-encoding': load.coding.acceptEncoding } : {}) },
          seconds,
          connections: options.connections,
        });
        if (!measured) return;
        load.rps.push(result.requests / result.seconds);
        load.cpuMsPerRequest.push((cpuMs(pid) - cpuBefore) / result.requests);
        console.log(`    ${load.coding.label.padEnd(8)}: ${Math.round(result.requests / result.seconds).toLocaleString('en-US')} req/s, ${load.cpuMsPerRequest.at(-1)!.toFixed(3)} ms CPU a request`);
      };
      console.log(`  page of ${PAGE_SIZE}, answer cache ${answerCache ? 'on' : 'off'}`);
      if (options.warmupSeconds > 0) for (const load of loads) await run(load, options.warmupSeconds, false);
      const orders = permutations(loads);
      for (let round = 0; round < options.rounds; round++) {
        for (const load of orders[round % orders.length]!) await run(load, options.seconds / options.rounds, true);
      }
      pages.push({ answerCache, loads });
      document ??= await measureDocument(server.api);
    } finally {
      server.api.close();
      await stopChild(server.child);
    }
  }
  return { dataset, path, pages, levels: levels!, document: document! };
}

/** Each level's bytes and its median ms per call over about half a second (at least 3 calls). */
function measureLevels(body: Buffer): LevelFigures[] {
  const brotli = (quality: number) => () => brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: quality } });
  const levels: Array<[string, () => Buffer]> = [
    ...[1, 6, 9].map((level): [string, () => Buffer] => [`gzip ${level}${level === 6 ? ' (default)' : ''}`, () => gzipSync(body, { level })]),
    ...[1, 2, 3, 4, 5, 6, 11].map((quality): [string, () => Buffer] => [`br ${quality}${quality === 11 ? ' (default)' : ''}`, brotli(quality)]),
  ];
  return levels.map(([name, compress]) => {
    const bytes = compress().length;
    const times: number[] = [];
    const until = performance.now() + 500;
    while (times.length < 3 || performance.now() < until) {
      const started = performance.now();
      compress();
      times.push(performance.now() - started);
    }
    return { name, bytes, ms: median(times) };
  });
}

/** The body as sent for this coding, after checking the coding and that it decodes to `identity`. */
async function sentBody(api: HttpClient, path: string, coding: Coding, identity: Buffer): Promise<Buffer> {
  const res = await api.ok(path, { headers: coding.acceptEncoding ? { 'accept-encoding': coding.acceptEncoding } : {} });
  const sent = header(res, 'content-encoding') ?? 'identity';
  if (sent !== coding.label) throw new Error(`GET ${path} with Accept-Encoding ${coding.acceptEncoding ?? '(none)'} answered Content-Encoding ${sent}`);
  const decoded = sent === 'gzip' ? gunzipSync(res.body) : sent === 'br' ? brotliDecompressSync(res.body) : res.body;
  // A JSON:API page carries no per-request data, so the same request gives the same bytes.
  if (!decoded.equals(identity)) throw new Error(`GET ${path} with ${coding.label}: the body does not decode to the identity body`);
  return res.body;
}

async function measureDocument(api: HttpClient): Promise<DocumentFigures> {
  const path = '/v1/openapi.json';
  const identity = (await api.ok(path)).body;
  const refs = (identity.toString('utf8').match(/"\$ref"/g) ?? []).length;
  const rows: DocumentFigures['rows'] = [];
  for (const coding of CODINGS) {
    const bytes = (await sentBody(api, path, coding, identity)).length;
    const times: number[] = [];
    for (let i = 0; i < DOCUMENT_SAMPLES; i++) {
      const started = performance.now();
      await sentBody(api, path, coding, identity);
      times.push(performance.now() - started);
    }
    rows.push({ coding, bytes, medianMs: median(times) });
  }
  return { path, refs, rows };
}

function header(res: HttpResponse, name: string): string | undefined {
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) if (res.rawHeaders[i]!.toLowerCase() === name) return res.rawHeaders[i + 1];
  return undefined;
}

/** The results as a section of bench/RESULTS.md (written by hand there: this prints it). */
export function compressionSection(results: CompressionResult[], heading: string, command: string): string[] {
  const lines = [
    heading,
    '',
    `\`${command}\`, ${new Date().toISOString()}, Node ${process.version}, ${os.cpus().length} cores, load average ` +
      `${os.loadavg().map((l) => l.toFixed(2)).join(' / ')} at the end; the load generator and the server on the same machine, one serving process.`,
    '',
  ];
  for (const result of results) {
    const { dataset } = result;
    lines.push(
      `**${dataset.kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, ${dataset.contacts.toLocaleString('en-US')} contacts**: \`GET ${decodeURIComponent(result.path).replace(/site_id\]=\d+/, 'site_id]=S')}\`. ` +
        'Ratios are to identity within each round; the median of the rounds, and their range:',
      '',
      '| Answer cache | Coding | Bytes | Requests/s | × identity (rounds) | CPU ms a request | × identity (rounds) |',
      '| --- | --- | --: | --: | --: | --: | --: |',
    );
    for (const page of result.pages) {
      const identity = page.loads[0]!;
      for (const load of page.loads) {
        const rpsRatios = load.rps.map((r, i) => r / identity.rps[i]!);
        const cpuRatios = load.cpuMsPerRequest.map((c, i) => c / identity.cpuMsPerRequest[i]!);
        lines.push(
          `| ${page.answerCache ? 'on' : 'off'} | ${load.coding.label} | ${load.bytes.toLocaleString('en-US')} | ${Math.round(median(load.rps)).toLocaleString('en-US')} | ` +
            `${load === identity ? '1' : ratioText(rpsRatios)} | ${median(load.cpuMsPerRequest).toFixed(3)} | ${load === identity ? '1' : ratioText(cpuRatios)} |`,
        );
      }
    }
    lines.push(
      '',
      `One call of zlib on the page's ${result.pages[0]!.loads[0]!.bytes.toLocaleString('en-US')} bytes, in the bench's process (median ms per call):`,
      '',
      '| Coding and level | Bytes | ms |',
      '| --- | --: | --: |',
      ...result.levels.map((l) => `| ${l.name} | ${l.bytes.toLocaleString('en-US')} | ${l.ms.toFixed(2)} |`),
    );
    const doc = result.document;
    lines.push(
      '',
      `\`GET ${doc.path}\` (what \`/docs\` loads; ${doc.refs} \`$ref\`), one request at a time, median of ${DOCUMENT_SAMPLES}:`,
      '',
      '| Coding | Bytes | Time to the last byte |',
      '| --- | --: | --: |',
      ...doc.rows.map((r) => `| ${r.coding.label} | ${r.bytes.toLocaleString('en-US')} | ${r.medianMs.toFixed(1)} ms |`),
      '',
    );
  }
  return lines;
}
