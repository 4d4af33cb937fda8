// The `sitebiz` command line: serve, init, seed, import, migrate, backup, restore, keys, accounts, sites, users, and the sandbox's
// trigger, listen, clock, reset and snapshot. This file lists them, each with its summary and the
// module that holds it (src/cli/); a command's module is loaded only when it runs or shows its
// help, so `sitebiz --help` loads none of them and `keys list` neither Fastify nor the demo data.
import { parseArgs } from 'node:util';
import { ConfigError, SETTINGS } from './config.js';
import { PERMISSIONS } from './auth/permissions.js';
import { AdminError } from './domain/accounts.js';
import { PortUnavailableError, reportFailure, out, UsageError, type Command, type Options } from './cli/command.js';

/** A command as the list knows it: its summary, and where the rest of it is. */
interface CommandEntry {
  summary: string;
  load(): Promise<Command>;
}

/** Every command takes the configuration flags (--database-url, --port, ...). */
const CONFIG_OPTIONS: Options = Object.fromEntries(
  Object.values(SETTINGS).map((s) => [s.flag, { type: 'string' as const }]),
);

const COMMANDS: Record<string, CommandEntry> = {
  serve: {
    summary: 'migrate, then serve the API (first run on an empty database: init --demo and print credentials)',
    load: async () => (await import('./cli/serve.js')).serveCommand,
  },
  init: {
    summary: 'migrate; create an account, owner and site if none exists; print a new API key with every permission',
    load: async () => (await import('./cli/init.js')).initCommand,
  },
  seed: {
    summary: 'create an account with sites full of generated contacts, customers and activity (fast, for any size)',
    load: async () => (await import('./cli/seed.js')).seedCommand,
  },
  import: {
    summary: 'copy every site another Site Business Service API key can read into this database, as a new account',
    load: async () => (await import('./cli/import.js')).importCommand,
  },
  'clock show': {
    summary: "show an account's sandbox clock (its time and how far it is ahead of real time)",
    load: async () => (await import('./cli/clock.js')).clockShowCommand,
  },
  'clock advance': {
    summary: "move an account's sandbox clock forward and run what falls due (renewals, installments, webhook retries)",
    load: async () => (await import('./cli/clock.js')).clockAdvanceCommand,
  },
  reset: {
    summary: 'put the account\'s data back as it was seeded (keys, users, hooks and the delivery log stay)',
    load: async () => (await import('./cli/snapshot.js')).resetCommand,
  },
  'snapshot save': {
    summary: 'save the account\'s data (and clock) under a name, to restore later',
    load: async () => (await import('./cli/snapshot.js')).snapshotSaveCommand,
  },
  'snapshot restore': {
    summary: 'put the account\'s data (and clock) back as a snapshot saved them',
    load: async () => (await import('./cli/snapshot.js')).snapshotRestoreCommand,
  },
  'snapshot list': {
    summary: 'list the account\'s snapshots',
    load: async () => (await import('./cli/snapshot.js')).snapshotListCommand,
  },
  'snapshot delete': {
    summary: 'delete a snapshot (the data stays as it is; the seed snapshot cannot be deleted)',
    load: async () => (await import('./cli/snapshot.js')).snapshotDeleteCommand,
  },
  migrate: {
    summary: 'bring the database schema up to date (--status: what is applied, what is pending and what each pending one does)',
    load: async () => (await import('./cli/admin.js')).migrateCommand,
  },
  backup: {
    summary: 'write a consistent backup of the database to a file while servers keep serving (SQLite file or sitebiz dump)',
    load: async () => (await import('./cli/backup.js')).backupCommand,
  },
  restore: {
    summary: 'put a backup into an empty database, then migrate it to this version',
    load: async () => (await import('./cli/backup.js')).restoreCommand,
  },
  'keys create': {
    summary: 'create an API key for a user (by default the owner, when the database has one account)',
    load: async () => (await import('./cli/admin.js')).keysCreateCommand,
  },
  'keys list': {
    summary: 'list API keys (never their secrets)',
    load: async () => (await import('./cli/admin.js')).keysListCommand,
  },
  'keys rotate': {
    summary: 'give a key a new secret; every token granted with it stops working at once',
    load: async () => (await import('./cli/admin.js')).keysRotateCommand,
  },
  'keys delete': {
    summary: 'delete a key; every token granted with it stops working at once',
    load: async () => (await import('./cli/admin.js')).keysDeleteCommand,
  },
  'accounts create': {
    summary: 'create an account',
    load: async () => (await import('./cli/admin.js')).accountsCreateCommand,
  },
  'sites create': {
    summary: 'create a site in an account',
    load: async () => (await import('./cli/admin.js')).sitesCreateCommand,
  },
  'users create': {
    summary: 'create a user with a role and the sites it may access',
    load: async () => (await import('./cli/admin.js')).usersCreateCommand,
  },
  'users set-password': {
    summary: 'set a user\'s console password (read from standard input); their console sessions end',
    load: async () => (await import('./cli/console-users.js')).setPasswordCommand,
  },
  'users sign-in-link': {
    summary: 'print a one-time console sign-in link for a user (default: the owner, when the database has one account)',
    load: async () => (await import('./cli/console-users.js')).signInLinkCommand,
  },
  trigger: {
    summary: 'run the flow that emits a webhook event on the demo site (or --site) and print what it made',
    load: async () => (await import('./cli/trigger.js')).triggerCommand,
  },
  listen: {
    summary: 'forward the site\'s webhook deliveries to a local URL while it runs (temporary hooks, removed on exit)',
    load: async () => (await import('./cli/listen.js')).listenCommand,
  },
};

const CONFIG_POINTER = 'Configuration flags (--database-url, --port, ... and their environment variables): sitebiz help config';

