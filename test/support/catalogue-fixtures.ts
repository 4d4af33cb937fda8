// Fixture rows for the read resources other than contacts, customers and sites, and the test kit
// that test/resources/*.test.ts share: one declarative description per resource (its records in
// default order, each sort, each filter with the exact ids it must return, the shown record) from
// which the kit writes the list, show, sort, sparse-field, filter, 404 and 403 tests, checking
// every 200 against the upstream OpenAPI document.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Kysely } from 'kysely';
import { PERMISSION_NAMES } from '../../src/auth/permissions.js';
import { createAccount, createSite, createUser } from '../../src/domain/accounts.js';
import { filterNames } from '../../src/jsonapi/planner.js';
import type { ResourceDefinition } from '../../src/jsonapi/resource.js';
import { createTestApp, PUBLIC_URL, type DialectName, type TestApp } from './harness.js';
import { assertResponseMatchesUpstream, upstreamOperations, type InjectedResponse } from './upstream.js';

export type Res = Awaited<ReturnType<TestApp['request']>>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

export const at = (iso: string): Date => new Date(iso);
export const NONEXISTENT_ID = '987654321';

/** The canonical URL of a record. */
export const selfUrl = (type: string, id: string): string => `${PUBLIC_URL}/v1/${type}/${id}`;

/** Ids of a list response's data, in order. */
export const idsOf = (res: Res): string[] => res.json().data.map((r: { id: string }) => r.id);

// ---------------------------------------------------------------------------------------------
// Rows

type Value = string | number | boolean | null | Date | Record<string, unknown> | unknown[];
type Values = Record<string, Value | undefined>;

/** Tables whose rows have created_at but no updated_at (see 0002_platform). */
const NO_UPDATED_AT = new Set(['form_submissions', 'transactions', 'event_registrations', 'assessment_attempts', 'email_events', 'outbox_events', 'webhook_attempts']);

/**
 * Inserts rows with the database's own encodings (booleans, timestamps, JSON), filling
 * created_at/updated_at from the test clock unless given. Every helper takes the site id and
 * overrides for any column; the defaults satisfy the NOT NULL columns.
 */
export class Rows {
  private seq = 0;

  constructor(
    private readonly t: TestApp,
  ) {}

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private get db(): Kysely<any> {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return this.t.handle.db as unknown as Kysely<any>;
  }

