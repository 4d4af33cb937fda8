// Every command the documentation shows runs as written on a fresh `npm start` database, each page
// as a reader runs it: top to bottom, in a shell of its own that has only what the page sets.
//
// What is run, from README.md and every docs/*.md, in that order:
// - fenced blocks marked sh, bash or shell: each block is one bash script (set -euo pipefail);
// - lines starting with `$ ` in other fenced blocks: the command after `$ `, whose output (the
//   lines after it, `...` standing for anything) must appear in what it prints, exit code aside;
// - the inline commands of a table column headed "Example" (the README's command table), in order.
//
// A page is one shell session, as in a terminal: its examples run in order, each in a new bash that
// starts with the variables and the directory the page's earlier examples left (a variable a block
// sets is there in the next block; nothing of another page is). Each page runs in a directory of
// its own, so a file one page writes (tokens.json, hook.json) is not there for another. The
// environment is the test's without any sitebiz setting (DATABASE_URL, PORT, ...) and without
// anything a page could lean on unawares: no BASE, TOKEN, ACCESS_TOKEN or CLIENT_ID. A page that
// uses such a variable sets it, or starts with the README's lines that do.
//
// Conventions the docs follow, so that their commands run as written:
// - the server is at http://127.0.0.1:3000 (the test's server is on a free port; that address is
//   replaced by the test server's everywhere);
// - a variable assigned a value with `...` (`CLIENT_ID=sbz_...  # as printed`) is the reader's to
//   fill from what `npm start` printed, and the test fills it so: READER_FILLED below lists what
//   it knows (the client_id and client_secret the server printed at its first start); any other is
//   a failure, as a reader would not know what to put there; what a reader types when an example
//   asks (`read -rs PASSWORD`) is READER_TYPES;
// - `npm run sitebiz -- ...`, `npm start` and a bare `sitebiz` run this checkout's bin/sitebiz.js
//   in a scratch directory, whose data/sitebiz.db the test's server (`serve`, as npm start) made;
// - an example may show an error answer, and then says which (a comment or the output it shows
//   names the status: `401`, `422`, the `503` of an injected fault): an error status the example
//   does not name fails it, as a 4xx means a variable was empty or stale (a revoked token, an id
//   that is "null") and a 5xx a fault of the server.
// What cannot run in a test is listed in EXCLUDED below, each with its reason. A new doc's
// command that cannot run goes there, with the reason.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { SETTINGS } from '../src/config.js';
import { freePort } from './support/free-port.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'sitebiz.js');
const DOCUMENTED_BASE = 'http://127.0.0.1:3000';
const EXAMPLE_TIMEOUT_MS = 180_000;

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
    // A serve sent to the background (ending in &) runs: the session's end stops it (endSession),
    // as docs/upstream-strict.md's second server on the same database.
    pattern: /(^|\s)npm start\b|(^|\s)(sitebiz|npm run (-s )?sitebiz --) serve\b(?!.*--port 99999)(?!.*&\s*$)/,
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

/** What the server printed at its first start, which a reader copies into the page's `NAME=...` lines. */
interface Printed {
  clientId: string;
  clientSecret: string;
}

/** The variables a page may leave to the reader (`NAME=...`), and what the reader puts there. */
const READER_FILLED: Record<string, (printed: Printed) => string> = {
  CLIENT_ID: (p) => p.clientId,
  CLIENT_SECRET: (p) => p.clientSecret,
};

/** What a reader types when an example asks (`read -rs PASSWORD`): a password the console accepts. */
const READER_TYPES = 'a docs example password\n';

/** `CLIENT_ID=sbz_...   # as printed`: a value the reader fills in. */
const READER_FILLED_LINE = /^([A-Z_]+)=\S*\.\.\.(?=\s|$)/;

interface Example {
  /** The page it is on: README.md or docs/<name>.md. */
  file: string;
  where: string;
  kind: 'script' | 'prompt';
  text: string;
  /** For prompts: the output lines shown after the command. */
  shown: string[];
}

const excludedBy = (command: string) => EXCLUDED.find((e) => e.pattern.test(command.trim()));

/** The script without excluded commands (and their continuation lines); undefined when nothing is left to run. */
function runnable(script: string): string | undefined {
  const kept: string[] = [];
  let skipping = false;
  for (const line of script.split('\n')) {
    if (skipping || excludedBy(line)) {
      skipping = line.trimEnd().endsWith('\\');
      continue;
    }
    kept.push(line);
  }
  return kept.some((l) => l.trim() !== '' && !l.trim().startsWith('#')) ? kept.join('\n') : undefined;
}

