// Helpers of the sandbox commerce suites: checkouts and refunds through the API, the principal of
// a token (to call domain code through engine.transact as a request would), and the rows and
// events a flow wrote, read straight from the database.
import assert from 'node:assert/strict';
import type { Principal } from '../../src/auth/principal.js';
import type { TestApp } from './harness.js';
import { send, type Res } from './writes.js';

export interface CheckoutBody {
  offer: number;
  email?: string;
  name?: string;
  coupon_code?: string;
  quantity?: number;
  payment_outcome?: 'succeeded' | 'declined';
  bumps?: number[];
}

export function checkoutDocument(b: CheckoutBody) {
  const { offer, bumps, ...attributes } = b;
  return {
    data: {
      type: 'checkouts',
      attributes: { email: 'buyer@example.com', ...attributes },
      relationships: {
        offer: { data: { type: 'offers', id: String(offer) } },
        ...(bumps ? { order_bumps: { data: bumps.map((id) => ({ type: 'offers', id: String(id) })) } } : {}),
      },
    },
  };
}

/** POST /v1/test_helpers/checkouts. */
export function checkout(t: TestApp, token: string, b: CheckoutBody): Promise<Res> {
  return send(t, 'POST', '/v1/test_helpers/checkouts', token, checkoutDocument(b));
}

/** A checkout that must succeed; the purchase document. */
export async function buy(t: TestApp, token: string, b: CheckoutBody) {
  const res = await checkout(t, token, b);
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { data: { id: string; attributes: Record<string, unknown>; relationships: Record<string, { data: unknown }> }; included: Array<{ type: string; id: string; attributes: Record<string, unknown>; relationships?: Record<string, { data: unknown }> }> };
}

/** POST /v1/test_helpers/transactions/{id}/refund, in full without an amount. */
export function refund(t: TestApp, token: string, transactionId: number | string, amount?: number): Promise<Res> {
  return send(
    t,
    'POST',
    `/v1/test_helpers/transactions/${transactionId}/refund`,
    token,
    amount === undefined ? undefined : { data: { type: 'refunds', attributes: { amount_in_cents: amount } } },
  );
}

/** The principal a request with this token acts for. */
export async function principalOf(t: TestApp, token: string): Promise<Principal> {
  const principal = await t.app.tokens.authenticate(token);
  assert.ok(typeof principal === 'object', 'the token authenticates');
  return principal;
}

/** The outbox events of a site since an id, oldest first: [type, resource id]. */
export async function eventsOf(t: TestApp, siteId: number, afterId = 0): Promise<Array<[string, number]>> {
  const rows = await t.handle.db
    .selectFrom('outbox_events')
    .select(['id', 'event_type', 'resource_id'])
    .where('site_id', '=', siteId)
    .where('id', '>', afterId)
    .orderBy('id')
    .execute();
  return rows.map((r) => [r.event_type, Number(r.resource_id)]);
}

/** The highest outbox event id so far (0 when none). */
export async function lastEventId(t: TestApp): Promise<number> {
  const row = await t.handle.db.selectFrom('outbox_events').select((eb) => eb.fn.max('id').as('n')).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The transactions of a customer, oldest first. */
export function transactionsOf(t: TestApp, customerId: number) {
  return t.handle.db.selectFrom('transactions').selectAll().where('customer_id', '=', customerId).orderBy('id').execute();
}

/** Purchase ids a transaction pays for, ascending. */
export async function paidBy(t: TestApp, transactionId: number): Promise<number[]> {
  const rows = await t.handle.db.selectFrom('purchase_transactions').select('purchase_id').where('transaction_id', '=', transactionId).orderBy('purchase_id').execute();
  return rows.map((r) => Number(r.purchase_id));
}
