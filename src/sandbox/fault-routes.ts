// POST, GET and DELETE /v1/test_helpers/faults (docs/sandbox.md "Faults on demand"): the account's
// faults, which FaultInjector (faults.ts) applies to matching requests of its keys.
import { principalOf } from '../auth/authenticate.js';
import type { Principal } from '../auth/principal.js';
import type { ShowDocument } from '../jsonapi/engine.js';
import { notFound, unprocessable } from '../jsonapi/errors.js';
import { JSONAPI_MEDIA_TYPE } from '../jsonapi/http.js';
import { attr, defineResource } from '../jsonapi/resource.js';
import { createRouteSchema, deleteRouteSchema } from '../jsonapi/route-schemas.js';
import { refuseQueryParameters } from '../jsonapi/routes.js';
import { readResourceDocument, type WriteRules } from '../jsonapi/write-document.js';
import { FAULT_RETRY_AFTER_SECONDS, FAULT_STATUSES, faultsChanged, MAX_LATENCY_MS } from './faults.js';
import { reachesWholeAccount } from './account-wide.js';
import { SANDBOX_PERMISSION, SANDBOX_TAG, type SandboxPart, type SandboxServices } from './part.js';
import { siteColumns, sitesOf, visibleBySites } from './site-scope.js';

export const FAULT_METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const;
const MAX_TIMES = 1_000_000;
const MAX_PATH_LENGTH = 500;

export const faults = defineResource({
  type: 'faults',
  upstream: false, // a sitebiz extension (docs/upstream-strict.md)
  table: 'sandbox_faults',
  pathPrefix: 'test_helpers',
  tag: SANDBOX_TAG,
  description:
    'Faults on demand (sandbox): requests of the account\'s keys whose method and path match a fault get its answer ' +
    `(status 429, 500, 502, 503 or 504, a JSON:API error with code fault_injected; Retry-After: ${FAULT_RETRY_AFTER_SECONDS} with 429 and 503) or its delay (latency_ms), or the delay and then the answer. ` +
    'times: only that many requests, counted across processes; rate: that share of the matching requests; neither: every one until the fault is deleted. ' +
    'The first matching fault (lowest id) applies, from the next request on in every process. /v1/test_helpers/* is never faulted. ' +
    'A fault made by a user limited to some sites is limited to them (site_ids): it answers only requests of keys whose every site is among them, so never a request about another site; such a user sees and deletes only the faults limited to its sites.',
  readPermission: SANDBOX_PERMISSION,
  // A user limited to some sites sees the faults limited to its sites (site-scope.ts).
  tenancy: { kind: 'account', column: 'account_id', visibleTo: visibleBySites('sandbox_faults') },
  defaultSort: 'created_at',
  attributes: {
    method: attr.string({ nullable: true, filter: ['eq', 'in'], enum: [...FAULT_METHODS, '*'], description: 'The HTTP method matched; * or absent: any (rendered null)' }),
    path: attr.string({ description: 'The path matched (without the query string): * stands for any text, as in /v1/contacts*' }),
    status: attr.integer({ nullable: true, filter: true, enum: FAULT_STATUSES.map(String), description: 'The status answered; null: only a delay' }),
    latency_ms: attr.integer({ nullable: true, description: `A delay before the answer, ms (at most ${MAX_LATENCY_MS})` }),
    times: attr.integer({ nullable: true, description: `How many requests the fault answers in all (1 to ${MAX_TIMES}); null: not counted` }),
    remaining: attr.integer({ nullable: true, description: 'How many of times are left; 0: spent, the fault matches no more' }),
    rate: attr.number({ nullable: true, description: 'The share of matching requests faulted, above 0 and at most 1; null: every one' }),
    hits: attr.integer({ description: 'Requests the fault has answered or delayed' }),
    site_ids: attr.computed('json', ['site_ids'], (row) => (row.site_ids ? sitesOf(String(row.site_ids)).map(String) : null), {
      nullable: true,
      description:
        "The sites the fault is limited to (a user limited to some sites creates faults limited to them): it answers only requests of keys whose every site is one of these. null: the whole account's requests",
    }),
    created_at: attr.datetime({ sort: true }),
  },
});

const RULES: WriteRules = {
  writable: ['method', 'path', 'status', 'latency_ms', 'times', 'rate'],
  required: ['path'],
};

interface FaultValues {
  method: string | null;
  path: string;
  status: number | null;
  latency_ms: number | null;
  times: number | null;
  rate: number | null;
}

