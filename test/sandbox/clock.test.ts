// The account clock (docs/sandbox.md, "The account clock"): GET /v1/test_helpers/clock and
// POST /v1/test_helpers/clock/advance; new records and the `*_in_last` filters follow it, access
// tokens keep real time, other accounts keep theirs; racing advances produce every due item once
// and in time order (a counting due work of the test's own, added to DUE_WORK); and
// POST /v1/test_helpers/purchases/{id}/fail_next_payment marks the next charge.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { PERMISSION_NAMES } from '../../src/auth/permissions.js';
import { createApiKey } from '../../src/domain/accounts.js';
import { DUE_WORK, type DueWork } from '../../src/domain/account-clock.js';
import { builders } from '../support/builders.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { assertError, otherAccount, send } from '../support/writes.js';

const DAY_MS = 86_400_000;
const advance = (attributes: Record<string, unknown>) => ({ data: { type: 'clocks', attributes } });

/** JavaScript's month arithmetic, as the demo's renewal schedule uses it. */
const plusMonth = (iso: string) => {
  const d = new Date(iso);
  d.setUTCMonth(d.getUTCMonth() + 1);
  return d;
};

for (const dialect of DIALECTS) {
  describe(`the account clock [${dialect}]`, () => {
    let t: TestApp;
    let token: string;

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
    });
    after(async () => t.close());

    const clock = async (bearer = token) => {
      const res = await t.get('/v1/test_helpers/clock', bearer);
      assert.equal(res.statusCode, 200, res.body);
      return (res.json() as { data: { id: string; attributes: { now: string; offset_seconds: number; real_time: string } } }).data;
    };
    const advanceBy = (attributes: Record<string, unknown>, bearer = token) => send(t, 'POST', '/v1/test_helpers/clock/advance', bearer, advance(attributes));

    it('reads real time with offset 0 until advanced; advance_by moves it by a duration and advance_to to a time, and both show in GET', async () => {
      const start = await clock();
      assert.equal(start.id, String(t.tenant.accountId));
      assert.equal(start.attributes.offset_seconds, 0);
      assert.equal(start.attributes.now, t.clock.now().toISOString());
      assert.equal(start.attributes.real_time, t.clock.now().toISOString());

      const res = await advanceBy({ advance_by: 'P32D' });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/);
      const moved = res.json().data;
      assert.equal(moved.type, 'clocks');
      assert.equal(moved.attributes.offset_seconds, 32 * 86_400);
      assert.equal(moved.attributes.now, new Date(t.clock.now().getTime() + 32 * DAY_MS).toISOString());
      assert.deepEqual((await clock()).attributes, moved.attributes);

      // Real time passes; the offset stays, so the account's time passes with it.
      t.clock.advance(60);
      const later = await clock();
      assert.equal(later.attributes.offset_seconds, 32 * 86_400);
      assert.equal(later.attributes.now, new Date(t.clock.now().getTime() + 32 * DAY_MS).toISOString());

      const to = new Date(t.clock.now().getTime() + 40 * DAY_MS);
      const jumped = await advanceBy({ advance_to: to.toISOString() });
      assert.equal(jumped.statusCode, 200, jumped.body);
      assert.equal(jumped.json().data.attributes.now, to.toISOString());
      assert.equal(jumped.json().data.attributes.offset_seconds, 40 * 86_400);
    });

    it('adds months and years on the calendar: January 31 plus P1M is the last day of February', async () => {
      const before = Date.parse((await clock()).attributes.now);
      const target = '2031-01-31T10:00:00.000Z';
      assert.ok(Date.parse(target) > before);
      assert.equal((await advanceBy({ advance_to: target })).statusCode, 200);
      const res = await advanceBy({ advance_by: 'P1M' });
      assert.equal(res.json().data.attributes.now, '2031-02-28T10:00:00.000Z');
      const year = await advanceBy({ advance_by: 'P1YT1H' });
      assert.equal(year.json().data.attributes.now, '2032-02-28T11:00:00.000Z');
    });

    it('never goes back, and refuses bad requests with pointers, changing nothing', async () => {
      const before = await clock();
      const now = before.attributes.now;
      const cases: Array<[unknown, number, string, string?]> = [
        [advance({ advance_to: new Date(Date.parse(now) - 1000).toISOString() }), 422, 'clock_cannot_go_back', '/data/attributes/advance_to'],
        [advance({ advance_to: now }), 422, 'clock_cannot_go_back', '/data/attributes/advance_to'],
        [advance({ advance_by: 'P0D' }), 422, 'clock_cannot_go_back', '/data/attributes/advance_by'],
        [advance({ advance_by: 'PT0S' }), 422, 'clock_cannot_go_back', '/data/attributes/advance_by'],
        [advance({ advance_by: '-P1D' }), 422, 'invalid_attribute', '/data/attributes/advance_by'],
        [advance({ advance_by: 'P' }), 422, 'invalid_attribute', '/data/attributes/advance_by'],
        [advance({ advance_by: '32 days' }), 422, 'invalid_attribute', '/data/attributes/advance_by'],
        [advance({ advance_by: 32 }), 422, 'invalid_attribute', '/data/attributes/advance_by'],
        [advance({ advance_by: 'P99999999Y' }), 422, 'clock_out_of_range', '/data/attributes/advance_by'],
        [advance({ advance_to: 'tomorrow' }), 422, 'invalid_attribute', '/data/attributes/advance_to'],
        [advance({ advance_by: 'P1D', advance_to: '2040-01-01T00:00:00Z' }), 422, 'conflicting_attributes', '/data/attributes/advance_to'],
        [advance({}), 422, 'missing_attribute', '/data/attributes'],
        [advance({ advance_by: 'P1D', speed: 2 }), 422, 'unknown_attribute', '/data/attributes/speed'],
        [{ data: { type: 'clock', attributes: { advance_by: 'P1D' } } }, 409, 'type_mismatch', '/data/type'],
        [{ data: { attributes: { advance_by: 'P1D' } } }, 400, 'missing_type', '/data/type'],
        [{ data: [] }, 400, 'invalid_document', '/data'],
        [[], 400, 'invalid_document', ''],
      ];
      for (const [body, status, code, pointer] of cases) {
        const res = await send(t, 'POST', '/v1/test_helpers/clock/advance', token, body);
        assertError(res, status, code, pointer);
      }
      assert.equal((await clock()).attributes.offset_seconds, before.attributes.offset_seconds, 'unchanged');
    });

    it('needs manage:sandbox, and moves only the key\'s own account', async () => {
      const limited = await t.keyWith(t.tenant.ownerId, PERMISSION_NAMES.filter((p) => p !== 'manage:sandbox'));
      assertError(await advanceBy({ advance_by: 'P1D' }, limited.token), 403, 'forbidden');
      assertError(await t.get('/v1/test_helpers/clock', limited.token), 403, 'forbidden');

      const other = await otherAccount(t);
      const key = await createApiKey(t.handle, { userId: other.ownerId, name: 'other', permissions: PERMISSION_NAMES }, t.clock);
      const otherToken = await t.tokenFor(key.clientId, key.clientSecret);
      const mine = (await clock()).attributes.offset_seconds;
      assert.equal((await advanceBy({ advance_by: 'P3D' }, otherToken)).statusCode, 200);
      assert.equal((await clock(otherToken)).attributes.offset_seconds, 3 * 86_400);
      assert.equal((await clock()).attributes.offset_seconds, mine, 'the tenant\'s clock did not move');
    });

    it('new records take the account\'s time and the *_in_last filters count from it; access tokens keep real time', async () => {
      const b = builders(t);
      // A contact made a day ago in the account's time.
      const accountNow = Date.parse((await clock()).attributes.now);
      const old = await b.contact({ created_at: new Date(accountNow - DAY_MS), name: 'Before the jump' });
      const inLast = async (days: number) => {
        const res = await t.get(`/v1/contacts?filter[created_in_last]=${days}&fields[contacts]=name&page[size]=100`, token);
        assert.equal(res.statusCode, 200, res.body);
        return (res.json().data as Array<{ id: string }>).map((c) => Number(c.id));
      };
      assert.ok((await inLast(2)).includes(old));

      const jumped = await advanceBy({ advance_by: 'P10D' });
      assert.equal(jumped.statusCode, 200, jumped.body);
      const now = jumped.json().data.attributes.now as string;
      const created = await send(t, 'POST', '/v1/contacts', token, {
        data: { type: 'contacts', attributes: { name: 'After the jump', email: `jump-${dialect}@example.com` }, relationships: { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } } },
      });
      assert.equal(created.statusCode, 201, created.body);
      assert.equal(created.json().data.attributes.created_at, now, 'created at the account\'s time, 10 days ahead of real time');
      const fresh = Number(created.json().data.id);
      const lastTwo = await inLast(2);
      assert.ok(lastTwo.includes(fresh) && !lastTwo.includes(old), 'the contact of 11 days ago (account time) is out of the last 2 days');
      assert.ok((await inLast(12)).includes(old));

      // A year ahead, the token granted in real time still works (and expires in real time).
      assert.equal((await advanceBy({ advance_by: 'P1Y' })).statusCode, 200);
      const me = await t.get('/v1/me', token);
      assert.equal(me.statusCode, 200, me.body);
    });

    describe('racing advances', () => {
      const produced: Array<{ purchase: number; due: string }> = [];
      // A due work of the test's own: monthly charges of purchases with next_charge_at, each
      // produced once and moved a month on, with a pause that holds the transaction open so that
      // concurrent advances really overlap.
      const countingCharges: DueWork = async (ctx, siteIds, until) => {
        const { db, traits } = ctx.handle;
        for (;;) {
          const due = await db
            .selectFrom('purchases')
            .select(['id', 'next_charge_at'])
            .where('site_id', 'in', [...siteIds])
            .where('next_charge_at', 'is not', null)
            .where('next_charge_at', '<=', traits.encodeTimestamp(until))
            .orderBy('next_charge_at')
            .orderBy('id')
            .limit(1)
            .executeTakeFirst();
          if (!due) return;
          const at = traits.decodeTimestamp(due.next_charge_at)!;
          produced.push({ purchase: Number(due.id), due: at });
          await new Promise((resolve) => setTimeout(resolve, 10));
          await db.updateTable('purchases').set({ next_charge_at: traits.encodeTimestamp(plusMonth(at)) }).where('id', '=', due.id).execute();
        }
      };
      // The counting work alone: the real renewals (chargeDueRenewals) would charge these
      // purchases first and leave it nothing to count.
      const installed = [...DUE_WORK];
      before(() => DUE_WORK.splice(0, DUE_WORK.length, countingCharges));
      afterEach(() => {
        produced.length = 0;
      });
      after(() => DUE_WORK.splice(0, DUE_WORK.length, ...installed));

      it('four concurrent advances of a month each move the clock four months and produce each monthly charge once, in time order', async () => {
        const b = builders(t);
        const customer = await b.customer();
        const offer = await b.offer({ payment_type: 'subscription' });
        const accountNow = Date.parse((await clock()).attributes.now);
        const purchases: number[] = [];
        // Two subscriptions, due in 1 day and in 15 days.
        for (const days of [1, 15]) {
          const id = await b.purchase({ customerId: customer.id, offerId: offer, payment_type: 'subscription', subscription_status: 'active' });
          await t.handle.db
            .updateTable('purchases')
            .set({ next_charge_at: t.handle.traits.encodeTimestamp(new Date(accountNow + days * DAY_MS)) })
            .where('id', '=', id)
            .execute();
          purchases.push(id);
        }
        const tokens = await Promise.all([0, 1, 2, 3].map(() => t.token()));
        const answers = await Promise.all(tokens.map((bearer) => advanceBy({ advance_by: 'P1M' }, bearer)));
        for (const res of answers) assert.equal(res.statusCode, 200, res.body);
        const nows = answers.map((r) => Date.parse(r.json().data.attributes.now)).sort((a, c) => a - c);
        // Each advance started where the previous one left the clock.
        let expected = new Date(accountNow);
        for (const now of nows) {
          const next = new Date(expected);
          next.setUTCMonth(next.getUTCMonth() + 1);
          // advance_by is calendar months from the clock's time (last day of the month kept).
          assert.ok(Math.abs(now - next.getTime()) <= 3 * DAY_MS, `${new Date(now).toISOString()} is a month after ${expected.toISOString()}`);
          expected = new Date(now);
        }
        const until = nows[3]!;
        const want: Array<{ purchase: number; due: string }> = [];
        for (const [i, days] of [1, 15].entries()) {
          for (let at = new Date(accountNow + days * DAY_MS); at.getTime() <= until; at = plusMonth(at.toISOString())) want.push({ purchase: purchases[i]!, due: at.toISOString() });
        }
        want.sort((x, y) => x.due.localeCompare(y.due) || x.purchase - y.purchase);
        assert.equal(want.length, 8, 'four months of two monthly subscriptions');
        assert.deepEqual(produced, want, 'every charge once, in time order');
      });
    });

    describe('fail_next_payment', () => {
      it('marks the next charge of a purchase to fail and answers the purchase; 422 without a next charge; 404 for another account\'s or an unknown purchase', async () => {
        const b = builders(t);
        const customer = await b.customer();
        const offer = await b.offer({ payment_type: 'subscription' });
        const renewing = await b.purchase({ customerId: customer.id, offerId: offer, payment_type: 'subscription', subscription_status: 'active' });
        await t.handle.db.updateTable('purchases').set({ next_charge_at: t.handle.traits.encodeTimestamp(new Date(t.clock.now().getTime() + 400 * DAY_MS)) }).where('id', '=', renewing).execute();
        const oneTime = await b.purchase({ customerId: customer.id, offerId: await b.offer() });

        const res = await send(t, 'POST', `/v1/test_helpers/purchases/${renewing}/fail_next_payment`, token);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().data.type, 'purchases');
        assert.equal(res.json().data.id, String(renewing));
        const shown = await t.get(`/v1/purchases/${renewing}`, token);
        assert.deepEqual(res.json().data, shown.json().data, 'as GET /v1/purchases/{id} renders it');
        const row = await t.handle.db.selectFrom('purchases').select('fail_next_charge').where('id', '=', renewing).executeTakeFirstOrThrow();
        assert.equal(t.handle.traits.decodeBoolean(row.fail_next_charge), true);

        assertError(await send(t, 'POST', `/v1/test_helpers/purchases/${oneTime}/fail_next_payment`, token), 422, 'no_next_payment');
        assertError(await send(t, 'POST', '/v1/test_helpers/purchases/999999/fail_next_payment', token), 404, 'not_found');
        const other = await otherAccount(t);
        const ob = b.forSite(other.siteId);
        const theirs = await ob.purchase({ customerId: (await ob.customer()).id, offerId: await ob.offer({ payment_type: 'subscription' }), payment_type: 'subscription', subscription_status: 'active' });
        await t.handle.db.updateTable('purchases').set({ next_charge_at: t.handle.traits.encodeTimestamp(new Date(t.clock.now().getTime() + DAY_MS)) }).where('id', '=', theirs).execute();
        assertError(await send(t, 'POST', `/v1/test_helpers/purchases/${theirs}/fail_next_payment`, token), 404, 'not_found');
        const theirRow = await t.handle.db.selectFrom('purchases').select('fail_next_charge').where('id', '=', theirs).executeTakeFirstOrThrow();
        assert.equal(t.handle.traits.decodeBoolean(theirRow.fail_next_charge), false);
      });
    });
  });

  describe(`the account clock in production mode [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect, { env: { MODE: 'production' } });
    });
    after(async () => t.close());

    it('is not there: 404 for GET clock, advance and fail_next_payment', async () => {
      const token = await t.token();
      assertError(await t.get('/v1/test_helpers/clock', token), 404);
      assertError(await send(t, 'POST', '/v1/test_helpers/clock/advance', token, advance({ advance_by: 'P1D' })), 404);
      assertError(await send(t, 'POST', '/v1/test_helpers/purchases/1/fail_next_payment', token), 404);
      const row = await t.handle.db.selectFrom('accounts').select('clock_offset_ms').where('id', '=', t.tenant.accountId).executeTakeFirstOrThrow();
      assert.equal(Number(row.clock_offset_ms), 0);
    });
  });
}
