// The `sitebiz` command line: serve, init, migrate, keys, accounts, sites, users.
import { parseArgs } from 'node:util';
import { ConfigError, SETTINGS } from './config.js';
import { connectDatabase, migrateToLatest } from './db/connect.js';
import { PERMISSIONS, parsePermissionList } from './auth/permissions.js';
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
} from './domain/accounts.js';
import { initialize, type InitResult } from './domain/initialize.js';
import { serve } from './server.js';
import { configFrom, out, UsageError, withDatabase, type Command, type Options } from './cli/command.js';
import { seedCommand } from './cli/seed.js';

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


export function printCredentials(result: InitResult): void {
  out(`Base URL:      ${result.base_url}`);
  out(`Site id:       ${result.site_id}`);
  out(`client_id:     ${result.client_id}`);
  out(`client_secret: ${result.client_secret}`);
  out('Get a token:');
  out(
    `  curl -s -X POST ${result.base_url}/v1/oauth/token -d grant_type=client_credentials -d client_id=${result.client_id} -d client_secret=${result.client_secret}`,
  );
}

const COMMANDS: Record<string, Command> = {
  serve: {
    summary: 'migrate, then serve the API (first run on an empty database: init --demo and print credentials)',
    usage: 'sitebiz serve [config flags]',
    options: {},
    async run(values) {
      await serve(configFrom(values));
    },
  },
  init: {
    summary: 'migrate; create an account, owner and site if none exists; print a new API key with every permission',
    usage: 'sitebiz init [--demo [--contacts N]|--empty] [--json] [config flags]',
    options: { demo: { type: 'boolean' }, empty: { type: 'boolean' }, json: { type: 'boolean' }, contacts: { type: 'string' } },
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
      if (values.json) {
        const { created: _created, ...json } = result;
        out(JSON.stringify(json));
        return;
      }
      out(result.created ? 'Created an account, its owner and a site.' : 'The account exists; created a new API key for its owner.');
      printCredentials(result);
    },
  },
  seed: seedCommand,
  migrate: {
    summary: 'bring the database schema up to date',
    usage: 'sitebiz migrate [config flags]',
    options: {},
    async run(values) {
      const config = configFrom(values);
      const handle = await connectDatabase(config.database);
      try {
        const applied = await migrateToLatest(handle);
        out(applied.length === 0 ? 'Database is up to date.' : `Applied: ${applied.join(', ')}`);
      } finally {
        await handle.close();
      }
    },
  },
  'keys create': {
    summary: 'create an API key for a user',
    usage: 'sitebiz keys create --user <id> --name <name> --permissions <comma list|all> [--json]',
    options: { user: { type: 'string' }, name: { type: 'string' }, permissions: { type: 'string' }, json: { type: 'boolean' } },
    async run(values) {
      const userId = requiredInt(values, 'user');
      const name = requiredString(values, 'name');
      let permissions: string[];
      try {
        permissions = parsePermissionList(requiredString(values, 'permissions'));
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
      const key = await withDatabase(configFrom(values), (h) => createApiKey(h, { userId, name, permissions }));
      if (values.json) {
        out(JSON.stringify({ id: String(key.id), name: key.name, user_id: String(key.userId), client_id: key.clientId, client_secret: key.clientSecret, permissions: key.permissions }));
        return;
      }
      out(`Created API key ${key.id} (${key.name}) for user ${key.userId}.`);
      out(`client_id:     ${key.clientId}`);
      out(`client_secret: ${key.clientSecret}   (shown once; store it now)`);
      out(`permissions:   ${key.permissions.join(', ')}`);
    },
  },
  'keys list': {
    summary: 'list API keys (never their secrets)',
    usage: 'sitebiz keys list [--account <id>] [--json]',
    options: { account: { type: 'string' }, json: { type: 'boolean' } },
    async run(values) {
      const accountId = values.account === undefined ? undefined : requiredInt(values, 'account');
      const keys = await withDatabase(configFrom(values), (h) => listApiKeys(h, accountId === undefined ? {} : { accountId }));
      if (values.json) return out(JSON.stringify(keys));
      if (keys.length === 0) return out('No API keys.');
      for (const k of keys) {
        out(`${String(k.id).padStart(4)}  ${k.client_id}  user ${k.user_id}  ${k.name}  [${k.permissions.length} permissions]${k.rotated_at ? `  rotated ${k.rotated_at}` : ''}`);
      }
    },
  },
  'keys rotate': {
    summary: 'give a key a new secret; every token granted with it stops working at once',
    usage: 'sitebiz keys rotate <id|client_id> [--json]',
    options: { json: { type: 'boolean' } },
    async run(values, positionals) {
      const ref = positionals[0];
      if (!ref) throw new UsageError('name the key: sitebiz keys rotate <id|client_id>');
      const key = await withDatabase(configFrom(values), (h) => rotateApiKey(h, ref));
      if (values.json) return out(JSON.stringify({ id: String(key.id), client_id: key.clientId, client_secret: key.clientSecret }));
      out(`Rotated API key ${key.id}; its earlier tokens are revoked.`);
      out(`client_id:     ${key.clientId}`);
      out(`client_secret: ${key.clientSecret}   (shown once; store it now)`);
    },
  },
  'keys delete': {
    summary: 'delete a key; every token granted with it stops working at once',
    usage: 'sitebiz keys delete <id|client_id>',
    options: {},
    async run(values, positionals) {
      const ref = positionals[0];
      if (!ref) throw new UsageError('name the key: sitebiz keys delete <id|client_id>');
      const key = await withDatabase(configFrom(values), (h) => deleteApiKey(h, ref));
      out(`Deleted API key ${key.id} (${key.clientId}).`);
    },
  },
  'accounts create': {
    summary: 'create an account',
    usage: 'sitebiz accounts create --name <name> [--json]',
    options: { name: { type: 'string' }, json: { type: 'boolean' } },
    async run(values) {
      const name = requiredString(values, 'name');
      const id = await withDatabase(configFrom(values), (h) => createAccount(h, { name }));
      out(values.json ? JSON.stringify({ id: String(id), name }) : `Created account ${id}.`);
    },
  },
  'sites create': {
    summary: 'create a site in an account',
    usage: 'sitebiz sites create --account <id> --title <title> --subdomain <subdomain> [--json]',
    options: { account: { type: 'string' }, title: { type: 'string' }, subdomain: { type: 'string' }, json: { type: 'boolean' } },
    async run(values) {
      const accountId = requiredInt(values, 'account');
      const title = requiredString(values, 'title');
      const subdomain = requiredString(values, 'subdomain');
      const id = await withDatabase(configFrom(values), (h) => createSite(h, { accountId, title, subdomain }));
      out(values.json ? JSON.stringify({ id: String(id), account_id: String(accountId), title, subdomain }) : `Created site ${id}.`);
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
      json: { type: 'boolean' },
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
      out(values.json ? JSON.stringify({ id: String(id), account_id: String(accountId), name, email, role, site_ids: siteIds }) : `Created user ${id}.`);
    },
  },
};

