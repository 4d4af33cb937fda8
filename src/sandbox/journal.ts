// GET /v1/test_helpers/requests (docs/sandbox.md "The request journal"): the journal the
// RequestJournal writes (request-journal.ts), served by the engine as the `requests` resource of
// the key's account, newest first, with the API's paging, sorting and sparse fieldsets.
import { principalOf } from '../auth/authenticate.js';
import { readingFromPrimary } from '../auth/principal.js';
import { escapeLike } from '../db/dialect-traits.js';
import { invalidParameter } from '../jsonapi/errors.js';
import { JSONAPI_MEDIA_TYPE } from '../jsonapi/http.js';
import { attr, defineResource, namedFilter, type AnyEB, type Condition } from '../jsonapi/resource.js';
import { listRouteSchema, showRouteSchema } from '../jsonapi/route-schemas.js';
import { rawQueryOf } from '../jsonapi/routes.js';
import { JOURNAL_BODY_BYTES } from './request-journal.js';
import { SANDBOX_PERMISSION, SANDBOX_TAG, type SandboxPart } from './part.js';
import { visibleBySites } from './site-scope.js';

/** `5xx` (a class) or `503` (one status). */
function statusCondition(eb: AnyEB, values: string[]): Condition {
  const conditions = values.map((value) => {
    const v = value.trim().toLowerCase();
    if (/^[1-5]\d\d$/.test(v)) return eb('request_journal.status', '=', Number(v));
    if (/^[1-5]xx$/.test(v)) {
      const low = Number(v[0]) * 100;
      return eb.and([eb('request_journal.status', '>=', low), eb('request_journal.status', '<', low + 100)]);
    }
    throw invalidParameter('filter[status]', `filter[status] takes statuses such as 503 or classes such as 5xx, got ${JSON.stringify(value)}`);
  });
  return eb.or(conditions);
}

export const journalEntries = defineResource({
  type: 'requests',
  upstream: false, // a sitebiz extension (docs/upstream-strict.md)
  table: 'request_journal',
  pathPrefix: 'test_helpers',
  tag: SANDBOX_TAG,
  // Mounted by journalPart: a read first writes out this process's pending entries.
  routes: { list: false, show: false },
  nouns: { singular: 'journaled request', plural: 'journaled requests' },
  description:
    `The request journal (sandbox): the last requests of the account's keys (REQUEST_JOURNAL_SIZE per account, 1,000 by default), newest first. ` +
    `Each holds the method, the path and query, the status, the duration, the key's client id, the request id (X-Request-Id), and the request and response bodies cut at ${JOURNAL_BODY_BYTES / 1024} KB, ` +
    'with secrets and tokens replaced by "[redacted]" (headers are never kept). Requests that authenticated with a key are journaled, token requests included; reads of this journal are not. ' +
    'A user limited to some sites sees the requests whose every reached site is one of its sites, and its own requests that reached no site; the owner, and a user given every site, see all. ' +
    'Entries are written in batches: another process\'s requests appear within 100 ms.',
  readPermission: SANDBOX_PERMISSION,
  // A user limited to some sites reads the requests about its sites only (site-scope.ts).
  tenancy: { kind: 'account', column: 'account_id', visibleTo: visibleBySites('request_journal') },
  defaultSort: '-created_at',
  attributes: {
    method: attr.string({ filter: ['eq', 'in'] }),
    path: attr.string({ description: 'Path and query string as requested, secret parameters redacted', filter: ['eq', 'start', 'cont'] }),
    status: attr.integer({ sort: true, filter: true }),
    duration_ms: attr.number({ sort: true, filter: ['gt', 'gte', 'lt', 'lte'], description: 'Time from the request\'s arrival to its answer, ms' }),
    client_id: attr.string({ filter: ['eq', 'in'], description: 'The client id of the API key that made the request' }),
    request_id: attr.string({ filter: ['eq'], description: 'The X-Request-Id of the answer' }),
    request_body: attr.string({ nullable: true, description: `The request body as JSON (form bodies too), redacted, cut at ${JOURNAL_BODY_BYTES} bytes; null without one` }),
    response_body: attr.string({ nullable: true, description: `The response body, redacted, cut at ${JOURNAL_BODY_BYTES} bytes; null when empty` }),
    created_at: attr.datetime({ sort: true, filter: ['gt', 'gte', 'lt', 'lte'], description: 'When the request arrived (real time, not the account clock)' }),
    upstream: attr.boolean({
      nullable: true,
      description: 'Whether the upstream API would accept the request: false when it used a sitebiz extension (a route, parameter, filter, sort, field, include or body member only sitebiz has; docs/upstream-strict.md) or something neither defines; null for entries older than this attribute',
    }),
    upstream_reason: attr.string({ nullable: true, description: 'Why upstream is false, such as "filter[email_eq] is a sitebiz extension"; null when it is true' }),
  },
  filters: {
    path: namedFilter('string', 'Paths starting with this text, or matching it as a pattern where * stands for any text (/v1/contacts/*/tags)', (eb, text, ctx) => {
      const pattern = text.includes('*') ? escapeLike(text).replace(/\*/g, '%') : `${escapeLike(text)}%`;
      return ctx.traits.likeInsensitive(eb, eb.ref('request_journal.path'), pattern);
    }),
    status: namedFilter('strings', 'Statuses (503) or classes (5xx), comma-separated', (eb, values) => statusCondition(eb, values)),
    client_id: namedFilter('strings', 'Requests of these client ids, comma-separated', (eb, ids) => eb('request_journal.client_id', 'in', ids)),
    upstream: namedFilter('boolean', 'true: requests the upstream API would accept; false: those using a sitebiz extension or something neither defines (docs/upstream-strict.md)', (eb, value, ctx) =>
      eb('request_journal.upstream', '=', ctx.traits.encodeBoolean(value)),
    ),
    // For following the journal as it grows (the console's live list): ids grow in the order
    // entries are written, so "after the newest id read" misses no entry written later, even one
    // whose request arrived earlier (a slow request answered after faster ones).
    after_id: namedFilter('id', 'Entries written after the entry with this id (a greater id): pass the newest id read to see only what came since', (eb, id) =>
      eb('request_journal.id', '>', id),
    ),
  },
});

export const journalPart: SandboxPart = (services) => {
  const { engine } = services;
  return async (app) => {
    // An app built on a registry without the sandbox's resources (the engine's own tests) serves none.
    if (!engine.registry.find(journalEntries.type)) return;
    app.get('/requests', { schema: { ...listRouteSchema(engine.registry, journalEntries), summary: 'List the request journal' } }, async (request, reply) => {
      // This process's latest requests are in its buffer until the next batch: write them first,
      // and read them where they were written (a read replica may not have them yet).
      await services.journal.flush();
      return reply.type(JSONAPI_MEDIA_TYPE).send(await engine.list(journalEntries, rawQueryOf(request), readingFromPrimary(principalOf(request))));
    });
    app.get<{ Params: { id: string } }>('/requests/:id', { schema: { ...showRouteSchema(engine.registry, journalEntries), summary: 'Show a journaled request' } }, async (request, reply) => {
      await services.journal.flush();
      return reply.type(JSONAPI_MEDIA_TYPE).send(await engine.show(journalEntries, request.params.id, rawQueryOf(request), readingFromPrimary(principalOf(request))));
    });
  };
};
