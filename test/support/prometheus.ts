// Prometheus for the metrics tests: reading samples out of the text format, Debian's promtool to
// validate it, and a real Prometheus server (its own configuration and storage in a temporary
// folder, on a free port) that scrapes a running sitebiz. In CI a missing binary fails the tests
// instead of skipping them (.ci/run installs Debian's `prometheus` package).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

export const PROMTOOL_PATH = process.env.PROMTOOL_PATH || '/usr/bin/promtool';
export const PROMETHEUS_PATH = process.env.PROMETHEUS_PATH || '/usr/bin/prometheus';

function missing(path: string, what: string): string | false {
  try {
    accessSync(path, constants.X_OK);
    return false;
  } catch {
    return process.env.CI ? false : `no ${what} at ${path} (apt-get install -y prometheus)`;
  }
}

/** Why promtool checks cannot run here, or false. */
export const PROMTOOL_SKIP = missing(PROMTOOL_PATH, 'promtool');
/**
 * Why the Prometheus scrape test cannot run here, or false. TEST_PROMETHEUS_SERVER=off skips it:
 * CI's Node 24 run does, since what it tests (Prometheus reading sitebiz's text format over a
 * minute of load) no Node version changes, and the Node 20 run has done it; promtool's checks
 * of the same text still run there.
 */
export const PROMETHEUS_SKIP: string | false =
  process.env.TEST_PROMETHEUS_SERVER === 'off' ? 'TEST_PROMETHEUS_SERVER=off: another run of this CI ran it' : missing(PROMETHEUS_PATH, 'Prometheus');

/** `promtool check metrics` on a scrape: its exit code and what it said (lint problems included). */
export function promtoolCheckMetrics(text: string): { status: number | null; output: string } {
  const run = spawnSync(PROMTOOL_PATH, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (run.error) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** `promtool check rules` on a rules file's text. */
export function promtoolCheckRules(yaml: string): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sitebiz-rules-'));
  try {
    const file = join(dir, 'rules.yml');
    writeFileSync(file, yaml);
    const run = spawnSync(PROMTOOL_PATH, ['check', 'rules', file], { encoding: 'utf8' });
    if (run.error) throw run.error;
    return { status: run.status, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The value of one sample of the text format: `name` with exactly these labels (in any order);
 * undefined when absent.
 */
export function sampleValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
    const keys = Object.keys(labels);
    if (keys.length !== Object.keys(found).length || keys.some((k) => found[k] !== labels[k])) continue;
    return Number(match[3]);
  }
  return undefined;
}

/** Every label set of a metric's samples. */
export function labelSets(text: string, name: string): Array<Record<string, string>> {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`))
    .map((line) => Object.fromEntries([...line.slice(line.indexOf('{')).matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!])));
}

/** A Prometheus server of the test's own, scraping one target every second. */
export class PrometheusServer {
  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    readonly url: string,
    readonly output: () => string,
  ) {}

  static async start(target: { host: string; port: number; bearerToken?: string }): Promise<PrometheusServer> {
    accessSync(PROMETHEUS_PATH, constants.X_OK);
    const dir = mkdtempSync(join(tmpdir(), 'sitebiz-prometheus-'));
    const config = [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'scrape_configs:',
      '  - job_name: sitebiz',
      '    scrape_timeout: 1s',
      ...(target.bearerToken ? ['    authorization:', '      type: Bearer', `      credentials: ${target.bearerToken}`] : []),
      '    static_configs:',
      `      - targets: ['${target.host}:${target.port}']`,
      '',
    ].join('\n');
    writeFileSync(join(dir, 'prometheus.yml'), config);
    const port = await freePort();
    const child = spawn(
      PROMETHEUS_PATH,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
    const server = new PrometheusServer(child, dir, `http://127.0.0.1:${port}`, () => output);
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}): ${output}`);
      const ready = await fetch(`${server.url}/-/ready`).then((r) => r.ok, () => false);
      if (ready) return server;
      if (Date.now() > deadline) {
        await server.stop();
        throw new Error(`prometheus not ready within 20 s: ${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** An instant query's vector result (metric labels and value). */
  async query(expression: string): Promise<Array<{ metric: Record<string, string>; value: number }>> {
    const res = await fetch(`${this.url}/api/v1/query?${new URLSearchParams({ query: expression })}`);
    const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
    if (body.status !== 'success' || !body.data) throw new Error(`query ${expression} failed: ${body.error ?? res.status}`);
    return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  }

  /** The scrape target's health as Prometheus last saw it. */
  async targetHealth(): Promise<{ health: string; lastError: string }> {
    const body = (await (await fetch(`${this.url}/api/v1/targets`)).json()) as { data: { activeTargets: Array<{ health: string; lastError: string }> } };
    return body.data.activeTargets[0] ?? { health: 'none', lastError: 'no target' };
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((resolve) => this.child.once('close', resolve));
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
