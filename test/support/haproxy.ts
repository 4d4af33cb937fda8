// HAProxy (Debian's package) in front of several `sitebiz serve` processes, for the load-balancer
// test and the bench: its own configuration in a temporary folder, on a free port, round-robin over
// the given backend ports. haproxyConfig() is also the configuration docs/scaling.md shows
// (test/load-balancer.test.ts checks that they agree).
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

export const HAPROXY_PATH = process.env.HAPROXY_PATH || '/usr/sbin/haproxy';

/** Why HAProxy cannot be used here, or false. In CI a missing HAProxy fails the tests instead. */
export const HAPROXY_SKIP: string | false = (() => {
  try {
    accessSync(HAPROXY_PATH, constants.X_OK);
    return false;
  } catch {
    return process.env.CI ? false : `no HAProxy at ${HAPROXY_PATH} (apt-get install -y haproxy, or set HAPROXY_PATH)`;
  }
})();

export interface HaproxyConfigOptions {
  /** Where HAProxy listens (127.0.0.1). */
  port: number;
  /** The `serve` processes' ports on 127.0.0.1, named s1, s2, ... in order. */
  backends: readonly number[];
  /** The runtime API's Unix socket (show stat, set server ... state). */
  socket: string;
}

/**
 * The tested configuration. Why each line:
 * - `option http-server-close`: a new server connection per request, so a request is never sent
 *   on a kept-alive connection the backend is closing at that moment (a shutdown closes its idle
 *   connections); the client side stays keep-alive.
 * - `option forwardfor`: each request carries its client's address in X-Forwarded-For, which
 *   sitebiz believes from HAProxy's address (TRUST_PROXY), so per-address limits count clients.
 * - `retries` and `option redispatch 1`: a connection refused (a process stopping or not started
 *   yet) is tried again on another server at once. These are connection failures: the request was
 *   never sent, so a POST is never sent twice. No L7 `retry-on`.
 * - `option httpchk GET /readyz` (no authentication, no rate limit; one small read) every 500 ms,
 *   out after 2 failures, in after 2 successes: a draining process (SHUTDOWN_DRAIN_MS) is out
 *   within about a second, and a restarted one takes requests again as fast.
 * - `timeout server` above sitebiz's REQUEST_TIMEOUT_MS default (30 s), so sitebiz's 408 arrives
 *   before HAProxy's 504.
 */
export function haproxyConfig(options: HaproxyConfigOptions): string {
  return [
    'global',
    `    stats socket ${options.socket} mode 600 level admin`,
    '    maxconn 4096',
    '',
    'defaults',
    '    mode http',
    '    option http-server-close',
    '    option forwardfor',
    '    retries 3',
    '    option redispatch 1',
    '    timeout connect 2s',
    '    timeout client 60s',
    '    timeout server 60s',
    '    timeout http-keep-alive 10s',
    '',
    'frontend sitebiz',
    `    bind 127.0.0.1:${options.port}`,
    '    default_backend sitebiz_processes',
    '',
    'backend sitebiz_processes',
    '    balance roundrobin',
    '    option httpchk GET /readyz',
    '    http-check expect status 200',
    '    default-server inter 500ms fall 2 rise 2',
    ...options.backends.map((port, i) => `    server s${i + 1} 127.0.0.1:${port} check`),
    '',
  ].join('\n');
}

/** One server's line of `show stat`: its state as the health checks see it, and its sessions so far. */
export interface ServerStat {
  name: string;
  /** UP, DOWN, MAINT, DRAIN, or a transition such as "UP 1/2". */
  status: string;
  /** Sessions (requests, with http-server-close) sent to it so far. */
  sessions: number;
  /** Sessions in progress on it now. */
  current: number;
}

export class Haproxy {
  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    readonly port: number,
    readonly socket: string,
  ) {}

  static async start(backends: readonly number[], port?: number): Promise<Haproxy> {
    accessSync(HAPROXY_PATH, constants.X_OK);
    const dir = mkdtempSync(join(tmpdir(), 'sitebiz-haproxy-'));
    const listen = port ?? (await freePort());
    const socket = join(dir, 'admin.sock');
    const config = join(dir, 'haproxy.cfg');
    writeFileSync(config, haproxyConfig({ port: listen, backends, socket }));
    // Its output goes to a file: a pipe nobody reads while a test blocks would fill and stop it.
    const log = openSync(join(dir, 'haproxy.log'), 'a');
    // -db: stay in the foreground, as our child.
    const child = spawn(HAPROXY_PATH, ['-db', '-f', config], { stdio: ['ignore', log, log] });
    closeSync(log);
    const proxy = new Haproxy(child, dir, listen, socket);
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`HAProxy exited (${child.exitCode}): ${proxy.log()}`);
      try {
        await proxy.stats();
        return proxy;
      } catch (error) {
        if (Date.now() > deadline) {
          await proxy.stop();
          throw new Error(`HAProxy's runtime socket did not answer within 10 s (${(error as Error).message}): ${proxy.log()}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** One command of HAProxy's runtime API; its answer. */
  command(line: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(this.socket);
      let answer = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (answer += chunk));
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
      socket.end(`${line}\n`);
    });
  }

  /** The backend's servers, from `show stat`. */
  async stats(): Promise<ServerStat[]> {
    const [header, ...rows] = (await this.command('show stat')).trim().split('\n');
    const columns = header!.replace(/^# /, '').split(',');
    const at = (name: string) => columns.indexOf(name);
    return rows
      .map((row) => row.split(','))
      .filter((cells) => cells[at('pxname')] === 'sitebiz_processes' && cells[at('svname')] !== 'BACKEND')
      .map((cells) => ({
        name: cells[at('svname')]!,
        status: cells[at('status')]!,
        sessions: Number(cells[at('stot')]),
        current: Number(cells[at('scur')]),
      }));
  }

  /** Resolves once the health checks see every named server (default all) as `status`. */
  async waitFor(status: 'UP' | 'DOWN', servers?: readonly string[], timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const stats = await this.stats();
      const watched = stats.filter((s) => !servers || servers.includes(s.name));
      if (watched.every((s) => s.status === status)) return;
      if (Date.now() > deadline) throw new Error(`HAProxy did not see ${servers?.join(', ') ?? 'every server'} ${status} within ${timeoutMs} ms: ${JSON.stringify(stats)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  log(): string {
    try {
      return readFileSync(join(this.dir, 'haproxy.log'), 'utf8');
    } catch {
      return '';
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