/** The checked attributes of a new fault (422 naming the attribute otherwise). */
function checkFault(attributes: Record<string, unknown>): FaultValues {
  const pointer = (name: string) => `/data/attributes/${name}`;
  const method = attributes.method === undefined || attributes.method === null || attributes.method === '*' ? null : String(attributes.method).toUpperCase();
  if (method !== null && !(FAULT_METHODS as readonly string[]).includes(method)) {
    throw unprocessable('invalid_method', `method must be one of ${FAULT_METHODS.join(', ')} or * (any), got ${JSON.stringify(attributes.method)}`, pointer('method'));
  }
  const path = String(attributes.path);
  if (!path.startsWith('/v1/') || path.length > MAX_PATH_LENGTH || /[?#\s]/.test(path)) {
    throw unprocessable('invalid_path', `path must be a path under /v1/ of at most ${MAX_PATH_LENGTH} characters, without query string or spaces (* stands for any text), got ${JSON.stringify(path)}`, pointer('path'));
  }
  // A pattern that could only match test helpers would never apply (/v1/* applies to the rest).
  if (path.startsWith('/v1/test_helpers')) {
    throw unprocessable('invalid_path', 'The test helpers (/v1/test_helpers/*) are never faulted', pointer('path'));
  }
  const status = (attributes.status as number | null | undefined) ?? null;
  if (status !== null && !(FAULT_STATUSES as readonly number[]).includes(status)) {
    throw unprocessable('invalid_status', `status must be one of ${FAULT_STATUSES.join(', ')}, got ${status}`, pointer('status'));
  }
  const latency = (attributes.latency_ms as number | null | undefined) ?? null;
  if (latency !== null && (!Number.isInteger(latency) || latency < 0 || latency > MAX_LATENCY_MS)) {
    throw unprocessable('invalid_latency', `latency_ms must be a whole number of ms from 0 to ${MAX_LATENCY_MS}, got ${latency}`, pointer('latency_ms'));
  }
  if (status === null && !latency) {
    throw unprocessable('fault_without_effect', 'A fault needs a status, a latency_ms above 0, or both', pointer('status'));
  }
  const times = (attributes.times as number | null | undefined) ?? null;
  const rate = (attributes.rate as number | null | undefined) ?? null;
  if (times !== null && rate !== null) throw unprocessable('times_and_rate', 'Give times or rate, not both', pointer('rate'));
  if (times !== null && (!Number.isInteger(times) || times < 1 || times > MAX_TIMES)) {
    throw unprocessable('invalid_times', `times must be a whole number from 1 to ${MAX_TIMES}, got ${times}`, pointer('times'));
  }
  if (rate !== null && !(rate > 0 && rate <= 1)) throw unprocessable('invalid_rate', `rate must be above 0 and at most 1, got ${rate}`, pointer('rate'));
  return { method, path, status, latency_ms: latency, times, rate };
}

/**
 * Creates a fault from a request document (`{"data":{"type":"faults","attributes":{...}}}`), as
 * POST /v1/test_helpers/faults does (and the console's faults form): the document's rules and
 * checkFault, then the row and the account's faults_version in one transaction. The new fault,
 * as GET /v1/test_helpers/faults/{id} renders it.
 */
export async function createFault(services: Pick<SandboxServices, 'engine' | 'database'>, principal: Principal, body: unknown): Promise<ShowDocument> {
  const { engine } = services;
  const { db, traits } = services.database;
  const values = checkFault(readResourceDocument(faults, body, RULES, { create: true }).attributes);
  // Limited to the creator's sites unless it reaches every site of the account (account-wide.ts).
  const scope = siteColumns((await reachesWholeAccount(services.database, principal)) ? [] : principal.siteIds);
  const row = await db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto('sandbox_faults')
      .values({
        account_id: principal.accountId,
        ...values,
        remaining: values.times,
        created_at: traits.encodeTimestamp(engine.now(principal)),
        user_id: principal.userId,
        ...scope,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await faultsChanged(trx, principal.accountId);
    return inserted;
  });
  return engine.show(faults, String(row.id), '', principal);
}

/**
 * Deletes a fault of the principal's account (404 when it has none of that id, or none the
 * principal may see: a user limited to some sites deletes only faults limited to them), as
 * DELETE /v1/test_helpers/faults/{id} does.
 */
export async function deleteFault(services: Pick<SandboxServices, 'engine' | 'database'>, principal: Principal, rawId: string): Promise<void> {
  const { db } = services.database;
  // The engine's read decides what the principal may see; it answers 404 otherwise.
  await services.engine.show(faults, rawId, '', principal);
  const id = /^\d{1,15}$/.test(rawId) ? Number(rawId) : undefined;
  const deleted =
    id !== undefined &&
    (await db.transaction().execute(async (trx) => {
      const result = await trx.deleteFrom('sandbox_faults').where('id', '=', id).where('account_id', '=', principal.accountId).executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) return false;
      await faultsChanged(trx, principal.accountId);
      return true;
    }));
  if (!deleted) throw notFound(`No faults record with id ${JSON.stringify(rawId)}`);
}

export const faultsPart: SandboxPart = (services) => {
  const { engine } = services;
  return async (app) => {
    // An app built on a registry without the sandbox's resources (the engine's own tests) serves none.
    if (!engine.registry.find(faults.type)) return;
    // GET /faults and /faults/{id} are the engine's (pathPrefix); writing needs faultsChanged.
    const sandboxed = <T extends object>(schema: T, summary: string) => ({ ...schema, summary });

    app.post('/faults', { schema: sandboxed(createRouteSchema(engine.registry, faults, RULES), 'Create a fault'), onRequest: refuseQueryParameters }, async (request, reply) => {
      const doc = await createFault(services, principalOf(request), request.body);
      return reply.code(201).header('location', doc.links.self).type(JSONAPI_MEDIA_TYPE).send(doc);
    });

    app.delete<{ Params: { id: string } }>(
      '/faults/:id',
      { schema: sandboxed(deleteRouteSchema(engine.registry, faults), 'Delete a fault'), onRequest: refuseQueryParameters },
      async (request, reply) => {
        await deleteFault(services, principalOf(request), request.params.id);
        return reply.type(JSONAPI_MEDIA_TYPE).send({ data: {} });
      },
    );
  };
};
