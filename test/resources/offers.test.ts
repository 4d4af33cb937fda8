// GET /v1/offers, GET /v1/offers/{id} and GET /v1/offers/{id}/relationships/products: what a site
// sells, with the products each offer gives access to. Read with view:offers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PERMISSION_NAMES } from '../../src/auth/permissions.js';
import { offers } from '../../src/resources/offers.js';
import { assertResponseMatchesUpstream } from '../support/upstream.js';
import { DIALECTS } from '../support/harness.js';
import {
  assertIncludedDistinct,
  assertUpstream,
  createWorld,
  getJson,
  includedKeys,
  isCountQuery,
  readResourceTests,
  selfUrl,
  statementsOn,
  withoutSeedOnlyAttributes,
  type UpstreamCheck,
  type World,
} from '../support/catalogue-fixtures.js';

// The seed lists `description` among an offer's fields; upstream's offers schema does not. The
// seed wins: `description` is left out of the check, every other attribute stays strict. Included
// products carry the seed's product `description` for the same reason.
const UPSTREAM: UpstreamCheck = {
  list: '/v1/offers',
  show: '/v1/offers/{id}',
  adjust: withoutSeedOnlyAttributes({ offers: ['description'], products: ['description'] }),
};
const RELATIONSHIP = '/v1/offers/{offer_id}/relationships/products';

