// `sitebiz serve` as users run it: `node bin/sitebiz.js serve` in a child process, on a database of
// its own (a SQLite file; on PostgreSQL a fresh database next to TEST_DATABASE_URL's). Used by the
// tests of --workers and of shutdown.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { SETTINGS } from '../../src/config.js';
import { throughPooler, type DialectName } from './harness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin', 'sitebiz.js');
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 20_000;
/** A request that gets no answer for this long fails, naming itself, rather than hanging the file. */
const REQUEST_IDLE_TIMEOUT_MS = 60_000;

/** Our environment without any sitebiz setting, plus `extra`. */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const spec of Object.values(SETTINGS)) delete env[spec.env];
  return { ...env, ...extra };
}

/** What a finished command printed, and how it exited. */
export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `sitebiz <args>` (this checkout's bin/sitebiz.js) to its end, with no sitebiz setting from
 * our environment, in `cwd` (a scratch directory of its own by default, removed after: a command
 * must not depend on being run inside the checkout), with `stdin` as its standard input (none by
 * default).
 */
export function runSitebiz(args: readonly string[], options: { cwd?: string; stdin?: string; env?: Record<string, string> } = {}): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const scratch = options.cwd ? undefined : mkdtempSync(join(tmpdir(), 'sitebiz-command-'));
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? scratch,
      env: childEnv(options.env ?? {}),
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => {
      if (scratch) rmSync(scratch, { recursive: true, force: true });
      resolve({ code, stdout, stderr });
    });
    if (options.stdin !== undefined) child.stdin!.end(options.stdin);
  });
}

export interface LogLine {
  pid: number;
  msg: string;
  reqId?: string;
  res?: { statusCode: number };
  [key: string]: unknown;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running `serve`, its output so far, and its JSON log lines. */
export class ServeProcess {
  stdout = '';
  stderr = '';
  readonly exited: Promise<Exit>;

  constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    // 'close' comes after the output has been read to the end, unlike 'exit'.
    this.exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  }

  logs(): LogLine[] {
    return this.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LogLine);
  }

  /** Resolves once the output matches; fails if the process exits first or time runs out. */
  async waitFor(pattern: RegExp, timeoutMs = START_TIMEOUT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let done = false;
    void this.exited.then(() => (done = true));
    while (!pattern.test(this.stdout)) {
      if (done) throw new Error(`serve exited before printing ${pattern}; stdout:\n${this.stdout}\nstderr:\n${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`no ${pattern} within ${timeoutMs} ms; stdout:\n${this.stdout}\nstderr:\n${this.stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Sends the signal and waits for the exit (killing the process if it takes too long). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<Exit> {
    this.child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.child.kill('SIGKILL');
        reject(new Error(`serve did not exit within ${STOP_TIMEOUT_MS} ms of ${signal}; stderr:\n${this.stderr}`));
      }, STOP_TIMEOUT_MS);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The demo account's credentials, printed on a new database's first start. */
  credentials(): { clientId: string; clientSecret: string } {
    return { clientId: /client_id:\s+(\S+)/.exec(this.stdout)![1]!, clientSecret: /client_secret:\s+(\S+)/.exec(this.stdout)![1]! };
  }
}

export function startServe(cwd: string, args: string[], env: Record<string, string> = {}): ServeProcess {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    cwd,
    env: childEnv({ LOG_LEVEL: 'info', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new ServeProcess(child);
}

export { freePort } from './free-port.js';

/** A database of its own for one serve: a SQLite file in a temporary folder, or a PostgreSQL database. */
export interface FreshDatabase {
  url: string;
  /** The SQLite file, for checks that it was (not) created. */
  file?: string;
  cleanup(): Promise<void>;
}

export async function freshDatabase(dialect: DialectName): Promise<FreshDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'sitebiz-serve-'));
    const file = join(dir, 'db.sqlite');
    return { url: `sqlite:${file}`, file, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const base = process.env.TEST_DATABASE_URL!;
  const name = `sitebiz_serve_${randomBytes(6).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { url: throughPooler(url.href), cleanup: () => admin(`drop database if exists ${name} with (force)`) };
}

export interface RequestOptions {
  method?: string;
  path: string;
  requestId: string;
  token?: string;
  form?: Record<string, string>;
  /** A JSON:API document to send as the body. */
  json?: unknown;
  /** Called once the whole request has been handed to the operating system. */
  onSent?: () => void;
  /** Send through this agent (a keep-alive one) instead of a connection of the request's own. */
  agent?: http.Agent;
  /** More request headers (a console session's cookie). */
  headers?: Record<string, string>;
}

/**
 * One request on a connection of its own (the cluster hands out connections, not requests, so
 * keep-alive would pin every request to one worker).
 */
export function request(port: number, options: RequestOptions): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  const body = options.form ? new URLSearchParams(options.form).toString() : options.json !== undefined ? JSON.stringify(options.json) : undefined;
  const contentType = options.form ? 'application/x-www-form-urlencoded' : 'application/vnd.api+json';
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path,
        agent: options.agent ?? false,
        headers: {
          'x-request-id': options.requestId,
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
          ...(body ? { 'content-type': contentType, 'content-length': Buffer.byteLength(body) } : {}),
          ...options.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.setTimeout(REQUEST_IDLE_TIMEOUT_MS, () =>
      req.destroy(new Error(`${options.method ?? 'GET'} ${options.path} (x-request-id ${options.requestId}) got no answer within ${REQUEST_IDLE_TIMEOUT_MS} ms`)),
    );
    if (options.onSent) req.on('finish', options.onSent);
    req.end(body);
  });
}

/** An access token from serve's OAuth endpoint, for the demo credentials it printed. */
export async function accessToken(port: number, server: ServeProcess): Promise<string> {
  const { clientId, clientSecret } = server.credentials();
  const grant = await request(port, {
    method: 'POST',
    path: '/v1/oauth/token',
    requestId: 'grant',
    form: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
  });
  if (grant.status !== 200) throw new Error(`POST /v1/oauth/token answered ${grant.status}: ${grant.body}`);
  return (JSON.parse(grant.body) as { access_token: string }).access_token;
}
