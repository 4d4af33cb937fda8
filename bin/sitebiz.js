#!/usr/bin/env node
// The `sitebiz` command: runs the compiled build in dist/ (made by `npm ci` through the `prepare`
// script, or by `npm run build`). When dist/ is missing or older than src/, as in a checkout
// edited since its last build, it is rebuilt first (about a second), so that this never runs
// stale code. `npm run dev` runs the sources directly, under tsx's watch mode.
import module from 'node:module';
import { build, staleReason } from './build.js';

// Node 22.1 and later keep V8's compiled code of each module on disk between runs (in the OS's
// temporary folder), which shortens every later start; Node 20 has no such cache.
module.enableCompileCache?.();

const stale = staleReason();
if (stale) {
  process.stderr.write(`sitebiz: building dist/ first (${stale})\n`);
  await build();
}
await import('../dist/cli-entry.js');