  private encode(values: Values): Record<string, unknown> {
    const traits = this.t.handle.traits;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) continue;
      if (v instanceof Date) out[k] = traits.encodeTimestamp(v);
      else if (typeof v === 'boolean') out[k] = traits.encodeBoolean(v);
      else if (v !== null && typeof v === 'object') out[k] = traits.encodeJson(v);
      else out[k] = v;
    }
    return out;
  }

  /** A row of a site-owned table; returns its id as the API renders it. */
  async insert(table: string, siteId: string, values: Values): Promise<string> {
    const now = this.t.clock.now();
    const stamps: Values = NO_UPDATED_AT.has(table) ? { created_at: now } : { created_at: now, updated_at: values.created_at ?? now };
    const row = await this.db
      .insertInto(table)
      .values(this.encode({ site_id: Number(siteId), ...stamps, ...values }))
      .returning('id')
      .executeTakeFirstOrThrow();
    return String(row.id);
  }

  /** A row of a join table (no id, no site, no timestamps). */
  async link(table: string, values: Values): Promise<void> {
    await this.db.insertInto(table).values(this.encode(values)).execute();
  }

  private next(): number {
    return ++this.seq;
  }

  contact(siteId: string, o: Values = {}) {
    const n = this.next();
    return this.insert('contacts', siteId, { name: `Contact ${n}`, email: `contact${n}@example.com`, hidden: false, subscribed: true, ...o });
  }

  /** A customer with its contact. */
  async customer(siteId: string, o: Values = {}): Promise<string> {
    const n = this.next();
    const name = (o.name as string | undefined) ?? `Customer ${n}`;
    const email = (o.email as string | undefined) ?? `customer${n}@example.com`;
    const contactId = await this.contact(siteId, { name, email });
    return this.insert('customers', siteId, { contact_id: Number(contactId), name, email, net_revenue_cents: 0, sign_in_count: 0, ...o });
  }

  contactTag(siteId: string, o: Values = {}) {
    return this.insert('contact_tags', siteId, { name: `Tag ${this.next()}`, ...o });
  }

  customField(siteId: string, o: Values = {}) {
    const n = this.next();
    return this.insert('custom_fields', siteId, { title: `Field ${n}`, handle: `custom_${n}`, field_type: 'TextField', required: false, ...o });
  }

  contactNote(siteId: string, contactId: string, o: Values = {}) {
    return this.insert('contact_notes', siteId, { contact_id: Number(contactId), body: `Note ${this.next()}`, ...o });
  }

  product(siteId: string, o: Values = {}) {
    return this.insert('products', siteId, {
      title: `Product ${this.next()}`,
      status: 'ready',
      product_type_id: 1,
      product_type_name: 'Course',
      productizable_type: 'Course',
      publish_status: 'published',
      ...o,
    });
  }

  offer(siteId: string, o: Values = {}) {
    const n = this.next();
    return this.insert('offers', siteId, {
      title: `Offer ${n}`,
      currency: 'USD',
      price_in_cents: 1000,
      payment_type: 'one_time',
      token: `tok${n}x${Math.random().toString(36).slice(2, 8)}`,
      payment_method: 'kajabi_payments',
      price_description: '$10.00',
      single: true,
      ...o,
    });
  }

  offerProduct(offerId: string, productId: string) {
    return this.link('offer_products', { offer_id: Number(offerId), product_id: Number(productId) });
  }

  membership(siteId: string, contactId: string, productId: string, o: Values = {}) {
    return this.insert('memberships', siteId, {
      contact_id: Number(contactId),
      product_id: Number(productId),
      started_at: this.t.clock.now(),
      ...o,
    });
  }

  course(siteId: string, productId: string, o: Values = {}) {
    return this.insert('courses', siteId, { product_id: Number(productId), title: `Course ${this.next()}`, publish_status: 'published', ...o });
  }

  module(siteId: string, courseId: string, position: number, o: Values = {}) {
    return this.insert('modules', siteId, {
      course_id: Number(courseId),
      title: `Module ${this.next()}`,
      position,
      publishing_option: 'published',
      ...o,
    });
  }

  lesson(siteId: string, courseId: string, moduleId: string, position: number, o: Values = {}) {
    return this.insert('lessons', siteId, {
      course_id: Number(courseId),
      module_id: Number(moduleId),
      title: `Lesson ${this.next()}`,
      position,
      status: 'ready',
      publishing_option: 'published',
      ...o,
    });
  }

  media(siteId: string, lessonId: string, o: Values = {}) {
    const n = this.next();
    return this.insert('media', siteId, {
      lesson_id: Number(lessonId),
      kind: 'video',
      title: `Media ${n}`,
      url: `https://cdn.example.com/media/${n}.mp4`,
      duration_seconds: 60,
      ...o,
    });
  }

  podcast(siteId: string, productId: string, o: Values = {}) {
    const n = this.next();
    return this.insert('podcasts', siteId, {
      product_id: Number(productId),
      title: `Podcast ${n}`,
      description: `About podcast ${n}`,
      language: 'en',
      owner_email: `owner${n}@example.com`,
      status: 'ready',
      show_type: 'episodic',
      categories: [],
      directories: [],
      migrated: false,
      public: true,
      ready: true,
      distribution_ready: true,
      url: `https://example.com/podcasts/${n}`,
      ...o,
    });
  }

  podcastEpisode(siteId: string, podcastId: string, episodeNumber: number, o: Values = {}) {
    const n = this.next();
    return this.insert('podcast_episodes', siteId, {
      podcast_id: Number(podcastId),
      title: `Episode ${n}`,
      episode_number: episodeNumber,
      duration_seconds: 1200,
      audio_url: `https://cdn.example.com/episodes/${n}.mp3`,
      ...o,
    });
  }

  form(siteId: string, o: Values = {}) {
    const n = this.next();
    return this.insert('forms', siteId, { title: `Form ${n}`, is_default: false, url: `https://example.com/forms/${n}`, double_opt_in: false, ...o });
  }

  formField(siteId: string, formId: string, position: number, o: Values = {}) {
    return this.insert('form_fields', siteId, {
      form_id: Number(formId),
      title: `Field ${this.next()}`,
      field_type: 'TextField',
      required: false,
      handle: 'custom_1',
      editable: true,
      position,
      ...o,
    });
  }

  formSubmission(siteId: string, formId: string, o: Values = {}) {
    const n = this.next();
    return this.insert('form_submissions', siteId, { form_id: Number(formId), name: `Submitter ${n}`, email: `submitter${n}@example.com`, ...o });
  }

  landingPage(siteId: string, o: Values = {}) {
    const n = this.next();
    return this.insert('landing_pages', siteId, { title: `Landing ${n}`, url: `https://example.com/lp/${n}`, ...o });
  }

  websitePage(siteId: string, o: Values = {}) {
    const n = this.next();
    return this.insert('website_pages', siteId, { title: `Page ${n}`, url: `https://example.com/pages/${n}`, ...o });
  }

  blog(siteId: string, o: Values = {}) {
    return this.insert('blogs', siteId, { title: `Blog ${this.next()}`, ...o });
  }

  blogPost(siteId: string, blogId: string, o: Values = {}) {
    const n = this.next();
    return this.insert('blog_posts', siteId, {
      blog_id: Number(blogId),
      title: `Post ${n}`,
      slug: `post-${n}`,
      url: `https://example.com/blog/post-${n}`,
      content: `<p>Post ${n}</p>`,
      page_title: `Post ${n}`,
      page_description: `About post ${n}`,
      ...o,
    });
  }

  purchase(siteId: string, customerId: string, offerId: string, o: Values = {}) {
    return this.insert('purchases', siteId, {
      customer_id: Number(customerId),
      offer_id: Number(offerId),
      amount_in_cents: 1000,
      payment_type: 'one_time',
      opt_in: false,
      raw_extra_contact_information: {},
      currency: 'USD',
      quantity: 1,
      ...o,
    });
  }

  transaction(siteId: string, customerId: string, offerId: string | null, o: Values = {}) {
    return this.insert('transactions', siteId, {
      customer_id: Number(customerId),
      offer_id: offerId === null ? null : Number(offerId),
      action: 'charge',
      state: 'succeeded',
      payment_type: 'one_time',
      amount_in_cents: 1000,
      sales_tax_in_cents: 0,
      currency: 'USD',
      ...o,
    });
  }

  purchaseTransaction(purchaseId: string, transactionId: string) {
    return this.link('purchase_transactions', { purchase_id: Number(purchaseId), transaction_id: Number(transactionId) });
  }

  order(siteId: string, customerId: string, orderNumber: number, o: Values = {}) {
    return this.insert('orders', siteId, {
      customer_id: Number(customerId),
      order_number: orderNumber,
      currency_code: 'USD',
      total_price_in_cents: 1000,
      subtotal_in_cents: 1000,
      sales_tax_amount_in_cents: 0,
      discount_amount_in_cents: 0,
      ...o,
    });
  }

  orderItem(siteId: string, orderId: string, o: Values = {}) {
    return this.insert('order_items', siteId, {
      order_id: Number(orderId),
      quantity: 1,
      currency_code: 'USD',
      item_type: 'Offer',
      item_id: 1,
      title: `Item ${this.next()}`,
      total_price_in_cents: 1000,
      subtotal_in_cents: 1000,
      sales_tax_amount_in_cents: 0,
      discount_amount_in_cents: 0,
      ...o,
    });
  }

  payout(siteId: string, o: Values = {}) {
    return this.insert('kajabi_payments_payouts', siteId, {
      status: 'paid',
      amount_in_cents: 100000,
      currency: 'USD',
      initiated_at: at('2026-05-01T10:00:00.000Z'),
      estimated_arrival_at: at('2026-05-03T10:00:00.000Z'),
      destination: 'Chase Bank - 1234',
      ...o,
    });
  }

  hook(siteId: string, o: Values = {}) {
    return this.insert('hooks', siteId, { event: 'purchase', target_url: `https://hooks.example.com/${this.next()}`, ...o });
  }
}

