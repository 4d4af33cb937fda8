#!/usr/bin/env node
// `npm run bench`: the throughput and latency suite (bench/run.ts) under tsx. Arguments are
// passed on, e.g. `npm run bench -- --write --duration 12`; `npm run bench -- --help` lists them.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});
// Pass stop signals on and wait: the bench stops its servers and removes its files first.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('error', (error) => {
  console.error(error.message);
  process.exit(1);
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
