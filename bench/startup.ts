// The start-up suite (`npm run bench -- --suites startup`): how long a person waits for a command,
// from launch to its answer, each the median of --startup-runs launches (default 5):
//
//   - `sitebiz --help` and `sitebiz <command> --help` for a few commands, to exit;
//   - `sitebiz trigger purchase` against a running server on the demo database, to exit;
//   - `sitebiz serve` on an existing database and on a new one (migrations and the demo data),
//     to the first 200 of GET /v1/version;
//   - `sitebiz serve --workers 2`, to the line that says every worker listens and a 200.
//
// With --startup-compare <dir> the same launches run against another checkout too (an older
// commit with its own node_modules), alternating launch by launch, so both columns of a row share
// the machine's load of that moment: their ratio is the figure to read on a busy machine.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { HttpClient } from './http-client.js';
import { freePort, HOST, isRunning, registerTempDir, ROOT, runToEnd, sleep, startNode, stopChild, waitForLine, type Child } from './processes.js';
import { median } from './stats.js';

export interface StartupTree {
  label: string;
  dir: string;
}

export interface StartupRow {
  name: string;
  target: string;
  targetMs: number;
  /** Median milliseconds per tree, in the order of the trees. */
  medians: number[];
}

export interface StartupResult {
  trees: StartupTree[];
  runs: number;
  rows: StartupRow[];
}

/** What each launch measures, and the target it is held to (issue 18). */
const HELP_COMMANDS = [['keys', 'create'], ['trigger'], ['serve'], ['seed']];

export async function measureStartup(trees: StartupTree[], runs: number): Promise<StartupResult> {
  const work = mkdtempSync(join(os.tmpdir(), 'sitebiz-startup-'));
  registerTempDir(work);
  const rows: StartupRow[] = [];
  const row = async (name: string, target: string, targetMs: number, launch: (tree: StartupTree, index: number) => Promise<number>) => {
    const samples: number[][] = trees.map(() => []);
    for (let run = 0; run < runs; run++) {
      for (const [index, tree] of trees.entries()) samples[index]!.push(await launch(tree, run));
    }
    const medians = samples.map((s) => median(s));
    rows.push({ name, target, targetMs, medians });
    console.log(`  ${name}: ${medians.map((m, i) => `${trees[i]!.label} ${Math.round(m)} ms`).join(', ')}`);
  };

  // Every tree builds whatever it builds before the first launch is timed.
  for (const tree of trees) await timeCommand(tree, ['--help']);

  await row('`sitebiz --help`', 'under 500 ms', 500, (tree) => timeCommand(tree, ['--help']));
  for (const words of HELP_COMMANDS) {
    await row(`\`sitebiz ${words.join(' ')} --help\``, 'under 500 ms', 500, (tree) => timeCommand(tree, [...words, '--help']));
  }

  // One demo database per tree, made by its own serve (the new-database launch below makes more).
  const databases = trees.map((tree, i) => `sqlite:${join(work, `existing-${i}.db`)}`);
  for (const [i, tree] of trees.entries()) {
    const server = await startServe(tree, databases[i]!, []);
    await stopChild(server.child);
  }

  const servers = await Promise.all(trees.map((tree, i) => startServe(tree, databases[i]!, [])));
  try {
    await row('`sitebiz trigger purchase` against a running server', 'under 1,500 ms', 1500, (tree, _run) =>
      timeCommand(tree, ['trigger', 'purchase', '--database-url', databases[trees.indexOf(tree)]!, '--json']),
    );
  } finally {
    await Promise.all(servers.map((s) => stopChild(s.child)));
  }

  await row('`npm start` on an existing database, to the first 200', 'under 1,500 ms', 1500, async (tree) => {
    const server = await startServe(tree, databases[trees.indexOf(tree)]!, []);
    await stopChild(server.child);
    return server.readyMs;
  });
  await row('`npm start` on a new database (migrations, demo data), to the first 200', 'under 3,000 ms', 3000, async (tree, run) => {
    const file = join(work, `new-${trees.indexOf(tree)}-${run}.db`);
    const server = await startServe(tree, `sqlite:${file}`, []);
    await stopChild(server.child);
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
    return server.readyMs;
  });
  await row('`sitebiz serve --workers 2`, every worker listening and a 200', 'under 2,000 ms', 2000, async (tree) => {
    const server = await startServe(tree, databases[trees.indexOf(tree)]!, ['--workers', '2']);
    await stopChild(server.child);
    return server.readyMs;
  });
  return { trees, runs, rows };
}

/** Launch to exit of `node bin/sitebiz.js <args>` in the tree. */
async function timeCommand(tree: StartupTree, args: string[]): Promise<number> {
  const started = performance.now();
  await runToEnd(startNode(`sitebiz ${args.join(' ')} (${tree.label})`, [join(tree.dir, 'bin/sitebiz.js'), ...args], sitebizEnv()), 120_000);
  return performance.now() - started;
}

/** No setting from the bench's own environment reaches the measured command. */
function sitebizEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn' };
  return env;
}

/**
 * `serve` on a free port, timed from launch to its first 200 of GET /v1/version (with --workers,
 * also to the primary's line that every worker listens).
 */
async function startServe(tree: StartupTree, databaseUrl: string, extra: string[]): Promise<{ child: Child; readyMs: number }> {
  const port = await freePort();
  const started = performance.now();
  const child = startNode(`sitebiz serve (${tree.label})`, [join(tree.dir, 'bin/sitebiz.js'), 'serve', '--port', String(port), '--host', HOST, '--database-url', databaseUrl, ...extra], {
    ...sitebizEnv(),
    LOG_LEVEL: 'info',
  });
  const allListening = extra.includes('--workers') ? waitForLine(child, /every worker is listening/, 60_000) : Promise.resolve();
  const client = new HttpClient(`http://${HOST}:${port}`);
  try {
    for (;;) {
      if (!isRunning(child)) throw new Error(`${child.name} exited before it answered:\n${child.output()}`);
      try {
        if ((await client.send('/v1/version', { timeoutMs: 5000 })).status === 200) break;
      } catch {
        // not listening yet
      }
      if (performance.now() - started > 60_000) throw new Error(`${child.name} did not answer within 60 s:\n${child.output()}`);
      await sleep(10);
    }
    await allListening;
    return { child, readyMs: performance.now() - started };
  } finally {
    client.close();
  }
}

export function startupSection(result: StartupResult): string[] {
  const { trees } = result;
  const header = `| Launch (median of ${result.runs}) | Target | ${trees.map((t) => t.label).join(' | ')} |${trees.length > 1 ? ` ${trees[1]!.label} ÷ ${trees[0]!.label} |` : ''}`;
  const lines = [header, `|---|---|${trees.map(() => '--:|').join('')}${trees.length > 1 ? '--:|' : ''}`];
  for (const row of result.rows) {
    const cells = row.medians.map((m, i) => {
      const text = `${Math.round(m).toLocaleString('en-US')} ms`;
      return i === 0 ? `${text} ${m < row.targetMs ? 'met' : '**missed**'}` : text;
    });
    const ratio = trees.length > 1 ? ` ${(row.medians[1]! / row.medians[0]!).toFixed(1)}× |` : '';
    lines.push(`| ${row.name} | ${row.target} | ${cells.join(' | ')} |${ratio}`);
  }
  const where = trees.map((t) => `${t.label}: \`${t.dir === ROOT ? 'this checkout' : t.dir}\``).join('; ');
  return [...lines, '', `Trees: ${where}. Each launch is a new process; "met" compares the first tree with the target.`];
}
