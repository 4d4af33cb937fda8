// The demo data set (src/demo): every list resource has records, and every filter of every list
// resource matches some records of the demo site and not others, through HTTP with a real token.
// Also: the data is deterministic (two fresh databases get identical rows, ids included) and
// consistent (customers mirror their contacts, net revenue is the sum of payments, access
// follows purchases).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { seedDemoData } from '../src/demo/seed.js';
import { filterNames } from '../src/jsonapi/planner.js';
import { SUFFIXES_LONGEST_FIRST, type PredicateSuffix } from '../src/jsonapi/predicates.js';
import type { ResourceDefinition } from '../src/jsonapi/resource.js';
import { centsToDecimal } from '../src/resources/contact-filters.js';
import { MADE_BY_API_WRITES } from './support/demo-scope.js';
import { createTestApp, DIALECTS, type TestApp } from './support/harness.js';
import { resourcePath } from '../src/jsonapi/document.js';

/** The demo fills one site: a list of sites has one record, which no filter can split. */
const ONE_RECORD = new Set(['sites']);

/**
 * Filters that cannot split the demo site by their definition. Each is still asserted, with the
 * result its definition implies.
 */
const UNSPLITTABLE: Record<string, { reason: string; expect: (total: number) => Array<[value: string, count: number]> }> = {
  // The tenancy scope: every record of the demo site has its site id.
  site_id: { reason: 'the demo has one site', expect: () => [] },
  // created_at and updated_at are NOT NULL columns, so `_null` is all or nothing.
  'landing_pages.created_at_null': { reason: 'created_at is never null', expect: (n) => [['true', 0], ['false', n]] },
  'landing_pages.updated_at_null': { reason: 'updated_at is never null', expect: (n) => [['true', 0], ['false', n]] },
  // Their hosts are made up: enabled, every delivery would fail (docs/sandbox.md "The demo's hooks").
  'hooks.disabled_at_null': { reason: 'every demo hook is disabled', expect: (n) => [['true', 0], ['false', n]] },
};

const FAMILY_RESOURCES = new Set(['contacts', 'customers']);


// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

