// The upstream classifier, pure (upstream-surface.ts, upstream-check.ts): a fixture declaration's
// flags become a route's vocabulary, and a request's words are looked up in it. What the served
// API has no example of today (a body member only sitebiz takes) is proved here.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { Registry } from '../../src/jsonapi/registry.js';
import { attr, defineResource, namedFilter, rel } from '../../src/jsonapi/resource.js';
import { upstreamVerdict } from '../../src/jsonapi/upstream-check.js';
import { listUpstream, showUpstream, writeUpstream, type RouteUpstream } from '../../src/jsonapi/upstream-surface.js';

const sites = defineResource({ type: 'sites', table: 'sites', description: '', readPermission: null, tenancy: { kind: 'account', column: 'account_id' } });
const notes = defineResource({
  type: 'notes',
  table: 'notes',
  description: '',
  readPermission: null,
  tenancy: { kind: 'site', column: 'site_id' },
  attributes: {
    body: attr.string({ sort: true, filter: ['eq', 'cont'], upstream: { filter: ['cont'] } }),
    mood: attr.string({ upstream: false }),
  },
  relationships: { site: rel.toOne('sites', 'site_id'), author: rel.toOne('sites', 'author_id', { upstream: false }) },
  filters: { recent: namedFilter('boolean', 'Recent notes', (eb) => eb.val(true), { upstream: false }) },
  upstream: { list: ['page[number]', 'fields'] },
});
const registry = new Registry([sites, notes]);

/** As Fastify hands a request to the classifier: only what it reads. */
const request = (method: string, url: string, upstream: RouteUpstream | undefined, body?: unknown) =>
  ({ method, url, body, is404: false, routeOptions: { url: url.split('?')[0], config: upstream ? { upstream } : {} } }) as unknown as FastifyRequest;

const reasonOf = (req: FastifyRequest) => {
  const verdict = upstreamVerdict(req);
  return verdict.upstream ? null : { reason: verdict.reason, refused: verdict.refusal?.toDocument().errors[0] };
};

describe('upstream classifier', () => {
  it('lists: upstream parameters, filters and fields pass; extensions are refused naming the parameter; unknown words are only noted', () => {
    const list = listUpstream(registry, notes);
    assert.equal(reasonOf(request('GET', '/v1/notes?page[number]=2&filter[site_id]=1&filter[body_cont]=x&fields[notes]=body', list)), null);
    assert.deepEqual(reasonOf(request('GET', '/v1/notes?filter[body_eq]=x', list)), {
      reason: 'filter[body_eq] is a sitebiz extension',
      refused: {
        status: '400',
        code: 'sitebiz_extension',
        title: 'Invalid Query Parameter',
        detail: 'filter[body_eq] is a sitebiz extension; the upstream API does not define it (UPSTREAM_STRICT is on)',
        source: { parameter: 'filter[body_eq]' },
      },
    });
    assert.equal(reasonOf(request('GET', '/v1/notes?filter[recent]=true', list))?.reason, 'filter[recent] is a sitebiz extension');
    assert.equal(reasonOf(request('GET', '/v1/notes?sort=body', list))?.refused?.source?.parameter, 'sort', 'this list takes no sort upstream');
    assert.equal(reasonOf(request('GET', '/v1/notes?page[size]=5', list))?.reason, 'page[size] is a sitebiz extension');
    assert.equal(reasonOf(request('GET', '/v1/notes?fields[notes]=body,mood', list))?.reason, 'fields[notes]=mood is a sitebiz extension');
    assert.deepEqual(reasonOf(request('GET', '/v1/notes?filter[nope]=1', list)), { reason: 'filter[nope] is not defined by the upstream API', refused: undefined });
  });

  it('shows: includes through upstream relationships only', () => {
    const show = showUpstream(registry, notes);
    assert.equal(reasonOf(request('GET', '/v1/notes/1?include=site&fields[sites]=', show)), null);
    assert.equal(reasonOf(request('GET', '/v1/notes/1?include=site,author', show))?.reason, 'include=author is a sitebiz extension');
  });

  it('writes: a body member only sitebiz takes is refused with 422 at its pointer', () => {
    const create = writeUpstream(notes, { writable: ['body', 'mood'], relationships: { site: { required: true }, author: { required: false } } });
    const body = (attributes: object, relationships: object = {}) => ({ data: { type: 'notes', attributes, relationships } });
    assert.equal(reasonOf(request('POST', '/v1/notes', create, body({ body: 'x' }, { site: { data: null } }))), null);
    assert.deepEqual(reasonOf(request('POST', '/v1/notes', create, body({ body: 'x', mood: 'calm' })))?.refused, {
      status: '422',
      code: 'sitebiz_extension',
      title: 'Unprocessable Entity',
      detail: 'attribute mood is a sitebiz extension; the upstream API does not define it (UPSTREAM_STRICT is on)',
      source: { pointer: '/data/attributes/mood' },
    });
    assert.equal(reasonOf(request('POST', '/v1/notes', create, body({}, { author: { data: null } })))?.refused?.source?.pointer, '/data/relationships/author');
    assert.equal(reasonOf(request('POST', '/v1/notes', create, body({ bogus: 1 })))?.refused, undefined, 'unknown to both: sitebiz answers it');
  });

  it('routes: an extension route is refused with 404; an unclassified one and an exempt one are only noted', () => {
    const events = request('GET', '/v1/events', { kind: 'extension' });
    assert.deepEqual(reasonOf(events)?.refused?.status, '404');
    assert.equal(reasonOf(events)?.reason, 'GET /v1/events is a sitebiz extension');
    assert.deepEqual(reasonOf(request('GET', '/v1/x', undefined)), { reason: 'GET /v1/x is not an upstream operation', refused: undefined });
    assert.deepEqual(reasonOf(request('GET', '/v1/test_helpers/clock', { kind: 'exempt', reason: 'test helpers' })), { reason: 'test helpers', refused: undefined });
  });
});
