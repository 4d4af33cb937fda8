// `npm run bench`: every figure of the scale targets (issue 7) in one command, for each database
// (SQLite, PostgreSQL) and each size of site (10,000 and 1,000,000 contacts by default):
//
//   0. a dataset seeded with `sitebiz seed` and timed (4), or reused from --keep;
//   1. sitebiz in a child process; the facts the requests need, asked of its API;
//   2. a page of contacts at 10 connections against the serialization floor (1; bench/floor.ts);
//   3. common requests one at a time, median latency per size (2; bench/flat-cost.ts);
//   4. every contact walked with cursors and with page[number] (3; bench/bulk-sync.ts);
//   5. POST /v1/contacts sustained (5; bench/writes.ts);
//   and all along, the server's RSS per process (6; bench/memory.ts);
// then, per database, webhook delivery: deliveries per second and commit-to-first-attempt latency
// (issue 9), and one account's deliveries beside another's stalled hooks (issue 21; both in
// bench/webhook-delivery.ts, the latter alone with --suites webhook-fairness); then, per database, the sandbox's reset and snapshots: the
// demo account's reset (target under 1 s) and an account of --sandbox-contacts contacts seeded,
// reset, saved, restored (bench/snapshots.ts); and the start-up suite, only when asked for: how
// long commands take from launch (bench/startup.ts); and the balancer suite, only when asked for:
// 1, 2 and 3 processes behind HAProxy on PostgreSQL (bench/balancer.ts); and, only when asked
// for, the compression suite: a page of contacts identity, gzip and br (bench/compression.ts), and
// the reference-page suite: /docs against the other reference pages in Chromium, printed only
// (bench/reference-page.ts). `--suites` picks any.
// Then the report (bench/report.ts) on stdout, and with --write in bench/RESULTS.md.
// Everything is on 127.0.0.1. Any non-2xx answer fails the run with the request and the answer.
// Children, temp files and the run's PostgreSQL databases are removed on success, error, the
// --time-limit and Ctrl-C (bench/processes.ts).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { balancerSection, DEFAULT_BALANCER_CONFIGURATIONS, measureBalancer, type BalancerResult } from './balancer.js';
import { REPLICA_PROGRAMS, StreamingReplica } from '../test/support/replica.js';
import { measureBulkSync } from './bulk-sync.js';
import { compressionSection, measureCompression, type CompressionResult } from './compression.js';
import { detectSeedTool, prepareDataset, type Dataset, type DatasetOptions } from './datasets.js';
import { measureFlatCost, shapesFor } from './flat-cost.js';
import { measureFloor } from './floor.js';
import { MemorySampler } from './memory.js';
import { parseOptions, USAGE, UsageError, type Options } from './options.js';
import { cleanup, registerTempDir, registerUndo, ROOT, stopChild } from './processes.js';
import { renderReport, type DatasetResult, type SandboxResult, type WebhookResult } from './report.js';
import { learnSiteFacts } from './site-facts.js';
import { createWriteSite, startServer } from './sitebiz-server.js';
import { measureSandbox } from './snapshots.js';
import { measureReferencePages, referencePageSection, type ReferencePageResult } from './reference-page.js';
import { measureStartup, startupSection, type StartupResult } from './startup.js';
import { measureTenantFairness, measureWebhookDelivery } from './webhook-delivery.js';
import { measureWrites } from './writes.js';
import { importSection, measureImport, type ImportBenchResult } from './import.js';
import { measureObservability, observabilitySection, type ObservabilityResult } from './observability.js';

/** Contacts of the site the webhook measure writes its events in. */
const WEBHOOK_SITE_CONTACTS = 1000;

