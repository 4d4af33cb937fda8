// The import suite (`npm run bench -- --suites import`): `sitebiz import` of a site seeded with
// `sitebiz seed --contacts N` (--import-contacts, default 100,000) from one local sitebiz into an
// empty database of the same kind, twice: against a clean source, and against the same source
// with the sandbox's faults on every GET (20 % 503 and 5 % 429, both with Retry-After: 1, and
// 200 ms latency on every answer). Target: each under 5 minutes. The import runs as a user runs it
// (`bin/sitebiz.js import --json`, the secret in the environment) with --import-concurrency
// requests in flight (default 16). Printed only: bench/RESULTS.md's section is written by hand.
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { prepareDataset, type DatabaseKind, type DatasetOptions } from './datasets.js';
import { registerUndo, runToEnd, startNode, stopChild } from './processes.js';
import { startServer, type RunningServer } from './sitebiz-server.js';

export interface ImportRun {
  scenario: 'clean' | 'faults';
  seconds: number;
  records: number;
  requests: number;
  retries: number;
  showRequests: number;
}

export interface ImportBenchResult {
  kind: DatabaseKind;
  contacts: number;
  concurrency: number;
  runs: ImportRun[];
}

/** The faults of the faulty run, first match wins (the rate ones fall through when they miss). */
const FAULTS = [
  { method: 'GET', path: '/v1/*', status: 503, rate: 0.2, latency_ms: 200 },
  { method: 'GET', path: '/v1/*', status: 429, rate: 0.05, latency_ms: 200 },
  { method: 'GET', path: '/v1/*', latency_ms: 200 },
];

const TARGET_SECONDS = 300;

export async function measureImport(datasetOptions: DatasetOptions, kind: DatabaseKind, contacts: number, concurrency: number): Promise<ImportBenchResult> {
  const dataset = await prepareDataset(datasetOptions, kind, contacts);
  const server = await startServer(dataset, { workers: undefined, readyTimeoutMs: 15 * 60_000 });
  const runs: ImportRun[] = [];
  try {
    for (const scenario of ['clean', 'faults'] as const) {
      const faultIds = scenario === 'faults' ? await addFaults(server) : [];
      try {
        const target = await emptyTarget(datasetOptions, kind, scenario);
        const args = ['bin/sitebiz.js', 'import', '--from', server.baseUrl, '--client-id', dataset.credentials.clientId];
        args.push('--concurrency', String(concurrency), '--json', '--database-url', target, '--log-level', 'warn');
        const started = performance.now();
        const output = await runToEnd(
          startNode(`sitebiz import (${scenario})`, args, { ...process.env, SITEBIZ_IMPORT_CLIENT_SECRET: dataset.credentials.clientSecret }),
          30 * 60_000,
        );
        const seconds = (performance.now() - started) / 1000;
        const result = JSON.parse(output.trim().split('\n').pop()!) as { counts: Record<string, number>; requests: number; retries: number; show_requests: number };
        const records = Object.values(result.counts).reduce((a, b) => a + b, 0);
        if (result.counts.contacts !== contacts) throw new Error(`the ${scenario} import copied ${result.counts.contacts} contacts of ${contacts}`);
        runs.push({ scenario, seconds, records, requests: result.requests, retries: result.retries, showRequests: result.show_requests });
        console.log(`  ${scenario}: ${seconds.toFixed(1)} s, ${records.toLocaleString('en-US')} records, ${result.requests} requests, ${result.retries} retries`);
      } finally {
        for (const id of faultIds) await server.api.send(`/v1/test_helpers/faults/${id}`, { method: 'DELETE' });
      }
    }
  } finally {
    server.api.close();
    await stopChild(server.child);
  }
  return { kind, contacts, concurrency, runs };
}

async function addFaults(server: RunningServer): Promise<string[]> {
  const ids: string[] = [];
  for (const attributes of FAULTS) {
    const res = await server.api.json<{ data?: { id: string } }>('/v1/test_helpers/faults', {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.api+json' },
      body: JSON.stringify({ data: { type: 'faults', attributes } }),
    });
    if (!res.data) throw new Error(`POST /v1/test_helpers/faults made no fault: ${JSON.stringify(res)}`);
    ids.push(res.data.id);
  }
  return ids;
}

/** An empty database for one import: a file in the run's temp dir, or a PostgreSQL database dropped afterwards. */
async function emptyTarget(options: DatasetOptions, kind: DatabaseKind, scenario: string): Promise<string> {
  if (kind === 'sqlite') return `sqlite:${join(options.tempDir, `import-${scenario}-${Date.now()}.db`)}`;
  const name = `sitebiz_bench_import_${process.pid}_${scenario}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: options.postgresAdminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  registerUndo(`drop PostgreSQL database ${name}`, async () => {
    const client = new pg.Client({ connectionString: options.postgresAdminUrl });
    await client.connect();
    try {
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    } finally {
      await client.end();
    }
  });
  const url = new URL(options.postgresAdminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export function importSection(results: ImportBenchResult[], heading: string, command: string): string[] {
  const lines = [
    heading,
    '',
    `\`${command}\`, ${new Date().toISOString()}, Node ${process.version}, ${os.cpus().length} cores, load average ` +
      `${os.loadavg().map((l) => l.toFixed(2)).join(' / ')} at the end; source (\`sitebiz serve\`), import and target on the same machine.`,
    '',
    '| Database | Contacts | Source | Concurrency | Seconds | Records | Records/s | Requests | Retries | Target |',
    '| --- | --: | --- | --: | --: | --: | --: | --: | --: | --- |',
  ];
  for (const result of results) {
    for (const run of result.runs) {
      lines.push(
        `| ${result.kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'} | ${result.contacts.toLocaleString('en-US')} | ${run.scenario === 'clean' ? 'clean' : '20 % 503, 5 % 429, 200 ms'} | ${result.concurrency} | ` +
          `${run.seconds.toFixed(1)} | ${run.records.toLocaleString('en-US')} | ${Math.round(run.records / run.seconds).toLocaleString('en-US')} | ` +
          `${run.requests.toLocaleString('en-US')} | ${run.retries.toLocaleString('en-US')} | ${run.seconds <= TARGET_SECONDS ? 'met' : 'MISSED'} (under ${TARGET_SECONDS / 60} min) |`,
      );
    }
  }
  return lines;
}
