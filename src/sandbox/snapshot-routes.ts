// POST /v1/test_helpers/reset and /v1/test_helpers/snapshots (docs/sandbox.md "Reset and
// snapshots"): the HTTP face of src/domain/snapshots.ts, which the CLI shares. A snapshot is
// named by its name, which is also its JSON:API id.
import { auditActorOf } from '../audit/audit-events.js';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { principalOf } from '../auth/authenticate.js';
import {
  checkSnapshotName,
  deleteSnapshot,
  listSnapshots,
  resetAccount,
  restoreSnapshot,
  saveSnapshot,
  SnapshotProblem,
  type RestoreResult,
  type SnapshotSummary,
} from '../domain/snapshots.js';
import { ApiError, notFound, unprocessable } from '../jsonapi/errors.js';
import { JSONAPI_MEDIA_TYPE } from '../jsonapi/http.js';
import { errorDocumentSchema, errorResponses } from '../jsonapi/route-schemas.js';
import { refuseQueryParameters } from '../jsonapi/routes.js';
import { requireWholeAccount } from './account-wide.js';
import { ACCOUNT_BUSY_RESPONSE, SANDBOX_TAG, type SandboxServices } from './routes.js';

const NAME_POINTER = '/data/attributes/name';

const snapshotObject = Type.Object(
  {
    id: Type.String({ description: 'The name' }),
    type: Type.Literal('snapshots'),
    attributes: Type.Object({
      name: Type.String(),
      created_at: Type.String({ description: 'When it was saved (real time, ISO 8601)' }),
      clock_time: Type.String({ description: "The account's clock when it was saved: a restore sets the clock back to it" }),
      reserved: Type.Boolean({ description: 'true for `seed`, saved when the account was seeded: what reset restores; it cannot be deleted' }),
      row_counts: Type.Record(Type.String(), Type.Integer(), { description: 'Rows saved per table' }),
      total_rows: Type.Integer(),
    }),
    links: Type.Object({ self: Type.String() }),
  },
  { title: 'snapshots' },
);

const restoreMeta = Type.Object({
  restored_rows: Type.Integer({ description: 'Rows put back, every table' }),
  milliseconds: Type.Integer({ description: 'How long the restore took' }),
  clock: Type.Object({ now: Type.String(), offset_seconds: Type.Number() }, { description: "The account's clock after the restore" }),
});

const restoreAnswer = Type.Object({ data: snapshotObject, meta: restoreMeta }, { description: 'The snapshot restored, with what the restore did' });
const error = (description: string) => ({ ...errorDocumentSchema, description });
const nameParam = Type.Object({ name: Type.String({ description: 'The snapshot name' }) });

const createBody = Type.Object({
  data: Type.Object({
    type: Type.Literal('snapshots'),
    attributes: Type.Object({ name: Type.String({ description: '1 to 64 characters: a letter or digit, then letters, digits, ".", "_" or "-"; not "seed"' }) }),
  }),
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The name of `{"data":{"type":"snapshots","attributes":{"name":...}}}`, or the document's problems (the console's save form too). */
export function readSnapshotCreateDocument(body: unknown): string {
  const problem = (status: number, code: string, title: string, detail: string, pointer: string) =>
    new ApiError(status, [{ code, title, detail, source: { pointer } }]);
  if (!isObject(body) || !isObject(body.data)) {
    throw problem(400, 'invalid_document', 'Bad Request', 'The request body must be {"data":{"type":"snapshots","attributes":{"name":...}}}', '/data');
  }
  const data = body.data;
  if (data.type === undefined) throw problem(400, 'missing_type', 'Bad Request', 'data.type is required (snapshots)', '/data/type');
  if (data.type !== 'snapshots') throw problem(409, 'type_mismatch', 'Conflict', `data.type must be snapshots, got ${JSON.stringify(data.type)}`, '/data/type');
  if (data.id !== undefined) throw problem(403, 'client_id_unsupported', 'Forbidden', 'A snapshot is named by attributes.name; leave data.id out', '/data/id');
  const attributes = data.attributes ?? {};
  if (!isObject(attributes)) throw problem(400, 'invalid_document', 'Bad Request', 'data.attributes must be an object', '/data/attributes');
  for (const key of Object.keys(attributes)) {
    if (key !== 'name') throw unprocessable('unknown_attribute', `snapshots has no attribute ${key}`, `/data/attributes/${key}`);
  }
  if (attributes.name === undefined) throw unprocessable('missing_attribute', 'name is required', NAME_POINTER);
  return attributes.name as string;
}

/** A refusal of the domain code as the API's error. */
function apiErrorOf(problem: SnapshotProblem): ApiError {
  switch (problem.kind) {
    case 'invalid_name':
    case 'reserved_name':
      return unprocessable(problem.kind, problem.message, NAME_POINTER);
    case 'not_found':
      return notFound(problem.message);
    case 'exists':
      return new ApiError(409, [{ code: 'snapshot_exists', title: 'Conflict', detail: problem.message, source: { pointer: NAME_POINTER } }]);
    case 'no_seed_snapshot':
    case 'reserved_snapshot':
      return new ApiError(409, [{ code: problem.kind, title: 'Conflict', detail: problem.message }]);
  }
}

/** Runs snapshot domain code, its refusals turned into the API's errors (the console shows them too). */
export async function withSnapshotErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw e instanceof SnapshotProblem ? apiErrorOf(e) : e;
  }
}

