// GET /v1/customers, GET /v1/customers/:id and GET /v1/customers/:id/relationships/offers: order
// (net revenue and last request with nulls), sparse fields, paging, sites and tenancy,
// permissions, every filter of the contact filter family asked of each customer's contact,
// rendering (net_revenue, avatar), includes with their narrowing parameters, the include query
// bound, and conformance of every 200 to the upstream schemas. The people are described in
// test/support/contact-fixture.ts.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { customers } from '../src/resources/customers.js';
import { builders } from './support/builders.js';
import {
  badFilterValue,
  buildContactFixture,
  CUSTOMERS,
  filterCases,
  isCustomer,
  type ContactFixture,
  type CustomerPerson,
} from './support/contact-fixture.js';
import { mainTable } from './support/catalogue-fixtures.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from './support/harness.js';
import { assertResponseMatchesUpstream } from './support/upstream.js';

type Res = Awaited<ReturnType<TestApp['request']>>;
type Identifier = { type: string; id: string };

const ids = (res: Res): string[] => res.json().data.map((r: { id: string }) => r.id);
const numerically = (list: readonly string[]): string[] => [...list].sort((a, b) => Number(a) - Number(b));
const encodeValue = (value: string) => encodeURIComponent(value).replace(/%2C/g, ',');
const keys = (list: Identifier[]) => list.map((r) => `${r.type}:${r.id}`);
const gravatar = (email: string) => `https://www.gravatar.com/avatar/${createHash('md5').update(email).digest('hex')}?d=blank`;

