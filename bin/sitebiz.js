#!/usr/bin/env node
// Runs the TypeScript sources through tsx, so `npm ci` is all the build there is.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
process.exitCode = await main(process.argv.slice(2));