// ---------------------------------------------------------------------------------------------
// The world every resource suite reads from

export interface World {
  t: TestApp;
  /** Token of the tenant's all-permission key (its owner reaches both sites). */
  token: string;
  /** The site the suites list by default. */
  siteId: string;
  /** A second site of the same account, reached with filter[site_id]. */
  secondSiteId: string;
  /** Another account: its records are 404 to the tenant. */
  other: { siteId: string; ownerId: number; token: string };
  rows: Rows;
}

export async function createWorld(dialect: DialectName): Promise<World> {
  const t = await createTestApp(dialect);
  const secondSiteId = await createSite(t.handle, { accountId: t.tenant.accountId, title: 'Second Site', subdomain: `second-${dialect}` }, t.clock);
  const otherAccountId = await createAccount(t.handle, { name: 'Other Account' }, t.clock);
  const otherOwnerId = await createUser(
    t.handle,
    { accountId: otherAccountId, name: 'Oscar Other', email: 'oscar@other.example', role: 'owner' },
    t.clock,
  );
  const otherSiteId = await createSite(t.handle, { accountId: otherAccountId, title: 'Other Site', subdomain: `other-${dialect}` }, t.clock);
  return {
    t,
    token: await t.token(),
    siteId: String(t.tenant.siteId),
    secondSiteId: String(secondSiteId),
    other: { siteId: String(otherSiteId), ownerId: otherOwnerId, token: (await t.keyWith(otherOwnerId, PERMISSION_NAMES)).token },
    rows: new Rows(t),
  };
}