/** A SandboxPart (a function declaration: routes.ts lists it while the two modules import each other). */
export function snapshotRoutes(services: SandboxServices) {
  const base = `${services.config.publicUrl}/v1/test_helpers/snapshots`;
  const render = (s: SnapshotSummary) => ({
    id: s.name,
    type: 'snapshots',
    attributes: {
      name: s.name,
      created_at: s.createdAt.toISOString(),
      clock_time: new Date(s.createdAt.getTime() + s.clockOffsetMs).toISOString(),
      reserved: s.reserved,
      row_counts: s.rowCounts,
      total_rows: s.totalRows,
    },
    links: { self: `${base}/${encodeURIComponent(s.name)}` },
  });
  const restored = (reply: FastifyReply, result: RestoreResult) =>
    reply.type(JSONAPI_MEDIA_TYPE).send({
      data: render(result.snapshot),
      meta: {
        restored_rows: result.restoredRows,
        milliseconds: result.milliseconds,
        clock: {
          now: new Date(services.now().getTime() + result.snapshot.clockOffsetMs).toISOString(),
          offset_seconds: result.snapshot.clockOffsetMs / 1000,
        },
      },
    });
  const common = { tags: [SANDBOX_TAG], security: [{ Bearer: [] }], produces: [JSONAPI_MEDIA_TYPE] };
  const wholeAccount = 'It acts on every site of the account, so it needs the owner or a user given every site (403 whole_account_required otherwise).';
  const forbiddenHere = { 403: error('The key lacks manage:sandbox, or its user does not reach every site of the account (whole_account_required)') };
  // Every snapshot route: a snapshot holds every site's data, and its list counts them.
  const guard = (request: FastifyRequest, action: string) => requireWholeAccount(services.database, principalOf(request), action);
  const kept = 'Users, API keys and their tokens, hooks and the delivery log are kept, so the caller\'s credentials keep working; other accounts are never touched.';

  return async function register(app: FastifyInstance): Promise<void> {
    app.post(
      '/reset',
      {
        onRequest: refuseQueryParameters,
        schema: {
          ...common,
          summary: 'Reset the account to its seed',
          description:
            `Puts the account's data back as it was right after the account was seeded (the \`seed\` snapshot): the same records with the same ids and counts, in one transaction, and the account's clock back where it was then. ${kept} ` +
            `An account seeded before snapshots existed has no seed snapshot: 409 no_seed_snapshot. ${wholeAccount}`,
          response: { 200: restoreAnswer, ...errorResponses, ...forbiddenHere, 409: error('The account has no seed snapshot (no_seed_snapshot)'), ...ACCOUNT_BUSY_RESPONSE },
        },
      },
      async (request, reply) => {
        await guard(request, 'Resetting the account');
        return restored(reply, await withSnapshotErrors(() => resetAccount(services.database, principalOf(request).accountId, services.now(), auditActorOf(principalOf(request)))));
      },
    );

    app.get(
      '/snapshots',
      {
        onRequest: refuseQueryParameters,
        schema: {
          ...common,
          summary: 'List snapshots',
          description: `The account's snapshots, oldest first, with the rows each saved; \`seed\` (reserved) is the one reset restores. ${wholeAccount}`,
          response: {
            200: Type.Object({ data: Type.Array(snapshotObject), meta: Type.Object({ total_count: Type.Integer() }) }, { description: 'The snapshots' }),
            ...errorResponses,
            ...forbiddenHere,
          },
        },
      },
      async (request, reply) => {
        await guard(request, 'Listing the snapshots');
        const snapshots = await listSnapshots(services.database, principalOf(request).accountId);
        return reply.type(JSONAPI_MEDIA_TYPE).send({ data: snapshots.map(render), meta: { total_count: snapshots.length } });
      },
    );

    app.post(
      '/snapshots',
      {
        onRequest: refuseQueryParameters,
        schema: {
          ...common,
          summary: 'Save a snapshot',
          description:
            "Saves the account's data (every record of its sites) and its clock under a name, to restore later. Names are unique per account and never overwritten: delete the old one first. `seed` is reserved. " + wholeAccount,
          consumes: [JSONAPI_MEDIA_TYPE],
          body: createBody,
          response: {
            201: Type.Object({ data: snapshotObject }, { description: 'The snapshot saved' }),
            ...errorResponses,
            ...forbiddenHere,
            409: error('The account already has a snapshot of that name (snapshot_exists), or data.type is not snapshots'),
            ...ACCOUNT_BUSY_RESPONSE,
            422: error('The name breaks the naming rules or is reserved (source.pointer names it)'),
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        await guard(request, 'Saving a snapshot');
        const saved = await withSnapshotErrors(() => saveSnapshot(services.database, principal.accountId, checkSnapshotName(readSnapshotCreateDocument(request.body)), services.now(), { actor: auditActorOf(principal) }));
        return reply.code(201).type(JSONAPI_MEDIA_TYPE).header('location', `${base}/${encodeURIComponent(saved.name)}`).send({ data: render(saved) });
      },
    );

    app.post(
      '/snapshots/:name/restore',
      {
        onRequest: refuseQueryParameters,
        schema: {
          ...common,
          summary: 'Restore a snapshot',
          description: `Puts the account's data back exactly as the snapshot saved it (same records, ids and counts), in one transaction, and the account's clock back to its time then. The snapshot stays, to restore again. ${kept} ${wholeAccount}`,
          params: nameParam,
          response: { 200: restoreAnswer, ...errorResponses, ...forbiddenHere, 404: error('The account has no snapshot of that name'), ...ACCOUNT_BUSY_RESPONSE },
        },
      },
      async (request, reply) => {
        const { name } = request.params as { name: string };
        await guard(request, 'Restoring a snapshot');
        return restored(reply, await withSnapshotErrors(() => restoreSnapshot(services.database, principalOf(request).accountId, name, services.now(), auditActorOf(principalOf(request)))));
      },
    );

    app.delete(
      '/snapshots/:name',
      {
        onRequest: refuseQueryParameters,
        schema: {
          ...common,
          summary: 'Delete a snapshot',
          description: `Deletes a saved snapshot (the data stays as it is). The reserved \`seed\` snapshot cannot be deleted (409). ${wholeAccount}`,
          params: nameParam,
          response: {
            204: Type.Null({ description: 'Deleted' }),
            ...errorResponses,
            ...forbiddenHere,
            404: error('The account has no snapshot of that name'),
            409: error('The seed snapshot cannot be deleted (reserved_snapshot)'),
            ...ACCOUNT_BUSY_RESPONSE,
          },
        },
      },
      async (request, reply) => {
        const { name } = request.params as { name: string };
        await guard(request, 'Deleting a snapshot');
        await withSnapshotErrors(() => deleteSnapshot(services.database, principalOf(request).accountId, name, services.now(), auditActorOf(principalOf(request))));
        return reply.code(204).send();
      },
    );
  };
}

