// `sitebiz clock show` and `sitebiz clock advance <duration>`: the account clock of the sandbox
// (docs/sandbox.md, "The account clock"), on the database of a running server. Advancing runs the
// same code as POST /v1/test_helpers/clock/advance (src/domain/account-clock.ts), due work
// included; a server reads the account's offset at every request, so it sees the new time at once.
import { createEngine } from '../engine.js';
import type { DatabaseHandle } from '../db/connect.js';
import { advanceAccountClock, readAccountClock, type ClockState, type ClockTarget } from '../domain/account-clock.js';
import { AdminError } from '../domain/accounts.js';
import { parseIsoDuration } from '../domain/iso-duration.js';
import { ApiError } from '../jsonapi/errors.js';
import { parseTimestamp } from '../jsonapi/predicates.js';
import { leaseMs } from '../webhooks/delivery-queue.js';
import { chooseAccount, ownerPrincipal } from './account-principal.js';
import { configFrom, report, UsageError, withDatabase, type Command } from './command.js';

type Values = Record<string, string | boolean | undefined>;

const ACCOUNT_HELP = [
  '  --account ID   the account whose clock it is; default: the only account of the database, or else',
  '                 the demo account (the one `sitebiz init --demo` made)',
];

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
  usage: ['sitebiz clock show [--account ID] [--json] [config flags]', '', ...ACCOUNT_HELP, '  --json         print one JSON object (account_id, now, offset_seconds, real_time)'].join('\n'),
  options: { account: { type: 'string' } },
  async run(values) {
    const state = await withDatabase(configFrom(values), async (handle) => readAccountClock(handle, await chooseAccount(handle, values), new Date()));
    report(values, clockJson(state), clockLines(state));
  },
};

export const clockAdvanceCommand: Command = {
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
      const principal = await ownerPrincipal(handle, await chooseAccount(handle, values));
      const engine = await createEngine(config, handle);
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
