// Concurrent load: `seconds` of requests over `connections` keep-alive connections, with wrk when
// it is installed (a C load generator: it leaves more of the two cores to the servers) and
// autocannon otherwise. Either way the answer is the same LoadResult, and a load in which any
// request failed (an answer from 400 up, a socket error or a timeout) throws.
import autocannon from 'autocannon';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, runToEnd, startChild } from './processes.js';
import { sketchOf, type LatencySketch } from './stats.js';

export type LoadGeneratorName = 'wrk' | 'autocannon';

export interface LoadSpec {
  /** What the report calls it, e.g. "sitebiz GET /v1/contacts". */
  label: string;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** POST only: the body, with every "{{unique}}" replaced by a value unique in the run. */
  bodyTemplate?: string;
  seconds: number;
  connections: number;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  sketch: LatencySketch;
}

export function wrkInstalled(): boolean {
  return spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
}

/** A prefix for unique values, different in every run (kept databases see several runs). */
const RUN_ID = `${Date.now().toString(36)}${process.pid.toString(36)}`;
let loads = 0;
/** ... and in every load of the run: wrk's counters start again at 1 in each. */
const uniquePrefix = () => `${RUN_ID}l${++loads}`;

export async function runLoad(generator: LoadGeneratorName, spec: LoadSpec): Promise<LoadResult> {
  return generator === 'wrk' ? runWrk(spec) : runAutocannon(spec);
}

interface WrkSummary {
  requests: number;
  duration_us: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  quantiles_us: number[];
}

async function runWrk(spec: LoadSpec): Promise<LoadResult> {
  const script = join(ROOT, 'bench', 'wrk', spec.method === 'POST' ? 'post.lua' : 'report.lua');
  const args = ['--threads', '1', '--connections', String(spec.connections), '--duration', `${Math.max(1, Math.round(spec.seconds))}s`, '--timeout', '30s'];
  for (const [name, value] of Object.entries(spec.headers)) args.push('--header', `${name}: ${value}`);
  args.push('--script', script, spec.url);
  if (spec.method === 'POST') args.push('--', spec.bodyTemplate ?? '', uniquePrefix());
  const child = startChild(`wrk (${spec.label})`, 'wrk', args);
  const output = await runToEnd(child, (spec.seconds + 60) * 1000);
  const line = /^WRK_RESULT (.*)$/m.exec(output)?.[1];
  if (!line) throw new Error(`wrk (${spec.label}) printed no result:\n${output}`);
  const summary = JSON.parse(line) as WrkSummary;
  const failed = summary.connect + summary.read + summary.write + summary.status + summary.timeout;
  if (failed > 0 || summary.requests === 0) {
    throw new Error(
      `${spec.label}: not every request succeeded: ${summary.requests} completed, ${summary.status} answered 400 or more, ` +
        `${summary.timeout} timed out, socket errors connect ${summary.connect} / read ${summary.read} / write ${summary.write}`,
    );
  }
  return {
    requests: summary.requests,
    seconds: summary.duration_us / 1e6,
    sketch: { requests: summary.requests, quantilesMs: summary.quantiles_us.map((us) => us / 1000) },
  };
}

function uniqueBodies(template: string): (request: autocannon.Request) => autocannon.Request {
  const prefix = uniquePrefix();
  let counter = 0;
  return (request) => ({ ...request, body: template.replaceAll('{{unique}}', `${prefix}n${++counter}`) });
}

function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = [];
    const instance = autocannon(
      {
        url: spec.url,
        method: spec.method,
        headers: spec.headers,
        connections: spec.connections,
        duration: spec.seconds,
        timeout: 30,
        skipAggregateResult: true,
        // A fresh body per request (autocannon's own idReplacement sends nothing in version 8).
        ...(spec.bodyTemplate !== undefined ? { requests: [{ setupRequest: uniqueBodies(spec.bodyTemplate) }] } : {}),
      },
      (error, result) => {
        if (error) return reject(error);
        const requests = result.totalCompletedRequests ?? 0;
        const failed = result.non2xx + result.errors + result.timeouts + result.resets;
        if (failed > 0 || requests === 0) {
          return reject(
            new Error(
              `${spec.label}: not every request succeeded: ${requests} completed, ${result.non2xx} non-2xx, ${result.errors} errors, ` +
                `${result.timeouts} timeouts; status codes ${JSON.stringify(result.statusCodeStats)}`,
            ),
          );
        }
        resolve({ requests, seconds: result.duration, sketch: sketchOf(latencies) });
      },
    );
    instance.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  });
}
