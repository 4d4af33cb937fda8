// Target 1: requests/s of sitebiz as a share of the serialization floor (bench/raw-server.ts
// sending the same document with JSON.stringify), under concurrent load, interleaved in one run:
// warm-up, then rounds alternating the order (sitebiz, raw / raw, sitebiz, ...: ABBA), so slow
// drift of the machine's load hits both servers alike.
import { writeFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { HttpClient, responseHeaderPairs } from './http-client.js';
import { runLoad, type LoadGeneratorName } from './load.js';
import type { MemorySampler } from './memory.js';
import { HOST, startNode, stopChild, waitForLine } from './processes.js';
import type { RecordedResponse } from './raw-server.js';
import type { RunningServer } from './sitebiz-server.js';
import { mergedPercentile, type LatencySketch } from './stats.js';

export interface FloorTarget {
  name: string;
  /** Path and query string; unique among the targets (the raw server tells them apart by it). */
  path: string;
}

export interface ServerFigures {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
}

export interface FloorRow {
  target: FloorTarget;
  /** Whether sitebiz ran with its answer cache (ANSWER_CACHE_MB, on by default). */
  answerCache: boolean;
  sitebiz: ServerFigures;
  raw: ServerFigures;
}

export interface FloorOptions {
  generator: LoadGeneratorName;
  connections: number;
  /** Measured seconds per target and server, split over the rounds. */
  seconds: number;
  rounds: number;
  warmupSeconds: number;
  /** Where the recorded responses are written for the raw server. */
  workDir: string;
}

export async function measureFloor(server: RunningServer, targets: FloorTarget[], memory: MemorySampler, options: FloorOptions, answerCache: boolean): Promise<FloorRow[]> {
  const recorded: RecordedResponse[] = [];
  for (const target of targets) {
    const res = await server.api.ok(target.path);
    recorded.push({ path: target.path, status: res.status, headers: responseHeaderPairs(res.rawHeaders), body: res.body.toString('utf8') });
  }
  const responsesFile = `${options.workDir}/floor-responses-${process.hrtime.bigint()}.json`;
  writeFileSync(responsesFile, JSON.stringify(recorded));
  const raw = startNode('raw server', ['--import', 'tsx', 'bench/raw-server.ts', responsesFile]);
  try {
    const rawUrl = `http://${HOST}:${(await waitForLine(raw, /^listening (\d+)$/m, 30_000))[1]}`;
    await checkSameAnswers(rawUrl, server, targets, recorded);

    const urls = { sitebiz: server.baseUrl, raw: rawUrl };
    const headers = { authorization: `Bearer ${server.accessToken}` };
    const perRound = options.seconds / options.rounds;
    const sketches = new Map<string, { sketches: LatencySketch[]; requests: number; seconds: number }>();
    const run = async (name: 'sitebiz' | 'raw', target: FloorTarget, seconds: number, measured: boolean) => {
      const result = await runLoad(options.generator, {
        label: `${name} ${target.name}`,
        url: urls[name] + target.path,
        method: 'GET',
        headers,
        seconds,
        connections: options.connections,
      });
      if (!measured) return;
      const key = `${name} ${target.path}`;
      const entry = sketches.get(key) ?? { sketches: [], requests: 0, seconds: 0 };
      entry.sketches.push(result.sketch);
      entry.requests += result.requests;
      entry.seconds += result.seconds;
      sketches.set(key, entry);
      console.log(`    ${name.padEnd(7)} ${target.name}: ${Math.round(result.requests / result.seconds).toLocaleString('en-US')} req/s`);
    };

    memory.phase(`${options.connections} connections: GET list vs floor`);
    for (const target of targets) {
      if (options.warmupSeconds > 0) {
        await run('sitebiz', target, options.warmupSeconds, false);
        await run('raw', target, options.warmupSeconds, false);
      }
    }
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? (['sitebiz', 'raw'] as const) : (['raw', 'sitebiz'] as const);
      for (const target of targets) for (const name of order) await run(name, target, perRound, true);
    }
    memory.pause();

    const figures = (name: string, target: FloorTarget): ServerFigures => {
      const entry = sketches.get(`${name} ${target.path}`)!;
      return {
        rps: entry.requests / entry.seconds,
        p50: mergedPercentile(entry.sketches, 50),
        p99: mergedPercentile(entry.sketches, 99),
        requests: entry.requests,
      };
    };
    return targets.map((target) => ({ target, answerCache, sitebiz: figures('sitebiz', target), raw: figures('raw', target) }));
  } finally {
    await stopChild(raw);
  }
}

/** The floor must answer what sitebiz answered: same status, same document, same headers. */
async function checkSameAnswers(rawUrl: string, server: RunningServer, targets: FloorTarget[], recorded: RecordedResponse[]): Promise<void> {
  const client = new HttpClient(rawUrl, { authorization: `Bearer ${server.accessToken}` });
  try {
    // x-request-id is fresh per request; Content-Length is computed per response by both.
    const comparable = (pairs: Array<[string, string]>) =>
      pairs.filter(([name]) => !['x-request-id', 'content-length'].includes(name.toLowerCase()));
    for (const [i, target] of targets.entries()) {
      const res = await client.send(target.path);
      const want = recorded[i]!;
      const same =
        res.status === want.status &&
        isDeepStrictEqual(JSON.parse(res.body.toString('utf8')), JSON.parse(want.body)) &&
        isDeepStrictEqual(comparable(responseHeaderPairs(res.rawHeaders)), comparable(want.headers));
      if (!same) throw new Error(`the raw server's answer to ${target.name} differs from sitebiz's`);
    }
  } finally {
    client.close();
  }
}