for (const dialect of DIALECTS) {
  describe(`GET /v1/customers [${dialect}]`, () => {
    let t: TestApp;
    let f: ContactFixture;
    let cases: ReturnType<typeof filterCases>;

    before(async () => {
      t = await createTestApp(dialect);
      f = await buildContactFixture(t);
      cases = filterCases(f);
    });
    after(() => t.close());

    const idOf = (p: CustomerPerson) => String(f.customer[p]);
    const idsOf = (people: readonly CustomerPerson[]) => people.map(idOf);
    const url = (p: CustomerPerson) => `${PUBLIC_URL}/v1/customers/${idOf(p)}`;

    /** GET that must answer 200 with a body conforming to upstream's schema for `upstreamPath`. */
    const ok = async (path: string, upstreamPath = '/v1/customers', token = f.token): Promise<Res> => {
      const res = (await t.get(path, token)) as Res;
      assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
      assertResponseMatchesUpstream('get', upstreamPath, res);
      return res;
    };
    /** A list request of the tenant's site (the account has two, so filter[site_id] is needed). */
    const list = (query = '', token = f.token): Promise<Res> =>
      ok(`/v1/customers?filter[site_id]=${f.siteId}${query === '' ? '' : `&${query}`}`, '/v1/customers', token);
    const show = (id: number | string, query = '', token = f.token): Promise<Res> =>
      ok(`/v1/customers/${id}${query === '' ? '' : `?${query}`}`, '/v1/customers/{id}', token);
    const expectError = async (path: string, status: number, parameter?: string, token = f.token) => {
      const res = await t.get(path, token);
      assert.equal(res.statusCode, status, `${path}: ${res.body}`);
      const error = res.json().errors[0];
      assert.equal(error.status, String(status));
      if (parameter !== undefined) assert.equal(error.source?.parameter, parameter, `${path}: ${res.body}`);
      return error as { code: string; detail: string };
    };

    // --- Order, fields, paging, rendering ---------------------------------------------------------

    it('lists the site’s customers newest first, rendered like upstream', async () => {
      const res = await list();
      assert.deepEqual(ids(res), idsOf(['margaret', 'barbara', 'grace', 'ada', 'alan', 'hal']));
      const body = res.json();
      assert.deepEqual(body.meta, { total_pages: 1, total_count: 6, current_page: 1 });
      const ada = body.data.find((c: { id: string }) => c.id === idOf('ada'));
      assert.deepEqual(ada, {
        id: idOf('ada'),
        type: 'customers',
        attributes: {
          name: 'Ada Lovelace',
          email: 'countess@analytical.example',
          avatar: 'https://cdn.example/ada.png',
          external_user_id: 'ext-ada',
          public_bio: 'Poet of science',
          public_location: 'London',
          public_website: 'https://ada.example/',
          socials: { twitter: 'https://twitter.com/ada', facebook: null, instagram: null },
          net_revenue: '99.0',
          sign_in_count: 12,
          last_request_at: '2026-05-31T12:00:00.000Z',
          bounced_at: null,
          created_at: '2026-05-22T12:00:00.000Z',
          updated_at: '2026-05-22T12:00:00.000Z',
        },
        relationships: {
          site: { data: { type: 'sites', id: String(f.siteId) } },
          contact: { data: { type: 'contacts', id: String(f.contact.ada) } },
          offers: {
            data: [{ type: 'offers', id: String(f.offer.course) }],
            links: { self: `${url('ada')}/relationships/offers`, related: `${url('ada')}/offers` },
          },
          products: { data: [{ type: 'products', id: String(f.product.course) }] },
        },
        links: { contact: `${PUBLIC_URL}/v1/contacts/${f.contact.ada}`, self: url('ada') },
      });
    });

    it('renders net_revenue as upstream does, and keeps name and email in step with the contact', async () => {
      const byId = new Map<string, { attributes: Record<string, unknown> }>((await list()).json().data.map((c: { id: string }) => [c.id, c]));
      const expected: Record<CustomerPerson, string> = {
        ada: '99.0',
        grace: '29.0',
        alan: '10.5',
        barbara: '0.0',
        hal: '0.0',
        margaret: '123.45',
      };
      for (const p of CUSTOMERS) {
        assert.equal(byId.get(idOf(p))!.attributes.net_revenue, expected[p], p);
        const contact = (await ok(`/v1/contacts/${f.contact[p]}?fields[contacts]=name,email`, '/v1/contacts/{id}')).json().data.attributes;
        assert.deepEqual({ name: byId.get(idOf(p))!.attributes.name, email: byId.get(idOf(p))!.attributes.email }, contact, p);
      }
    });

    it('falls back to a Gravatar URL (blank when unknown) without a custom avatar', async () => {
      const grace = (await show(f.customer.grace, 'fields[customers]=avatar,email')).json().data.attributes;
      assert.deepEqual(grace, { avatar: gravatar('amazing.grace@navy.example'), email: 'amazing.grace@navy.example' });
      const ada = (await show(f.customer.ada, 'fields[customers]=avatar')).json().data.attributes;
      assert.deepEqual(ada, { avatar: 'https://cdn.example/ada.png' });
      // The avatar needs the email even when only the avatar is asked for.
      const margaret = (await show(f.customer.margaret, 'fields[customers]=avatar')).json().data.attributes;
      assert.deepEqual(margaret, { avatar: gravatar('mh@apollo.example') });
    });

    it('sorts by name, email, created_at and last_request_at, both ways, nulls last ascending', async () => {
      const byName: CustomerPerson[] = ['ada', 'alan', 'barbara', 'grace', 'hal', 'margaret'];
      const byEmail: CustomerPerson[] = ['grace', 'ada', 'hal', 'barbara', 'margaret', 'alan'];
      const byCreated: CustomerPerson[] = ['hal', 'alan', 'ada', 'grace', 'barbara', 'margaret'];
      const cases: Array<[string, CustomerPerson[]]> = [
        ['name', byName],
        ['-name', [...byName].reverse()],
        ['email', byEmail],
        ['-email', [...byEmail].reverse()],
        ['created_at', byCreated],
        ['-created_at', [...byCreated].reverse()],
        // Alan and Margaret never made a request: after everyone ascending, before descending.
        ['last_request_at', ['hal', 'grace', 'barbara', 'ada', 'alan', 'margaret']],
        ['-last_request_at', ['margaret', 'alan', 'ada', 'barbara', 'grace', 'hal']],
      ];
      for (const [sort, expected] of cases) {
        assert.deepEqual(ids(await list(`sort=${sort}`)), idsOf(expected), sort);
        // Pages of one keep the same order, nulls and ties included.
        const paged: string[] = [];
        for (let n = 1; n <= 6; n++) paged.push(...ids(await list(`sort=${sort}&page[size]=1&page[number]=${n}`)));
        assert.deepEqual(paged, idsOf(expected), `${sort}, one per page`);
      }
      await expectError(`/v1/customers?filter[site_id]=${f.siteId}&sort=sign_in_count`, 400, 'sort');
      await expectError(`/v1/customers?filter[site_id]=${f.siteId}&sort=net_revenue_cents`, 400, 'sort');
      await expectError(`/v1/customers?filter[site_id]=${f.siteId}&sort=net_revenue,name`, 400, 'sort');
    });

    it(
      'sorts by net_revenue both ways, numerically, ties broken by id',
      async () => {
        const cases: Array<[string, CustomerPerson[]]> = [
          // Barbara and Hal both have 0: the id breaks the tie, in the direction of the sort.
          ['net_revenue', ['barbara', 'hal', 'alan', 'grace', 'ada', 'margaret']],
          ['-net_revenue', ['margaret', 'ada', 'grace', 'alan', 'hal', 'barbara']],
        ];
        for (const [sort, expected] of cases) {
          assert.deepEqual(ids(await list(`sort=${sort}`)), idsOf(expected), sort);
          const paged: string[] = [];
          for (let n = 1; n <= 3; n++) paged.push(...ids(await list(`sort=${sort}&page[size]=2&page[number]=${n}`)));
          assert.deepEqual(paged, idsOf(expected), `${sort}, two per page`);
        }
        const revenue = (await list('fields[customers]=net_revenue&sort=-net_revenue&page[size]=2')).json();
        assert.deepEqual(revenue.data.map((c: { attributes: unknown }) => c.attributes), [{ net_revenue: '123.45' }, { net_revenue: '99.0' }]);
        assert.deepEqual(ids(await list(`filter[has_product_id]=${f.product.course}&filter[net_revenue_greater_than]=20&sort=-net_revenue`)), idsOf(['margaret', 'ada', 'grace']));
      },
    );

    it('returns only the attributes of fields[customers]; relationships still appear', async () => {
      const body = (await list('fields[customers]=name,email&sort=name')).json();
      assert.equal(body.data.length, 6);
      for (const c of body.data) {
        assert.deepEqual(Object.keys(c.attributes), ['name', 'email']);
        assert.deepEqual(Object.keys(c.relationships).sort(), ['contact', 'offers', 'products', 'site']);
        assert.equal(c.links.contact, `${PUBLIC_URL}/v1/contacts/${c.relationships.contact.data.id}`);
      }
      assert.deepEqual(body.data[0].attributes, { name: 'Ada Lovelace', email: 'countess@analytical.example' });
      const revenue = (await list('fields[customers]=net_revenue&sort=name&page[size]=2')).json();
      assert.deepEqual(revenue.data.map((c: { attributes: unknown }) => c.attributes), [{ net_revenue: '99.0' }, { net_revenue: '10.5' }]);
      await expectError(`/v1/customers?filter[site_id]=${f.siteId}&fields[customers]=name,net_revenue_cents`, 400, 'fields[customers]');
    });

    it('pages with links that keep the site filter, and meta counts', async () => {
      const at = (n: number) => `${PUBLIC_URL}/v1/customers?page[number]=${n}&page[size]=4&filter[site_id]=${f.siteId}&sort=name`;
      const first = (await list('page[size]=4&sort=name')).json();
      assert.deepEqual(first.meta, { total_pages: 2, total_count: 6, current_page: 1 });
      assert.deepEqual(first.links, { self: at(1), first: at(1), prev: null, next: at(2), last: at(2) });
      assert.deepEqual(first.data.map((c: { id: string }) => c.id), idsOf(['ada', 'alan', 'barbara', 'grace']));
      const second = (await list('page[size]=4&page[number]=2&sort=name')).json();
      assert.deepEqual(second.links, { self: at(2), first: at(1), prev: at(1), next: null, last: at(2) });
      assert.deepEqual(second.data.map((c: { id: string }) => c.id), idsOf(['hal', 'margaret']));
    });

    // --- Sites, tenancy, permissions --------------------------------------------------------------

    it('keeps each site’s customers apart; with two sites the owner must name one', async () => {
      const second = await ok(`/v1/customers?filter[site_id]=${f.secondSite.siteId}`);
      assert.deepEqual(ids(second), [String(f.secondSite.customerId)]);
      for (const query of ['filter[search]=lovelace', 'filter[created_in_last]=1', `filter[has_offer_id]=${f.secondSite.offerId}`]) {
        const there = await ok(`/v1/customers?filter[site_id]=${f.secondSite.siteId}&${query}`);
        assert.deepEqual(ids(there), [String(f.secondSite.customerId)], query);
      }
      assert.deepEqual(ids(await list('filter[search]=lovelace')), [idOf('ada')]);
      const error = await expectError('/v1/customers', 400, 'filter[site_id]');
      assert.match(error.detail, /filter\[site_id\] is required/);
      await expectError('/v1/customers?sort=name', 400, 'filter[site_id]');
    });

    it('never shows another account’s customers: not listed, 404 by id either way', async () => {
      await expectError(`/v1/customers?filter[site_id]=${f.otherAccount.siteId}`, 404, 'filter[site_id]');
      await expectError(`/v1/customers/${f.otherAccount.customerId}`, 404);
      await expectError(`/v1/customers/${f.otherAccount.customerId}/relationships/offers`, 404);
      await expectError('/v1/customers/987654321', 404);
      await expectError(`/v1/customers?filter[site_id]=${f.siteId}&filter[has_offer_id]=${f.otherAccount.offerId}`, 404, 'filter[has_offer_id]');

      const theirs = await ok('/v1/customers', '/v1/customers', f.otherAccount.ownerToken);
      assert.deepEqual(ids(theirs), [String(f.otherAccount.customerId)]);
      await expectError(`/v1/customers/${f.customer.ada}`, 404, undefined, f.otherAccount.ownerToken);
      await expectError(`/v1/customers/${f.customer.ada}/relationships/offers`, 404, undefined, f.otherAccount.ownerToken);
    });

    it('answers 403 without view:customers, and for includes the key cannot read', async () => {
      const { token: contactsOnly } = await t.keyWith(t.tenant.ownerId, ['view:contacts', 'view:offers', 'view:products']);
      for (const path of [`/v1/customers?filter[site_id]=${f.siteId}`, `/v1/customers/${f.customer.ada}`, `/v1/customers/${f.customer.ada}/relationships/offers`]) {
        const error = await expectError(path, 403, undefined, contactsOnly);
        assert.equal(error.code, 'forbidden');
        assert.match(error.detail, /view:customers/);
      }
      const { token: customersOnly } = await t.keyWith(t.tenant.ownerId, ['view:customers']);
      assert.deepEqual(ids(await list('sort=name&page[size]=1', customersOnly)), [idOf('ada')]);
      for (const [include, permission] of [
        ['contact', 'view:contacts'],
        ['offers', 'view:offers'],
        ['products', 'view:products'],
      ] as const) {
        const error = await expectError(`/v1/customers/${f.customer.ada}?include=${include}`, 403, undefined, customersOnly);
        assert.match(error.detail, new RegExp(permission));
      }
      assert.match((await expectError(`/v1/customers/${f.customer.ada}/relationships/offers`, 403, undefined, customersOnly)).detail, /view:offers/);
    });

    // --- Filters -------------------------------------------------------------------------------------

    it('has a test case for every filter the customers resource declares', () => {
      assert.deepEqual(Object.keys(cases).sort(), Object.keys(customers.filters).sort());
    });

    describe('every filter, asked of each customer’s contact, with exact ids', () => {
      for (const name of Object.keys(customers.filters)) {
        it(`filter[${name}]`, async () => {
          const list_ = cases[name];
          assert.ok(list_ && list_.length > 0, `no cases for filter[${name}]`);
          let splits = false;
          for (const c of list_) {
            const expected = c.customers ?? c.people.filter(isCustomer);
            const res = await list(`filter[${name}]=${encodeValue(c.value)}`);
            assert.deepEqual(numerically(ids(res)), numerically(idsOf(expected)), `filter[${name}]=${c.value}`);
            if (expected.length > 0 && expected.length < CUSTOMERS.length) splits = true;
          }
          assert.ok(splits, `filter[${name}] needs a case that matches some customers and not others`);
        });
      }
    });

    it('moves days windows on the customer’s own created_at with the clock', async () => {
      const start = t.clock.current;
      try {
        // Grace became a customer exactly 7 days ago (her contact is older).
        assert.deepEqual(numerically(ids(await list('filter[created_in_last]=7'))), numerically(idsOf(['grace', 'barbara', 'margaret'])));
        t.clock.current = new Date(start.getTime() + 1);
        assert.deepEqual(numerically(ids(await list('filter[created_in_last]=7'))), numerically(idsOf(['barbara', 'margaret'])));
        assert.deepEqual(numerically(ids(await list('filter[joined_in_last]=7'))), numerically(idsOf(['barbara', 'margaret'])));
        assert.deepEqual(numerically(ids(await list('filter[not_created_in_last]=7'))), numerically(idsOf(['ada', 'grace', 'alan', 'hal'])));
      } finally {
        t.clock.current = start;
      }
    });

    it('combines filters with AND, alongside sort', async () => {
      assert.deepEqual(ids(await list(`filter[has_product_id]=${f.product.course}&filter[net_revenue_greater_than]=50&sort=-name`)), idsOf(['margaret', 'ada']));
      assert.deepEqual(ids(await list(`filter[has_product_id]=${f.product.course}&filter[has_active_product_id]=${f.product.course}&filter[subscribed]=true&sort=name`)), idsOf(['ada', 'margaret']));
      assert.deepEqual(ids(await list('filter[net_revenue_equal_to]=0&filter[is_hidden]=false')), idsOf(['barbara']));
      assert.deepEqual(ids(await list(`filter[used_coupon_code]=SPRING10&filter[has_offer_id]=${f.offer.bundle}&filter[search]=grace`)), idsOf(['grace']));
      assert.deepEqual(ids(await list('filter[suppressed]=true&filter[opted_out_in_last]=7&filter[complained_in_last]=7')), []);
    });

    it('answers 400 naming the filter for a value its kind refuses', async () => {
      for (const [name, filter] of Object.entries(customers.filters)) {
        const value = badFilterValue(filter.kind);
        await expectError(`/v1/customers?filter[site_id]=${f.siteId}&filter[${name}]=${encodeValue(value)}`, 400, `filter[${name}]`);
      }
      for (const [query, parameter] of [
        ['filter[net_revenue_greater_than]=ten', 'filter[net_revenue_greater_than]'],
        ['filter[joined_in_last]=0', 'filter[joined_in_last]'],
        ['filter[has_product_id]=1;2', 'filter[has_product_id]'],
        ['filter[products_search]=x', 'filter[products_search]'],
        ['filter[name_cont]=ada', 'filter[name_cont]'],
      ] as const) {
        await expectError(`/v1/customers?filter[site_id]=${f.siteId}&${query}`, 400, parameter);
      }
    });

    // --- Show, includes, relationships ----------------------------------------------------------------

    it('shows a customer with links self and current, and links.contact', async () => {
      const res = await show(f.customer.alan);
      const body = res.json();
      assert.deepEqual(body.links, { self: url('alan'), current: url('alan') });
      assert.deepEqual(body.data.links, { contact: `${PUBLIC_URL}/v1/contacts/${f.contact.alan}`, self: url('alan') });
      assert.deepEqual(body.data.attributes, {
        name: 'Alan Turing',
        email: 'turing@bletchley.example',
        avatar: gravatar('turing@bletchley.example'),
        external_user_id: null,
        public_bio: null,
        public_location: null,
        public_website: null,
        socials: null,
        net_revenue: '10.5',
        sign_in_count: 40,
        last_request_at: null,
        bounced_at: null,
        created_at: '2026-04-22T12:00:00.000Z',
        updated_at: '2026-04-22T12:00:00.000Z',
      });
      // Alan's only grant was revoked and his membership ended.
      assert.deepEqual(body.data.relationships.offers, { data: [], links: { self: `${url('alan')}/relationships/offers`, related: `${url('alan')}/offers` } });
      assert.deepEqual(body.data.relationships.products, { data: [] });
      assert.equal('included' in body, false);
      const current = (await show(f.customer.alan, 'fields[customers]=name')).json().links.current;
      assert.equal(current, `${url('alan')}?fields[customers]=name`);
    });

    it('includes contact, offers and products once each, with linkage', async () => {
      const query = 'include=contact,offers,products';
      const body = (await show(f.customer.margaret, query)).json();
      assert.equal(body.links.current, `${url('margaret')}?${query}`);
      const rel = body.data.relationships;
      assert.deepEqual(rel.contact, { data: { type: 'contacts', id: String(f.contact.margaret) } });
      // The course was granted twice; it is linked and included once.
      assert.deepEqual(keys(rel.offers.data), [`offers:${f.offer.bundle}`, `offers:${f.offer.course}`, `offers:${f.offer.free}`]);
      assert.deepEqual(rel.offers.links, { self: `${url('margaret')}/relationships/offers`, related: `${url('margaret')}/offers` });
      assert.deepEqual(keys(rel.products.data), [`products:${f.product.community}`, `products:${f.product.course}`, `products:${f.product.podcast}`]);
      assert.equal(body.data.links.contact, `${PUBLIC_URL}/v1/contacts/${f.contact.margaret}`);
      const included = keys(body.included);
      assert.equal(new Set(included).size, included.length, 'included holds a record twice');
      assert.deepEqual(included, [
        `contacts:${f.contact.margaret}`,
        `offers:${f.offer.bundle}`,
        `offers:${f.offer.course}`,
        `offers:${f.offer.free}`,
        `products:${f.product.community}`,
        `products:${f.product.course}`,
        `products:${f.product.podcast}`,
      ]);
      assert.deepEqual(
        { name: body.included[0].attributes.name, email: body.included[0].attributes.email },
        { name: 'Margaret Hamilton', email: 'mh@apollo.example' },
      );
      assert.deepEqual(body.included[5].attributes.title, 'Foundations Course');
      // ada: her revoked bundle grant is neither linked nor included.
      const ada = (await show(f.customer.ada, query)).json();
      assert.deepEqual(keys(ada.included), [`contacts:${f.contact.ada}`, `offers:${f.offer.course}`, `products:${f.product.course}`]);
      await expectError(`/v1/customers/${f.customer.ada}?include=purchases`, 400, 'include');
    });

    it('applies fields[customers] to the customer and fields[products] to included products', async () => {
      const body = (await show(f.customer.grace, 'include=products&fields[customers]=name&fields[products]=title')).json();
      assert.deepEqual(body.data.attributes, { name: 'Grace Hopper' });
      assert.deepEqual(Object.keys(body.data.relationships).sort(), ['contact', 'offers', 'products', 'site']);
      assert.deepEqual(
        body.included.map((p: { type: string; attributes: unknown }) => [p.type, p.attributes]),
        [
          ['products', { title: 'Community Circle' }],
          ['products', { title: 'Foundations Course' }],
        ],
      );
      // A type that is not in the response cannot take fields.
      await expectError(`/v1/customers/${f.customer.grace}?fields[products]=title`, 400, 'fields[products]');
      await expectError(`/v1/customers/${f.customer.grace}?include=products&fields[products]=price`, 400, 'fields[products]');
    });

    describe('include narrowing: filter[products_search|page|per] and filter[offers_search|page|per]', () => {
      const narrowed = async (query: string) => {
        const body = (await show(f.customer.margaret, query)).json();
        return {
          offers: keys(body.data.relationships.offers.data ?? []),
          products: keys(body.data.relationships.products.data ?? []),
          included: keys(body.included ?? []),
        };
      };
      const o = (...names: Array<'bundle' | 'course' | 'free'>) => names.map((n) => `offers:${f.offer[n]}`);
      const p = (...names: Array<'course' | 'community' | 'podcast'>) => names.map((n) => `products:${f.product[n]}`);

      it('searches included products by title and offers by title or internal title', async () => {
        assert.deepEqual(await narrowed('include=products&filter[products_search]=PODCAST'), {
          offers: o('bundle', 'course', 'free'),
          products: p('podcast'),
          included: p('podcast'),
        });
        assert.deepEqual(await narrowed('include=offers&filter[offers_search]=magnet'), {
          offers: o('free'),
          products: p('community', 'course', 'podcast'),
          included: o('free'),
        });
        assert.deepEqual((await narrowed('include=offers&filter[offers_search]=bundle')).offers, o('bundle'));
        assert.deepEqual((await narrowed('include=offers,products&filter[offers_search]=zzz&filter[products_search]=course')).included, p('course'));
        // LIKE wildcards are literal.
        assert.deepEqual((await narrowed('include=products&filter[products_search]=%25')).products, []);
      });

      it('pages included products with filter[products_page] and filter[products_per]', async () => {
        assert.deepEqual(await narrowed('include=products&filter[products_per]=2'), {
          offers: o('bundle', 'course', 'free'),
          products: p('community', 'course'),
          included: p('community', 'course'),
        });
        assert.deepEqual((await narrowed('include=products&filter[products_per]=2&filter[products_page]=2')).included, p('podcast'));
        assert.deepEqual((await narrowed('include=products&filter[products_per]=2&filter[products_page]=3')).products, []);
        assert.deepEqual((await narrowed('include=products&filter[products_per]=1&filter[products_search]=o&filter[products_page]=2')).products, p('course'));
      });

      it('pages included offers with filter[offers_page] and filter[offers_per]', async () => {
        assert.deepEqual(await narrowed('include=offers&filter[offers_per]=2'), {
          offers: o('bundle', 'course'),
          products: p('community', 'course', 'podcast'),
          included: o('bundle', 'course'),
        });
        assert.deepEqual((await narrowed('include=offers&filter[offers_per]=1&filter[offers_page]=2')).offers, o('course'));
      });

      it(
        'pages included offers by offer, not by grant (the course was granted twice)',
        async () => {
          assert.deepEqual((await narrowed('include=offers&filter[offers_per]=1&filter[offers_page]=3')).offers, o('free'));
          assert.deepEqual((await narrowed('include=offers&filter[offers_per]=2&filter[offers_page]=2')).offers, o('free'));
        },
      );

      it('ignores the narrowing parameters of a relationship that is not included', async () => {
        const all = { offers: o('bundle', 'course', 'free'), products: p('community', 'course', 'podcast') };
        assert.deepEqual(await narrowed('filter[products_search]=podcast&filter[offers_search]=bundle'), { ...all, included: [] });
        assert.deepEqual(await narrowed('filter[products_per]=1&filter[offers_page]=2&filter[offers_per]=1'), { ...all, included: [] });
        assert.deepEqual(await narrowed('include=offers&filter[products_per]=1'), { ...all, included: all.offers });
        assert.deepEqual(await narrowed('include=contact&filter[offers_search]=zzz'), { ...all, included: [`contacts:${f.contact.margaret}`] });
      });

      it('answers 400 for a bad narrowing value, included or not', async () => {
        for (const [query, parameter] of [
          ['include=products&filter[products_per]=0', 'filter[products_per]'],
          ['include=products&filter[products_per]=101', 'filter[products_per]'],
          ['include=products&filter[products_page]=two', 'filter[products_page]'],
          ['include=offers&filter[offers_page]=-1', 'filter[offers_page]'],
          ['include=offers&filter[offers_per]=1.5', 'filter[offers_per]'],
          ['include=offers&filter[offers_search]=', 'filter[offers_search]'],
          ['filter[products_search]=%20', 'filter[products_search]'],
          ['filter[offers_per]=0', 'filter[offers_per]'],
          ['include=contact&filter[contact_search]=x', 'filter[contact_search]'],
          ['include=products&filter[products_sort]=title', 'filter[products_sort]'],
          ['filter[search]=ada', 'filter[search]'],
        ] as const) {
          await expectError(`/v1/customers/${f.customer.margaret}?${query}`, 400, parameter);
        }
      });
    });

    it('serves GET /v1/customers/:id/relationships/offers', async () => {
      const rel = async (p: CustomerPerson) => {
        const res = await ok(`/v1/customers/${f.customer[p]}/relationships/offers`, '/v1/customers/{customer_id}/relationships/offers');
        const body = res.json();
        assert.deepEqual(Object.keys(body).sort(), ['data', 'links']);
        assert.equal(body.links.self, `${url(p)}/relationships/offers`);
        return keys(body.data);
      };
      assert.deepEqual(await rel('margaret'), [`offers:${f.offer.bundle}`, `offers:${f.offer.course}`, `offers:${f.offer.free}`]);
      assert.deepEqual(await rel('ada'), [`offers:${f.offer.course}`]);
      assert.deepEqual(await rel('alan'), []);
      await expectError(`/v1/customers/${f.customer.ada}/relationships/offers?page[size]=1`, 400, 'page[size]');
      await expectError(`/v1/customers/${f.customer.ada}/relationships/products`, 404);
    });
  });

  describe(`GET /v1/customers include bound [${dialect}]`, () => {
    let t: TestApp;
    let token: string;

    before(async () => {
      t = await createTestApp(dialect);
      const b = builders(t);
      const products = [await b.product({ title: 'P1' }), await b.product({ title: 'P2' })];
      const offers = [await b.offer({ title: 'O1', productIds: [products[0]!] }), await b.offer({ title: 'O2', productIds: products })];
      // 60 customers, each with a grant (two for every third) and a membership: more than a page of 50.
      for (let i = 0; i < 60; i++) {
        const c = await b.customer({ name: `Member ${String(i).padStart(2, '0')}`, created_at: b.daysAgo(60 - i) });
        await b.grant({ contactId: c.contactId, offerId: offers[i % 2]! });
        if (i % 3 === 0) await b.grant({ contactId: c.contactId, offerId: offers[(i + 1) % 2]! });
        await b.membership({ contactId: c.contactId, productId: products[i % 2]! });
      }
      token = await t.token();
    });
    after(() => t.close());

    /** SQL statements of a request, with IN lists shortened so that page sizes compare. */
    const statementsOf = async (path: string) => {
      const { result, statements } = await t.queries.during(() => t.get(path, token));
      assert.equal(result.statusCode, 200, result.body);
      assertResponseMatchesUpstream('get', '/v1/customers', result);
      return { body: result.json(), statements: statements.map((s) => s.replace(/\((?:\?|\$\d+)(?:, (?:\?|\$\d+))*\)/g, '(…)')) };
    };

    it('costs the same statements for a page of 2 and a page of 50 with include=contact,offers,products', async () => {
      const small = await statementsOf('/v1/customers?include=contact,offers,products&page[size]=2');
      const large = await statementsOf('/v1/customers?include=contact,offers,products&page[size]=50');
      assert.equal(small.body.data.length, 2);
      assert.equal(large.body.data.length, 50);
      assert.equal(large.body.meta.total_count, 60);
      // 50 contacts, both offers and both products, each once.
      assert.equal(large.body.included.length, 54);
      assert.deepEqual(small.statements, large.statements);
      // Besides authentication: the site's counters (the total without COUNT(*)), the page, and one
      // batched query per include edge (the offers and products linkage comes with their include).
      const tables = large.statements.flatMap((s) => mainTable(s) ?? []).filter((t) => ['site_counters', 'customers', 'contacts', 'offers', 'products'].includes(t));
      assert.deepEqual(tables, ['site_counters', 'customers', 'contacts', 'offers', 'products'], large.statements.join('\n'));
      assert.ok(!large.statements.some((s) => /count\(\*\)/.test(s)), 'an unfiltered list does not count its rows');
    });
  });
}