/** GET with the world's token; fails unless the status is the expected one. */
export async function getJson(w: World, url: string, status = 200, token = w.token): Promise<Res> {
  const res = await w.t.request({ method: 'GET', url, token });
  assert.equal(res.statusCode, status, `GET ${url}: ${res.body}`);
  assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/, url);
  return res;
}

/** Adds filter[site_id] of the world's main site unless the query names a site already. */
export function withSite(w: World, query: string): string {
  if (/(^|&)filter\[site_id\]=/.test(query)) return query;
  return query === '' ? `filter[site_id]=${w.siteId}` : `filter[site_id]=${w.siteId}&${query}`;
}

// ---------------------------------------------------------------------------------------------
// Upstream checks

export interface UpstreamCheck {
  list: string;
  show: string;
  /**
   * Close attributes to the names upstream lists (default). Set false only where the seed
   * (shared/seeds) gives the resource an attribute the upstream schema lacks, and say which.
   */
  strictAttributes?: boolean;
  /**
   * Rewrites a body before validation, for a documented disagreement between upstream's schema
   * and upstream's (or the seed's) prose; the kit validates the rewritten body.
   */
  adjust?: (body: Json) => Json;
}

/** Validates a 200 against the upstream operation, after the check's adjustment if any. */
export function assertUpstream(check: UpstreamCheck, op: 'list' | 'show', res: Res): void {
  const path = op === 'list' ? check.list : check.show;
  const options = { strictAttributes: check.strictAttributes ?? true };
  if (!check.adjust) return assertResponseMatchesUpstream('GET', path, res, options);
  const adjusted: InjectedResponse = {
    statusCode: res.statusCode,
    headers: res.headers,
    body: JSON.stringify(check.adjust(structuredClone(res.json()))),
  };
  assertResponseMatchesUpstream('GET', path, adjusted, options);
}

/**
 * An `adjust` that removes attributes the seed gives a type and the upstream schema lacks, so
 * that every other attribute is still checked strictly against upstream.
 */
export function withoutSeedOnlyAttributes(byType: Record<string, string[]>): (body: Json) => Json {
  return (body) => {
    const records = [...(Array.isArray(body.data) ? body.data : [body.data]), ...(body.included ?? [])];
    for (const r of records) {
      for (const name of byType[r?.type] ?? []) if (r.attributes) delete r.attributes[name];
    }
    return body;
  };
}

/**
 * An `adjust` that removes to-one relationships whose linkage is null. JSON:API renders an
 * empty to-one as `data: null`; upstream types to-one `data` as a non-nullable object even
 * where its prose says the relationship can be empty.
 */
