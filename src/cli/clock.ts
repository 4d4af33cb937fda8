// `sitebiz clock show` and `sitebiz clock advance <duration>`: the account clock of the sandbox
// (docs/sandbox.md, "The account clock"), on the database of a running server. Advancing runs the
// same code as POST /v1/test_helpers/clock/advance (src/domain/account-clock.ts), due work
// included; a server reads the account's offset at every request, so it sees the new time at once.
import { buildEngine } from '../app.js';
import { PERMISSION_NAMES } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import type { DatabaseHandle } from '../db/connect.js';
import { advanceAccountClock, accountSiteIds, readAccountClock, type ClockState, type ClockTarget } from '../domain/account-clock.js';
import { AdminError } from '../domain/accounts.js';
import { parseIsoDuration } from '../domain/iso-duration.js';
import { DEMO_ACCOUNT } from '../demo/seed.js';
import { ApiError } from '../jsonapi/errors.js';
import { parseTimestamp } from '../jsonapi/predicates.js';
import { leaseMs } from '../webhooks/delivery-queue.js';
import { configFrom, report, UsageError, withDatabase, type Command } from './command.js';

type Values = Record<string, string | boolean | undefined>;

const ACCOUNT_HELP = [
  '  --account ID   the account whose clock it is; default: the only account of the database, or else',
  '                 the demo account (the one `sitebiz init --demo` made)',
];

/**
 * The account a sandbox command acts on: --account, else the database's only account, else the
 * demo account (the one holding the demo site).
 */
export async function chooseAccount(handle: DatabaseHandle, values: Values): Promise<number> {
  const { db } = handle;
  if (values.account !== undefined) {
    if (typeof values.account !== 'string' || !/^\d{1,15}$/.test(values.account)) throw new UsageError('--account takes an account id (a number)');
    const found = await db.selectFrom('accounts').select('id').where('id', '=', Number(values.account)).executeTakeFirst();
    if (!found) throw new AdminError(`there is no account ${values.account}`);
    return Number(found.id);
  }
  const accounts = await db.selectFrom('accounts').select('id').orderBy('id').limit(2).execute();
  if (accounts.length === 0) throw new AdminError('there is no account yet: run sitebiz init --demo (or npm start) first');
  if (accounts.length === 1) return Number(accounts[0]!.id);
  const demo = await db.selectFrom('sites').select('account_id').where('subdomain', '=', DEMO_ACCOUNT.subdomain).executeTakeFirst();
  if (demo) return Number(demo.account_id);
  throw new UsageError('the database has several accounts and no demo account: name one with --account <id>');
}

/**
 * The account acting for itself, as its owner (user 0 when it has no user yet) with every
 * permission and every site: what a command of the account's operator does is not limited to one
 * key.
 */
export async function accountPrincipal(handle: DatabaseHandle, accountId: number): Promise<Principal> {
  const owner = await handle.db
    .selectFrom('users')
    .select(['id', 'role'])
    .where('account_id', '=', accountId)
    .orderBy((eb) => eb.case().when('role', '=', 'owner').then(0).else(1).end())
    .orderBy('id')
    .executeTakeFirst();
  const clock = await handle.db.selectFrom('accounts').select('clock_offset_ms').where('id', '=', accountId).executeTakeFirstOrThrow();
  return {
    accountId,
    userId: owner ? Number(owner.id) : 0,
    apiKeyId: 0,
    grantId: 0,
    role: owner?.role ?? 'owner',
    permissions: new Set(PERMISSION_NAMES),
    siteIds: await accountSiteIds(handle, accountId),
    clockOffsetMs: Number(clock.clock_offset_ms),
  };
}

function clockJson(state: ClockState) {
  return { account_id: String(state.accountId), now: state.now.toISOString(), offset_seconds: state.offsetMs / 1000, real_time: state.realTime.toISOString() };
}

function clockLines(state: ClockState): string[] {
  const days = state.offsetMs / 86_400_000;
  return [
    `Account ${state.accountId}: its clock reads ${state.now.toISOString()}`,
    `  ${state.offsetMs === 0 ? 'real time' : `${state.offsetMs / 1000} s (${days.toFixed(days < 10 ? 2 : 1)} days) ahead of real time, ${state.realTime.toISOString()}`}`,
  ];
}

/** `<duration>` (ISO 8601, such as P1M) or an ISO 8601 time to move to. */
function readTarget(positionals: string[]): ClockTarget {
  const [text, extra] = positionals;
  if (text === undefined || extra !== undefined) throw new UsageError('name one duration, such as sitebiz clock advance P1M (or a time to move to)');
  if (/^P/i.test(text)) {
    const parsed = parseIsoDuration(text.toUpperCase());
    if ('error' in parsed) throw new UsageError(`the duration ${parsed.error}`);
    return { by: parsed.duration };
  }
  const at = parseTimestamp(text);
  if (!at) throw new UsageError(`${JSON.stringify(text)} is neither an ISO 8601 duration (P32D, PT10M, P1M) nor a time (2027-01-01T00:00:00Z)`);
  return { to: at };
}

export const clockShowCommand: Command = {
  summary: "show an account's sandbox clock (its time and how far it is ahead of real time)",
  usage: ['sitebiz clock show [--account ID] [--json] [config flags]', '', ...ACCOUNT_HELP, '  --json         print one JSON object (account_id, now, offset_seconds, real_time)'].join('\n'),
  options: { account: { type: 'string' } },
  async run(values) {
    const state = await withDatabase(configFrom(values), async (handle) => readAccountClock(handle, await chooseAccount(handle, values), new Date()));
    report(values, clockJson(state), clockLines(state));
  },
};

export const clockAdvanceCommand: Command = {
  summary: "move an account's sandbox clock forward and run what falls due (renewals, installments, webhook retries)",
  usage: [
    'sitebiz clock advance <duration|time> [--account ID] [--json] [config flags]',
    '',
    '  <duration>     an ISO 8601 duration from the clock\'s time: P32D, PT10M, P1M, P1Y (months and years on the calendar);',
    '                 or an ISO 8601 time to move to, later than the clock reads',
    ...ACCOUNT_HELP,
    '  --json         print one JSON object (account_id, now, offset_seconds, real_time)',
    '',
    'Runs the same code as POST /v1/test_helpers/clock/advance, against the database of a running server.',
  ].join('\n'),
  options: { account: { type: 'string' } },
  async run(values, positionals) {
    const target = readTarget(positionals);
    const config = configFrom(values);
    const state = await withDatabase(config, async (handle) => {
      const principal = await accountPrincipal(handle, await chooseAccount(handle, values));
      const engine = await buildEngine(config, handle, () => new Date());
      try {
        return await advanceAccountClock(engine, handle, principal, target, { realNow: () => new Date(), leaseMs: leaseMs(config.webhookTimeoutMs) });
      } catch (error) {
        if (error instanceof ApiError) throw new AdminError(error.errors.map((e) => e.detail).join('; '));
        throw error;
      }
    });
    report(values, clockJson(state), ['Advanced the clock.', ...clockLines(state)]);
  },
};