async function measureDataset(dataset: Dataset, options: Options, workDir: string): Promise<DatasetResult> {
  const writeSiteId = await createWriteSite(dataset);
  // Every measure but the first floor comparison runs with the answer cache off: they measure what
  // reading costs (the same request many times over would otherwise be answered from the cache).
  const cached = await startServer(dataset, { workers: options.workers, readyTimeoutMs: 15 * 60_000 });
  let server = cached;
  let memory = new MemorySampler(server.child.process.pid!);
  try {
    memory.phase('start-up and set-up requests');
    const facts = await learnSiteFacts(server.api, dataset.credentials.siteId);
    memory.pause();
    console.log(`  site ${facts.siteId}: ${facts.contacts.toLocaleString('en-US')} contacts; tag ${facts.tagId}, name ${facts.commonName}, customer ${facts.customerId}`);

    const shapes = shapesFor(facts);
    const floorTargets = [shapes[0]!, shapes.find((s) => s.key.startsWith('GET /v1/customers?'))!].map((s) => ({
      name: s.key === shapes[0]!.key ? `GET /v1/contacts?filter[site_id]=S&page[size]=25` : s.key,
      path: s.path!,
    }));
    const floorOptions = {
      generator: options.generator,
      connections: options.connections,
      seconds: options.duration,
      rounds: options.rounds,
      warmupSeconds: options.warmup,
      workDir,
    };
    console.log('  floor comparison, answer cache on');
    const floor = await measureFloor(server, floorTargets, memory, floorOptions, true);
    memory.stop();
    server.api.close();
    await stopChild(server.child);
    server = await startServer(dataset, { workers: options.workers, readyTimeoutMs: 15 * 60_000, extraArgs: ['--answer-cache-mb', '0'] });
    memory = new MemorySampler(server.child.process.pid!);
    console.log('  floor comparison, answer cache off');
    floor.push(...(await measureFloor(server, floorTargets, memory, floorOptions, false)));
    console.log('  flat cost');
    const flat = await measureFlatCost(server.api, shapes, memory, { samples: options.samples, secondsPerShape: options.sampleSeconds });
    console.log('  bulk sync');
    const bulk = await measureBulkSync(server.api, facts.siteId, memory, { cursorSeconds: options.walkSeconds, pageNumberSeconds: options.pageWalkSeconds });
    console.log('  writes');
    const writes = await measureWrites(server, writeSiteId, memory, {
      generator: options.generator,
      connections: options.connections,
      seconds: options.duration,
      warmupSeconds: options.warmup,
    });
    memory.stop();
    return { dataset, floor, flat, bulk, writes, memory: memory.results() };
  } finally {
    memory.stop();
    server.api.close();
    await stopChild(server.child);
  }
}

const START_UP = '## Start-up';
const COMPRESSION = '## Compression: a page of 100 contacts and the OpenAPI document';
const BALANCER = '## Several processes behind HAProxy';
const IMPORT = '## Import: a seeded site from one sitebiz into another';
const REFERENCE_PAGE = '## The reference page: time to the first operation';
const OBSERVABILITY = '## Metrics and traces: what they cost a page of contacts';

/**
 * `text` with the section under `heading` (up to the next `## `) replaced by `lines`; a new
 * section goes before `before` when that heading exists, else at the end.
 */
function spliceSection(text: string, heading: string, lines: string[], before?: string): string {
  const section = lines.join('\n');
  const at = text.indexOf(`\n${heading}\n`);
  if (at >= 0) {
    const next = text.indexOf('\n## ', at + 1);
    return `${text.slice(0, at + 1)}${section}${next < 0 ? '' : text.slice(next)}`;
  }
  const beforeAt = before ? text.indexOf(`\n${before}\n`) : -1;
  if (beforeAt >= 0) return `${text.slice(0, beforeAt + 1)}${section}${text.slice(beforeAt)}`;
  return `${text.trimEnd()}\n\n${section}`;
}

