// Commerce on demand (docs/sandbox.md, "Commerce"): POST /v1/test_helpers/checkouts runs a
// checkout as the platform would (src/domain/checkouts.ts) and POST
// /v1/test_helpers/transactions/{id}/refund refunds a charge (src/domain/refunds.ts), each in
// one transaction of the engine. The routes only read the request and render the answer.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/authenticate.js';
import { withoutSiteNote, type Principal } from '../auth/principal.js';
import type { DatabaseHandle } from '../db/connect.js';
import { withAccountLock } from '../domain/account-lock.js';
import { createCheckout, MAX_QUANTITY, paymentDeclined, type CheckoutResult } from '../domain/checkouts.js';
import { refundTransaction } from '../domain/refunds.js';
import type { JsonApiEngine, ShowDocument } from '../jsonapi/engine.js';
import { forbidden } from '../jsonapi/errors.js';
import { JSONAPI_MEDIA_TYPE } from '../jsonapi/http.js';
import { attr, defineResource, rel } from '../jsonapi/resource.js';
import { errorDocumentSchema, errorResponses, resourceObjectSchema } from '../jsonapi/route-schemas.js';
import { refuseQueryParameters } from '../jsonapi/routes.js';
import { readResourceDocument, type WriteRules } from '../jsonapi/write-document.js';
import { ACCOUNT_BUSY_RESPONSE, SANDBOX_TAG, type SandboxPart } from './part.js';

/** The request document of a checkout (read with the engine's document reader; no table). */
const CHECKOUT_DOCUMENT = defineResource({
  type: 'checkouts',
  upstream: false, // a sitebiz extension (docs/upstream-strict.md)
  table: 'checkouts',
  description: 'A checkout to run (request document only)',
  readPermission: null,
  tenancy: { kind: 'site', column: 'site_id' },
  routes: { list: false, show: false },
  attributes: {
    email: attr.string({ description: 'The buyer: the contact with this email in the offer\'s site, else a new contact' }),
    name: attr.string({ nullable: true, description: 'The buyer\'s name (updates an existing contact\'s)' }),
    coupon_code: attr.string({ nullable: true, description: 'One of WELCOME10, SPRING25, PODCAST15, VIPFRIEND (any case)' }),
    quantity: attr.integer({ description: `Units of the offer, 1 (default) to ${MAX_QUANTITY}; 1 for an offer sold singly` }),
    payment_outcome: attr.string({ enum: ['succeeded', 'declined'], description: 'succeeded (default) or declined: the card is refused (402)' }),
  },
  relationships: {
    offer: rel.toOne('offers', 'offer_id'),
    order_bumps: rel.toMany('offers', 'checkout_id'),
  },
});
const CHECKOUT_RULES: WriteRules = {
  writable: ['email', 'name', 'coupon_code', 'quantity', 'payment_outcome'],
  required: ['email'],
  relationships: { offer: { required: true }, order_bumps: { required: false } },
};

/** The request document of a refund. */
const REFUND_DOCUMENT = defineResource({
  type: 'refunds',
  upstream: false, // a sitebiz extension (docs/upstream-strict.md)
  table: 'refunds',
  description: 'A refund to make (request document only)',
  readPermission: null,
  tenancy: { kind: 'site', column: 'site_id' },
  routes: { list: false, show: false },
  attributes: { amount_in_cents: attr.integer({ description: 'Cents to give back; default: what is left of the charge' }) },
});
const REFUND_RULES: WriteRules = { writable: ['amount_in_cents'] };

/** The read permissions of the records an answer shows, checked before anything is written. */
function requireReads(engine: JsonApiEngine, principal: Principal, types: readonly string[], what: string): void {
  for (const type of types) {
    const permission = engine.registry.get(type).readPermission;
    if (permission !== null && !principal.permissions.has(permission)) {
      throw forbidden(`${what} answers ${types.join(', ')} records, which needs their read permissions; this API key lacks ${permission}`);
    }
  }
}

const isEmptyBody = (body: unknown) => body === undefined || body === null || (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0);