export function withoutNullToOne(byType: Record<string, string[]>): (body: Json) => Json {
  return (body) => {
    const records = [...(Array.isArray(body.data) ? body.data : [body.data]), ...(body.included ?? [])];
    for (const r of records) {
      for (const name of byType[r?.type] ?? []) {
        if (r.relationships?.[name] && r.relationships[name].data === null) delete r.relationships[name];
      }
    }
    return body;
  };
}

/** Several adjustments, applied in order. */
export function adjustAll(...steps: Array<(body: Json) => Json>): (body: Json) => Json {
  return (body) => steps.reduce((b, step) => step(b), body);
}

function documents(path: string, status: string): boolean {
  return upstreamOperations().some((o) => o.method === 'GET' && o.path === path && o.statuses.includes(status));
}

// ---------------------------------------------------------------------------------------------
// The generic read suite

export interface FilterCase<F> {
  /** The filter's name as filterNames() gives it (`title_cont`, `site_id`, `published` ...). */
  name: string;
  /** The query (without filter[site_id] of the main site, which the kit adds). */
  query: (f: F) => string;
  /** Exactly the records it must return; the kit orders them by the default sort. */
  expect: (f: F) => string[];
}

export interface ReadSuite<F> {
  resource: ResourceDefinition;
  world: () => World;
  fixtures: () => F;
  /** Null for an operation upstream documents without a response body (the reason in a comment). */
  upstream: UpstreamCheck | null;
  /** Every record of the main site, in the default order. */
  all: (f: F) => string[];
  /** Each sort key with the ascending id order; descending must be its exact reverse. */
  sorts: Record<string, (f: F) => string[]>;
  filters: FilterCase<F>[];
  /** Attribute names for the sparse fieldset test. */
  sparse: string[];
  /** The exact resource object of one record, as shown by GET /v1/<type>/<id>. */
  show: (f: F) => Json;
  /** A record of another account. */
  foreign: (f: F) => string;
}

