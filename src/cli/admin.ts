// The administration commands: migrate, and keys, accounts, sites and users made or changed in
// the database directly (no server needed), each through the domain's own functions.
import { cliActor } from '../audit/audit-events.js';
import { parsePermissionList } from '../auth/permissions.js';
import { USER_ROLES } from '../auth/roles.js';
import { createAccount, createApiKey, createSite, createUser, deleteApiKey, listApiKeys, rotateApiKey, soleAccountOwner } from '../domain/accounts.js';
import type { MigrationStatus } from '../db/migration-status.js';
import { configFrom, report, requiredInt, requiredString, UsageError, withDatabase, type Command } from './command.js';

export const migrateCommand: Command = {
  usage: 'sitebiz migrate [--status] [--json] [config flags]',
  details: [
    '  --status   change nothing: list the applied migrations and the pending ones, what each pending one does,',
    '             and whether it rewrites or indexes a table that grows with the data (slow on a large database)',
    'Without --status, applies the pending migrations (several processes may run it at once: one applies them).',
    '--json: {applied, pending: [{name, summary, rewrites_large_table}], unknown} with --status; {applied} without.',
  ],
  options: { status: { type: 'boolean' } },
  async run(values) {
    const config = configFrom(values);
    const { connectDatabase, migrateToLatest } = await import('../db/connect.js');
    const handle = await connectDatabase(config.database);
    try {
      if (values.status) {
        const { migrationStatus } = await import('../db/migration-status.js');
        reportStatus(values, handle.description, await migrationStatus(handle));
        return;
      }
      const applied = await migrateToLatest(handle);
      report(values, { applied }, [applied.length === 0 ? 'Database is up to date.' : `Applied: ${applied.join(', ')}`]);
    } finally {
      await handle.close();
    }
  },
};

function reportStatus(values: Record<string, string | boolean | undefined>, database: string, status: MigrationStatus): void {
  const large = status.pending.filter((m) => m.rewritesLargeTable);
  report(
    values,
    {
      database,
      applied: status.applied.map((m) => ({ name: m.name, applied_at: m.appliedAt })),
      pending: status.pending.map((m) => ({ name: m.name, summary: m.summary, rewrites_large_table: m.rewritesLargeTable })),
      unknown: status.unknown,
    },
    [
      `Database: ${database}`,
      `Applied: ${status.applied.length} migration(s)${status.applied.length > 0 ? `, the last ${status.applied.at(-1)!.name} at ${status.applied.at(-1)!.appliedAt}` : ''}.`,
      ...(status.unknown.length > 0 ? [`Applied by a newer sitebiz (unknown to this version): ${status.unknown.join(', ')}.`] : []),
      ...(status.pending.length === 0
        ? ['Pending: none; the schema is current.']
        : [
            `Pending: ${status.pending.length} migration(s), applied in this order by \`sitebiz migrate\`:`,
            ...status.pending.map((m) => `  ${m.name}${m.rewritesLargeTable ? '  [rewrites or indexes a large table]' : ''}\n      ${m.summary}`),
            ...(large.length > 0 ? [`${large.length} of them take time on a large database (and lock the tables they rewrite): take a backup first and plan a window.`] : []),
          ]),
    ],
  );
}

export const keysCreateCommand: Command = {
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
      createApiKey(h, { userId: named ?? (await soleAccountOwner(h)), name, permissions, actor: cliActor() }),
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
};

export const keysListCommand: Command = {
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
};

export const keysRotateCommand: Command = {
  usage: 'sitebiz keys rotate <id|client_id> [--json]',
  options: {},
  async run(values, positionals) {
    const ref = positionals[0];
    if (!ref) throw new UsageError('name the key: sitebiz keys rotate <id|client_id>');
    const key = await withDatabase(configFrom(values), (h) => rotateApiKey(h, ref, undefined, {}, cliActor()));
    report(values, { id: String(key.id), client_id: key.clientId, client_secret: key.clientSecret }, [
      `Rotated API key ${key.id}; its earlier tokens are revoked.`,
      `client_id:     ${key.clientId}`,
      `client_secret: ${key.clientSecret}   (shown once; store it now)`,
    ]);
  },
};

export const keysDeleteCommand: Command = {
  usage: 'sitebiz keys delete <id|client_id> [--json]',
  options: {},
  async run(values, positionals) {
    const ref = positionals[0];
    if (!ref) throw new UsageError('name the key: sitebiz keys delete <id|client_id>');
    const key = await withDatabase(configFrom(values), (h) => deleteApiKey(h, ref, {}, cliActor()));
    report(values, { id: String(key.id), client_id: key.clientId, deleted: true }, [`Deleted API key ${key.id} (${key.clientId}).`]);
  },
};

export const accountsCreateCommand: Command = {
  usage: 'sitebiz accounts create --name <name> [--json]',
  options: { name: { type: 'string' } },
  async run(values) {
    const name = requiredString(values, 'name');
    const id = await withDatabase(configFrom(values), (h) => createAccount(h, { name }));
    report(values, { id: String(id), name }, [`Created account ${id}.`]);
  },
};

export const sitesCreateCommand: Command = {
  usage: 'sitebiz sites create --account <id> --title <title> --subdomain <subdomain> [--json]',
  options: { account: { type: 'string' }, title: { type: 'string' }, subdomain: { type: 'string' } },
  async run(values) {
    const accountId = requiredInt(values, 'account');
    const title = requiredString(values, 'title');
    const subdomain = requiredString(values, 'subdomain');
    const id = await withDatabase(configFrom(values), (h) => createSite(h, { accountId, title, subdomain }));
    report(values, { id: String(id), account_id: String(accountId), title, subdomain }, [`Created site ${id}.`]);
  },
};

export const usersCreateCommand: Command = {
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
};
