// Whether a request is one the upstream API would accept (docs/upstream-strict.md), from its
// route's RouteUpstream (upstream-surface.ts): set lookups over the query's keys and the body's
// attribute and relationship names, nothing walked deeper. The request journal records the
// verdict of every journaled request; in UPSTREAM_STRICT mode a sitebiz extension is refused.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, type ErrorSource } from './errors.js';
import { splitList } from './query-parser.js';
import type { QueryVocabulary, RouteUpstream, UpstreamOperation } from './upstream-surface.js';

export type UpstreamVerdict =
  | { upstream: true }
  | {
      upstream: false;
      /** "filter[email_eq] is a sitebiz extension", "GET /v1/events is a sitebiz extension". */
      reason: string;
      /** What UPSTREAM_STRICT answers; none for what sitebiz does not serve either (its own error follows) or keeps available. */
      refusal?: ApiError;
    };

const UPSTREAM: UpstreamVerdict = { upstream: true };
const STRICT = 'the upstream API does not define it (UPSTREAM_STRICT is on)';
const FIELDS_KEY = /^fields\[([^\][]*)\]$/;
const LIST_FILTER_KEY = /^(filter\[[^\][]+\])\[\]$/;

/** A word of a request the upstream does not have: where it is, and how to refuse it. */
interface Miss {
  word: string;
  status: 400 | 404 | 422;
  source?: ErrorSource;
  /** Whether sitebiz serves it (an extension) or neither does. */
  served: boolean;
}

function verdictOf(miss: Miss | undefined): UpstreamVerdict {
  if (!miss) return UPSTREAM;
  if (!miss.served) return { upstream: false, reason: `${miss.word} is not defined by the upstream API` };
  const reason = `${miss.word} is a sitebiz extension`;
  const title = miss.status === 400 ? 'Invalid Query Parameter' : miss.status === 404 ? 'Not Found' : 'Unprocessable Entity';
  const error = { code: 'sitebiz_extension', title, detail: `${reason}; ${STRICT}`, ...(miss.source ? { source: miss.source } : {}) };
  return { upstream: false, reason, refusal: new ApiError(miss.status, [error]) };
}

/** The first word of `key=value` that `vocabulary` lacks, as it would be named. */
function unknownWord(vocabulary: QueryVocabulary, key: string, value: string): string | undefined {
  if (key === 'sort' && vocabulary.sorts) {
    const name = value.trim().replace(/^-/, '');
    return vocabulary.sorts.has(name) ? undefined : `sort=${name}`;
  }
  if (key === 'include' && vocabulary.includes) {
    const includes = vocabulary.includes;
    const path = splitList(value).find((p) => !includes.has(p));
    return path === undefined ? undefined : `include=${path}`;
  }
  const fields = FIELDS_KEY.exec(key);
  const allowed = fields && vocabulary.fields?.get(fields[1]!);
  if (allowed) {
    const name = splitList(value).find((n) => !allowed.has(n));
    return name === undefined ? undefined : `${key}=${name}`;
  }
  return vocabulary.parameters.has(key) ? undefined : key;
}

function checkQuery(query: NonNullable<UpstreamOperation['query']>, raw: string): Miss | undefined {
  if (raw === '') return undefined;
  for (const [rawKey, value] of new URLSearchParams(raw)) {
    const key = LIST_FILTER_KEY.exec(rawKey)?.[1] ?? rawKey;
    const word = unknownWord(query.upstream, key, value);
    if (word !== undefined) return { word, status: 400, source: { parameter: key }, served: unknownWord(query.served, key, value) === undefined };
  }
  return undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function checkBody(body: NonNullable<UpstreamOperation['body']>, document: unknown): Miss | undefined {
  const data = isObject(document) ? document.data : undefined;
  if (!isObject(data)) return undefined;
  for (const [member, kind] of [['attributes', 'attribute'], ['relationships', 'relationship']] as const) {
    const given = data[member];
    if (!isObject(given)) continue;
    for (const name of Object.keys(given)) {
      if (body.upstream[member].has(name)) continue;
      return { word: `${kind} ${name}`, status: 422, source: { pointer: `/data/${member}/${name}` }, served: body.served[member].has(name) };
    }
  }
  return undefined;
}

/** `GET /v1/contacts/{id}`: the route as the reference writes it. */
const operationOf = (request: FastifyRequest) => `${request.method} ${(request.routeOptions.url ?? request.url).replace(/:(\w+)/g, '{$1}')}`;

function classify(request: FastifyRequest): UpstreamVerdict {
  const route = request.routeOptions.config?.upstream;
  if (!route || request.is404) return { upstream: false, reason: `${request.method} ${request.url.split('?')[0]} is not an upstream operation` };
  if (route.kind === 'exempt') return { upstream: false, reason: route.reason };
  if (route.kind === 'extension') return verdictOf({ word: operationOf(request), status: 404, served: true });
  const at = request.url.indexOf('?');
  const miss = (route.query && checkQuery(route.query, at < 0 ? '' : request.url.slice(at + 1))) || (route.body && checkBody(route.body, request.body));
  return verdictOf(miss);
}

const verdicts = new WeakMap<FastifyRequest, UpstreamVerdict>();

/** Whether the upstream API would accept the request; computed once per request. */
export function upstreamVerdict(request: FastifyRequest): UpstreamVerdict {
  let verdict = verdicts.get(request);
  if (!verdict) {
    verdict = classify(request);
    verdicts.set(request, verdict);
  }
  return verdict;
}

/** UPSTREAM_STRICT: refuses every sitebiz extension of a classified route before its handler runs. */
export function refuseExtensions(app: FastifyInstance): void {
  app.addHook('preHandler', async (request) => {
    if (request.routeOptions.config?.upstream === undefined) return;
    const verdict = upstreamVerdict(request);
    if (!verdict.upstream && verdict.refusal) throw verdict.refusal;
  });
}

/** Marks every route registered on `app` from now on with `upstream` (a scope's onRoute hook). */
export function markRoutes(app: FastifyInstance, upstream: RouteUpstream): void {
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, upstream };
  });
}
