// Account-wide sandbox actions racing each other over real HTTP (docs/sandbox.md, "Overlapping
// actions"): 50 clock advances of a month on an account with 50 subscriptions to renew, and 50
// resets, restores, snapshot saves, advances and checkouts mixed. Every request gets an answer on
// its connection: 200/201, or 429 with Retry-After when its wait would be too long; never a 503
// that says the database is down, never a closed connection, never a deadlock. The renewals
// charged are exactly those of the advances answered 200 (no commit without its answer, nothing
// charged twice), and requests of another account keep being answered at once meanwhile (the
// pool is not held by requests waiting for the account's lock).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { PERMISSION_NAMES } from '../../src/auth/permissions.js';
import { createApiKey } from '../../src/domain/accounts.js';
import { builders } from '../support/builders.js';
import { buy, checkoutDocument } from '../support/commerce.js';
import pg from 'pg';
import { createListeningTestApp, DIALECTS, directDatabaseConfig, type ListeningTestApp } from '../support/harness.js';
import { request } from '../support/serve-process.js';
import { seedDemo } from '../support/snapshots.js';
import { otherAccount, send } from '../support/writes.js';

const RACERS = 50;

/** Runs on PostgreSQL only: SQLite has no row locks and one writer per database file. */
/** Row locks held by another process: PostgreSQL only (SQLite has one writer, and no row locks). */
const onPostgres = (dialect: string): typeof it => (dialect === 'postgres' ? it : ((() => {}) as unknown as typeof it));

interface Outcome {
  /** The HTTP status, or 0 when the connection closed without an answer. */
  status: number;
  body: string;
  retryAfter: string | undefined;
  error?: string;
}

/** One request on a connection of its own; a connection closed without an answer is status 0. */
async function over(t: ListeningTestApp, method: string, path: string, token: string, json?: unknown): Promise<Outcome> {
  const port = Number(new URL(t.baseUrl).port);
  try {
    const res = await request(port, { method, path, token, requestId: randomBytes(6).toString('hex'), ...(json === undefined ? {} : { json }) });
    return { status: res.status, body: res.body, retryAfter: res.headers['retry-after'] as string | undefined };
  } catch (error) {
    return { status: 0, body: '', retryAfter: undefined, error: String(error) };
  }
}

const tally = (outcomes: readonly Outcome[]) => {
  const counts: Record<number, number> = {};
  for (const o of outcomes) counts[o.status] = (counts[o.status] ?? 0) + 1;
  return counts;
};

/** Every outcome is one of `ok`, or a 429 with Retry-After (a refusal to wait that long). */
function assertAnswered(outcomes: readonly Outcome[], ok: readonly number[], what: string): void {
  const bad = outcomes.filter((o) => !ok.includes(o.status) && !(o.status === 429 && Number(o.retryAfter) >= 1));
  assert.deepEqual(
    bad.slice(0, 3).map((o) => `${o.status} ${o.error ?? o.body}`),
    [],
    `${what}: every request answered ${ok.join('/')} or 429 with Retry-After; got ${JSON.stringify(tally(outcomes))}`,
  );
  for (const o of outcomes.filter((x) => x.status === 429)) {
    assert.equal(JSON.parse(o.body).errors[0].code, 'account_busy', o.body);
  }
}

/**
 * Starts `start`'s work and reads another account's contacts, one read after the other, for as
 * long as it runs: the work's result, the reads' statuses and the slowest read's time.
 */
