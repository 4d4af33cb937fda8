// What every command of the CLI shares: the command shape, output, configuration from flags and
// the environment, and a migrated database for the command's run. src/main.ts lists the commands
// with a one-line summary each; src/cli/ holds them, loaded only when one of them runs (or shows
// its help), so that a command pays only for the modules it uses.
import type { ParseArgsConfig } from 'node:util';
import { loadConfig, settingSource, SETTINGS, type Config, type SettingName } from '../config.js';
import type { DatabaseHandle } from '../db/connect.js';
import { AdminError } from '../domain/accounts.js';

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

/** The configuration flags among a command's values, by setting. */
export function flagsFrom(values: Record<string, string | boolean | undefined>): Partial<Record<SettingName, string>> {
  const flags: Partial<Record<SettingName, string>> = {};
  for (const [name, spec] of Object.entries(SETTINGS) as Array<[SettingName, (typeof SETTINGS)[SettingName]]>) {
    const v = values[spec.flag];
    if (typeof v === 'string') flags[name] = v;
  }
  return flags;
}

export function configFrom(values: Record<string, string | boolean | undefined>): Config {
  return loadConfig(process.env, flagsFrom(values));
}

/**
 * The base of links to the server this command talks about, for the links and curl lines it
 * prints: PUBLIC_URL (or http://HOST:PORT) when the command is given any of them, by flag or
 * environment, as the server was; otherwise the one the server that last started on this
 * database recorded (src/db/instance-settings.ts), since a terminal other than the server's has
 * none of the server's PORT=3001; the default only when no server has started on it.
 */
export async function serverBaseUrl(values: Record<string, string | boolean | undefined>, config: Config, handle: DatabaseHandle): Promise<string> {
  const flags = flagsFrom(values);
  const given = (['publicUrl', 'port', 'host'] as const).some((name) => settingSource(name, process.env, flags) !== 'default');
  if (given) return config.publicUrl;
  const { loadServerPublicUrl } = await import('../db/instance-settings.js');
  return (await loadServerPublicUrl(handle)) ?? config.publicUrl;
}

export async function withDatabase<T>(config: Config, run: (handle: DatabaseHandle) => Promise<T>): Promise<T> {
  // Loaded here: the drivers, Kysely and the migrations are a large part of a command's start-up,
  // and a command that fails on its arguments (or shows its help) never needs them.
  const { connectDatabase, migrateToLatest } = await import('../db/connect.js');
  const handle = await connectDatabase(config.database);
  try {
    if (config.migrateOnStart) await migrateToLatest(handle);
    else await refuseOldSchema(handle);
    return await run(handle);
  } finally {
    await handle.close();
  }
}

/** MIGRATE_ON_START=off: a command does not run on a schema `sitebiz migrate` has not brought up to date. */
async function refuseOldSchema(handle: DatabaseHandle): Promise<void> {
  const { pendingMigrations } = await import('../db/migration-status.js');
  const pending = await pendingMigrations(handle);
  if (pending.length > 0) {
    throw new AdminError(`the database lacks ${pending.length} migration(s) (${pending.join(', ')}) and MIGRATE_ON_START is off: run \`sitebiz migrate\` first`);
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
