// `sitebiz seed`: fill a database with generated sites at any size (see docs/seeding.md).
import { tokenRequestCommand } from '../auth/oauth-routes.js';
import { configFrom, out, serverBaseUrl, UsageError, withDatabase, type Command } from './command.js';
import { seedProgress } from './progress.js';
import { MIN_SEED_CONTACTS, seedAccount, type SeedResult } from '../seed/seed-account.js';

const MAX_CONTACTS_PER_SITE = 10_000_000;
const MAX_SITES = 1_000;

type Values = Record<string, string | boolean | undefined>;

function wholeNumber(values: Values, name: string, fallback: number, min: number, max: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UsageError(`--${name} takes a whole number from ${min} to ${max}`);
  }
  return Number(raw);
}

function moment(values: Values): Date {
  const raw = values.now;
  if (raw === undefined) return new Date();
  const date = typeof raw === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(raw) ? new Date(raw) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) throw new UsageError('--now takes an ISO 8601 time such as 2026-06-01T12:00:00Z');
  return date;
}

export const seedCommand: Command = {
  usage: [
    'sitebiz seed [--contacts N] [--sites S] [--seed X] [--account ID] [--now TIME] [--no-snapshot] [--json] [config flags]',
    '',
    `  --contacts N   contacts per site (default 10000, from ${MIN_SEED_CONTACTS} to ${MAX_CONTACTS_PER_SITE}), with`,
    '                 customers, purchases, payments, orders, tags, forms, email activity and notes in proportion',
    '  --sites S      sites to fill (default 1)',
    '  --seed X       the random seed (default 1): the same seed, time and database give the same rows',
    '  --account ID   add the sites to this account (its owner gets the key); default: a new account and owner',
    '  --now TIME     the moment the data is relative to (default: now), e.g. 2026-06-01T12:00:00Z',
    '  --no-snapshot  do not save the account as its `seed` snapshot (what `sitebiz reset` goes back to);',
    '                 saving copies every row of the account once',
    '  --json         print one JSON object (account_id, site_ids, user_id, client_id, client_secret, rows)',
    '',
    'Progress goes to stderr: a bar with rows per second on a terminal, a line every few seconds otherwise.',
  ].join('\n'),
  options: {
    contacts: { type: 'string' },
    sites: { type: 'string' },
    seed: { type: 'string' },
    account: { type: 'string' },
    now: { type: 'string' },
    'no-snapshot': { type: 'boolean' },
  },
  async run(values) {
    const contactsPerSite = wholeNumber(values, 'contacts', 10_000, MIN_SEED_CONTACTS, MAX_CONTACTS_PER_SITE);
    const sites = wholeNumber(values, 'sites', 1, 1, MAX_SITES);
    const seed = wholeNumber(values, 'seed', 1, 0, 2 ** 32 - 1);
    const accountId = values.account === undefined ? undefined : wholeNumber(values, 'account', 0, 1, Number.MAX_SAFE_INTEGER);
    const now = moment(values);
    const config = configFrom(values);
    const progress = seedProgress();
    let baseUrl = config.publicUrl;
    const result: SeedResult = await withDatabase(config, async (handle) => {
      baseUrl = await serverBaseUrl(values, config, handle);
      return seedAccount(handle, config.database, {
        contactsPerSite,
        sites,
        seed,
        ...(accountId !== undefined ? { accountId } : {}),
        clock: { now: () => now },
        snapshot: values['no-snapshot'] !== true,
        onProgress: (p) => progress.update(p),
      });
    });
    progress.finish({ rows: result.total_rows, milliseconds: result.milliseconds });
    if (values.json) {
      out(JSON.stringify(result));
      return;
    }
    out(`Seeded account ${result.account_id}: sites ${result.site_ids.join(', ')}, ${contactsPerSite.toLocaleString('en-US')} contacts each.`);
    out(`Rows: ${Object.entries(result.rows).map(([table, n]) => `${table} ${n}`).join(', ')}`);
    out(`Owner user:    ${result.user_id}`);
    out(`client_id:     ${result.client_id}`);
    out(`client_secret: ${result.client_secret}   (shown once; store it now)`);
    out('Get a token:');
    out(`  ${tokenRequestCommand(baseUrl, result.client_id, result.client_secret)}`);
  },
};
