#!/usr/bin/env node
// The `sitebiz` command: runs the compiled build in dist/ (made by `npm ci` through the `prepare`
// script, or by `npm run build`). When dist/ is missing or older than src/, as in a checkout
// edited since its last build, it is rebuilt first (about a second), so that this never runs
// stale code. `npm run dev` runs the sources directly, under tsx's watch mode.
import { build, staleReason } from './build.js';

const stale = staleReason();
if (stale) {
  process.stderr.write(`sitebiz: building dist/ first (${stale})\n`);
  await build();
}
await import('../dist/cli-entry.js');