const sandboxErrors = (extra: Record<number, string>) => ({
  400: { ...errorDocumentSchema, description: 'Malformed document: bad JSON, no data, a missing type or relationship (source.pointer names the member)' },
  401: errorResponses[401],
  403: { ...errorDocumentSchema, description: 'The API key lacks manage:sandbox or a read permission of the answer' },
  404: { ...errorDocumentSchema, description: 'A record named is not in the key\'s account (source.pointer names it)' },
  409: { ...errorDocumentSchema, description: 'data.type does not match the endpoint' },
  ...Object.fromEntries(Object.entries(extra).map(([status, description]) => [status, { ...errorDocumentSchema, description }])),
});

/** The records a checkout's answer shows: the key needs their read permissions. */
const CHECKOUT_SHOWN_TYPES = ['purchases', 'transactions', 'customers', 'orders'];

/**
 * Runs the checkout of a request document (`{"data":{"type":"checkouts",...}}`) for the principal,
 * as POST /v1/test_helpers/checkouts does (and the console's checkout form): the read permissions
 * of the answer, the document's rules, then createCheckout in one transaction, in the account's
 * turn (withAccountLock: a checkout waits for a running advance or reset without holding a
 * connection of `database`'s pool). A declined checkout is committed and returned (`declined`);
 * the caller answers it.
 */
export async function runCheckout(engine: JsonApiEngine, database: DatabaseHandle, principal: Principal, body: unknown): Promise<CheckoutResult> {
  requireReads(engine, principal, CHECKOUT_SHOWN_TYPES, 'A checkout');
  const document = readResourceDocument(CHECKOUT_DOCUMENT, body, CHECKOUT_RULES, { create: true });
  const a = document.attributes;
  const bumps = document.relationships.order_bumps;
  return withAccountLock(database, principal.accountId, () =>
    engine.transact(principal, (ctx, records) =>
      createCheckout(ctx, records, {
        offerId: document.relationships.offer as number,
        email: a.email as string,
        ...(typeof a.name === 'string' ? { name: a.name } : {}),
        ...(typeof a.coupon_code === 'string' ? { couponCode: a.coupon_code } : {}),
        ...(typeof a.quantity === 'number' ? { quantity: a.quantity } : {}),
        ...(typeof a.payment_outcome === 'string' ? { paymentOutcome: a.payment_outcome as 'succeeded' | 'declined' } : {}),
        ...(Array.isArray(bumps) ? { orderBumpIds: bumps } : {}),
      }),
    ),
  );
}

