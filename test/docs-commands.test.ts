// Every command the documentation shows runs as written on a fresh `npm start` database.
//
// What is run, from README.md and every docs/*.md, in that order:
// - fenced blocks marked sh, bash or shell: each block is one bash script (set -euo pipefail);
// - lines starting with `$ ` in other fenced blocks: the command after `$ `, whose output (the
//   lines after it, `...` standing for anything) must appear in what it prints, exit code aside;
// - the inline commands of a table column headed "Example" (the README's command table), in order.
//
// Conventions the docs follow, so that their commands run as written:
// - the server is at http://127.0.0.1:3000 (the test's server is on a free port; that address is
//   replaced by the test server's everywhere);
// - a variable assigned a value with `...` (`CLIENT_ID=sbz_...  # as printed`) is the reader's to
//   fill, and the test fills it: each example starts with BASE, CLIENT_ID and CLIENT_SECRET (a
//   fresh key of the demo owner with every permission), ACCESS_TOKEN and REFRESH_TOKEN (a pair
//   from it), TOKEN (the same access token) and TOKEN_TO_REVOKE (another access token);
// - `npm run sitebiz -- ...`, `npm start` and a bare `sitebiz` run this checkout's bin/sitebiz.js
//   in a scratch directory, whose data/sitebiz.db the test's server (`serve`, as npm start) made;
// - an example may show an error answer: what is required is that the command runs and that the
//   server answers no request of it with a 5xx.
// What cannot run in a test is listed in EXCLUDED below, each with its reason. A new doc's
// command that cannot run goes there, with the reason.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { PERMISSION_NAMES } from '../src/auth/permissions.js';
import { loadConfig, SETTINGS } from '../src/config.js';
import { connectDatabase, type DatabaseHandle } from '../src/db/connect.js';
import { createApiKey } from '../src/domain/accounts.js';
import { freePort } from './support/free-port.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'sitebiz.js');
const DOCUMENTED_BASE = 'http://127.0.0.1:3000';
const EXAMPLE_TIMEOUT_MS = 300_000;

interface Exclusion {
  pattern: RegExp;
  reason: string;
  /** Leave out the whole block the command is in, not just the command. */
  wholeBlock?: boolean;
}

const EXCLUDED: Exclusion[] = [
  { pattern: /^npm ci\b/, reason: 'installs the dependencies; the test runs in an installed checkout and starts the server as npm start does' },
  { pattern: /(^|\s)npm (run )?test\b/, reason: 'runs the test suite this test is part of' },
  {
    pattern: /(^|\s)npm start\b|(^|\s)(sitebiz|npm run (-s )?sitebiz --) serve\b(?!.*--port 99999)/,
    reason: 'starts a server that runs until stopped; the test runs one the same way (bin/sitebiz.js serve on a fresh database)',
  },
  { pattern: /DATABASE_URL=postgres:\/\/\S*db\.internal/, reason: 'needs the PostgreSQL server the example names', wholeBlock: true },
  { pattern: /^npm run bench\b/, reason: 'a benchmark: minutes to half an hour, with wrk and PostgreSQL' },
  { pattern: /seed --contacts 1000000\b/, reason: 'a million contacts take a quarter of an hour; the smaller seed examples run' },
  {
    pattern: /\blisten --forward-to \S+(\s+--events \S+)?\s*$/,
    reason: 'forwards until stopped; docs/sandbox.md runs it in the background (ending in &) in its walkthrough',
  },
];

interface Example {
  where: string;
  kind: 'script' | 'prompt';
  text: string;
  /** For prompts: the output lines shown after the command. */
  shown: string[];
}

const excludedBy = (command: string) => EXCLUDED.find((e) => e.pattern.test(command.trim()));

/** The script without excluded commands (and their continuation lines) and reader-filled assignments; undefined when nothing is left. */
function runnable(script: string): string | undefined {
  const kept: string[] = [];
  let skipping = false;
  for (const line of script.split('\n')) {
    if (skipping || excludedBy(line) || /^[A-Z_]+=\S*\.\.\.(\s|$)/.test(line)) {
      skipping = line.trimEnd().endsWith('\\');
      continue;
    }
    kept.push(line);
  }
  return kept.some((l) => l.trim() !== '' && !l.trim().startsWith('#')) ? kept.join('\n') : undefined;
}

