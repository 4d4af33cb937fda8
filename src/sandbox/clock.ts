// The account clock's routes (docs/sandbox.md, "The account clock"): GET /v1/test_helpers/clock
// and POST /v1/test_helpers/clock/advance. The clock and its due work live in
// src/domain/account-clock.ts, shared with `sitebiz clock`.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/authenticate.js';
import { advanceAccountClock, readAccountClock, type ClockState, type ClockTarget } from '../domain/account-clock.js';
import { parseIsoDuration } from '../domain/iso-duration.js';
import { ApiError, type ErrorObject } from '../jsonapi/errors.js';
import { JSONAPI_MEDIA_TYPE } from '../jsonapi/http.js';
import { parseTimestamp } from '../jsonapi/predicates.js';
import { errorDocumentSchema, errorResponses } from '../jsonapi/route-schemas.js';
import { refuseQueryParameters } from '../jsonapi/routes.js';
import { leaseMs } from '../webhooks/delivery-queue.js';
import { requireWholeAccount } from './account-wide.js';
import { ACCOUNT_BUSY_RESPONSE, SANDBOX_TAG, type SandboxPart } from './part.js';

const TYPE = 'clocks';

/** A clock as the routes answer it: the account's id, its time, its offset and real time. */
export function clockDocument(state: ClockState, publicUrl: string) {
  return {
    data: {
      type: TYPE,
      id: String(state.accountId),
      attributes: {
        now: state.now.toISOString(),
        offset_seconds: state.offsetMs / 1000,
        real_time: state.realTime.toISOString(),
      },
    },
    links: { self: `${publicUrl}/v1/test_helpers/clock` },
  };
}

const clockDocumentSchema = Type.Object(
  {
    data: Type.Object({
      type: Type.Literal(TYPE),
      id: Type.String({ description: "The account's id: each account has one clock" }),
      attributes: Type.Object({
        now: Type.String({ format: 'date-time', description: "The account's time: what every request of its keys reads as now" }),
        offset_seconds: Type.Number({ description: 'How far the account clock is ahead of real time, in seconds (0 until it is advanced; it only grows)' }),
        real_time: Type.String({ format: 'date-time', description: "The server's real time when the clock was read" }),
      }),
    }),
    links: Type.Object({ self: Type.String() }),
  },
  { title: 'clocks' },
);