async function readsDuring<T>(t: ListeningTestApp, start: () => Promise<T>): Promise<{ result: T; statuses: Record<number, number>; slowestMs: number; reads: number }> {
  const other = await otherAccount(t);
  const key = await createApiKey(t.handle, { userId: other.ownerId, name: 'bystander', permissions: PERMISSION_NAMES }, t.clock);
  const token = await t.tokenFor(key.clientId, key.clientSecret);
  const work = start();
  let done = false;
  const outcomes: Outcome[] = [];
  let slowestMs = 0;
  const reader = (async () => {
    while (!done) {
      const started = performance.now();
      outcomes.push(await over(t, 'GET', '/v1/contacts?page[size]=5', token));
      slowestMs = Math.max(slowestMs, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  const result = await work.finally(() => (done = true));
  await reader;
  return { result, statuses: tally(outcomes), slowestMs, reads: outcomes.length };
}

/**
 * Another account's reads were all answered 200 meanwhile, and on PostgreSQL promptly. The bound
 * is generous: what it proves is that no read queued behind the lock waiters for the pool's 5 s
 * connect timeout (which answered 503). On SQLite every query runs on the event loop, an action
 * included, and the server accepts one new connection per turn of the loop (measured: a
 * connection made after the 50 advances' waits for about 50 of them, also from an outside
 * client): statuses only.
 */
function assertServed(dialect: string, statuses: Record<number, number>, reads: number, slowestMs: number): void {
  assert.deepEqual(statuses, { 200: reads }, "another account's reads all answered 200 meanwhile");
  if (dialect === 'postgres') assert.ok(slowestMs < 2_500, `another account's slowest read took ${Math.round(slowestMs)} ms`);
}

const advanceBy = (duration: string) => ({ data: { type: 'clocks', attributes: { advance_by: duration } } });

for (const dialect of DIALECTS) {
  describe(`overlapping account-wide sandbox actions [${dialect}]`, () => {
    it(`${RACERS} concurrent advances of P1M with ${RACERS} subscriptions: each answered, each 200 charges every subscription once, other accounts keep being served`, async (ctx) => {
      const t = await createListeningTestApp(dialect);
      try {
        const token = await t.token();
        const offer = await builders(t).offer({ title: 'Monthly', payment_type: 'subscription', price_in_cents: 1900, billing_period_months: 1 });
        for (let i = 0; i < RACERS; i++) await buy(t, token, { offer, email: `sub-${i}@example.com` });
        const charges = async () =>
          Number(
            (
              await t.handle.db
                .selectFrom('transactions')
                .select((eb) => eb.fn.countAll().as('n'))
                .where('site_id', '=', t.tenant.siteId)
                .where('action', '=', 'subscription_charge')
                .executeTakeFirstOrThrow()
            ).n,
          );
        const before = await charges();
        assert.equal(before, RACERS, 'one first charge per subscription');

        const race = () => Promise.all(Array.from({ length: RACERS }, () => over(t, 'POST', '/v1/test_helpers/clock/advance', token, advanceBy('P1M'))));
        const { result: outcomes, statuses, slowestMs, reads } = await readsDuring(t, race);
        ctx.diagnostic(`answers ${JSON.stringify(tally(outcomes))}; another account's ${reads} reads ${JSON.stringify(statuses)}, slowest ${Math.round(slowestMs)} ms`);
        assertAnswered(outcomes, [200], 'advances');
        const advanced = outcomes.filter((o) => o.status === 200).length;
        assert.ok(advanced >= 1, `some advance ran: ${JSON.stringify(tally(outcomes))}`);
        assert.equal(await charges(), before + advanced * RACERS, `each advance answered 200 renewed every subscription once (${JSON.stringify(tally(outcomes))})`);
        // The clock moved once per advance answered 200, and by nothing else.
        const nows = outcomes.filter((o) => o.status === 200).map((o) => JSON.parse(o.body).data.attributes.now as string);
        assert.equal(new Set(nows).size, advanced, 'each advance answered 200 moved the clock from where the previous one left it');
        const clock = await t.get('/v1/test_helpers/clock', token);
        assert.equal(clock.json().data.attributes.now.slice(0, 10), [...nows].sort().at(-1)!.slice(0, 10));

        assertServed(dialect, statuses, reads, slowestMs);
      } finally {
        await t.close();
      }
    });

    it(`${RACERS} resets, restores, snapshot saves, advances and checkouts at once: each answered, no deadlock, the data whole afterwards`, async (ctx) => {
      const t = await createListeningTestApp(dialect);
      try {
        await seedDemo(t);
        const token = await t.token();
        assert.equal((await send(t, 'POST', '/v1/test_helpers/snapshots', token, { data: { type: 'snapshots', attributes: { name: 'before' } } })).statusCode, 201);
        const offer = await builders(t).offer({ title: 'Monthly', payment_type: 'subscription', price_in_cents: 900, billing_period_months: 1 });
        const actions: Array<[string, string, unknown]> = [
          ['POST', '/v1/test_helpers/reset', undefined],
          ['POST', '/v1/test_helpers/snapshots/before/restore', undefined],
          ['POST', '/v1/test_helpers/clock/advance', advanceBy('P1M')],
          ['POST', '/v1/test_helpers/checkouts', checkoutDocument({ offer, email: 'racer@example.com' })],
          ['POST', '/v1/test_helpers/snapshots', { data: { type: 'snapshots', attributes: { name: 'racer' } } }],
        ];
        const race = () => Promise.all(
          Array.from({ length: RACERS }, (_, i) => {
            const [method, path, body] = actions[i % actions.length]!;
            // The checkout's offer is wiped by a reset or restore that runs before it (404); a
            // second save of one name is 409.
            return over(t, method, path, token, body).then((o) => ({ ...o, path }));
          }),
        );
        const { result: outcomes, statuses, slowestMs, reads } = await readsDuring(t, race);
        ctx.diagnostic(`answers ${JSON.stringify(tally(outcomes))}; another account's ${reads} reads ${JSON.stringify(statuses)}, slowest ${Math.round(slowestMs)} ms`);
        for (const [, path] of actions) {
          const mine = outcomes.filter((o) => o.path === path);
          const ok = path.endsWith('/checkouts') ? [201, 404] : path.endsWith('/snapshots') ? [201, 409] : [200];
          assertAnswered(mine, ok, path);
        }
        assertServed(dialect, statuses, reads, slowestMs);
        // The account is whole: a reset now puts the seed back and the API serves it.
        const reset = await send(t, 'POST', '/v1/test_helpers/reset', token);
        assert.equal(reset.statusCode, 200, reset.body);
        assert.equal((await t.get('/v1/contacts?page[size]=1', token)).statusCode, 200);
      } finally {
        await t.close();
      }
    });

    onPostgres(dialect)('an advance waiting for another process\'s action on the account is answered 429 with Retry-After after 10 s, and nothing changes', async () => {
      const t = await createListeningTestApp(dialect);
      // Another process: a connection of its own holding the account's lock, as its action would.
      const other = new pg.Client({ connectionString: directDatabaseConfig(t).url });
      await other.connect();
      try {
        const token = await t.token();
        const before = (await t.get('/v1/test_helpers/clock', token)).json().data.attributes.offset_seconds;
        await other.query('begin');
        await other.query('select id from accounts where id = $1 for update', [t.tenant.accountId]);
        const started = performance.now();
        const refused = await over(t, 'POST', '/v1/test_helpers/clock/advance', token, advanceBy('P1M'));
        const waited = performance.now() - started;
        assert.equal(refused.status, 429, refused.body);
        assert.equal(JSON.parse(refused.body).errors[0].code, 'account_busy');
        assert.ok(Number(refused.retryAfter) >= 1, String(refused.retryAfter));
        // Bounded by lock_timeout (ACCOUNT_LOCK_WAIT_MS), well before IDLE_TIMEOUT_MS would close the connection.
        assert.ok(waited >= 9_000 && waited < 14_000, `refused after ${Math.round(waited)} ms`);
        await other.query('rollback');
        assert.equal((await t.get('/v1/test_helpers/clock', token)).json().data.attributes.offset_seconds, before, 'the refused advance moved nothing');
        const res = await over(t, 'POST', '/v1/test_helpers/clock/advance', token, advanceBy('P1M'));
        assert.equal(res.status, 200, res.body);
      } finally {
        await other.end();
        await t.close();
      }
    });

    it(`${RACERS} concurrent checkouts of one offer: all 201, one purchase each, other accounts keep being served`, async (ctx) => {
      const t = await createListeningTestApp(dialect);
      try {
        const token = await t.token();
        const offer = await builders(t).offer({ title: 'Course', price_in_cents: 4900 });
        const race = () => Promise.all(
          Array.from({ length: RACERS }, (_, i) => over(t, 'POST', '/v1/test_helpers/checkouts', token, checkoutDocument({ offer, email: `buyer-${i}@example.com` }))),
        );
        const { result: outcomes, statuses, slowestMs, reads } = await readsDuring(t, race);
        ctx.diagnostic(`answers ${JSON.stringify(tally(outcomes))}; another account's ${reads} reads ${JSON.stringify(statuses)}, slowest ${Math.round(slowestMs)} ms`);
        assertAnswered(outcomes, [201], 'checkouts');
        const bought = outcomes.filter((o) => o.status === 201).length;
        const purchases = await t.handle.db.selectFrom('purchases').select((eb) => eb.fn.countAll().as('n')).where('site_id', '=', t.tenant.siteId).executeTakeFirstOrThrow();
        assert.equal(Number(purchases.n), bought, 'one purchase per checkout answered 201, none without its answer');
        assertServed(dialect, statuses, reads, slowestMs);
      } finally {
        await t.close();
      }
    });
  });
}