export const checkoutRoutes: SandboxPart = ({ engine, database }) =>
  async function register(app: FastifyInstance): Promise<void> {
    const purchases = engine.registry.get('purchases');
    app.post(
      '/checkouts',
      {
        onRequest: refuseQueryParameters,
        schema: {
          tags: [SANDBOX_TAG],
          summary: 'Run a checkout',
          description:
            'A person buys an offer, as on the platform\'s checkout page: the contact (found by email or created), the customer, one purchase per offer (the offer and each order bump), the charges (one bundled `charge` for the one-time offers, the first `subscription_charge` of a subscription, the first installment of a payment plan; nothing for a free offer), the order and its items, the offer grants and memberships, net revenue, the welcome and receipt emails, and the `purchase`, `payment_succeeded` and `order_created` events. ' +
            'Answers 201 with the purchase of the offer as GET /v1/purchases/{id} renders it, its transactions, customer and order in `included`. `payment_outcome: "declined"` records the failed charge and answers 402 `payment_declined`, with no purchase. ' +
            'Needs manage:sandbox and view:purchases, view:transactions, view:customers, view:orders. Rules: docs/sandbox.md, "Commerce".',
          security: [{ Bearer: [] }],
          produces: [JSONAPI_MEDIA_TYPE],
          consumes: [JSONAPI_MEDIA_TYPE, 'application/json'],
          body: Type.Object({
            data: Type.Object({
              type: Type.Literal('checkouts'),
              attributes: Type.Object({
                email: Type.String({ description: 'The buyer\'s email' }),
                name: Type.Optional(Type.String()),
                coupon_code: Type.Optional(Type.String({ description: 'WELCOME10, SPRING25, PODCAST15 or VIPFRIEND' })),
                quantity: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_QUANTITY })),
                payment_outcome: Type.Optional(Type.Union([Type.Literal('succeeded'), Type.Literal('declined')])),
              }),
              relationships: Type.Object({
                offer: Type.Object({ data: Type.Object({ type: Type.Literal('offers'), id: Type.String() }) }),
                order_bumps: Type.Optional(Type.Object({ data: Type.Array(Type.Object({ type: Type.Literal('offers'), id: Type.String() })) })),
              }),
            }),
          }),
          response: {
            201: Type.Object(
              {
                data: resourceObjectSchema(purchases),
                included: Type.Array(Type.Union(['transactions', 'customers', 'orders'].map((type) => resourceObjectSchema(engine.registry.get(type))))),
                links: Type.Object({ self: Type.String(), current: Type.String() }),
              },
              { description: 'The purchase; the Location header is its URL' },
            ),
            402: { ...errorDocumentSchema, description: 'payment_outcome "declined": the failed charge is recorded, no purchase is made (code payment_declined)' },
            ...sandboxErrors({ 422: 'An attribute or an order bump breaks a rule (source.pointer names it)' }),
            ...ACCOUNT_BUSY_RESPONSE,
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const result = await runCheckout(engine, database, principal, request.body);
        // Committed: the failed charge of a declined checkout stays, and the answer is the error.
        if (result.declined) throw paymentDeclined(result);
        const doc: ShowDocument = await engine.show(purchases, String(result.purchaseId), 'include=transactions,customer', withoutSiteNote(principal));
        if (result.orderId !== null) {
          const order = await engine.show(engine.registry.get('orders'), String(result.orderId), '', withoutSiteNote(principal));
          doc.included = [...(doc.included ?? []), order.data];
        }
        return reply.code(201).header('location', doc.links.self).type(JSONAPI_MEDIA_TYPE).send(doc);
      },
    );

    const transactions = engine.registry.get('transactions');
    app.post<{ Params: { id: string } }>(
      '/transactions/:id/refund',
      {
        onRequest: refuseQueryParameters,
        schema: {
          tags: [SANDBOX_TAG],
          summary: 'Refund a charge',
          description:
            'Refunds a successful charge or subscription charge, in full (no body) or in part (`amount_in_cents`): a `refund` transaction of the negative amount, linked to the same purchases; net revenue goes down; no payment_succeeded event. Partial refunds add up and never exceed the charge (422). Once a charge is refunded in full, the one-time purchases it paid for are deactivated ("refunded") and their access ends. ' +
            'Answers 201 with the refund transaction. Needs manage:sandbox and view:transactions.',
          security: [{ Bearer: [] }],
          produces: [JSONAPI_MEDIA_TYPE],
          consumes: [JSONAPI_MEDIA_TYPE, 'application/json'],
          params: Type.Object({ id: Type.String({ description: 'The id of the charge transaction' }) }),
          body: Type.Optional(
            Type.Object({ data: Type.Object({ type: Type.Literal('refunds'), attributes: Type.Optional(Type.Object({ amount_in_cents: Type.Optional(Type.Integer({ minimum: 1 })) })) }) }),
          ),
          response: {
            201: Type.Object(
              { data: resourceObjectSchema(transactions), links: Type.Object({ self: Type.String(), current: Type.String() }) },
              { description: 'The refund transaction; the Location header is its URL' },
            ),
            ...sandboxErrors({ 422: 'Not a refundable charge (not_refundable), or amount_in_cents above what is left (refund_exceeds_charge)' }),
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        requireReads(engine, principal, ['transactions'], 'A refund');
        let amount: number | undefined;
        if (!isEmptyBody(request.body)) {
          const document = readResourceDocument(REFUND_DOCUMENT, request.body, REFUND_RULES, { create: true });
          if (typeof document.attributes.amount_in_cents === 'number') amount = document.attributes.amount_in_cents;
        }
        const result = await engine.transact(principal, (ctx, records) => refundTransaction(ctx, records, request.params.id, amount));
        const doc = await engine.show(transactions, String(result.refundId), '', withoutSiteNote(principal));
        return reply.code(201).header('location', doc.links.self).type(JSONAPI_MEDIA_TYPE).send(doc);
      },
    );
  };
