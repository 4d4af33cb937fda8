// The compiled build (bin/build.js) and the two ways of running sitebiz: bin/sitebiz.js runs
// dist/, rebuilt first when src/ is newer; `npm run dev` runs the sources under tsx's watch mode.
// The build is tried in a copy of the checkout (its src/ and bin/, node_modules linked), so that
// touching a source file here cannot make the other test files' commands rebuild this one's dist/.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { freePort } from './support/free-port.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}

describe('the compiled build', () => {
  let copy: string;
  const sitebiz = (...args: string[]) => spawnSync(process.execPath, [join(copy, 'bin', 'sitebiz.js'), ...args], { cwd: copy, encoding: 'utf8', timeout: 60_000 });

  before(() => {
    copy = mkdtempSync(join(tmpdir(), 'sitebiz-build-'));
    for (const part of ['src', 'bin', 'package.json']) cpSync(join(ROOT, part), join(copy, part), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  });
  after(() => rmSync(copy, { recursive: true, force: true }));

  it('bin/sitebiz.js builds dist/ when it is missing: a module per source module, and the assets beside them', () => {
    const first = sitebiz('--help');
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stderr, /building dist\/ first \(dist\/ has not been built\)/);
    assert.match(first.stdout, /^Commands:$/m);
    const sources = walk(join(copy, 'src')).map((f) => relative(join(copy, 'src'), f));
    for (const source of sources) {
      const built = source.endsWith('.ts') ? source.replace(/\.ts$/, '.js') : source;
      assert.ok(existsSync(join(copy, 'dist', built)), `dist/${built} for src/${source}`);
    }
    // Built once: the next command starts at once, without a word about building.
    const second = sitebiz('--help');
    assert.equal(second.status, 0);
    assert.equal(second.stderr, '');
  });

  it('rebuilds when a source file is newer than the build, and drops modules whose source is gone', () => {
    sitebiz('--help');
    const later = new Date(statSync(join(copy, 'dist', '.build-stamp')).mtimeMs + 5_000);
    utimesSync(join(copy, 'src', 'config.ts'), later, later);
    cpSync(join(copy, 'src', 'engine.ts'), join(copy, 'src', 'leftover.ts'));
    utimesSync(join(copy, 'src', 'leftover.ts'), later, later);
    assert.match(sitebiz('--help').stderr, /building dist\/ first \(src\/(config|leftover)\.ts changed since the last build\)/);
    assert.ok(existsSync(join(copy, 'dist', 'leftover.js')));
    rmSync(join(copy, 'src', 'leftover.ts'));
    const rebuilt = spawnSync(process.execPath, [join(copy, 'bin', 'build.js')], { cwd: copy, encoding: 'utf8' });
    assert.equal(rebuilt.status, 0, rebuilt.stderr);
    assert.ok(!existsSync(join(copy, 'dist', 'leftover.js')), 'a module without its source is removed');
  });
});

describe('npm run dev', () => {
  it('serves from the sources under tsx watch', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'sitebiz-dev-'));
    const port = await freePort();
    const child = spawn('npm', ['run', 'dev', '--', '--port', String(port), '--database-url', `sqlite:${join(scratch, 'dev.db')}`, '--log-level', 'warn'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const deadline = Date.now() + 60_000;
      let status = 0;
      while (Date.now() < deadline && status !== 200) {
        status = await fetch(`http://127.0.0.1:${port}/v1/version`).then((r) => r.status, () => 0);
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.equal(status, 200, `npm run dev did not serve /v1/version:\n${output}`);
      assert.match(output, /sitebiz is serving http:\/\/127\.0\.0\.1:\d+\/v1/);
    } finally {
      // npm, tsx's watcher and the server: the whole process group.
      process.kill(-child.pid!, 'SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
