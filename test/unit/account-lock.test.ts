// The accounts' queues of src/domain/account-lock.ts, pure: one action of an account at a time, in
// arrival order, other accounts not held up; a waiter refused with 429 account_busy and
// Retry-After when its wait would be, or has been, longer than the bound, its action never run;
// a failed action hands the turn on. (Over HTTP and on both databases:
// test/sandbox/account-actions-overlap.test.ts.)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AccountQueues } from '../../src/domain/account-lock.js';
import { ApiError } from '../../src/jsonapi/errors.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The 429 a refused run rejects with. */
function assertBusy(error: unknown): true {
  assert.ok(error instanceof ApiError, String(error));
  assert.equal(error.status, 429);
  assert.equal(error.errors[0]?.code, 'account_busy');
  assert.ok(Number(error.headers?.['retry-after']) >= 1, JSON.stringify(error.headers));
  return true;
}

describe('account queues', () => {
  it('runs one action of an account at a time, in arrival order; another account runs beside them', async () => {
    const queues = new AccountQueues({ waitMs: 5_000, waiters: 100 });
    const events: string[] = [];
    let inside = 0;
    const action = (name: string) => async () => {
      inside++;
      assert.equal(inside, 1, `${name} runs alone`);
      events.push(`${name} start`);
      await sleep(20);
      events.push(`${name} end`);
      inside--;
      return name;
    };
    const other = queues.run(2, async () => {
      events.push('other account');
      return 'other';
    });
    const results = await Promise.all([queues.run(1, action('a')), queues.run(1, action('b')), queues.run(1, action('c')), other]);
    assert.deepEqual(results, ['a', 'b', 'c', 'other']);
    assert.deepEqual(
      events.filter((e) => e !== 'other account'),
      ['a start', 'a end', 'b start', 'b end', 'c start', 'c end'],
    );
    assert.ok(events.indexOf('other account') < events.indexOf('a end'), 'the other account did not wait for account 1');
  });

  it('refuses a waiter that has waited the bound, and never runs its action', async () => {
    const queues = new AccountQueues({ waitMs: 100, waiters: 100 });
    let ran = false;
    const long = queues.run(1, () => sleep(300));
    // The queue has no average yet, so the waiter is let in, and refused when its wait is up.
    const waiter = queues.run(1, async () => {
      ran = true;
    });
    await assert.rejects(waiter, assertBusy);
    await long;
    assert.equal(ran, false);
    // The queue goes on: the next action runs.
    assert.equal(await queues.run(1, async () => 'next'), 'next');
  });

  it('refuses at once when the actions ahead would take longer than the bound, or too many wait', async () => {
    const queues = new AccountQueues({ waitMs: 250, waiters: 2 });
    await queues.run(1, () => sleep(100)); // the account's actions take about 100 ms
    const running = queues.run(1, () => sleep(100));
    const first = queues.run(1, () => sleep(100)); // expected wait 100 ms: let in
    const second = queues.run(1, () => sleep(100)); // 200 ms: let in
    const started = performance.now();
    await assert.rejects(queues.run(1, async () => {}), assertBusy); // 300 ms, and 2 already wait
    assert.ok(performance.now() - started < 200, 'refused without waiting for the 250 ms bound');
    await Promise.all([running, first, second]);
  });

  it('gives an action what is left of the bound after its wait (for the database lock\'s wait)', async () => {
    const queues = new AccountQueues({ waitMs: 5_000, waiters: 100 });
    const left: number[] = [];
    const action = async (waitLeftMs: number) => {
      left.push(waitLeftMs);
      await sleep(100);
    };
    await Promise.all([queues.run(1, action), queues.run(1, action)]);
    assert.ok(left[0]! > 4_900 && left[0]! <= 5_000, `the first waited nothing: ${left[0]}`);
    // The first held the turn for 100 ms (timers may fire a fraction early: half of it is the bound).
    assert.ok(left[1]! <= left[0]! - 50, `the second waited for the first: ${left[1]} left, against ${left[0]}`);
  });

  it('hands the turn on when an action fails', async () => {
    const queues = new AccountQueues({ waitMs: 5_000, waiters: 100 });
    const failing = queues.run(1, async () => {
      throw new Error('boom');
    });
    const next = queues.run(1, async () => 'next');
    await assert.rejects(failing, /boom/);
    assert.equal(await next, 'next');
  });
});