async function main(options: Options, command: string): Promise<number> {
  const startedAt = new Date();
  const loadAtStart = os.loadavg();
  const workDir = mkdtempSync(join(os.tmpdir(), 'sitebiz-bench-'));
  registerTempDir(workDir);
  const seedTool = await detectSeedTool();
  if (seedTool !== 'seed') console.log('`sitebiz seed` is not available: seeding with `init --demo --contacts N` (slow at large sizes)');
  const datasetOptions: DatasetOptions = {
    tempDir: workDir,
    keepDir: options.keepDir,
    postgresAdminUrl: options.postgresUrl,
    seedTool,
    seed: options.seed,
    seedTimeoutMs: 30 * 60_000,
  };

  const results: DatasetResult[] = [];
  if (options.suites.includes('scale')) {
    for (const kind of options.databases) {
      for (const contacts of options.sizes) {
        const dataset = await prepareDataset(datasetOptions, kind, contacts);
        console.log(`${kind}, ${contacts.toLocaleString('en-US')} contacts: measuring`);
        results.push(await measureDataset(dataset, options, workDir));
      }
    }
  }
  const webhooks: WebhookResult[] = [];
  const fairness = options.suites.includes('webhooks') || options.suites.includes('webhook-fairness');
  if (fairness) {
    for (const kind of options.databases) {
      const result: WebhookResult = { kind };
      if (options.suites.includes('webhooks')) {
        // A small database of its own, never kept: the measure adds thousands of contacts to it.
        const dataset = await prepareDataset({ ...datasetOptions, keepDir: undefined }, kind, WEBHOOK_SITE_CONTACTS);
        console.log(`${kind}: webhook delivery`);
        result.figures = await measureWebhookDelivery(dataset, { events: options.webhookEvents, latencySamples: options.webhookLatencySamples, connections: options.connections });
      }
      if (fairness) {
        // Made again: the delivery measure's hooks are not wanted here.
        const dataset = await prepareDataset({ ...datasetOptions, keepDir: undefined }, kind, WEBHOOK_SITE_CONTACTS);
        console.log(`${kind}: webhook fairness between accounts`);
        result.fairness = await measureTenantFairness(dataset, { samples: options.webhookFairnessSamples, maxSeconds: options.webhookFairnessSeconds });
      }
      webhooks.push(result);
    }
  }
  const sandbox: SandboxResult[] = [];
  if (options.suites.includes('sandbox')) {
    for (const kind of options.databases) {
      console.log(`${kind}: sandbox reset and snapshots`);
      const figures = await measureSandbox(kind, { contacts: options.sandboxContacts, seed: options.seed, tempDir: workDir, postgresUrl: options.postgresUrl });
      sandbox.push({ kind, figures });
    }
  }

  let startup: StartupResult | undefined;
  if (options.suites.includes('startup')) {
    console.log('start-up');
    const trees = [{ label: 'this checkout', dir: ROOT }, ...(options.startupCompare ? [{ label: 'compared', dir: options.startupCompare }] : [])];
    startup = await measureStartup(trees, options.startupRuns);
  }
  let balancer: BalancerResult | undefined;
  if (options.suites.includes('balancer')) {
    // With PostgreSQL's server programs at hand, the data goes on a primary of the bench's own with
    // a streaming replica (test/support/replica.ts), and every configuration runs again with the
    // replica serving reads (DATABASE_REPLICA_URL).
    const pair = REPLICA_PROGRAMS ? await StreamingReplica.start() : undefined;
    // Undone last (steps run in reverse), after the dataset's database on it is dropped.
    if (pair) registerUndo('stop the primary and replica of the balancer suite', () => pair.close());
    else console.log('no PostgreSQL server programs (initdb, pg_basebackup): the balancer suite runs without a replica');
    const dataset = await prepareDataset(pair ? { ...datasetOptions, keepDir: undefined, postgresAdminUrl: pair.primaryUrl('postgres') } : datasetOptions, 'postgres', options.sizes[0]!);
    console.log(`postgres, ${dataset.contacts.toLocaleString('en-US')} contacts: processes behind HAProxy${pair ? ', without and with a read replica' : ''}`);
    const replicaUrl = pair?.replicaUrl(new URL(dataset.url).pathname.slice(1));
    balancer = await measureBalancer(dataset, {
      generator: options.generator,
      connections: options.connections,
      seconds: options.duration,
      rounds: options.rounds,
      warmupSeconds: options.warmup,
      configurations: [
        ...DEFAULT_BALANCER_CONFIGURATIONS,
        ...(replicaUrl ? DEFAULT_BALANCER_CONFIGURATIONS.map((c) => ({ ...c, label: `${c.label}, replica`, env: { DATABASE_REPLICA_URL: replicaUrl } })) : []),
      ],
    });
  }
  const imports: ImportBenchResult[] = [];
  if (options.suites.includes('import')) {
    for (const kind of options.databases) {
      console.log(`${kind}: sitebiz import of ${options.importContacts.toLocaleString('en-US')} contacts, clean and with faults`);
      // A source of its own, never kept: the faulty run leaves faults' hits in its journal.
      imports.push(await measureImport({ ...datasetOptions, keepDir: undefined }, kind, options.importContacts, options.importConcurrency));
    }
  }
  // Printed only: bench/RESULTS.md's import section is written by hand.
  const importLines = imports.length > 0 ? importSection(imports, IMPORT, command) : [];
  const compression: CompressionResult[] = [];
  if (options.suites.includes('compression')) {
    for (const kind of options.databases) {
      const dataset = await prepareDataset(datasetOptions, kind, options.sizes[0]!);
      console.log(`${kind}, ${dataset.contacts.toLocaleString('en-US')} contacts: compression`);
      compression.push(
        await measureCompression(dataset, { generator: options.generator, connections: options.connections, seconds: options.duration, rounds: options.rounds, warmupSeconds: options.warmup }),
      );
    }
  }
  // Printed only: bench/RESULTS.md keeps its compression figures in a section written by hand.
  const compressionLines = compression.length > 0 ? compressionSection(compression, COMPRESSION, command) : [];
  const observability: ObservabilityResult[] = [];
  if (options.suites.includes('observability')) {
    for (const kind of options.databases) {
      const dataset = await prepareDataset(datasetOptions, kind, options.sizes[0]!);
      console.log(`${kind}, ${dataset.contacts.toLocaleString('en-US')} contacts: metrics and traces`);
      observability.push(
        await measureObservability(dataset, { generator: options.generator, connections: options.connections, seconds: options.duration, rounds: options.rounds, warmupSeconds: options.warmup }),
      );
    }
  }
  // Printed only, like compression: its section of bench/RESULTS.md is written by hand.
  const observabilityLines = observability.length > 0 ? observabilitySection(observability, OBSERVABILITY, command) : [];
  let referencePages: ReferencePageResult | undefined;
  if (options.suites.includes('reference-page')) {
    console.log('reference page');
    referencePages = await measureReferencePages(options.referenceRuns);
  }
  // Printed, never written: bench/RESULTS.md's section on it is written by hand (issue 22).
  const referenceLines = referencePages ? [REFERENCE_PAGE, '', `\`${command}\`, ${new Date().toISOString()}.`, ...referencePageSection(referencePages), ''] : [];
  const printedOnly: readonly string[] = ['compression', 'reference-page', 'import', 'observability'];
  if ((compression.length > 0 || referencePages || imports.length > 0 || observability.length > 0) && options.suites.every((suite) => printedOnly.includes(suite))) {
    console.log(`\n${[...compressionLines, ...referenceLines, ...importLines, ...observabilityLines].join('\n')}`);
    return 0;
  }
  const startupLines = startup
    ? [START_UP, '', `\`${command}\`, ${new Date().toISOString()}, Node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' / ')} at the end.`, '', ...startupSection(startup), '']
    : [];
  const balancerLines = balancer ? balancerSection(balancer, BALANCER, command) : [];
  if ((startup || balancer) && options.suites.every((suite) => suite === 'startup' || suite === 'balancer' || suite === 'reference-page')) {
    // These figures alone: printed, and with --write put in their own sections of the results
    // file, leaving the other sections as they are.
    console.log(`\n${[...balancerLines, ...startupLines, ...referenceLines].join('\n')}`);
    if (options.write) {
      let current = readFileSync(options.resultsFile, 'utf8');
      if (balancer) current = spliceSection(current, BALANCER, balancerLines, START_UP);
      if (startup) current = spliceSection(current, START_UP, startupLines);
      writeFileSync(options.resultsFile, current);
      console.log(`\nwrote the ${options.suites.join(' and ')} section of ${options.resultsFile}`);
    }
    return 0;
  }

  const report = [
    renderReport(results, webhooks, sandbox, {
      options,
      command,
      startedAt,
      seconds: (Date.now() - startedAt.getTime()) / 1000,
      loadAtStart,
      loadAtEnd: os.loadavg(),
    }),
    ...(balancer ? ['', ...balancerLines] : []),
    ...(compression.length > 0 ? ['', ...compressionLines] : []),
    ...(startup ? ['', START_UP, '', ...startupSection(startup), ''] : []),
  ].join('\n');
  if (referencePages) console.log(`\n${referenceLines.join('\n')}`);
  if (importLines.length > 0) console.log(`\n${importLines.join('\n')}`);
  console.log(`\n${report}`);
  const problems = results.flatMap((r) => r.bulk.problems.map((p) => `${r.dataset.kind}, ${r.dataset.contacts} contacts: ${p}`));
  if (problems.length > 0) {
    console.error(`\nbench failed: wrong answers\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    return 1;
  }
  if (options.write) {
    writeFileSync(options.resultsFile, report);
    console.log(`\nwrote ${options.resultsFile}`);
  }
  return 0;
}

async function entry(): Promise<number> {
  const argv = process.argv.slice(2);
  let options: Options | undefined;
  try {
    options = parseOptions(argv);
  } catch (error) {
    if (!(error instanceof UsageError) && !(error instanceof TypeError)) throw error;
    console.error(`${error.message}\n${USAGE}`);
    return 2;
  }
  if (!options) {
    console.log(USAGE);
    return 0;
  }

  let stopping = false;
  const stopAll = (reason: string) => {
    if (stopping) return; // a second Ctrl-C (or the launcher passing one on) changes nothing
    stopping = true;
    console.error(`\nbench: ${reason}; stopping`);
    void cleanup().finally(() => process.exit(1));
  };
  const watchdog = setTimeout(() => stopAll(`still running after the --time-limit of ${options.timeLimitMinutes} min`), options.timeLimitMinutes * 60_000);
  watchdog.unref();
  process.on('SIGINT', () => stopAll('interrupted'));
  process.on('SIGTERM', () => stopAll('terminated'));

  try {
    return await main(options, `npm run bench${argv.length > 0 ? ` -- ${argv.join(' ')}` : ''}`);
  } catch (error) {
    if (!stopping) console.error(`\nbench failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    clearTimeout(watchdog);
    await cleanup();
  }
}

// Exit explicitly: a stray socket or timer must not keep a finished run alive.
process.exit(await entry());