/** Defines the kit's tests; call inside a describe whose before() fills world and fixtures. */
export function readResourceTests<F>(suite: ReadSuite<F>): void {
  const { resource } = suite;
  const type = resource.type;
  const validate = (op: 'list' | 'show', res: Res) => {
    if (suite.upstream) assertUpstream(suite.upstream, op, res);
  };
  const list = async (query: string): Promise<Res> => {
    const res = await getJson(suite.world(), `/v1/${type}?${withSite(suite.world(), query)}`);
    validate('list', res);
    return res;
  };
  const orderByDefault = (f: F, ids: string[]): string[] => {
    const all = suite.all(f);
    if (!ids.every((id) => all.includes(id))) return ids;
    return [...ids].sort((a, b) => all.indexOf(a) - all.indexOf(b));
  };

  it(`lists ${type} in the default order (${resource.defaultSort}), with links and meta`, async () => {
    const f = suite.fixtures();
    const res = await list('');
    const body = res.json();
    assert.deepEqual(idsOf(res), suite.all(f));
    assert.ok(suite.all(f).length >= 3, 'enough records to tell orders apart');
    assert.deepEqual(body.meta, { total_pages: 1, total_count: suite.all(f).length, current_page: 1 });
    assert.equal(body.links.self, `${PUBLIC_URL}/v1/${type}?page[number]=1&page[size]=25&filter[site_id]=${suite.world().siteId}`);
    for (const item of body.data) {
      assert.equal(item.type, type);
      assert.equal(item.links.self, `${PUBLIC_URL}/v1/${type}/${item.id}`);
    }
    const shown = suite.show(f);
    assert.deepEqual(body.data.find((d: Json) => d.id === shown.id), shown, 'a listed record renders as its show');
  });

  it(`shows one ${type} record with links.self and links.current`, async () => {
    const f = suite.fixtures();
    const expected = suite.show(f);
    const res = await getJson(suite.world(), `/v1/${type}/${expected.id}`);
    validate('show', res);
    const self = `${PUBLIC_URL}/v1/${type}/${expected.id}`;
    assert.deepEqual(res.json(), { data: expected, links: { self, current: self } });
    const withFields = await getJson(suite.world(), `/v1/${type}/${expected.id}?fields[${type}]=${suite.sparse.join(',')}`);
    validate('show', withFields);
    assert.deepEqual(withFields.json().links, { self, current: `${self}?fields[${type}]=${suite.sparse.join(',')}` });
  });

  it(`sorts ${type} by every sort key in both directions, with the id tiebreaker`, async () => {
    const f = suite.fixtures();
    assert.deepEqual(Object.keys(suite.sorts).sort(), sortKeys(resource), 'the suite covers every sort key of the declaration');
    for (const [key, ascending] of Object.entries(suite.sorts)) {
      const expected = ascending(f);
      assert.equal(new Set(expected).size, suite.all(f).length, `sort=${key} lists every record once`);
      assert.deepEqual(idsOf(await list(`sort=${key}`)), expected, `sort=${key}`);
      assert.deepEqual(idsOf(await list(`sort=-${key}`)), [...expected].reverse(), `sort=-${key}`);
    }
    const byId = [...suite.all(f)].sort((a, b) => Number(a) - Number(b));
    assert.deepEqual(idsOf(await list('sort=id')), byId);
    assert.deepEqual(idsOf(await list('sort=-id')), [...byId].reverse());
  });

  it(`returns only the fields[${type}] attributes, relationships unchanged`, async () => {
    const f = suite.fixtures();
    const full = suite.show(f);
    const res = await list(`fields[${type}]=${suite.sparse.join(',')}`);
    assert.deepEqual(idsOf(res), suite.all(f));
    for (const item of res.json().data) assert.deepEqual(Object.keys(item.attributes).sort(), [...suite.sparse].sort());
    const one = res.json().data.find((d: Json) => d.id === full.id);
    const picked = Object.fromEntries(suite.sparse.map((name) => [name, full.attributes[name]]));
    assert.deepEqual(one, { ...full, attributes: picked });
    const shown = await getJson(suite.world(), `/v1/${type}/${full.id}?fields[${type}]=${suite.sparse.join(',')}`);
    validate('show', shown);
    assert.deepEqual(shown.json().data, { ...full, attributes: picked });
  });

  it(`includes each relationship of ${type} on a show: exactly the linked records, once`, async () => {
    const f = suite.fixtures();
    const id = suite.show(f).id;
    const names = Object.keys(resource.relationships);
    if (names.length === 0) {
      const res = await getJson(suite.world(), `/v1/${type}/${id}`);
      assert.equal(res.json().data.relationships, undefined, `${type} declares no relationships`);
      return;
    }
    for (const name of names) {
      const res = await getJson(suite.world(), `/v1/${type}/${id}?include=${name}`);
      const body = res.json();
      const data = body.data.relationships?.[name]?.data;
      assert.notEqual(data, undefined, `include=${name} renders the relationship's linkage`);
      const linked: Json[] = data === null ? [] : Array.isArray(data) ? data : [data];
      assert.deepEqual(includedKeys(body).sort(), linked.map((r) => `${r.type}:${r.id}`).sort(), `include=${name}`);
      assertIncludedDistinct(body);
      for (const r of body.included) assert.equal(r.type, resource.relationships[name]!.type);
      // Upstream documents `included` for few operations (courses only); the primary data is
      // checked here, the included records against the linkage above.
      if (suite.upstream) {
        const withoutIncluded = { ...res, body: JSON.stringify({ ...body, included: undefined }), json: () => ({ ...body, included: undefined }) };
        assertUpstream(suite.upstream, 'show', withoutIncluded as Res);
      }
    }
  });

  it(`covers every filter of ${type}`, () => {
    const covered = new Set(suite.filters.map((c) => c.name));
    const names = filterNames(resource);
    assert.deepEqual(names.filter((n) => !covered.has(n)), [], 'filters without a test case');
    assert.deepEqual([...covered].filter((n) => !names.includes(n)), [], 'test cases naming no filter');
  });

  for (const c of suite.filters) {
    it(`filter[${c.name}] returns exactly the matching ${type}`, async () => {
      const f = suite.fixtures();
      const query = c.query(f);
      assert.match(query, new RegExp(`filter\\[${c.name}\\]`), 'the query uses the filter it tests');
      const expected = orderByDefault(f, c.expect(f));
      assert.ok(expected.length > 0, `${query} matches some records`);
      if (c.name !== 'site_id') assert.ok(expected.length < suite.all(f).length, `${query} leaves some records out`);
      const res = await list(query);
      assert.deepEqual(idsOf(res), expected, query);
      assert.equal(res.json().meta.total_count, expected.length, query);
    });
  }

  it(`answers 404 for a missing ${type} id and for another account's record`, async () => {
    const f = suite.fixtures();
    const w = suite.world();
    for (const id of [NONEXISTENT_ID, suite.foreign(f), 'abc']) {
      const res = await getJson(w, `/v1/${type}/${id}`, 404);
      assert.equal(res.json().errors[0].code, 'not_found');
    }
    // The other account's own token sees its record, so the 404 above is tenancy, not absence.
    await getJson(w, `/v1/${type}/${suite.foreign(f)}`, 200, w.other.token);
    // And it cannot list the tenant's site.
    const res = await getJson(w, `/v1/${type}?filter[site_id]=${w.siteId}`, 404, w.other.token);
    assert.equal(res.json().errors[0].source.parameter, 'filter[site_id]');
  });

  it(`answers 403 without the ${resource.readPermission} permission`, async () => {
    const w = suite.world();
    const f = suite.fixtures();
    assert.ok(resource.readPermission, 'the resource needs a permission');
    const { token } = await w.t.keyWith(w.t.tenant.ownerId, PERMISSION_NAMES.filter((p) => p !== resource.readPermission));
    const listed = await getJson(w, `/v1/${type}?filter[site_id]=${w.siteId}`, 403, token);
    assert.equal(listed.json().errors[0].code, 'forbidden');
    if (suite.upstream && documents(suite.upstream.list, '403')) assertResponseMatchesUpstream('GET', suite.upstream.list, listed);
    const shown = await getJson(w, `/v1/${type}/${suite.show(f).id}`, 403, token);
    assert.equal(shown.json().errors[0].code, 'forbidden');
    if (suite.upstream && documents(suite.upstream.show, '403')) assertResponseMatchesUpstream('GET', suite.upstream.show, shown);
    // With only that permission the same key reads.
    const only = await w.t.keyWith(w.t.tenant.ownerId, [resource.readPermission!]);
    await getJson(w, `/v1/${type}?filter[site_id]=${w.siteId}`, 200, only.token);
  });
}

