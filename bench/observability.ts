// The observability suite (`npm run bench -- --suites observability`, issue 24): what metrics
// (METRICS, GET /metrics) and traces (OTEL_EXPORTER_OTLP_ENDPOINT) cost a page of contacts.
//
// Four servers on one dataset, started once: neither, metrics only, traces only, both. Traces go
// to a sink in the bench's process that reads and drops each OTLP export (as a collector on
// another machine would, minus its work), counting the spans' bytes so the run shows they were
// sent. Rounds take the four in every order in turn (the 24 orders of 4, as the compression suite
// does with its codings), so the drift of a shared machine's load hits each alike; each round
// gives its own ratios to "neither", and the median ratio is the figure to read, with requests/s
// and the serving process's CPU time per request from /proc (less sensitive to other work).
// While the load runs, GET /metrics is scraped once a second from the metrics servers, as a
// Prometheus with a 1 s interval would (15 s is the usual).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import type { Dataset } from './datasets.js';
import { HttpClient } from './http-client.js';
import { runLoad, type LoadGeneratorName } from './load.js';
import { cpuMs, HOST, stopChild } from './processes.js';
import { startServer, type RunningServer } from './sitebiz-server.js';
import { median, permutations, ratioText } from './stats.js';

export interface ObservabilityOptions {
  generator: LoadGeneratorName;
  connections: number;
  /** Measured seconds per configuration, split over the rounds. */
  seconds: number;
  rounds: number;
  warmupSeconds: number;
}

interface Configuration {
  label: string;
  metrics: boolean;
  traces: boolean;
}

export const CONFIGURATIONS: readonly Configuration[] = [
  { label: 'neither', metrics: false, traces: false },
  { label: 'metrics', metrics: true, traces: false },
  { label: 'traces', metrics: false, traces: true },
  { label: 'both', metrics: true, traces: true },
];

interface ConfigurationLoad {
  configuration: Configuration;
  rps: number[];
  cpuMsPerRequest: number[];
}

export interface ObservabilityResult {
  dataset: Dataset;
  path: string;
  loads: ConfigurationLoad[];
  /** OTLP exports the sink received, and their bytes. */
  exports: number;
  exportBytes: number;
  /** Bytes of one GET /metrics answer at the end. */
  metricsBytes: number;
}