const advanceBodySchema = Type.Object({
  data: Type.Object({
    type: Type.Literal(TYPE),
    attributes: Type.Object({
      advance_by: Type.Optional(
        Type.String({ description: 'An ISO 8601 duration to move the clock forward by, e.g. P32D, P1M, PT10M (years and months are calendar units)', examples: ['P32D'] }),
      ),
      advance_to: Type.Optional(Type.String({ format: 'date-time', description: 'An ISO 8601 time to move the clock to; must be later than the clock reads' })),
    }),
  }),
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

type Problem = Omit<ErrorObject, 'status'> & { status: string };
const problem = (status: number, code: string, detail: string, pointer: string): Problem => ({
  status: String(status),
  code,
  title: status === 400 ? 'Bad Request' : status === 409 ? 'Conflict' : 'Unprocessable Entity',
  detail,
  source: { pointer },
});

/** Reads the advance request: exactly one of advance_by and advance_to, every problem at once. */
export function readAdvanceDocument(body: unknown): ClockTarget {
  if (!isObject(body) || !isObject(body.data)) {
    throw new ApiError(400, [problem(400, 'invalid_document', 'The request body must be {"data":{"type":"clocks","attributes":{"advance_by":"P1D"}}}', isObject(body) ? '/data' : '')]);
  }
  const problems: Problem[] = [];
  for (const key of Object.keys(body)) if (!['data', 'meta', 'jsonapi'].includes(key)) problems.push(problem(400, 'invalid_document', `Unknown top-level member ${key}`, `/${key}`));
  const data = body.data;
  for (const key of Object.keys(data)) if (!['type', 'attributes', 'meta'].includes(key)) problems.push(problem(400, 'invalid_document', `Unknown member ${key} of data`, `/data/${key}`));
  if (data.type === undefined) problems.push(problem(400, 'missing_type', `data.type is required (${TYPE})`, '/data/type'));
  else if (data.type !== TYPE) problems.push(problem(409, 'type_mismatch', `data.type must be ${TYPE}, got ${JSON.stringify(data.type)}`, '/data/type'));
  const attributes = data.attributes ?? {};
  let target: ClockTarget | undefined;
  if (!isObject(attributes)) {
    problems.push(problem(400, 'invalid_document', 'data.attributes must be an object', '/data/attributes'));
  } else {
    for (const name of Object.keys(attributes)) {
      if (name !== 'advance_by' && name !== 'advance_to') problems.push(problem(422, 'unknown_attribute', `clocks has no attribute ${name}; give advance_by or advance_to`, `/data/attributes/${name}`));
    }
    const by = attributes.advance_by;
    const to = attributes.advance_to;
    if (by === undefined && to === undefined) {
      problems.push(problem(422, 'missing_attribute', 'Give one of advance_by (an ISO 8601 duration such as P32D) and advance_to (an ISO 8601 time)', '/data/attributes'));
    } else if (by !== undefined && to !== undefined) {
      problems.push(problem(422, 'conflicting_attributes', 'Give advance_by or advance_to, not both', '/data/attributes/advance_to'));
    } else if (by !== undefined) {
      const pointer = '/data/attributes/advance_by';
      const parsed = typeof by === 'string' ? parseIsoDuration(by) : { error: `must be a string holding an ISO 8601 duration, got ${JSON.stringify(by)}` };
      if ('error' in parsed) problems.push(problem(422, 'invalid_attribute', `advance_by ${parsed.error}`, pointer));
      else target = { by: parsed.duration, pointer };
    } else {
      const pointer = '/data/attributes/advance_to';
      const at = typeof to === 'string' ? parseTimestamp(to) : undefined;
      if (!at) problems.push(problem(422, 'invalid_attribute', `advance_to must be an ISO 8601 time such as 2027-01-01T00:00:00Z, got ${JSON.stringify(to)}`, pointer));
      else target = { to: at, pointer };
    }
  }
  if (problems.length > 0 || !target) {
    const statuses = new Set(problems.map((p) => p.status));
    throw new ApiError(statuses.size === 1 ? Number(problems[0]!.status) : 400, problems);
  }
  return target;
}

export const clockPart: SandboxPart = (services) =>
  async function clockRoutes(app: FastifyInstance): Promise<void> {
    const { config, engine, database, now } = services;
    const common = { tags: [SANDBOX_TAG], security: [{ Bearer: [] }], produces: [JSONAPI_MEDIA_TYPE] };

    app.get(
      '/clock',
      {
        onRequest: refuseQueryParameters,
        schema: {
          ...common,
          summary: 'Show the account clock',
          description:
            "The clock of the key's account (sitebiz extension, sandbox mode only; manage:sandbox): its time, how far it is ahead of real time, and real time. Every request of the account's keys reads its time as now. See docs/sandbox.md.",
          response: { 200: { ...clockDocumentSchema, description: 'The account clock' }, ...errorResponses },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const state = await readAccountClock(database, principal.accountId, now());
        return reply.type(JSONAPI_MEDIA_TYPE).send(clockDocument(state, config.publicUrl));
      },
    );

    app.post(
      '/clock/advance',
      {
        onRequest: refuseQueryParameters,
        schema: {
          ...common,
          summary: 'Advance the account clock',
          description:
            "Moves the key's account clock forward, by an ISO 8601 duration (advance_by, from the account's current time; years and months are calendar units) or to a time (advance_to), and runs what falls due in between, in time order and each once even when advances race: renewals and payment plan installments, and webhook retries (due as much earlier as the clock moved). The clock never goes back (422). Access tokens keep real time. It moves every site's time, so it needs the owner or a user given every site (403 whole_account_required otherwise). Sandbox mode only; manage:sandbox.",
          body: advanceBodySchema,
          response: {
            200: { ...clockDocumentSchema, description: 'The account clock after the advance' },
            ...errorResponses,
            400: { ...errorDocumentSchema, description: 'The body is not a clocks document' },
            403: { ...errorDocumentSchema, description: 'The key lacks manage:sandbox, or its user does not reach every site of the account (whole_account_required)' },
            409: { ...errorDocumentSchema, description: 'data.type is not clocks' },
            ...ACCOUNT_BUSY_RESPONSE,
            422: { ...errorDocumentSchema, description: 'Neither or both of advance_by and advance_to, an invalid duration or time, or a target that is not later than the clock (source.pointer names the member)' },
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        await requireWholeAccount(database, principal, 'Advancing the account clock');
        const target = readAdvanceDocument(request.body);
        const state = await advanceAccountClock(engine, database, principal, target, { realNow: now, leaseMs: leaseMs(config.webhookTimeoutMs) });
        return reply.type(JSONAPI_MEDIA_TYPE).send(clockDocument(state, config.publicUrl));
      },
    );
  };