function examplesOf(file: string, markdown: string): Example[] {
  const examples: Example[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\w*)\s*$/.exec(lines[i]!);
    if (fence) {
      const start = i + 1;
      let end = start;
      while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
      const body = lines.slice(start, end);
      const where = `${file}:${start}`;
      if (['sh', 'bash', 'shell'].includes(fence[1]!)) {
        if (!body.some((l) => excludedBy(l)?.wholeBlock)) {
          const text = runnable(body.join('\n'));
          if (text) examples.push({ where, kind: 'script', text, shown: [] });
        }
      } else {
        body.forEach((line, k) => {
          if (!line.startsWith('$ ') || excludedBy(line.slice(2))) return;
          const next = body.findIndex((l, j) => j > k && l.startsWith('$ '));
          examples.push({ where: `${file}:${start + k}`, kind: 'prompt', text: line.slice(2), shown: body.slice(k + 1, next < 0 ? undefined : next) });
        });
      }
      i = end;
      continue;
    }
    const header = lines[i]!.split('|').map((c) => c.trim());
    const column = header.indexOf('Example');
    if (lines[i]!.startsWith('|') && column > 0 && /^\|\s*-{3,}/.test(lines[i + 1] ?? '')) {
      for (let row = i + 2; row < lines.length && lines[row]!.startsWith('|'); row++) {
        const cell = lines[row]!.split('|').map((c) => c.trim())[column] ?? '';
        for (const [, command] of cell.matchAll(/`([^`]+)`/g)) {
          // Only commands: other columns' and tables' code spans are values (filters.md's examples).
          if (/^(npm|npx|node|sitebiz|curl) /.test(command!) && !excludedBy(command!)) examples.push({ where: `${file}:${row + 1}`, kind: 'script', text: command!, shown: [] });
        }
      }
    }
  }
  return examples;
}

function documentedExamples(): Example[] {
  const docs = readdirSync(join(ROOT, 'docs')).filter((n) => n.endsWith('.md')).sort().map((n) => `docs/${n}`);
  return ['README.md', ...docs].flatMap((file) => examplesOf(file, readFileSync(join(ROOT, file), 'utf8')));
}

/** The environment of every child: ours without sitebiz settings, so the checkout's defaults apply. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const spec of Object.values(SETTINGS)) delete env[spec.env];
  delete env.NODE_TEST_CONTEXT;
  return { ...env, ...extra };
}

function runBash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`did not finish within ${EXAMPLE_TIMEOUT_MS} ms:\n${script}\n${output}`));
    }, EXAMPLE_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('every command in README.md and docs/ runs as written on a fresh npm start database (SQLite)', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'sitebiz-docs-'));
  let server: ChildProcessWithoutNullStreams;
  let serverLog = '';
  let base = '';
  let handle: DatabaseHandle;
  let ownerId = 0;
  let pathWithShim = '';

  before(async () => {
    // `npm run sitebiz`, `npm start` and `sitebiz` in the scratch directory run this checkout.
    writeFileSync(
      join(scratch, 'package.json'),
      JSON.stringify({ name: 'sitebiz-docs-scratch', private: true, scripts: { sitebiz: `node ${BIN}`, start: `node ${BIN} serve` } }),
    );
    mkdirSync(join(scratch, '.bin'));
    writeFileSync(join(scratch, '.bin', 'sitebiz'), `#!/bin/sh\nexec node ${BIN} "$@"\n`);
    chmodSync(join(scratch, '.bin', 'sitebiz'), 0o755);
    pathWithShim = `${join(scratch, '.bin')}:${process.env.PATH ?? ''}`;

    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = spawn(process.execPath, [BIN, 'serve'], { cwd: scratch, env: cleanEnv({ PORT: String(port), LOG_LEVEL: 'info' }) });
    server.stdout.setEncoding('utf8').on('data', (c: string) => (serverLog += c));
    server.stderr.setEncoding('utf8').on('data', (c: string) => (serverLog += c));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the server did not start:\n${serverLog}`)), 60_000);
      server.stdout.on('data', () => {
        if (serverLog.includes('sitebiz is serving')) {
          clearTimeout(timer);
          resolve();
        }
      });
      server.on('exit', (code) => reject(new Error(`the server exited with ${code}:\n${serverLog}`)));
    });
    assert.match(serverLog, /created the demo account/);
    handle = await connectDatabase(loadConfig({ DATABASE_URL: `sqlite:${join(scratch, 'data', 'sitebiz.db')}` }).database);
    const owner = await handle.db.selectFrom('users').select('id').where('role', '=', 'owner').orderBy('id').executeTakeFirstOrThrow();
    ownerId = Number(owner.id);
  });

  after(async () => {
    await handle?.close();
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(scratch, { recursive: true, force: true });
  });

  /** The variables every example starts with (see the conventions above). */
  async function exampleVariables(): Promise<Record<string, string>> {
    const key = await createApiKey(handle, { userId: ownerId, name: 'docs example', permissions: PERMISSION_NAMES });
    const token = async () => {
      const res = await fetch(`${base}/v1/oauth/token`, {
        method: 'POST',
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: key.clientId, client_secret: key.clientSecret }),
      });
      assert.equal(res.status, 200);
      return (await res.json()) as { access_token: string; refresh_token: string };
    };
    const [pair, other] = await Promise.all([token(), token()]);
    return {
      BASE: base,
      CLIENT_ID: key.clientId,
      CLIENT_SECRET: key.clientSecret,
      ACCESS_TOKEN: pair.access_token,
      REFRESH_TOKEN: pair.refresh_token,
      TOKEN: pair.access_token,
      TOKEN_TO_REVOKE: other.access_token,
    };
  }

  /** The statuses the server logged since `from` (its log is one JSON line per request). */
  function statusesSince(from: number): Array<{ status: number; url: string }> {
    return serverLog
      .slice(from)
      .split('\n')
      .flatMap((line) => {
        try {
          const entry = JSON.parse(line) as { res?: { statusCode?: number }; req?: { method: string; url: string } };
          return entry.res?.statusCode ? [{ status: entry.res.statusCode, url: `${entry.req?.method} ${entry.req?.url}` }] : [];
        } catch {
          return [];
        }
      });
  }

  const examples = documentedExamples();

  it('finds the examples, and excludes only what EXCLUDED names', () => {
    assert.ok(examples.some((e) => e.where.startsWith('docs/permissions.md') && e.text.includes('users create')));
    assert.ok(examples.some((e) => e.where.startsWith('README.md') && e.text.includes('/v1/oauth/token')));
    assert.ok(examples.some((e) => e.kind === 'prompt'));
  });

  for (const example of examples) {
    it(`${example.where}: ${example.text.split('\n').find((l) => l.trim() && !l.startsWith('#'))?.trim().slice(0, 90)}`, async () => {
      const text = example.text.replaceAll(DOCUMENTED_BASE, base);
      const env = cleanEnv({ ...(await exampleVariables()), PATH: pathWithShim });
      const logFrom = serverLog.length;
      const script = example.kind === 'script' ? `set -euo pipefail\n${text}` : text;
      const { code, output } = await runBash(script, scratch, env);
      if (example.kind === 'script') {
        assert.equal(code, 0, `${example.where} failed (exit ${code}):\n${text}\n--- output:\n${output}`);
      } else {
        for (const line of example.shown) {
          for (const piece of line.split('...').map((p) => p.trim()).filter(Boolean)) {
            assert.ok(output.includes(piece), `${example.where}: the output shows "${piece}"; it printed:\n${output}`);
          }
        }
      }
      const failed = statusesSince(logFrom).filter((s) => s.status >= 500);
      assert.deepEqual(failed, [], `${example.where}: the server answered with 5xx`);
    });
  }
});