for (const dialect of DIALECTS) {
  describe(`demo data [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let db: AnyDb;
    let siteId: number;

    before(async () => {
      t = await createTestApp(dialect);
      siteId = t.tenant.siteId;
      await seedDemoData(t.handle, { accountId: t.tenant.accountId, siteId }, t.clock);
      token = await t.token();
      db = t.handle.db as unknown as AnyDb;
    });
    after(() => t.close());

    const listResources = () => t.app.engine.registry.all().filter((r) => r.routes.list && !MADE_BY_API_WRITES.has(r.type));

    async function count(resource: ResourceDefinition, filters: Array<[string, string]> = []): Promise<number> {
      const params = new URLSearchParams();
      if (resource.tenancy.kind === 'site') params.set('filter[site_id]', String(siteId));
      for (const [name, value] of filters) params.set(`filter[${name}]`, value);
      params.set('page[size]', '1');
      const res = await t.get(`/v1/${resourcePath(resource)}?${params}`, token);
      assert.equal(res.statusCode, 200, `${resource.type} ${params}: ${res.body}`);
      return (res.json() as { meta: { total_count: number } }).meta.total_count;
    }

    /** Rows of the resource's table on the demo site, ordered by id. */
    const siteRows = (table: string) => db.selectFrom(table).where(`${table}.site_id`, '=', siteId);

    const decode = (value: unknown): string => {
      if (value instanceof Date) return value.toISOString();
      if (typeof value === 'boolean') return String(value);
      return String(value);
    };

    /** A value for a predicate filter, read from the demo rows (see the comment per suffix). */
    async function predicateValue(resource: ResourceDefinition, attribute: string, suffix: PredicateSuffix): Promise<string[]> {
      const def = resource.attributes[attribute]!;
      const column = `${resource.table}.${def.column}`;
      const decodeAs = (v: unknown) =>
        def.type === 'datetime' ? t.handle.traits.decodeTimestamp(v)! : def.type === 'boolean' ? String(t.handle.traits.decodeBoolean(v)) : decode(v);
      if (suffix === 'null') return ['true', 'false'];
      if (['gt', 'gte', 'gteq', 'lt', 'lte', 'lteq'].includes(suffix)) {
        // Above the smallest and below the largest leave out the extremes; at least the largest
        // and at most the smallest keep only them. The database orders, as the filter will.
        const row = await siteRows(resource.table)
          .select([sql`min(${sql.ref(column)})`.as('lo'), sql`max(${sql.ref(column)})`.as('hi')])
          .executeTakeFirstOrThrow();
        const lo = decodeAs(row.lo);
        const hi = decodeAs(row.hi);
        return [suffix === 'gt' || suffix === 'lte' || suffix === 'lteq' ? lo : hi];
      }
      // The first record's value: equal to it, containing it, starting with its first half...
      const first = await siteRows(resource.table).select(sql.ref(column).as('v')).where(column, 'is not', null).orderBy(`${resource.table}.id`).executeTakeFirst();
      assert.ok(first, `${resource.type}: no record has ${attribute}`);
      const value = decodeAs(first.v);
      if (suffix === 'start') return [value.slice(0, Math.ceil(value.length / 2))];
      if (suffix === 'end') return [value.slice(Math.floor(value.length / 2))];
      return [value];
    }

    /** Values for a named filter of the contact family (contacts and customers). */
    async function familyValue(resource: ResourceDefinition, name: string): Promise<string[]> {
      const filter = resource.filters[name]!;
      const customersOnly = resource.type === 'customers';
      /** Contacts of the list's records: every contact, or those with a customer record. */
      const subjects = () => {
        let q = siteRows('contacts');
        if (customersOnly) q = q.where(({ exists, selectFrom }) => exists(selectFrom('customers').select('customers.id').whereRef('customers.contact_id', '=', 'contacts.id')));
        return q;
      };
      switch (filter.kind) {
        case 'days':
          return ['30'];
        case 'boolean':
          return ['true', 'false'];
        case 'decimal': {
          const revenues = (await siteRows('customers').select('net_revenue_cents').orderBy('id').execute()).map((r) => Number(r.net_revenue_cents));
          if (name === 'net_revenue_greater_than') return ['0'];
          if (name === 'net_revenue_less_than') return [centsToDecimal(Math.max(...revenues))];
          return [centsToDecimal(revenues.find((r) => r > 0)!)];
        }
        case 'ids': {
          // The declaration names the table its ids come from (and are checked against).
          const table = filter.references;
          assert.ok(table, `${name} declares no table for its ids`);
          const ids = (await siteRows(table).select('id').orderBy('id').limit(2).execute()).map((r) => String(r.id));
          return [name === 'has_all_tag_id' ? ids.join(',') : ids[0]!];
        }
        case 'string': {
          if (name === 'used_coupon_code') {
            const p = await siteRows('purchases').select('coupon_code').where('coupon_code', 'is not', null).orderBy('id').executeTakeFirstOrThrow();
            return [String(p.coupon_code).toLowerCase()];
          }
          const field = name === 'search' ? 'name' : name.replace(/_contains$/, '');
          const row = await subjects().select(`contacts.${field} as v`).where(`contacts.${field}`, 'is not', null).orderBy('contacts.id').executeTakeFirstOrThrow();
          const value = String(row.v);
          return [name === 'search' ? value.split(' ')[0]! : value];
        }
        default:
          assert.fail(`no value rule for ${resource.type} filter ${name} (${filter.kind})`);
      }
    }

    /** Values for the named filters of the other resources. */
    async function namedValue(resource: ResourceDefinition, name: string): Promise<string[]> {
      const filter = resource.filters[name]!;
      const table = resource.table;
      const firstOf = async (column: string) =>
        decode((await siteRows(table).select(`${table}.${column} as v`).where(`${table}.${column}`, 'is not', null).orderBy(`${table}.id`).executeTakeFirstOrThrow()).v);
      /** The middle record's time, so records fall on both sides. */
      const median = async (column: string) => {
        const rows = await siteRows(table).select(`${table}.${column} as v`).orderBy(`${table}.${column}`).execute();
        return t.handle.traits.decodeTimestamp(rows[Math.floor(rows.length / 2)]!.v)!;
      };
      if (filter.kind === 'boolean') return ['true', 'false'];
      if (filter.kind === 'id') return [await firstOf(name)];
      const explicit: Record<string, () => Promise<string>> = {
        'purchases.referrer': async () => (await firstOf('referrer')).replace(/^https:\/\/(www\.)?/, '').slice(0, 6),
        'transactions.name_or_email': async () => {
          const row = await siteRows('transactions').innerJoin('customers', 'customers.id', 'transactions.customer_id').select('customers.email').orderBy('transactions.id').executeTakeFirstOrThrow();
          return String(row.email);
        },
        'transactions.start_date': () => median('created_at'),
        'transactions.end_date': () => median('created_at'),
        'kajabi_payments_payouts.status': () => firstOf('status'),
        'kajabi_payments_payouts.start_date': () => median('initiated_at'),
        'kajabi_payments_payouts.end_date': () => median('initiated_at'),
        'products.exclude_product_types': () => firstOf('productizable_type'),
        'courses.publish_status_eq': () => firstOf('publish_status'),
      };
      const pick = explicit[`${resource.type}.${name}`];
      assert.ok(pick, `no value rule for ${resource.type} filter ${name} (${filter.kind})`);
      return [await pick()];
    }

    async function valuesFor(resource: ResourceDefinition, name: string): Promise<string[]> {
      if (resource.filters[name]) return FAMILY_RESOURCES.has(resource.type) ? familyValue(resource, name) : namedValue(resource, name);
      for (const suffix of SUFFIXES_LONGEST_FIRST) {
        const attribute = name.slice(0, -(suffix.length + 1));
        if (name.endsWith(`_${suffix}`) && resource.attributes[attribute]?.predicates.includes(suffix)) return predicateValue(resource, attribute, suffix);
      }
      assert.fail(`${resource.type}: ${name} is neither a named filter nor a predicate`);
    }

    it('gives every list resource records', async () => {
      const empty: string[] = [];
      for (const resource of listResources()) if ((await count(resource)) === 0) empty.push(resource.type);
      assert.deepEqual(empty, []);
    });

    it('lists the filters it checks (every filter of every list resource)', () => {
      const contactFilters = filterNames(t.app.engine.registry.get('contacts'));
      // The family is shared: the customers list has exactly the contacts list's filters.
      assert.deepEqual(filterNames(t.app.engine.registry.get('customers')), contactFilters);
      assert.ok(contactFilters.length > 70, `${contactFilters.length} contact filters`);
    });

    for (const type of [
      'contacts',
      'customers',
      'contact_tags',
      'custom_fields',
      'contact_notes',
      'offers',
      'products',
      'courses',
      'podcasts',
      'forms',
      'form_submissions',
      'landing_pages',
      'website_pages',
      'blog_posts',
      'purchases',
      'transactions',
      'orders',
      'order_items',
      'kajabi_payments_payouts',
      'hooks',
      'sites',
    ]) {
      it(`${type}: every filter matches some records and not others`, async () => {
        const resource = t.app.engine.registry.get(type);
        const total = await count(resource);
        if (ONE_RECORD.has(type)) {
          assert.equal(total, 1);
          return;
        }
        const failures: string[] = [];
        let checked = 0;
        for (const name of filterNames(resource)) {
          const unsplittable = UNSPLITTABLE[`${type}.${name}`] ?? UNSPLITTABLE[name];
          if (unsplittable) {
            for (const [value, expected] of unsplittable.expect(total)) {
              const n = await count(resource, [[name, value]]);
              if (n !== expected) failures.push(`${name}=${value}: ${n}, expected ${expected} (${unsplittable.reason})`);
            }
            continue;
          }
          for (const value of await valuesFor(resource, name)) {
            const n = await count(resource, [[name, value]]);
            checked++;
            if (!(n > 0 && n < total)) failures.push(`filter[${name}]=${value}: ${n} of ${total}`);
          }
        }
        assert.deepEqual(failures, [], `${type}: filters that do not split the demo data`);
        assert.ok(checked > 0);
      });
    }

    it('covers every list resource in the filter tests above', () => {
      const listed = listResources().map((r) => r.type).sort();
      assert.deepEqual(
        listed,
        [
          'audit_events', 'blog_posts', 'contact_notes', 'contact_tags', 'contacts', 'courses', 'custom_fields', 'customers', 'email_activities', 'email_broadcasts',
          'form_submissions', 'forms',
          'hooks', 'kajabi_payments_payouts', 'landing_pages', 'offers', 'order_items', 'orders', 'podcasts', 'products', 'purchases',
          'sites', 'transactions', 'website_pages',
        ],
      );
    });

    it('keeps customers consistent with contacts and payments', async () => {
      const mismatched = await siteRows('customers')
        .innerJoin('contacts', 'contacts.id', 'customers.contact_id')
        .select(['customers.id'])
        .where((eb) => eb.or([eb('customers.name', '<>', eb.ref('contacts.name')), eb('customers.email', '<>', eb.ref('contacts.email'))]))
        .execute();
      assert.deepEqual(mismatched, [], 'customer name and email are the contact’s');

      const revenue = await siteRows('customers')
        .select((eb) => [
          'customers.id',
          'customers.net_revenue_cents',
          eb.fn
            .coalesce(
              eb
                .selectFrom('transactions')
                .select((s) => s.fn.sum('transactions.amount_in_cents').as('s'))
                .whereRef('transactions.customer_id', '=', 'customers.id')
                .where('transactions.state', '=', 'succeeded'),
              sql.lit(0),
            )
            .as('paid'),
        ])
        .execute();
      const wrong = revenue.filter((r) => Number(r.net_revenue_cents) !== Number(r.paid));
      assert.deepEqual(wrong, [], 'net revenue is the sum of successful payments less refunds');
      assert.ok(revenue.some((r) => Number(r.net_revenue_cents) === 0) && revenue.some((r) => Number(r.net_revenue_cents) > 0));

      const customersWithoutAccess = await siteRows('customers')
        .select('customers.id')
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('offer_grants').select('offer_grants.id').whereRef('offer_grants.contact_id', '=', 'customers.contact_id'))))
        .execute();
      assert.deepEqual(customersWithoutAccess, [], 'every customer was granted an offer');
    });

    it('keeps access consistent: revoked grants end their memberships, deactivated purchases revoke their grants', async () => {
      const openAfterRevoke = await siteRows('memberships')
        .innerJoin('offer_grants', 'offer_grants.id', 'memberships.offer_grant_id')
        .select('memberships.id')
        .where('offer_grants.revoked_at', 'is not', null)
        .where('memberships.ended_at', 'is', null)
        .execute();
      assert.deepEqual(openAfterRevoke, []);
      const grantAfterDeactivation = await siteRows('offer_grants')
        .innerJoin('purchases', 'purchases.id', 'offer_grants.purchase_id')
        .select('offer_grants.id')
        .where('purchases.deactivated_at', 'is not', null)
        .where('offer_grants.revoked_at', 'is', null)
        .execute();
      assert.deepEqual(grantAfterDeactivation, []);
      const kinds = await siteRows('memberships')
        .select([
          sql<number>`sum(case when ended_at is null and suspended_at is null then 1 else 0 end)`.as('current'),
          sql<number>`sum(case when suspended_at is not null then 1 else 0 end)`.as('suspended'),
          sql<number>`sum(case when ended_at is not null then 1 else 0 end)`.as('ended'),
        ])
        .executeTakeFirstOrThrow();
      for (const [kind, n] of Object.entries(kinds)) assert.ok(Number(n) > 0, `${kind} memberships`);
    });

    it('has the variety the brief asks for', async () => {
      const distinct = async (table: string, column: string) =>
        (await siteRows(table).select(sql.ref(column).as('v')).distinct().execute()).map((r) => (r.v === null ? null : decode(r.v))).sort();
      assert.deepEqual(await distinct('email_events', 'kind'), ['bounced', 'clicked', 'complained', 'delivered', 'dropped', 'opened', 'sent']);
      assert.deepEqual(await distinct('email_events', 'bounce_type'), [null, 'hard', 'soft'].sort());
      assert.deepEqual(await distinct('transactions', 'action'), ['charge', 'refund', 'subscription_charge']);
      assert.deepEqual(await distinct('transactions', 'state'), ['failed', 'succeeded']);
      assert.deepEqual(await distinct('offers', 'payment_type'), ['free', 'multipay', 'one_time', 'subscription']);
      assert.deepEqual(await distinct('kajabi_payments_payouts', 'status'), ['canceled', 'failed', 'in_transit', 'paid', 'pending']);
      assert.deepEqual((await distinct('purchases', 'subscription_status')).map(String).sort(), ['active', 'canceled', 'null']);
      assert.deepEqual(await distinct('products', 'productizable_type'), [
        'Coaching::Program',
        'Communities::Community',
        'Courses::CohortCourse',
        'Courses::Course',
        'Podcasts::Podcast',
      ]);
      const bundles = await siteRows('transactions')
        .select('transactions.id')
        .where('transactions.offer_id', 'is', null)
        .where(({ selectFrom }) => selectFrom('purchase_transactions').select((s) => s.fn.countAll().as('n')).whereRef('purchase_transactions.transaction_id', '=', 'transactions.id'), '>', 1)
        .execute();
      assert.ok(bundles.length > 0, 'a bundle: one transaction paying several purchases');

      // One course with at least two modules, four lessons, media on lessons and two offers.
      const course = await siteRows('courses')
        .select((eb) => [
          'courses.id',
          eb.selectFrom('modules').select((s) => s.fn.countAll().as('n')).whereRef('modules.course_id', '=', 'courses.id').as('modules'),
          eb.selectFrom('lessons').select((s) => s.fn.countAll().as('n')).whereRef('lessons.course_id', '=', 'courses.id').as('lessons'),
          eb
            .selectFrom('media')
            .innerJoin('lessons', 'lessons.id', 'media.lesson_id')
            .select((s) => s.fn.countAll().as('n'))
            .whereRef('lessons.course_id', '=', 'courses.id')
            .as('media'),
          eb.selectFrom('offer_products').select((s) => s.fn.countAll().as('n')).whereRef('offer_products.product_id', '=', 'courses.product_id').as('offers'),
        ])
        .orderBy('courses.id')
        .executeTakeFirstOrThrow();
      assert.ok(Number(course.modules) >= 2 && Number(course.lessons) >= 4 && Number(course.media) > 0 && Number(course.offers) >= 2, JSON.stringify(course));
    });
  });
}

/** Rows of a few tables, ids included, in a stable order. */
async function dump(app: TestApp): Promise<Record<string, unknown[]>> {
  const db = app.handle.db as unknown as AnyDb;
  const out: Record<string, unknown[]> = {};
  for (const table of ['contacts', 'customers', 'offers', 'purchases', 'transactions', 'memberships', 'orders', 'email_events']) {
    out[table] = await db.selectFrom(table).selectAll().orderBy('id').execute();
  }
  out.contact_taggings = await db.selectFrom('contact_taggings').selectAll().orderBy('contact_id').orderBy('contact_tag_id').execute();
  return out;
}

for (const dialect of DIALECTS) {
  describe(`demo data is deterministic [${dialect}]`, () => {
    it('two fresh databases get identical rows, ids included', async () => {
      const dumps = [];
      for (let i = 0; i < 2; i++) {
        const app = await createTestApp(dialect);
        try {
          await seedDemoData(app.handle, { accountId: app.tenant.accountId, siteId: app.tenant.siteId }, app.clock);
          dumps.push(await dump(app));
        } finally {
          await app.close();
        }
      }
      const [first, second] = dumps as [Record<string, unknown[]>, Record<string, unknown[]>];
      for (const table of Object.keys(first)) {
        assert.ok(first[table]!.length > 0, `${table} has rows`);
        assert.deepEqual(second[table], first[table], `${table} differs between two seedings`);
      }
    });
  });
}
