// What every command of the CLI shares: the command shape, output, configuration from flags and
// the environment, and a migrated database for the command's run. src/main.ts lists the commands
// with a one-line summary each; src/cli/ holds them, loaded only when one of them runs (or shows
// its help), so that a command pays only for the modules it uses.
import type { ParseArgsConfig } from 'node:util';
import { loadConfig, SETTINGS, type Config, type SettingName } from '../config.js';
import type { DatabaseHandle } from '../db/connect.js';

export type Options = NonNullable<ParseArgsConfig['options']>;

/** A command as its module declares it; its one-line summary is in src/main.ts's list. */
export interface Command {
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
  // Loaded here: the drivers, Kysely and the migrations are a large part of a command's start-up,
  // and a command that fails on its arguments (or shows its help) never needs them.
  const { connectDatabase, migrateToLatest } = await import('../db/connect.js');
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

/** `serve` could not take its address (checked before the database is touched): exit code 1. */
export class PortUnavailableError extends Error {}

export function requiredInt(values: Record<string, string | boolean | undefined>, name: string): number {
  const raw = values[name];
  if (typeof raw !== 'string' || !/^\d+$/.test(raw)) throw new UsageError(`--${name} <id> is required (a number)`);
  return Number(raw);
}

export function requiredString(values: Record<string, string | boolean | undefined>, name: string): string {
  const raw = values[name];
  if (typeof raw !== 'string' || raw.trim() === '') throw new UsageError(`--${name} is required`);
  return raw;
}