/** Sort keys of a declaration: sortable attributes and extra sorts. */
export function sortKeys(resource: ResourceDefinition): string[] {
  const names = Object.entries(resource.attributes)
    .filter(([, a]) => a.sortable)
    .map(([n]) => n);
  return [...names, ...Object.keys(resource.sorts)].sort();
}

/** Every (type, id) of `included` once, and none of them the primary data. */
export function assertIncludedDistinct(body: Json): void {
  const keys = (body.included ?? []).map((r: Json) => `${r.type}:${r.id}`);
  assert.equal(new Set(keys).size, keys.length, `included has duplicates: ${keys.join(', ')}`);
  const primary = (Array.isArray(body.data) ? body.data : [body.data]).map((r: Json) => `${r.type}:${r.id}`);
  for (const k of keys) assert.ok(!primary.includes(k), `${k} is both primary data and included`);
}

/** `type:id` keys of included records, in order. */
export const includedKeys = (body: Json): string[] => (body.included ?? []).map((r: Json) => `${r.type}:${r.id}`);

/** Statements that read a table (as `from "<table>"` or a join of it). */
export function statementsOn(statements: string[], table: string): string[] {
  const re = new RegExp(`(from|join) "${table}"`, 'i');
  return statements.filter((s) => re.test(s));
}

/** The COUNT(*) a list runs when its page alone cannot tell the total. */
export const isCountQuery = (statement: string): boolean => /^select count\(\*\) as "count" from/i.test(statement);

/**
 * The table whose records a statement reads, not counting subqueries (`select ... from "offers"
 * ...` → offers). A to-many-through edge reads from its join table crossed with the records' table
 * (`from "offer_products" cross join "products"` → products).
 */
export function mainTable(statement: string): string | undefined {
  let flat = statement;
  for (let before = ''; before !== flat; ) {
    before = flat;
    flat = flat.replace(/\([^()]*\)/g, '');
  }
  const match = /\bfrom "(\w+)"(?: cross join "(\w+)")?/i.exec(flat);
  return match?.[2] ?? match?.[1];
}
