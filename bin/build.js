#!/usr/bin/env node
// `npm run build` (and `npm ci`, through the `prepare` script): compiles src/ to dist/, one
// JavaScript file per TypeScript file, so that `npm start`, bin/sitebiz.js and every `--workers`
// process load plain JavaScript and transpile nothing at run time. It only strips types (esbuild);
// `npm run typecheck` checks them. Files of src/ that are not TypeScript (the console's assets,
// the docs page's logo) are copied beside the compiled modules that read them.
//
// bin/sitebiz.js calls build() itself when dist/ is missing or older than src/, so a checkout
// that was edited (or pulled) since its last build never runs stale code. Each file is written to
// a temporary name and renamed into place, and the stamp last: two commands building at once
// write the same bytes and neither sees a half-written file.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
export const SOURCE_DIR = join(root, 'src');
export const BUILD_DIR = join(root, 'dist');
/** Written after every other file of a build: its presence and time say the build is whole. */
export const BUILD_STAMP = join(BUILD_DIR, '.build-stamp');

function walk(dir) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...walk(path));
    else files.push(path);
  }
  return files;
}

/**
 * Why dist/ cannot be used as it is (missing, or a file of src/ or this script newer than the
 * stamp), or undefined when it is current. Stats every file of src/: about 250, a few ms.
 */
export function staleReason() {
  let built;
  try {
    built = statSync(BUILD_STAMP).mtimeMs;
  } catch {
    return 'dist/ has not been built';
  }
  let sources;
  try {
    sources = walk(SOURCE_DIR);
  } catch {
    return undefined; // an installation with dist/ alone: nothing to compare against
  }
  for (const file of [fileURLToPath(import.meta.url), ...sources]) {
    if (statSync(file).mtimeMs > built) return `${relative(root, file)} changed since the last build`;
  }
  return undefined;
}

function writeAtomically(path, contents) {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, path);
}

/** Compiles src/ into dist/ and returns the number of files written. */
export async function build() {
  // Loaded here, not at the top: bin/sitebiz.js imports this file on every start to check the
  // stamp, and esbuild is needed only when something is actually rebuilt.
  const { build: esbuild } = await import('esbuild');
  const sources = walk(SOURCE_DIR);
  const typescript = sources.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  const result = await esbuild({
    entryPoints: typescript,
    outbase: SOURCE_DIR,
    outdir: BUILD_DIR,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Linked maps: `node --enable-source-maps` shows src/ lines in stack traces. Off by default,
    // since Node then reads every map at start-up.
    sourcemap: 'linked',
    sourcesContent: false,
    write: false,
    logLevel: 'warning',
  });
  const expected = new Set();
  for (const file of result.outputFiles) {
    expected.add(file.path);
    writeAtomically(file.path, file.contents);
  }
  for (const asset of sources.filter((f) => !f.endsWith('.ts'))) {
    const target = join(BUILD_DIR, relative(SOURCE_DIR, asset));
    expected.add(target);
    writeAtomically(target, readFileSync(asset));
  }
  // A module deleted or renamed in src/ must not stay importable from dist/.
  for (const file of walk(BUILD_DIR)) {
    if (file !== BUILD_STAMP && !expected.has(file) && !file.endsWith('.tmp')) rmSync(file, { force: true });
  }
  writeAtomically(BUILD_STAMP, `${new Date().toISOString()}\n`);
  return expected.size;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = performance.now();
  const count = await build();
  console.log(`sitebiz: built dist/ (${count} files) in ${Math.round(performance.now() - started)} ms`);
}