function generalHelp(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(16)} ${c.summary}`);
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
  return [`${command.usage}`, '', command.summary, '', 'Configuration flags:', CONFIG_HELP].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [first, second] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    out(generalHelp());
    return first === undefined ? 1 : 0;
  }
  const twoWord = second !== undefined ? `${first} ${second}` : '';
  const name = COMMANDS[twoWord] ? twoWord : first;
  const command = COMMANDS[name];
  if (!command) {
    const group = Object.keys(COMMANDS).filter((c) => c.startsWith(`${first} `));
    process.stderr.write(
      group.length > 0
        ? `sitebiz ${first}: say which: ${group.join(', ')}\n`
        : `sitebiz: unknown command ${JSON.stringify(first)}; see sitebiz --help\n`,
    );
    return 2;
  }
  const rest = argv.slice(name.split(' ').length);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...CONFIG_OPTIONS, ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    process.stderr.write(`sitebiz ${name}: ${(error as Error).message}\nUsage: ${command.usage}\n`);
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
    if (error instanceof ConfigError) {
      process.stderr.write(`sitebiz: ${error.message}\n`);
      return 2;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`sitebiz ${name}: ${error.message}\nUsage: ${command.usage}\n`);
      return 2;
    }
    if (error instanceof AdminError) {
      process.stderr.write(`sitebiz ${name}: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`sitebiz ${name} failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
