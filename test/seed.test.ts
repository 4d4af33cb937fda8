// `sitebiz seed`: seeded sites are valid, useful data for the API. Through HTTP with a token made
// from the credentials the seed hands out: every filter of the contacts and customers lists, and
// every filter of purchases, transactions, orders, form submissions, offers and products, matches
// some records of a seeded site and not others. Also: the same seed gives the same rows (ids
// included), --account adds sites to an existing account, and the command prints one JSON object.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { connectDatabase } from '../src/db/connect.js';
import { filterNames } from '../src/jsonapi/planner.js';
import { SUFFIXES_LONGEST_FIRST, type PredicateSuffix } from '../src/jsonapi/predicates.js';
import type { ResourceDefinition } from '../src/jsonapi/resource.js';
import { centsToDecimal } from '../src/resources/contact-filters.js';
import { seedAccount, type SeedResult } from '../src/seed/seed-account.js';
import { createTestApp, DIALECTS, type DialectName, type TestApp } from './support/harness.js';
import { runSitebiz } from './support/serve-process.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

const CONTACTS_PER_SITE = 1_000;
const CHECKED_TYPES = ['contacts', 'customers', 'purchases', 'transactions', 'orders', 'form_submissions', 'offers', 'products'];

for (const dialect of DIALECTS) {
  describe(`sitebiz seed: filters split seeded data [${dialect}]`, () => {
    let t: TestApp;
    let seeded: SeedResult;
    let token: string;
    let db: AnyDb;
    let siteId: number;
    let indexesBefore: IndexState[] = [];

    before(async () => {
      t = await createTestApp(dialect);
      if (dialect === 'postgres') indexesBefore = await indexState(t.handle.db as unknown as AnyDb);
      seeded = await seedAccount(t.handle, t.config.database, { contactsPerSite: CONTACTS_PER_SITE, sites: 2, seed: 7, clock: t.clock, batchSize: 300 });
      token = await t.tokenFor(seeded.client_id, seeded.client_secret);
      db = t.handle.db as unknown as AnyDb;
      siteId = Number(seeded.site_ids[0]);
    });
    after(() => t.close());

    async function count(resource: ResourceDefinition, filters: Array<[string, string]> = [], site = siteId): Promise<number> {
      const params = new URLSearchParams();
      if (resource.tenancy.kind === 'site') params.set('filter[site_id]', String(site));
      for (const [name, value] of filters) params.set(`filter[${name}]`, value);
      params.set('page[size]', '1');
      const res = await t.get(`/v1/${resource.type}?${params}`, token);
      assert.equal(res.statusCode, 200, `${resource.type} ${params}: ${res.body}`);
      return (res.json() as { meta: { total_count: number } }).meta.total_count;
    }

    const siteRows = (table: string) => db.selectFrom(table).where(`${table}.site_id`, '=', siteId);
    const text = (value: unknown): string => (value instanceof Date ? value.toISOString() : String(value));

    /** A value read from the seeded rows that the predicate should split on. */
    async function predicateValues(resource: ResourceDefinition, attribute: string, suffix: PredicateSuffix): Promise<string[]> {
      const def = resource.attributes[attribute]!;
      const column = `${resource.table}.${def.column}`;
      const decode = (v: unknown) =>
        def.type === 'datetime' ? t.handle.traits.decodeTimestamp(v)! : def.type === 'boolean' ? String(t.handle.traits.decodeBoolean(v)) : text(v);
      if (suffix === 'null') return ['true', 'false'];
      if (['gt', 'gte', 'gteq', 'lt', 'lte', 'lteq'].includes(suffix)) {
        // Strictly above the smallest, or at least the largest (and the mirror images): never all.
        const row = await siteRows(resource.table).select([sql`min(${sql.ref(column)})`.as('lo'), sql`max(${sql.ref(column)})`.as('hi')]).executeTakeFirstOrThrow();
        return [suffix === 'gt' || suffix === 'lte' || suffix === 'lteq' ? decode(row.lo) : decode(row.hi)];
      }
      const first = await siteRows(resource.table).select(sql.ref(column).as('v')).where(column, 'is not', null).orderBy(`${resource.table}.id`).executeTakeFirstOrThrow();
      const value = decode(first.v);
      if (suffix === 'start') return [value.slice(0, Math.ceil(value.length / 2))];
      if (suffix === 'end') return [value.slice(Math.floor(value.length / 2))];
      return [value];
    }

    /** Values for a named filter, read from the seeded rows. */
    async function namedValues(resource: ResourceDefinition, name: string): Promise<string[]> {
      const filter = resource.filters[name]!;
      const family = resource.type === 'contacts' || resource.type === 'customers';
      const firstOf = async (table: string, column: string) =>
        text((await siteRows(table).select(`${table}.${column} as v`).where(`${table}.${column}`, 'is not', null).orderBy(`${table}.id`).executeTakeFirstOrThrow()).v);
      switch (filter.kind) {
        case 'days':
          return ['30'];
        case 'boolean':
          return ['true', 'false'];
        case 'decimal': {
          const revenues = (await siteRows('customers').select('net_revenue_cents').execute()).map((r) => Number(r.net_revenue_cents));
          if (name === 'net_revenue_greater_than') return ['0'];
          if (name === 'net_revenue_less_than') return [centsToDecimal(Math.max(...revenues))];
          return [centsToDecimal(revenues.filter((r) => r > 0).sort((a, b) => a - b)[0]!)];
        }
        case 'id':
          // Records of one customer (order, ...): the first record's.
          return [await firstOf(resource.table, name)];
        case 'ids': {
          // The declaration names the table its ids come from (and are checked against).
          const table = filter.references;
          assert.ok(table, `${name} declares no table for its ids`);
          const ids = (await siteRows(table).select('id').orderBy('id').limit(2).execute()).map((r) => String(r.id));
          return [name === 'has_all_tag_id' ? ids.join(',') : ids[0]!];
        }
        case 'date': {
          const rows = await siteRows(resource.table).select(`${resource.table}.created_at as v`).orderBy(`${resource.table}.created_at`).execute();
          return [t.handle.traits.decodeTimestamp(rows[Math.floor(rows.length / 2)]!.v)!];
        }
        case 'strings':
          assert.equal(`${resource.type}.${name}`, 'products.exclude_product_types', `no value rule for ${resource.type} filter ${name}`);
          return [await firstOf('products', 'productizable_type')];
        case 'string': {
          if (name === 'used_coupon_code') return [(await firstOf('purchases', 'coupon_code')).toLowerCase()];
          if (resource.type === 'purchases' && name === 'referrer') return [(await firstOf('purchases', 'referrer')).replace(/^https:\/\/(www\.)?/, '').slice(0, 6)];
          if (resource.type === 'transactions' && name === 'name_or_email') {
            const row = await siteRows('transactions').innerJoin('customers', 'customers.id', 'transactions.customer_id').select('customers.email').orderBy('transactions.id').executeTakeFirstOrThrow();
            return [String(row.email)];
          }
          assert.ok(family, `no value rule for ${resource.type} filter ${name}`);
          const field = name === 'search' ? 'name' : name.replace(/_contains$/, '');
          const value = await firstOf('contacts', field);
          return [name === 'search' ? value.split(' ')[0]! : value];
        }
        default:
          assert.fail(`no value rule for ${resource.type} filter ${name} (${filter.kind})`);
      }
    }

    async function valuesFor(resource: ResourceDefinition, name: string): Promise<string[]> {
      if (resource.filters[name]) return namedValues(resource, name);
      for (const suffix of SUFFIXES_LONGEST_FIRST) {
        const attribute = name.slice(0, -(suffix.length + 1));
        if (name.endsWith(`_${suffix}`) && resource.attributes[attribute]?.predicates.includes(suffix)) return predicateValues(resource, attribute, suffix);
      }
      assert.fail(`${resource.type}: ${name} is neither a named filter nor a predicate`);
    }

    it('hands out credentials of the new account that reach both seeded sites', async () => {
      const res = await t.get('/v1/sites', token);
      assert.equal(res.statusCode, 200);
      const ids = (res.json() as { data: Array<{ id: string }> }).data.map((s) => s.id).sort();
      assert.deepEqual(ids, [...seeded.site_ids].sort());
      assert.notEqual(seeded.account_id, String(t.tenant.accountId));
      const contacts = t.app.engine.registry.get('contacts');
      for (const site of seeded.site_ids) assert.equal(await count(contacts, [], Number(site)), CONTACTS_PER_SITE);
      // Another account's token sees none of it.
      const other = await t.token();
      assert.equal((await t.get(`/v1/contacts?filter[site_id]=${siteId}`, other)).statusCode, 404);
    });

    it('reports the rows it wrote, table by table', async () => {
      for (const table of ['contacts', 'customers', 'email_events', 'purchases', 'transactions', 'orders', 'form_submissions', 'contact_notes']) {
        const inDb = await db
          .selectFrom(table)
          .where(`${table}.site_id`, 'in', seeded.site_ids.map(Number))
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow();
        assert.equal(Number(inDb.n), seeded.rows[table], table);
        assert.ok(seeded.rows[table]! > 0, table);
      }
      assert.equal(seeded.total_rows, Object.values(seeded.rows).reduce((a, b) => a + b, 0));
    });

    for (const type of CHECKED_TYPES) {
      it(`${type}: every filter matches some records and not others`, async () => {
        const resource = t.app.engine.registry.get(type);
        const total = await count(resource);
        assert.ok(total > 1, `${type}: ${total} records`);
        const failures: string[] = [];
        let checked = 0;
        for (const name of filterNames(resource)) {
          if (name === 'site_id') continue;
          for (const value of await valuesFor(resource, name)) {
            const n = await count(resource, [[name, value]]);
            checked++;
            if (!(n > 0 && n < total)) failures.push(`filter[${name}]=${value}: ${n} of ${total}`);
          }
        }
        assert.deepEqual(failures, [], `${type}: filters that do not split the seeded site`);
        assert.ok(checked > 0);
      });
    }

    it('keeps the rows consistent: customers mirror contacts, revenue is the sum of payments, foreign keys hold', async () => {
      const mismatched = await siteRows('customers')
        .innerJoin('contacts', 'contacts.id', 'customers.contact_id')
        .select('customers.id')
        .where((eb) => eb.or([eb('customers.email', '<>', eb.ref('contacts.email')), eb('contacts.site_id', '<>', eb.ref('customers.site_id'))]))
        .execute();
      assert.deepEqual(mismatched, []);
      const revenue = await siteRows('customers')
        .select((eb) => [
          'customers.net_revenue_cents',
          eb.fn
            .coalesce(
              eb.selectFrom('transactions').select((s) => s.fn.sum('transactions.amount_in_cents').as('s')).whereRef('transactions.customer_id', '=', 'customers.id').where('transactions.state', '=', 'succeeded'),
              sql.lit(0),
            )
            .as('paid'),
        ])
        .execute();
      assert.deepEqual(revenue.filter((r) => Number(r.net_revenue_cents) !== Number(r.paid)), []);
      const orphans = await db
        .selectFrom('memberships')
        .leftJoin('offer_grants', 'offer_grants.id', 'memberships.offer_grant_id')
        .select('memberships.id')
        .where('memberships.site_id', '=', siteId)
        .where('offer_grants.id', 'is', null)
        .execute();
      assert.deepEqual(orphans, []);
    });

    it('writes rows that satisfy every foreign key (PostgreSQL loads them without checking)', async () => {
      if (dialect === 'sqlite') {
        assert.deepEqual((await sql`pragma foreign_key_check`.execute(db)).rows, []);
        return;
      }
      const keys = await sql<{ child: string; column: string; parent: string; key: string }>`
        select c.conrelid::regclass::text as child, a.attname as column, c.confrelid::regclass::text as parent, b.attname as key
          from pg_constraint c
          join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
          join pg_attribute b on b.attrelid = c.confrelid and b.attnum = c.confkey[1]
         where c.contype = 'f' and c.connamespace = current_schema()::regnamespace and cardinality(c.conkey) = 1`.execute(db);
      assert.ok(keys.rows.length > 40, `${keys.rows.length} foreign keys`);
      const broken: string[] = [];
      for (const k of keys.rows) {
        const found = await sql
          .raw<{ n: string }>(`select count(*) as n from ${k.child} c where c.${k.column} is not null and not exists (select 1 from ${k.parent} p where p.${k.key} = c.${k.column})`)
          .execute(db);
        if (Number(found.rows[0]!.n) > 0) broken.push(`${k.child}.${k.column} -> ${k.parent}: ${found.rows[0]!.n}`);
      }
      assert.deepEqual(broken, []);
    });

    if (dialect === 'postgres') {
      it('leaves the indexes as the migrations made them, every one valid; the plain ones were built again', async () => {
        const after = await indexState(db);
        const definitions = (state: IndexState[]) => state.map((i) => `${i.name}: ${i.definition} ${i.valid}`);
        assert.deepEqual(definitions(after), definitions(indexesBefore));
        assert.ok(after.every((i) => i.valid));
        // The seed more than doubled contacts: its plain indexes were dropped for the load and built
        // again (new objects), its unique ones kept.
        const oid = (state: IndexState[], name: string) => state.find((i) => i.name === name)?.oid;
        assert.notEqual(oid(after, 'contacts_site_created_idx'), oid(indexesBefore, 'contacts_site_created_idx'));
        assert.equal(oid(after, 'contacts_site_email_uq'), oid(indexesBefore, 'contacts_site_email_uq'));
        const left = await db.selectFrom('instance_settings').select('name').where('name', 'like', 'bulk_load_%').execute();
        assert.deepEqual(left, []);
      });
    }
  });

  describe(`sitebiz seed: determinism and --account [${dialect}]`, () => {
    /** Rows of the seeded sites, ids included, in a stable order. */
    async function dump(t: TestApp, result: SeedResult): Promise<Record<string, unknown[]>> {
      const db = t.handle.db as unknown as AnyDb;
      const sites = result.site_ids.map(Number);
      const out: Record<string, unknown[]> = {};
      for (const table of ['contacts', 'customers', 'purchases', 'transactions', 'memberships', 'orders', 'email_events', 'form_submissions']) {
        out[table] = await db.selectFrom(table).selectAll().where('site_id', 'in', sites).orderBy('id').execute();
      }
      return out;
    }

    it('gives the same rows, ids included, for the same seed on two fresh databases; another seed gives others', async () => {
      const dumps: Array<Record<string, unknown[]>> = [];
      for (const seed of [11, 11, 12]) {
        const t = await createTestApp(dialect);
        try {
          dumps.push(await dump(t, await seedAccount(t.handle, t.config.database, { contactsPerSite: 300, sites: 1, seed, clock: t.clock, batchSize: 70 })));
        } finally {
          await t.close();
        }
      }
      const [first, second, other] = dumps as [Record<string, unknown[]>, Record<string, unknown[]>, Record<string, unknown[]>];
      for (const table of Object.keys(first)) {
        assert.ok(first[table]!.length > 0, `${table} has rows`);
        assert.deepEqual(second[table], first[table], `${table} differs between two seedings`);
      }
      assert.notDeepEqual(
        other.contacts!.map((c) => (c as { email: string }).email),
        first.contacts!.map((c) => (c as { email: string }).email),
      );
    });

    if (dialect === 'postgres') {
      it('builds the indexes an interrupted load left dropped before it loads', async () => {
        const t = await createTestApp(dialect);
        try {
          const db = t.handle.db as unknown as AnyDb;
          const before = await indexState(db);
          const definition = before.find((i) => i.name === 'email_events_contact_kind_idx')!.definition;
          // What a load that died between dropping an index and building it again leaves.
          await db.insertInto('instance_settings').values({ name: 'bulk_load_deferred_index:email_events_contact_kind_idx', value: definition }).execute();
          await sql`drop index email_events_contact_kind_idx`.execute(db);
          await seedAccount(t.handle, t.config.database, { contactsPerSite: 100, sites: 1, seed: 3, clock: t.clock });
          const after = await indexState(db);
          assert.deepEqual(after.map((i) => i.definition), before.map((i) => i.definition));
          assert.deepEqual(await db.selectFrom('instance_settings').select('name').where('name', 'like', 'bulk_load_%').execute(), []);
        } finally {
          await t.close();
        }
      });
    }

    it('adds sites to an existing account, with a new key for its owner, after data of other accounts', async () => {
      const t = await createTestApp(dialect);
      try {
        const first = await seedAccount(t.handle, t.config.database, { contactsPerSite: 100, sites: 1, seed: 3, clock: t.clock });
        const again = await seedAccount(t.handle, t.config.database, { contactsPerSite: 100, sites: 2, seed: 4, clock: t.clock, accountId: Number(first.account_id) });
        assert.equal(again.account_id, first.account_id);
        assert.equal(again.user_id, first.user_id);
        assert.notEqual(again.client_id, first.client_id);
        assert.equal(again.site_ids.length, 2);
        const token = await t.tokenFor(again.client_id, again.client_secret);
        const sites = (await t.get('/v1/sites', token)).json() as { data: Array<{ id: string }> };
        assert.deepEqual(sites.data.map((s) => s.id).sort(), [...first.site_ids, ...again.site_ids].sort());
        const contacts = (await t.get(`/v1/contacts?filter[site_id]=${again.site_ids[1]}&page[size]=1`, token)).json() as { meta: { total_count: number } };
        assert.equal(contacts.meta.total_count, 100);
        await assert.rejects(
          seedAccount(t.handle, t.config.database, { contactsPerSite: 100, sites: 1, seed: 5, clock: t.clock, accountId: 999_999 }),
          /no account 999999/,
        );
      } finally {
        await t.close();
      }
    });
  });

  describe(`sitebiz seed on the command line [${dialect}]`, () => {
    it('prints exactly one JSON object whose credentials get a token; progress goes to stderr', async () => {
      const target = await scratchDatabase(dialect);
      try {
        const run = await runCli(['seed', '--contacts', '150', '--sites', '2', '--seed', '9', '--json', '--database-url', target.url]);
        assert.equal(run.code, 0, run.stderr);
        const lines = run.stdout.trim().split('\n');
        assert.equal(lines.length, 1, run.stdout);
        const printed = JSON.parse(lines[0]!) as SeedResult;
        for (const key of ['account_id', 'user_id', 'client_id', 'client_secret'] as const) assert.equal(typeof printed[key], 'string', key);
        assert.equal(printed.site_ids.length, 2);
        assert.match(run.stderr, /seeded [\d,]+ rows in [\d.]+ s \([\d,]+ rows\/s\)/);

        const config = loadConfig({ DATABASE_URL: target.url, LOG_LEVEL: 'silent', PUBLIC_URL: 'http://sitebiz.test' });
        const handle = await connectDatabase(config.database);
        const app = await buildApp({ config, database: handle });
        try {
          const res = await app.inject({
            method: 'POST',
            url: '/v1/oauth/token',
            payload: { grant_type: 'client_credentials', client_id: printed.client_id, client_secret: printed.client_secret },
          });
          assert.equal(res.statusCode, 200, res.body);
          const accessToken = (res.json() as { access_token: string }).access_token;
          const list = await app.inject({ url: `/v1/contacts?filter[site_id]=${printed.site_ids[1]}&page[size]=1`, headers: { authorization: `Bearer ${accessToken}` } });
          assert.equal((list.json() as { meta: { total_count: number } }).meta.total_count, 150);
        } finally {
          await app.close();
          await handle.close();
        }
        const bad = await runCli(['seed', '--contacts', 'many', '--database-url', target.url]);
        assert.equal(bad.code, 2);
        assert.match(bad.stderr, /--contacts takes a whole number/);
        assert.doesNotMatch(bad.stderr, /at .*\.ts:\d+/);
      } finally {
        await target.drop();
      }
    });
  });
}

interface IndexState {
  name: string;
  definition: string;
  valid: boolean;
  oid: string;
}

/** PostgreSQL: every index of the app's schema. */
async function indexState(db: AnyDb): Promise<IndexState[]> {
  const found = await sql<IndexState>`
    select c.relname as name, pg_get_indexdef(i.indexrelid) as definition, i.indisvalid as valid, i.indexrelid::text as oid
      from pg_index i join pg_class c on c.oid = i.indexrelid
     where c.relnamespace = current_schema()::regnamespace
     order by c.relname`.execute(db);
  return found.rows;
}

// --- The command line, in a child process, on a database of its own -----------------------------


/** From a scratch directory: the command must not depend on being run inside the checkout. */
const runCli = (args: string[]) => runSitebiz(args);

/** A temporary SQLite file, or a fresh PostgreSQL database beside TEST_DATABASE_URL's. */
async function scratchDatabase(dialect: DialectName): Promise<{ url: string; drop(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'sitebiz-seed-'));
    return { url: `sqlite:${join(dir, 'seed.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const base = new URL(process.env.TEST_DATABASE_URL!);
  const name = `sitebiz_seed_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base.href });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(base.href);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    async drop() {
      const client = new pg.Client({ connectionString: base.href });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}
