// The `sitebiz` command line: serve, init, seed, migrate, keys, accounts, sites, users, and the sandbox's
// trigger, listen, clock, reset and snapshot.
import { parseArgs } from 'node:util';
import { ConfigError, SETTINGS } from './config.js';
import { connectDatabase, migrateToLatest } from './db/connect.js';
import { PERMISSIONS, parsePermissionList } from './auth/permissions.js';
import { tokenRequestCommand } from './auth/oauth-routes.js';
import { USER_ROLES } from './auth/roles.js';
import {
  AdminError,
  createAccount,
  createApiKey,
  createSite,
  createUser,
  deleteApiKey,
  listApiKeys,
  rotateApiKey,
  soleAccountOwner,
} from './domain/accounts.js';
import { initialize, type InitResult } from './domain/initialize.js';
import { PortUnavailableError, serve } from './server.js';
import { configFrom, out, report, reportFailure, UsageError, withDatabase, type Command, type Options } from './cli/command.js';
import { seedCommand } from './cli/seed.js';
import { setPasswordCommand, signInLinkCommand } from './cli/console-users.js';
import { triggerCommand } from './cli/trigger.js';
import { listenCommand } from './cli/listen.js';
import { clockAdvanceCommand, clockShowCommand } from './cli/clock.js';
import { resetCommand, snapshotDeleteCommand, snapshotListCommand, snapshotRestoreCommand, snapshotSaveCommand } from './cli/snapshot.js';

/** Every command takes the configuration flags (--database-url, --port, ...). */
const CONFIG_OPTIONS: Options = Object.fromEntries(
  Object.values(SETTINGS).map((s) => [s.flag, { type: 'string' as const }]),
);

const CONFIG_HELP = Object.values(SETTINGS)
  .map((s) => `  --${s.flag.padEnd(24)} ${s.env.padEnd(22)} ${s.description}${s.default !== undefined ? ` (default ${s.default})` : ''}`)
  .join('\n');





function requiredInt(values: Record<string, string | boolean | undefined>, name: string): number {
  const raw = values[name];
  if (typeof raw !== 'string' || !/^\d+$/.test(raw)) throw new UsageError(`--${name} <id> is required (a number)`);
  return Number(raw);
}

function requiredString(values: Record<string, string | boolean | undefined>, name: string): string {
  const raw = values[name];
  if (typeof raw !== 'string' || raw.trim() === '') throw new UsageError(`--${name} is required`);
  return raw;
}


/** The lines that hand a new key to a person: the ids, the secret and a curl line for a token. */
export function credentialLines(result: InitResult): string[] {
  return [
    `Base URL:      ${result.base_url}`,
    `Site id:       ${result.site_id}`,
    `client_id:     ${result.client_id}`,
    `client_secret: ${result.client_secret}`,
    'Get a token:',
    `  ${tokenRequestCommand(result.base_url, result.client_id, result.client_secret)}`,
    ...(result.sign_in_url ? [`Console:       ${result.sign_in_url}`, '               (a one-time sign-in link for the owner, valid 15 minutes)'] : []),
  ];
}

