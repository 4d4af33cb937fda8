// POST /v1/test_helpers/purchases/{id}/fail_next_payment (docs/sandbox.md): the next renewal or
// installment of the purchase fails. It only marks the purchase (purchases.fail_next_charge); the
// charge that falls due as the account clock moves reads the mark (the renewal's due work).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/authenticate.js';
import { withoutSiteNote } from '../auth/principal.js';
import { ApiError } from '../jsonapi/errors.js';
import { JSONAPI_MEDIA_TYPE } from '../jsonapi/http.js';
import { errorDocumentSchema, errorResponses, resourceObjectSchema } from '../jsonapi/route-schemas.js';
import { refuseQueryParameters } from '../jsonapi/routes.js';
import { SANDBOX_TAG, type SandboxPart } from './part.js';

export const failNextPaymentPart: SandboxPart = ({ engine }) =>
  async function failNextPaymentRoutes(app: FastifyInstance): Promise<void> {
    if (!engine.registry.find('purchases')) return;
    const purchases = engine.registry.get('purchases');
    app.post<{ Params: { id: string } }>(
      '/purchases/:id/fail_next_payment',
      {
        onRequest: refuseQueryParameters,
        schema: {
          tags: [SANDBOX_TAG],
          summary: 'Make the next payment of a purchase fail',
          description:
            "The next renewal (subscription) or installment (payment plan) of a purchase of the key's account fails when it falls due (advance the account clock to get there). No body. 422 no_next_payment when the purchase has no charge to come. Answers the purchase as GET /v1/purchases/{id} renders it. Sandbox mode only; manage:sandbox.",
          security: [{ Bearer: [] }],
          produces: [JSONAPI_MEDIA_TYPE],
          params: Type.Object({ id: Type.String({ description: 'Purchase id' }) }),
          response: {
            200: Type.Object({ data: resourceObjectSchema(purchases), links: Type.Object({ self: Type.String(), current: Type.String() }) }, { description: 'The purchase' }),
            ...errorResponses,
            404: { ...errorDocumentSchema, description: 'No such purchase in the key\'s account' },
            422: { ...errorDocumentSchema, description: 'no_next_payment: the purchase has no renewal or installment to come' },
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const { id } = request.params;
        await engine.transact(principal, async (ctx, records) => {
          const { db, traits } = ctx.handle;
          const found = await records.find('purchases', id);
          const purchase = await db.selectFrom('purchases').select('next_charge_at').where('id', '=', found.id).executeTakeFirstOrThrow();
          if (purchase.next_charge_at === null) {
            throw new ApiError(422, [
              {
                code: 'no_next_payment',
                title: 'Unprocessable Entity',
                detail: `Purchase ${id} has no renewal or installment to come (a one-time, free, canceled, deactivated or fully paid purchase): there is no next payment to fail`,
              },
            ]);
          }
          await db
            .updateTable('purchases')
            .set({ fail_next_charge: traits.encodeBoolean(true), updated_at: traits.encodeTimestamp(ctx.now) })
            .where('id', '=', found.id)
            .execute();
        });
        const doc = await engine.show(purchases, id, '', withoutSiteNote(principal), `/v1/purchases/${id}`);
        return reply.type(JSONAPI_MEDIA_TYPE).send(doc);
      },
    );
  };
