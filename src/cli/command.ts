// What every command of the CLI shares: the command shape, output, configuration from flags and
// the environment, and a migrated database for the command's run. Commands live in src/main.ts
// (the small ones) and src/cli/ (one file each, as they grow).
import type { ParseArgsConfig } from 'node:util';
import { loadConfig, SETTINGS, type Config, type SettingName } from '../config.js';
import { connectDatabase, migrateToLatest, type DatabaseHandle } from '../db/connect.js';

export type Options = NonNullable<ParseArgsConfig['options']>;

export interface Command {
  summary: string;
  usage: string;
  /** Lines `sitebiz <command> --help` adds after the summary: defaults, what --json prints. */
  details?: string[];
  options: Options;
  run(values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<void>;
}

export const out = (text: string): void => {
  process.stdout.write(`${text}\n`);
};

/**
 * A command's result: with --json (which every command takes) exactly one JSON object on one
 * line of stdout, for scripts; otherwise the lines for people.
 */
export function report(values: Record<string, string | boolean | undefined>, json: Record<string, unknown>, text: readonly string[]): void {
  if (values.json) out(JSON.stringify(json));
  else for (const line of text) out(line);
}

/** How a failure is shown: with --json one object on stdout (scripts read one stream), else stderr. */
export function reportFailure(json: boolean, error: { code: string; message: string; usage?: string }): void {
  if (json) {
    out(JSON.stringify({ error: { code: error.code, message: error.message, ...(error.usage ? { usage: error.usage } : {}) } }));
    return;
  }
  process.stderr.write(`${error.message}\n${error.usage ? `Usage: ${error.usage}\n` : ''}`);
}

export function configFrom(values: Record<string, string | boolean | undefined>): Config {
  const flags: Partial<Record<SettingName, string>> = {};
  for (const [name, spec] of Object.entries(SETTINGS) as Array<[SettingName, (typeof SETTINGS)[SettingName]]>) {
    const v = values[spec.flag];
    if (typeof v === 'string') flags[name] = v;
  }
  return loadConfig(process.env, flags);
}

export async function withDatabase<T>(config: Config, run: (handle: DatabaseHandle) => Promise<T>): Promise<T> {
  const handle = await connectDatabase(config.database);
  try {
    await migrateToLatest(handle);
    return await run(handle);
  } finally {
    await handle.close();
  }
}

/** A mistake in how a command was called: printed with the usage, exit code 2. */
export class UsageError extends Error {}
