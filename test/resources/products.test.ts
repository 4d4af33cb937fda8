// GET /v1/products and GET /v1/products/{id}: what members get access to. Read with view:products.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { products } from '../../src/resources/products.js';
import { DIALECTS } from '../support/harness.js';
import {
  assertUpstream,
  at,
  createWorld,
  getJson,
  idsOf,
  readResourceTests,
  selfUrl,
  withoutSeedOnlyAttributes,
  type UpstreamCheck,
  type World,
} from '../support/catalogue-fixtures.js';

// The seed lists `description` among a product's fields; upstream's products schema does not.
// The seed wins: `description` is left out of the check and every other attribute stays strict.
const UPSTREAM: UpstreamCheck = {
  list: '/v1/products',
  show: '/v1/products/{id}',
  adjust: withoutSeedOnlyAttributes({ products: ['description'] }),
};

for (const dialect of DIALECTS) {
  describe(`products [${dialect}]`, () => {
    let w: World;
    const p = { p1: '', p2: '', p3: '', p4: '', p5: '', second: '', foreign: '' };

    before(async () => {
      w = await createWorld(dialect);
      const { rows, siteId } = w;
      p.p1 = await rows.product(siteId, {
        title: 'Marketing Mastery',
        description: 'Grow your audience',
        created_at: at('2026-01-10T09:00:00.000Z'),
        status: 'ready',
        product_type_name: 'Course',
        product_type_id: 1,
        productizable_type: 'Course',
        publish_status: 'published',
        thumbnail_url: 'https://cdn.example.com/p1.png',
        url: 'https://example.com/p/marketing-mastery',
      });
      p.p2 = await rows.product(siteId, {
        title: 'Coaching Circle',
        description: null,
        created_at: at('2026-02-01T00:00:00.000Z'),
        status: 'processing',
        product_type_name: 'Coaching Program',
        product_type_id: 2,
        productizable_type: 'Coaching::Program',
        publish_status: 'draft',
      });
      // Created at the same moment as p2: the id breaks the tie.
      p.p3 = await rows.product(siteId, {
        title: 'Daily Podcast',
        description: 'Short daily episodes',
        created_at: at('2026-02-01T00:00:00.000Z'),
        status: 'ready',
        product_type_name: 'Podcast',
        product_type_id: 3,
        productizable_type: 'Podcast',
        publish_status: 'published',
      });
      p.p4 = await rows.product(siteId, {
        title: 'Cohort Launch',
        description: 'A cohort course',
        created_at: at('2026-03-05T12:30:00.000Z'),
        status: 'draft',
        product_type_name: 'Course',
        product_type_id: 1,
        productizable_type: 'Courses::CohortCourse',
        publish_status: 'draft',
      });
      p.p5 = await rows.product(siteId, {
        title: 'Members Community',
        description: 'Chat with peers',
        created_at: at('2026-04-01T08:00:00.000Z'),
        status: 'ready',
        product_type_name: 'Community',
        product_type_id: 4,
        productizable_type: 'Community',
        publish_status: 'published',
      });
      p.second = await rows.product(w.secondSiteId, { title: 'Marketing Mastery' });
      p.foreign = await rows.product(w.other.siteId, { title: 'Marketing Mastery' });

      // Members: two current and one past member of p1, one current member of p3.
      const member = async () => rows.contact(siteId);
      await rows.membership(siteId, await member(), p.p1);
      await rows.membership(siteId, await member(), p.p1);
      await rows.membership(siteId, await member(), p.p1, { ended_at: at('2026-05-01T00:00:00.000Z') });
      await rows.membership(siteId, await member(), p.p3);
    });
    after(() => w.t.close());

    const p1Attributes = {
      title: 'Marketing Mastery',
      description: 'Grow your audience',
      created_at: '2026-01-10T09:00:00.000Z',
      status: 'ready',
      members_aggregate_count: 2,
      product_type_name: 'Course',
      product_type_id: 1,
      publish_status: 'published',
      thumbnail_url: 'https://cdn.example.com/p1.png',
      url: 'https://example.com/p/marketing-mastery',
    };

    readResourceTests({
      resource: products,
      world: () => w,
      fixtures: () => p,
      upstream: UPSTREAM,
      all: () => [p.p2, p.p4, p.p3, p.p1, p.p5],
      sorts: {
        title: () => [p.p2, p.p4, p.p3, p.p1, p.p5],
        // Nulls sort after every value ascending (and first descending).
        description: () => [p.p4, p.p5, p.p1, p.p3, p.p2],
        created_at: () => [p.p1, p.p2, p.p3, p.p4, p.p5],
        status: () => [p.p4, p.p2, p.p1, p.p3, p.p5],
      },
      filters: [
        { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [p.second] },
        {
          name: 'exclude_product_types',
          query: () => 'filter[exclude_product_types][]=Courses::CohortCourse&filter[exclude_product_types][]=Podcast',
          expect: () => [p.p1, p.p2, p.p5],
        },
        { name: 'title_eq', query: () => 'filter[title_eq]=Daily Podcast', expect: () => [p.p3] },
        { name: 'title_cont', query: () => 'filter[title_cont]=CO', expect: () => [p.p2, p.p4, p.p5] },
        { name: 'title_start', query: () => 'filter[title_start]=c', expect: () => [p.p2, p.p4] },
        { name: 'description_cont', query: () => 'filter[description_cont]=COURSE', expect: () => [p.p4] },
        { name: 'created_at_gt', query: () => 'filter[created_at_gt]=2026-02-01T00:00:00Z', expect: () => [p.p4, p.p5] },
        { name: 'created_at_gte', query: () => 'filter[created_at_gte]=2026-02-01T00:00:00Z', expect: () => [p.p2, p.p3, p.p4, p.p5] },
        { name: 'created_at_lt', query: () => 'filter[created_at_lt]=2026-02-01', expect: () => [p.p1] },
        { name: 'created_at_lte', query: () => 'filter[created_at_lte]=2026-02-01T00:00:00.000Z', expect: () => [p.p1, p.p2, p.p3] },
        { name: 'status_eq', query: () => 'filter[status_eq]=ready', expect: () => [p.p1, p.p3, p.p5] },
        { name: 'status_in', query: () => 'filter[status_in]=draft,processing', expect: () => [p.p2, p.p4] },
        { name: 'product_type_name_eq', query: () => 'filter[product_type_name_eq]=Course', expect: () => [p.p1, p.p4] },
        { name: 'product_type_id_eq', query: () => 'filter[product_type_id_eq]=3', expect: () => [p.p3] },
        { name: 'publish_status_eq', query: () => 'filter[publish_status_eq]=draft', expect: () => [p.p2, p.p4] },
      ],
      sparse: ['title', 'publish_status'],
      show: () => ({
        id: p.p1,
        type: 'products',
        attributes: p1Attributes,
        relationships: { site: { data: { type: 'sites', id: w.siteId } } },
        links: { self: selfUrl('products', p.p1) },
      }),
      foreign: () => p.foreign,
    });

    it('shows a product with fields[products]=title,publish_status exactly as the seed does', async () => {
      const res = await getJson(w, `/v1/products/${p.p1}?fields[products]=title,publish_status`);
      assertUpstream(UPSTREAM, 'show', res);
      const self = selfUrl('products', p.p1);
      assert.deepEqual(res.json(), {
        data: {
          id: p.p1,
          type: 'products',
          attributes: { title: 'Marketing Mastery', publish_status: 'published' },
          relationships: { site: { data: { type: 'sites', id: w.siteId } } },
          links: { self },
        },
        links: { self, current: `${self}?fields[products]=title,publish_status` },
      });
    });

    it('counts only current members, and none for a product without memberships', async () => {
      // Upstream marks title required, so a sparse fieldset it validates keeps title.
      const res = await getJson(w, `/v1/products?filter[site_id]=${w.siteId}&fields[products]=title,members_aggregate_count&sort=created_at`);
      assertUpstream(UPSTREAM, 'list', res);
      assert.deepEqual(
        res.json().data.map((d: { attributes: { members_aggregate_count: number } }) => d.attributes.members_aggregate_count),
        [2, 0, 1, 0, 0],
      );
    });

    it('takes exclude_product_types as a comma list too, and a single kind', async () => {
      const comma = await getJson(w, `/v1/products?filter[site_id]=${w.siteId}&filter[exclude_product_types]=Courses::CohortCourse,Podcast`);
      assert.deepEqual(idsOf(comma), [p.p2, p.p1, p.p5]);
      const one = await getJson(w, `/v1/products?filter[site_id]=${w.siteId}&filter[exclude_product_types][]=Course`);
      assert.deepEqual(idsOf(one), [p.p2, p.p4, p.p3, p.p5]);
      const mixed = await getJson(
        w,
        `/v1/products?filter[site_id]=${w.siteId}&filter[exclude_product_types][]=Course&filter[exclude_product_types]=Podcast`,
        400,
      );
      assert.equal(mixed.json().errors[0].source.parameter, 'filter[exclude_product_types]');
    });
  });
}