for (const dialect of DIALECTS) {
  describe(`offers [${dialect}]`, () => {
    let w: World;
    let subdomain: string;
    const o = { o1: '', o2: '', o3: '', o4: '', o5: '', second: '', foreign: '' };
    const p = { course: '', community: '', podcast: '' };

    before(async () => {
      w = await createWorld(dialect);
      const { rows, siteId } = w;
      subdomain = (await getJson(w, `/v1/sites/${siteId}`)).json().data.attributes.subdomain;
      const offer = (attrs: Record<string, string | number | boolean | null>) => rows.offer(siteId, attrs);
      o.o1 = await offer({
        title: 'Starter Course',
        description: 'Learn the basics',
        internal_title: 'starter-2026',
        currency: 'USD',
        price_in_cents: 4900,
        payment_type: 'one_time',
        token: 'starter-token',
        payment_method: 'kajabi_payments',
        price_description: '$49.00',
        single: true,
        image_url: 'https://cdn.example.com/starter.png',
      });
      o.o2 = await offer({
        title: 'Pro Membership',
        description: 'Monthly access',
        internal_title: 'pro-monthly',
        currency: 'USD',
        price_in_cents: 2900,
        payment_type: 'subscription',
        token: 'pro-token',
        payment_method: 'stripe',
        price_description: '$29.00/month',
        single: false,
        image_url: null,
      });
      o.o3 = await offer({ title: 'Payment Plan Bundle', description: null, internal_title: null, currency: 'EUR', price_in_cents: 9900, payment_type: 'multipay' });
      o.o4 = await offer({ title: 'Free Preview', description: 'Try before you buy', internal_title: 'lead magnet', price_in_cents: 0, payment_type: 'free', payment_method: 'free' });
      // Same price as o1: the id breaks the tie.
      o.o5 = await offer({ title: 'Pro Coaching', description: 'One to one', price_in_cents: 4900, payment_type: 'one_time' });
      o.second = await rows.offer(w.secondSiteId, { title: 'Starter Course' });
      o.foreign = await rows.offer(w.other.siteId, { title: 'Starter Course' });

      p.course = await rows.product(siteId, { title: 'Course Product' });
      p.community = await rows.product(siteId, { title: 'Community Product' });
      p.podcast = await rows.product(siteId, { title: 'Podcast Product' });
      await rows.offerProduct(o.o1, p.course);
      await rows.offerProduct(o.o2, p.podcast);
      await rows.offerProduct(o.o2, p.course);
      await rows.offerProduct(o.o2, p.community);
      await rows.offerProduct(o.o3, p.course);
      await rows.offerProduct(o.o3, p.community);
      await rows.offerProduct(o.o5, p.podcast);
    });
    after(() => w.t.close());

    const productsOf = (offerId: string, ids: string[]) => ({
      data: ids.map((id) => ({ type: 'products', id })),
      links: { self: `${selfUrl('offers', offerId)}/relationships/products`, related: `${selfUrl('offers', offerId)}/products` },
    });

    readResourceTests({
      resource: offers,
      world: () => w,
      fixtures: () => o,
      upstream: UPSTREAM,
      all: () => [o.o4, o.o3, o.o5, o.o2, o.o1],
      sorts: {
        title: () => [o.o4, o.o3, o.o5, o.o2, o.o1],
        price_in_cents: () => [o.o4, o.o2, o.o1, o.o5, o.o3],
      },
      filters: [
        { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [o.second] },
        { name: 'title_eq', query: () => 'filter[title_eq]=Pro Coaching', expect: () => [o.o5] },
        { name: 'title_cont', query: () => 'filter[title_cont]=PRO', expect: () => [o.o2, o.o5] },
        { name: 'title_start', query: () => 'filter[title_start]=pa', expect: () => [o.o3] },
        { name: 'description_cont', query: () => 'filter[description_cont]=access', expect: () => [o.o2] },
        { name: 'internal_title_cont', query: () => 'filter[internal_title_cont]=PRO', expect: () => [o.o2] },
        { name: 'currency_eq', query: () => 'filter[currency_eq]=EUR', expect: () => [o.o3] },
        { name: 'price_in_cents_eq', query: () => 'filter[price_in_cents_eq]=4900', expect: () => [o.o1, o.o5] },
        { name: 'price_in_cents_gt', query: () => 'filter[price_in_cents_gt]=4900', expect: () => [o.o3] },
        { name: 'price_in_cents_gte', query: () => 'filter[price_in_cents_gte]=4900', expect: () => [o.o1, o.o3, o.o5] },
        { name: 'price_in_cents_lt', query: () => 'filter[price_in_cents_lt]=2900', expect: () => [o.o4] },
        { name: 'price_in_cents_lte', query: () => 'filter[price_in_cents_lte]=2900', expect: () => [o.o2, o.o4] },
        { name: 'payment_type_eq', query: () => 'filter[payment_type_eq]=subscription', expect: () => [o.o2] },
        { name: 'payment_type_in', query: () => 'filter[payment_type_in]=free,multipay', expect: () => [o.o3, o.o4] },
      ],
      sparse: ['title', 'price_in_cents', 'checkout_url'],
      show: () => ({
        id: o.o2,
        type: 'offers',
        attributes: {
          title: 'Pro Membership',
          description: 'Monthly access',
          internal_title: 'pro-monthly',
          currency: 'USD',
          price_in_cents: 2900,
          payment_type: 'subscription',
          token: 'pro-token',
          payment_method: 'stripe',
          price_description: '$29.00/month',
          checkout_url: `https://${subdomain}.mykajabi.com/offers/pro-token/checkout`,
          recurring_offer: true,
          subscription: true,
          one_time: false,
          single: false,
          free: false,
          image_url: null,
        },
        // Products in their default order (title).
        relationships: { site: { data: { type: 'sites', id: w.siteId } }, products: productsOf(o.o2, [p.community, p.course, p.podcast]) },
        links: { self: selfUrl('offers', o.o2) },
      }),
      foreign: () => o.foreign,
    });

    it('derives the payment flags from the payment type', async () => {
      const res = await getJson(
        w,
        `/v1/offers?filter[site_id]=${w.siteId}&sort=id&fields[offers]=title,recurring_offer,subscription,one_time,free`,
      );
      assertUpstream(UPSTREAM, 'list', res);
      const flags = res.json().data.map((d: { attributes: Record<string, unknown> }) => d.attributes);
      assert.deepEqual(flags, [
        { title: 'Starter Course', recurring_offer: false, subscription: false, one_time: true, free: false },
        { title: 'Pro Membership', recurring_offer: true, subscription: true, one_time: false, free: false },
        { title: 'Payment Plan Bundle', recurring_offer: true, subscription: false, one_time: false, free: false },
        { title: 'Free Preview', recurring_offer: false, subscription: false, one_time: false, free: true },
        { title: 'Pro Coaching', recurring_offer: false, subscription: false, one_time: true, free: false },
      ]);
    });

    it('renders every offer’s product linkage, empty when it has none', async () => {
      const res = await getJson(w, `/v1/offers?filter[site_id]=${w.siteId}&sort=id`);
      const linkage = Object.fromEntries(res.json().data.map((d: { id: string; relationships: { products: unknown } }) => [d.id, d.relationships.products]));
      assert.deepEqual(linkage, {
        [o.o1]: productsOf(o.o1, [p.course]),
        [o.o2]: productsOf(o.o2, [p.community, p.course, p.podcast]),
        [o.o3]: productsOf(o.o3, [p.community, p.course]),
        [o.o4]: productsOf(o.o4, []),
        [o.o5]: productsOf(o.o5, [p.podcast]),
      });
    });

    it('includes the products of every listed offer once', async () => {
      const res = await getJson(w, `/v1/offers?filter[site_id]=${w.siteId}&include=products`);
      assertUpstream(UPSTREAM, 'list', res);
      const body = res.json();
      assertIncludedDistinct(body);
      // In discovery order: the products edge is one query sorted by the products' default sort.
      assert.deepEqual(includedKeys(body), [`products:${p.community}`, `products:${p.course}`, `products:${p.podcast}`]);
      const course = body.included.find((r: { id: string }) => r.id === p.course);
      assert.deepEqual(course.relationships, { site: { data: { type: 'sites', id: w.siteId } } });
      assert.equal(course.attributes.title, 'Course Product');

      // A page that reaches only some products includes only those.
      const free = await getJson(w, `/v1/offers?filter[site_id]=${w.siteId}&include=products&filter[payment_type_eq]=free`);
      assert.deepEqual(free.json().included, []);
      const coaching = await getJson(w, `/v1/offers?filter[site_id]=${w.siteId}&include=products&filter[title_eq]=Pro Coaching`);
      assert.deepEqual(includedKeys(coaching.json()), [`products:${p.podcast}`]);
    });

    it('includes products in one query whatever the page size', async () => {
      const run = async (size: number) => {
        const { result, statements } = await w.t.queries.during(() =>
          w.t.get(`/v1/offers?filter[site_id]=${w.siteId}&include=products&sort=id&page[size]=${size}`, w.token),
        );
        assert.equal(result.statusCode, 200, result.body);
        return { body: result.json(), statements: statements.filter((s) => !isCountQuery(s)) };
      };
      const one = await run(1);
      const five = await run(5);
      assert.deepEqual(one.body.data.map((d: { id: string }) => d.id), [o.o1]);
      assert.equal(five.body.data.length, 5);
      assert.equal(statementsOn(one.statements, 'products').length, 1, one.statements.join('\n'));
      assert.equal(statementsOn(five.statements, 'products').length, 1, five.statements.join('\n'));
      assert.equal(one.statements.length, five.statements.length, 'the same statements for 1 and 5 offers');
      assert.equal(statementsOn(five.statements, 'offers').length, 1, 'one query for the page of offers');
    });

    it('serves GET /v1/offers/{id}/relationships/products', async () => {
      const res = await getJson(w, `/v1/offers/${o.o2}/relationships/products`);
      assertResponseMatchesUpstream('GET', RELATIONSHIP, res);
      assert.deepEqual(res.json(), productsOf(o.o2, [p.community, p.course, p.podcast]));
      const none = await getJson(w, `/v1/offers/${o.o4}/relationships/products`);
      assertResponseMatchesUpstream('GET', RELATIONSHIP, none);
      assert.deepEqual(none.json(), productsOf(o.o4, []));

      for (const id of ['987654321', o.foreign]) {
        const missing = await getJson(w, `/v1/offers/${id}/relationships/products`, 404);
        assertResponseMatchesUpstream('GET', RELATIONSHIP, missing);
      }
      const extra = await getJson(w, `/v1/offers/${o.o2}/relationships/products?include=products`, 400);
      assert.equal(extra.json().errors[0].source.parameter, 'include');

      const noOffers = await w.t.keyWith(w.t.tenant.ownerId, PERMISSION_NAMES.filter((n) => n !== 'view:offers'));
      const forbidden = await getJson(w, `/v1/offers/${o.o2}/relationships/products`, 403, noOffers.token);
      assertResponseMatchesUpstream('GET', RELATIONSHIP, forbidden);
      // Linkage names products, so it needs view:products as well.
      const noProducts = await w.t.keyWith(w.t.tenant.ownerId, PERMISSION_NAMES.filter((n) => n !== 'view:products'));
      await getJson(w, `/v1/offers/${o.o2}/relationships/products`, 403, noProducts.token);
    });

    it('refuses include=products without view:products', async () => {
      const { token } = await w.t.keyWith(w.t.tenant.ownerId, ['view:offers']);
      const res = await getJson(w, `/v1/offers?filter[site_id]=${w.siteId}&include=products`, 403, token);
      assertResponseMatchesUpstream('GET', '/v1/offers', res);
      assert.match(res.json().errors[0].detail, /view:products/);
    });
  });
}