const COMMANDS: Record<string, Command> = {
  serve: {
    summary: 'migrate, then serve the API (first run on an empty database: init --demo and print credentials)',
    usage: 'sitebiz serve [--json] [config flags]',
    details: [
      'Checks that the port is free before touching the database. --json: once serving, one line with an object',
      '(serving, docs, database, and credentials on the first run, else null); the other lines are the JSON log.',
    ],
    options: {},
    async run(values) {
      await serve(configFrom(values), { json: values.json === true });
    },
  },
  init: {
    summary: 'migrate; create an account, owner and site if none exists; print a new API key with every permission',
    usage: 'sitebiz init [--demo [--contacts N]|--empty] [--json] [config flags]',
    options: { demo: { type: 'boolean' }, empty: { type: 'boolean' }, contacts: { type: 'string' } },
    async run(values) {
      if (values.demo && values.empty) throw new UsageError('choose one of --demo and --empty');
      if (values.contacts !== undefined && values.empty) throw new UsageError('--contacts sizes the demo data; it does not go with --empty');
      const contacts = values.contacts === undefined ? undefined : requiredInt(values, 'contacts');
      if (contacts !== undefined && (contacts < 60 || contacts > 2_000_000)) {
        throw new UsageError('--contacts takes a number from 60 (the demo set) to 2000000');
      }
      const config = configFrom(values);
      const result = await withDatabase(config, (h) =>
        initialize(h, { demo: !values.empty, baseUrl: config.publicUrl, ...(contacts ? { demoContacts: contacts } : {}) }),
      );
      const { created, ...json } = result;
      report(values, json, [
        created ? 'Created an account, its owner and a site.' : 'The account exists; created a new API key for its owner.',
        ...credentialLines(result),
      ]);
    },
  },
  seed: seedCommand,
  'clock show': clockShowCommand,
  'clock advance': clockAdvanceCommand,
  reset: resetCommand,
  'snapshot save': snapshotSaveCommand,
  'snapshot restore': snapshotRestoreCommand,
  'snapshot list': snapshotListCommand,
  'snapshot delete': snapshotDeleteCommand,
  migrate: {
    summary: 'bring the database schema up to date',
    usage: 'sitebiz migrate [--json] [config flags]',
    options: {},
    async run(values) {
      const config = configFrom(values);
      const handle = await connectDatabase(config.database);
      try {
        const applied = await migrateToLatest(handle);
        report(values, { applied }, [applied.length === 0 ? 'Database is up to date.' : `Applied: ${applied.join(', ')}`]);
      } finally {
        await handle.close();
      }
    },
  },
  'keys create': {
    summary: 'create an API key for a user (by default the owner, when the database has one account)',
    usage: 'sitebiz keys create [--user <id>] --name <name> --permissions <comma list|all> [--json]',
    details: ['--user defaults to the owner of the account when the database holds exactly one (as after npm start).'],
    options: { user: { type: 'string' }, name: { type: 'string' }, permissions: { type: 'string' } },
    async run(values) {
      const named = values.user === undefined ? undefined : requiredInt(values, 'user');
      const name = requiredString(values, 'name');
      let permissions: string[];
      try {
        permissions = parsePermissionList(requiredString(values, 'permissions'));
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
      const key = await withDatabase(configFrom(values), async (h) =>
        createApiKey(h, { userId: named ?? (await soleAccountOwner(h)), name, permissions }),
      );
      report(
        values,
        { id: String(key.id), name: key.name, user_id: String(key.userId), client_id: key.clientId, client_secret: key.clientSecret, permissions: key.permissions },
        [
          `Created API key ${key.id} (${key.name}) for user ${key.userId}${named === undefined ? ', the account\'s owner' : ''}.`,
          `client_id:     ${key.clientId}`,
          `client_secret: ${key.clientSecret}   (shown once; store it now)`,
          `permissions:   ${key.permissions.join(', ')}`,
        ],
      );
    },
  },
  'keys list': {
    summary: 'list API keys (never their secrets)',
    usage: 'sitebiz keys list [--account <id>] [--json]',
    details: ['--json: {"keys": [...]}, one object per key.'],
    options: { account: { type: 'string' } },
    async run(values) {
      const accountId = values.account === undefined ? undefined : requiredInt(values, 'account');
      const keys = await withDatabase(configFrom(values), (h) => listApiKeys(h, accountId === undefined ? {} : { accountId }));
      report(
        values,
        { keys },
        keys.length === 0
          ? ['No API keys.']
          : keys.map(
              (k) =>
                `${String(k.id).padStart(4)}  ${k.client_id}  user ${k.user_id}  ${k.name}  [${k.permissions.length} permissions]${k.rotated_at ? `  rotated ${k.rotated_at}` : ''}`,
            ),
      );
    },
  },
  'keys rotate': {
    summary: 'give a key a new secret; every token granted with it stops working at once',
    usage: 'sitebiz keys rotate <id|client_id> [--json]',
    options: {},
    async run(values, positionals) {
      const ref = positionals[0];
      if (!ref) throw new UsageError('name the key: sitebiz keys rotate <id|client_id>');
      const key = await withDatabase(configFrom(values), (h) => rotateApiKey(h, ref));
      report(values, { id: String(key.id), client_id: key.clientId, client_secret: key.clientSecret }, [
        `Rotated API key ${key.id}; its earlier tokens are revoked.`,
        `client_id:     ${key.clientId}`,
        `client_secret: ${key.clientSecret}   (shown once; store it now)`,
      ]);
    },
  },
  'keys delete': {
    summary: 'delete a key; every token granted with it stops working at once',
    usage: 'sitebiz keys delete <id|client_id> [--json]',
    options: {},
    async run(values, positionals) {
      const ref = positionals[0];
      if (!ref) throw new UsageError('name the key: sitebiz keys delete <id|client_id>');
      const key = await withDatabase(configFrom(values), (h) => deleteApiKey(h, ref));
      report(values, { id: String(key.id), client_id: key.clientId, deleted: true }, [`Deleted API key ${key.id} (${key.clientId}).`]);
    },
  },
  'accounts create': {
    summary: 'create an account',
    usage: 'sitebiz accounts create --name <name> [--json]',
    options: { name: { type: 'string' } },
    async run(values) {
      const name = requiredString(values, 'name');
      const id = await withDatabase(configFrom(values), (h) => createAccount(h, { name }));
      report(values, { id: String(id), name }, [`Created account ${id}.`]);
    },
  },
  'sites create': {
    summary: 'create a site in an account',
    usage: 'sitebiz sites create --account <id> --title <title> --subdomain <subdomain> [--json]',
    options: { account: { type: 'string' }, title: { type: 'string' }, subdomain: { type: 'string' } },
    async run(values) {
      const accountId = requiredInt(values, 'account');
      const title = requiredString(values, 'title');
      const subdomain = requiredString(values, 'subdomain');
      const id = await withDatabase(configFrom(values), (h) => createSite(h, { accountId, title, subdomain }));
      report(values, { id: String(id), account_id: String(accountId), title, subdomain }, [`Created site ${id}.`]);
    },
  },
  'users create': {
    summary: 'create a user with a role and the sites it may access',
    usage: `sitebiz users create --account <id> --name <name> --email <email> --role <${USER_ROLES.join('|')}> [--sites <id,id>] [--json]`,
    options: {
      account: { type: 'string' },
      name: { type: 'string' },
      email: { type: 'string' },
      role: { type: 'string' },
      sites: { type: 'string' },
    },
    async run(values) {
      const accountId = requiredInt(values, 'account');
      const name = requiredString(values, 'name');
      const email = requiredString(values, 'email');
      const role = requiredString(values, 'role');
      const siteText = typeof values.sites === 'string' ? values.sites : '';
      const siteIds = siteText.split(',').map((s) => s.trim()).filter(Boolean);
      if (siteIds.some((s) => !/^\d+$/.test(s))) throw new UsageError('--sites takes a comma list of site ids');
      const id = await withDatabase(configFrom(values), (h) =>
        createUser(h, { accountId, name, email, role, siteIds: siteIds.map(Number) }),
      );
      report(values, { id: String(id), account_id: String(accountId), name, email, role, site_ids: siteIds }, [`Created user ${id}.`]);
    },
  },
  'users set-password': setPasswordCommand,
  'users sign-in-link': signInLinkCommand,
  trigger: triggerCommand,
  listen: listenCommand,
};

function generalHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length)) + 1;
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)} ${c.summary}`);
  return [
    'sitebiz: a server for the Site Business Service API v1',
    '',
    'Usage: sitebiz <command> [options]   (in a checkout: npm run sitebiz -- <command>)',
    '',
    'Commands:',
    ...lines,
    '',
    'Configuration (flags override environment variables):',
    CONFIG_HELP,
    '',
    `Permissions for keys create --permissions: all, or a comma list of ${PERMISSIONS.map((p) => p.name).join(', ')}`,
    '',
    'sitebiz <command> --help shows one command.',
  ].join('\n');
}

function commandHelp(name: string, command: Command): string {
  const details = command.details ? ['', ...command.details] : [];
  return [`${command.usage}`, '', command.summary, ...details, '', 'Configuration flags:', CONFIG_HELP].join('\n');
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
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    out(generalHelp());
    return first === undefined ? 1 : 0;
  }
  const twoWord = second !== undefined ? `${first} ${second}` : '';
  const name = COMMANDS[twoWord] ? twoWord : first;
  const command = COMMANDS[name];
  if (!command) {
    const group = Object.keys(COMMANDS).filter((c) => c.startsWith(`${first} `));
    reportFailure(json, {
      code: 'usage',
      message:
        group.length > 0 ? `sitebiz ${first}: say which: ${group.join(', ')}` : `sitebiz: unknown command ${JSON.stringify(first)}; see sitebiz --help`,
    });
    return 2;
  }
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
    out(commandHelp(name, command));
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