function generalHelp(): string {
  return [
    'sitebiz: a server for the Site Business Service API v1',
    '',
    'Usage: sitebiz <command> [options]   (in a checkout: npm run sitebiz -- <command>)',
    '',
    'Commands:',
    ...commandLines(Object.keys(COMMANDS)),
    '',
    `Permissions for keys create --permissions: all, or a comma list of ${PERMISSIONS.map((p) => p.name).join(', ')}`,
    '',
    'sitebiz <command> --help (or sitebiz help <command>) shows one command; sitebiz <group> --help a group (keys, users, ...).',
    CONFIG_POINTER,
  ].join('\n');
}

function commandLines(names: readonly string[]): string[] {
  const width = Math.max(...names.map((name) => name.length)) + 1;
  return names.map((name) => `  ${name.padEnd(width)} ${COMMANDS[name]!.summary}`);
}

/** The commands named `<group> ...` (keys, users, clock, snapshot, ...); empty for no group. */
function groupMembers(group: string): string[] {
  return Object.keys(COMMANDS).filter((name) => name.startsWith(`${group} `));
}

function groupHelp(group: string): string {
  return [`Usage: sitebiz ${group} <command> [options]`, '', 'Commands:', ...commandLines(groupMembers(group)), '', 'sitebiz <command> --help shows one command.', CONFIG_POINTER].join('\n');
}

/** The settings every command takes, as flags and as environment variables (src/config.ts). */
function configHelp(): string {
  const lines = Object.values(SETTINGS).map(
    (s) => `  --${s.flag.padEnd(24)} ${s.env.padEnd(22)} ${s.description}${s.default !== undefined ? ` (default ${s.default})` : ''}`,
  );
  return ['Configuration: every command takes these flags; each may be given as its environment variable instead (a flag wins).', '', ...lines].join('\n');
}

function commandHelp(summary: string, command: Command): string {
  const details = command.details ? ['', ...command.details] : [];
  return [command.usage, '', summary, ...details, '', 'Every command also takes --json (one JSON object on stdout, errors included) and --help.', CONFIG_POINTER].join('\n');
}

/** Every command takes --json (one JSON object on stdout, errors included) and --help. */
const COMMON_OPTIONS: Options = { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } };

interface Failure {
  exitCode: 1 | 2;
  /** Stable, for --json: usage, configuration, rejected, port_unavailable, failed. */
  code: string;
  message: string;
  usage?: string;
}

/** Exit code 2 for how the command was called, 1 for what happened when it ran. */
function describeFailure(name: string, command: Command, error: unknown): Failure {
  if (error instanceof ConfigError) return { exitCode: 2, code: 'configuration', message: `sitebiz: ${error.message}` };
  if (error instanceof UsageError) return { exitCode: 2, code: 'usage', message: `sitebiz ${name}: ${error.message}`, usage: command.usage };
  if (error instanceof AdminError) return { exitCode: 1, code: 'rejected', message: `sitebiz ${name}: ${error.message}` };
  if (error instanceof PortUnavailableError) return { exitCode: 1, code: 'port_unavailable', message: `sitebiz ${name}: ${error.message}` };
  return { exitCode: 1, code: 'failed', message: `sitebiz ${name} failed: ${error instanceof Error ? error.message : String(error)}` };
}

export async function main(argv: string[]): Promise<number> {
  const [first, second] = argv;
  // Known before parsing, so that even a misspelt option answers in JSON.
  const json = argv.includes('--json');
  if (first === undefined || first === '--help' || first === '-h') {
    out(generalHelp());
    return first === undefined ? 1 : 0;
  }
  if (first === 'help') return help(argv.slice(1), json);
  const twoWord = second !== undefined ? `${first} ${second}` : '';
  const name = COMMANDS[twoWord] ? twoWord : first;
  const entry = COMMANDS[name];
  if (!entry) {
    const group = groupMembers(first);
    if (group.length > 0 && (second === '--help' || second === '-h')) {
      out(groupHelp(first));
      return 0;
    }
    reportFailure(json, {
      code: 'usage',
      message:
        group.length > 0 ? `sitebiz ${first}: say which: ${group.join(', ')}` : `sitebiz: unknown command ${JSON.stringify(first)}; see sitebiz --help`,
    });
    return 2;
  }
  const command = await entry.load();
  const rest = argv.slice(name.split(' ').length);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...CONFIG_OPTIONS, ...command.options, ...COMMON_OPTIONS },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    reportFailure(json, { code: 'usage', message: `sitebiz ${name}: ${(error as Error).message}`, usage: command.usage });
    return 2;
  }
  if (parsed.values.help) {
    out(commandHelp(entry.summary, command));
    return 0;
  }
  try {
    await command.run(parsed.values as Record<string, string | boolean | undefined>, parsed.positionals);
    return 0;
  } catch (error) {
    const failure = describeFailure(name, command, error);
    reportFailure(json, failure);
    return failure.exitCode;
  }
}

/** `sitebiz help`, `help config`, `help <group>`, `help <command>`. */
async function help(topic: string[], json: boolean): Promise<number> {
  const words = topic.filter((word) => word !== '--json');
  const name = words.join(' ');
  if (name === '') out(generalHelp());
  else if (name === 'config') out(configHelp());
  else if (COMMANDS[name]) out(commandHelp(COMMANDS[name].summary, await COMMANDS[name].load()));
  else if (words.length === 1 && groupMembers(name).length > 0) out(groupHelp(name));
  else {
    reportFailure(json, { code: 'usage', message: `sitebiz help: no command or topic ${JSON.stringify(name)}; see sitebiz --help` });
    return 2;
  }
  return 0;
}