/** An OTLP/HTTP receiver that reads each export whole and answers 200 with an empty result. */
async function startTraceSink(): Promise<{ server: Server; url: string; exports: () => number; bytes: () => number }> {
  let exports = 0;
  let bytes = 0;
  const server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => (bytes += chunk.length));
    request.on('end', () => {
      exports++;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  return { server, url: `http://${HOST}:${(server.address() as AddressInfo).port}`, exports: () => exports, bytes: () => bytes };
}

export async function measureObservability(dataset: Dataset, options: ObservabilityOptions): Promise<ObservabilityResult> {
  const path = `/v1/contacts?filter%5Bsite_id%5D=${dataset.credentials.siteId}`;
  const sink = await startTraceSink();
  const servers = new Map<Configuration, RunningServer>();
  try {
    for (const configuration of CONFIGURATIONS) {
      const env: NodeJS.ProcessEnv = { ...process.env, METRICS: configuration.metrics ? 'public' : 'off' };
      delete env.OTEL_EXPORTER_OTLP_ENDPOINT;
      delete env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
      if (configuration.traces) Object.assign(env, { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_SERVICE_NAME: 'sitebiz-bench' });
      servers.set(configuration, await startServer(dataset, { workers: '1', readyTimeoutMs: 15 * 60_000, env }));
    }
    const loads: ConfigurationLoad[] = CONFIGURATIONS.map((configuration) => ({ configuration, rps: [], cpuMsPerRequest: [] }));
    const run = async (load: ConfigurationLoad, seconds: number, measured: boolean) => {
      const server = servers.get(load.configuration)!;
      const pid = server.child.process.pid!;
      const scraper = load.configuration.metrics ? scrapeEverySecond(server.baseUrl) : undefined;
      const cpuBefore = cpuMs(pid);
      try {
        const result = await runLoad(options.generator, {
          label: `GET a page of contacts, ${load.configuration.label}`,
          url: server.baseUrl + path,
          method: 'GET',
          headers: { authorization: `Bearer ${server.accessToken}` },
          seconds,
          connections: options.connections,
        });
        if (!measured) return;
        load.rps.push(result.requests / result.seconds);
        load.cpuMsPerRequest.push((cpuMs(pid) - cpuBefore) / result.requests);
        console.log(`    ${load.configuration.label.padEnd(8)}: ${Math.round(result.requests / result.seconds).toLocaleString('en-US')} req/s, ${load.cpuMsPerRequest.at(-1)!.toFixed(3)} ms CPU a request`);
      } finally {
        await scraper?.stop();
      }
    };
    if (options.warmupSeconds > 0) for (const load of loads) await run(load, options.warmupSeconds, false);
    const orders = permutations(loads);
    for (let round = 0; round < options.rounds; round++) {
      for (const load of orders[round % orders.length]!) await run(load, options.seconds / options.rounds, true);
    }
    const metricsServer = servers.get(CONFIGURATIONS[1]!)!;
    const metricsBytes = (await metricsServer.api.ok('/metrics')).body.length;
    return { dataset, path, loads, exports: sink.exports(), exportBytes: sink.bytes(), metricsBytes };
  } finally {
    for (const server of servers.values()) {
      server.api.close();
      await stopChild(server.child);
    }
    await new Promise((resolve) => sink.server.close(resolve));
  }
}

/** GET /metrics once a second until stopped, failing the run if a scrape fails. */
function scrapeEverySecond(baseUrl: string): { stop(): Promise<void> } {
  const client = new HttpClient(baseUrl);
  let failure: Error | undefined;
  const timer = setInterval(() => {
    client.ok('/metrics').catch((error: unknown) => (failure ??= error instanceof Error ? error : new Error(String(error))));
  }, 1_000);
  return {
    async stop() {
      clearInterval(timer);
      client.close();
      if (failure) throw failure;
    },
  };
}

/** The results as a section of bench/RESULTS.md (written by hand there: this prints it). */
export function observabilitySection(results: ObservabilityResult[], heading: string, command: string): string[] {
  const lines = [
    heading,
    '',
    `\`${command}\`, ${new Date().toISOString()}, Node ${process.version}, ${os.cpus().length} cores, load average ` +
      `${os.loadavg().map((l) => l.toFixed(2)).join(' / ')} at the end; the load generator, the trace sink and the server on the same machine, one serving process.`,
    '',
  ];
  for (const result of results) {
    const neither = result.loads[0]!;
    lines.push(
      `**${result.dataset.kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, ${result.dataset.contacts.toLocaleString('en-US')} contacts**: \`GET ${decodeURIComponent(result.path).replace(/site_id\]=\d+/, 'site_id]=S')}\`. ` +
        'Ratios are to "neither" within each round; the median of the rounds, and their range:',
      '',
      '| Metrics | Traces | Requests/s | × neither (rounds) | CPU ms a request | × neither (rounds) |',
      '| --- | --- | --: | --: | --: | --: |',
    );
    for (const load of result.loads) {
      const rpsRatios = load.rps.map((r, i) => r / neither.rps[i]!);
      const cpuRatios = load.cpuMsPerRequest.map((c, i) => c / neither.cpuMsPerRequest[i]!);
      lines.push(
        `| ${load.configuration.metrics ? 'on' : 'off'} | ${load.configuration.traces ? 'on' : 'off'} | ${Math.round(median(load.rps)).toLocaleString('en-US')} | ` +
          `${load === neither ? '1' : ratioText(rpsRatios)} | ${median(load.cpuMsPerRequest).toFixed(3)} | ${load === neither ? '1' : ratioText(cpuRatios)} |`,
      );
    }
    lines.push(
      '',
      `The trace sink received ${result.exports.toLocaleString('en-US')} exports (${(result.exportBytes / 1e6).toFixed(1)} MB); one \`GET /metrics\` answer was ${result.metricsBytes.toLocaleString('en-US')} bytes.`,
      '',
    );
  }
  return lines;
}