/** The reader's values in the page's `NAME=...` lines; a name the test cannot fill fails the example. */
function fillReaderValues(text: string, printed: Printed, where: string): string {
  return text
    .split('\n')
    .map((line) => {
      const match = READER_FILLED_LINE.exec(line);
      if (!match) return line;
      const fill = READER_FILLED[match[1]!];
      assert.ok(fill, `${where}: ${match[1]}=... is left to the reader, but the test does not know what a reader would put there (READER_FILLED)`);
      return line.replace(READER_FILLED_LINE, `${match[1]}='${fill(printed)}'`);
    })
    .join('\n');
}

/** A table row's cells; `\\|` is a pipe inside a cell (a shell pipe in a command), not a border. */
function cellsOf(row: string): string[] {
  return row.split(/(?<!\\)\|/).map((c) => c.trim().replaceAll('\\|', '|'));
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
          if (text) examples.push({ file, where, kind: 'script', text, shown: [] });
        }
      } else {
        body.forEach((line, k) => {
          if (!line.startsWith('$ ') || excludedBy(line.slice(2))) return;
          const next = body.findIndex((l, j) => j > k && l.startsWith('$ '));
          examples.push({ file, where: `${file}:${start + k}`, kind: 'prompt', text: line.slice(2), shown: body.slice(k + 1, next < 0 ? undefined : next) });
        });
      }
      i = end;
      continue;
    }
    const header = cellsOf(lines[i]!);
    const column = header.indexOf('Example');
    if (lines[i]!.startsWith('|') && column > 0 && /^\|\s*-{3,}/.test(lines[i + 1] ?? '')) {
      for (let row = i + 2; row < lines.length && lines[row]!.startsWith('|'); row++) {
        const cell = cellsOf(lines[row]!)[column] ?? '';
        for (const [, command] of cell.matchAll(/`([^`]+)`/g)) {
          // Only commands: other columns' and tables' code spans are values (filters.md's examples).
          if (/^(npm|npx|node|sitebiz|curl|read|printf) /.test(command!) && !excludedBy(command!)) examples.push({ file, where: `${file}:${row + 1}`, kind: 'script', text: command!, shown: [] });
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

/** The environment of the server: ours without sitebiz settings, so the checkout's defaults apply. */
function serverEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const spec of Object.values(SETTINGS)) delete env[spec.env];
  delete env.NODE_TEST_CONTEXT;
  return { ...env, ...extra };
}

/**
 * The environment a page starts with: what a login shell has, nothing more. Not the test's own
 * environment: a BASE, TOKEN or DATABASE_URL exported where the tests run would hide a page that
 * uses one without setting it.
 */
function readerEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(HOME|USER|LOGNAME|SHELL|TERM|TMPDIR|TZ|LANG|LANGUAGE|LC_\w+)$/.test(name)) env[name] = value;
  }
  return { ...env, ...extra };
}

// A page's shell session: after each example, the variables it set (every variable but bash's own
// and the starting environment's) and its directory are written to the page's state file, which the
// next example sources first. The names below are bash's own, which a state file must not restore.
const BASH_OWN_VARIABLES = 'BASH.*|PIPESTATUS|OLDPWD|COLUMNS|LINES|FUNCNAME|REPLY|HISTCMD|_.*|SITEBIZ_DOCS_.*';
const SAVE_STATE = [
  'for __sitebiz_docs_var in $(compgen -v | grep -vxE "$SITEBIZ_DOCS_SHELL_VARIABLES" || true); do declare -p "$__sitebiz_docs_var"; done > "$SITEBIZ_DOCS_STATE.next"',
  'printf \'cd %q\\n\' "$PWD" >> "$SITEBIZ_DOCS_STATE.next"',
  'mv "$SITEBIZ_DOCS_STATE.next" "$SITEBIZ_DOCS_STATE"',
].join('\n');

/**
 * Ends every process still running in the session `sid`: what an example started in the background
 * and left running (also after it failed, or with `set -m`, which gives each job a process group of
 * its own), so that it neither holds the example's output open nor outlives the test holding a
 * port. Linux: the session is field 6 of /proc/<pid>/stat.
 */
function endSession(sid: number): void {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[3]) === sid) process.kill(Number(name), 'SIGKILL');
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
}

/** Runs `script` with `typed` (a file holding READER_TYPES) as its standard input. */
function runBash(script: string, cwd: string, env: NodeJS.ProcessEnv, typed: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // A file rather than a pipe: nothing to write, and nothing to fail (EPIPE) when the example reads nothing.
    const stdin = openSync(typed, 'r');
    // detached: bash leads a session of its own, which endSession can find every descendant by.
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: [stdin, 'pipe', 'pipe'], detached: true });
    closeSync(stdin);
    let output = '';
    let code: number | null = null;
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
    const timer = setTimeout(() => {
      endSession(child.pid!);
      reject(new Error(`did not finish within ${EXAMPLE_TIMEOUT_MS} ms:\n${script}\n${output}`));
    }, EXAMPLE_TIMEOUT_MS);
    child.on('exit', (exitCode) => {
      code = exitCode;
      endSession(child.pid!);
    });
    // 'close' comes once every holder of the output pipes is gone (endSession saw to the rest).
    child.on('close', () => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('every command in README.md and docs/ runs as written on a fresh npm start database (SQLite)', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'sitebiz-docs-'));
  const typed = join(scratch, 'typed.txt');
  let server: ChildProcessWithoutNullStreams;
  let serverLog = '';
  let base = '';
  let printed: Printed;
  let pathWithShim = '';
  let shellVariables = '';
  /** Per page: its directory and the state file its examples share. */
  const sessions = new Map<string, { dir: string; state: string }>();

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
    server = spawn(process.execPath, [BIN, 'serve'], { cwd: scratch, env: serverEnv({ PORT: String(port), LOG_LEVEL: 'info' }) });
    server.stdout.setEncoding('utf8').on('data', (c: string) => (serverLog += c));
    server.stderr.setEncoding('utf8').on('data', (c: string) => (serverLog += c));
    const started = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the server did not start:\n${serverLog}`)), 60_000);
      server.stdout.on('data', () => {
        if (serverLog.includes('sitebiz is serving')) {
          clearTimeout(timer);
          resolve();
        }
      });
      server.on('exit', (code) => reject(new Error(`the server exited with ${code}:\n${serverLog}`)));
    });
    // The variables of a shell that has run nothing yet: never part of a page's state.
    writeFileSync(typed, READER_TYPES);
    const fresh = runBash('compgen -v', scratch, readerEnv({ PATH: pathWithShim }), typed);
    await started;
    assert.match(serverLog, /created the demo account/);
    const clientId = /^client_id:\s+(\S+)$/m.exec(serverLog)?.[1];
    const clientSecret = /^client_secret:\s+(\S+)$/m.exec(serverLog)?.[1];
    assert.ok(clientId && clientSecret, `the server printed no credentials:\n${serverLog}`);
    printed = { clientId, clientSecret };
    const names = (await fresh).output.split('\n').filter((n) => /^\w+$/.test(n));
    shellVariables = [...names, BASH_OWN_VARIABLES].join('|');
  });

  after(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(scratch, { recursive: true, force: true });
  });

  /** The page's shell session, begun in a directory of its own at its first example. */
  function sessionOf(file: string): { dir: string; state: string } {
    let session = sessions.get(file);
    if (!session) {
      const dir = join(scratch, 'pages', file.replace(/[/.]/g, '-'));
      mkdirSync(dir, { recursive: true });
      const state = join(dir, '.shell-state');
      writeFileSync(state, `cd '${dir}'\n`);
      session = { dir, state };
      sessions.set(file, session);
    }
    return session;
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
    it(`${example.where}: ${example.text.split('\n').find((l) => l.trim() && !l.startsWith('#'))?.trim().slice(0, 90)}`, async (t) => {
      const text = fillReaderValues(example.text.replaceAll(DOCUMENTED_BASE, base), printed, example.where);
      const session = sessionOf(example.file);
      const env = readerEnv({ PATH: pathWithShim, SITEBIZ_DOCS_STATE: session.state, SITEBIZ_DOCS_SHELL_VARIABLES: shellVariables });
      const logFrom = serverLog.length;
      // A prompt's command may fail (it shows an error); a block must not, and leaves its variables to the next.
      const script =
        example.kind === 'script'
          ? `set -euo pipefail\nsource "$SITEBIZ_DOCS_STATE"\n${text}\n${SAVE_STATE}\n`
          : `source "$SITEBIZ_DOCS_STATE"\n${text}\n`;
      const { code, output } = await runBash(script, session.dir, env, typed);
      // DOCS_COMMANDS_OUTPUT=1 shows what each example printed, to compare with what the page shows.
      if (process.env.DOCS_COMMANDS_OUTPUT) t.diagnostic(output);
      if (example.kind === 'script') {
        assert.equal(code, 0, `${example.where} failed (exit ${code}):\n${text}\n--- output:\n${output}`);
      } else {
        for (const line of example.shown) {
          for (const piece of line.split('...').map((p) => p.trim()).filter(Boolean)) {
            assert.ok(output.includes(piece), `${example.where}: the output shows "${piece}"; it printed:\n${output}`);
          }
        }
      }
      const said = `${example.text}\n${example.shown.join('\n')}`;
      const unexpected = statusesSince(logFrom).filter((s) => s.status >= 400 && !new RegExp(`\\b${s.status}\\b`).test(said));
      assert.deepEqual(unexpected, [], `${example.where}: the server answered with an error status the example does not name:\n--- output:\n${output}`);
    });
  }
});
