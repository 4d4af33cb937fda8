// The process entry of the `sitebiz` command: bin/sitebiz.js runs the compiled copy of this file
// (dist/cli-entry.js), and `npm run dev` runs it from source under tsx's watch mode.
import { main } from './main.js';

process.exitCode = await main(process.argv.slice(2));
