// GET /v1/courses and GET /v1/courses/{id}, with include=modules,lessons,lessons.media,offers as
// the seed shows it: the course's relationships carry site, offers, modules and lessons linkage;
// `included` holds each related record once; modules and lessons come in course outline order.
// Read with view:products (offers also need view:offers when included).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { PERMISSION_NAMES } from '../../src/auth/permissions.js';
import { courses } from '../../src/resources/courses.js';
import { DIALECTS } from '../support/harness.js';
import {
  assertIncludedDistinct,
  assertUpstream,
  at,
  createWorld,
  getJson,
  includedKeys,
  mainTable,
  readResourceTests,
  selfUrl,
  withoutSeedOnlyAttributes,
  type UpstreamCheck,
  type World,
} from '../support/catalogue-fixtures.js';

// Attributes the upstream course schemas lack but that the seed (course `description`) or
// upstream's own prose (module `description`) give, and the seed's offer `description`; each is
// left out of the check while every other attribute stays strict. Upstream's `included` schema
// has no branch for media at all (its prose documents only `duration_in_minutes`), so included
// media are taken out before validation and checked exactly by the tests below instead.
const seedOnly = withoutSeedOnlyAttributes({ courses: ['description'], modules: ['description'], offers: ['description'] });
const UPSTREAM: UpstreamCheck = {
  list: '/v1/courses',
  show: '/v1/courses/{id}',
  adjust: (body) => {
    if (body.included) body.included = body.included.filter((r: { type: string }) => r.type !== 'media');
    return seedOnly(body);
  },
};

const SEED_INCLUDE = 'include=modules,lessons,lessons.media,offers';

for (const dialect of DIALECTS) {
  describe(`courses [${dialect}]`, () => {
    let w: World;
    const c = { c1: '', c2: '', c3: '', c4: '', second: '', foreign: '' };
    // Course c1: modules and lessons created out of order, so ids alone would order them wrongly.
    const m = { scaling: '', basics: '', c3only: '' };
    const l = { scaling2: '', basics2: '', scaling1: '', basics1: '', c3only: '' };
    const media = { video: '', audio: '', download: '' };
    const o = { monthly: '', lifetime: '', other: '' };
    const products = { p1: '', p2: '', p3: '', p4: '' };

    before(async () => {
      w = await createWorld(dialect);
      const { rows, siteId } = w;
      for (const k of Object.keys(products) as (keyof typeof products)[]) products[k] = await rows.product(siteId, { title: `Product ${k}` });
      c.c1 = await rows.course(siteId, products.p1, {
        title: 'Advanced Marketing',
        description: 'Master level marketing course',
        created_at: at('2026-01-05T10:00:00.000Z'),
        thumbnail_url: 'https://cdn.example.com/c1.jpg',
        publish_status: 'published',
      });
      c.c2 = await rows.course(siteId, products.p2, { title: 'Beginner Basics', description: null, created_at: at('2026-02-01T00:00:00.000Z'), publish_status: 'draft' });
      // Created at the same moment as c1: the id breaks the tie.
      c.c3 = await rows.course(siteId, products.p3, { title: 'Content Creation', description: 'Write and film', created_at: at('2026-01-05T10:00:00.000Z') });
      c.c4 = await rows.course(siteId, products.p4, { title: 'Analytics 101', description: 'Read the numbers', created_at: at('2026-03-01T00:00:00.000Z'), publish_status: 'draft' });
      c.second = await rows.course(w.secondSiteId, await rows.product(w.secondSiteId), { title: 'Advanced Marketing' });
      c.foreign = await rows.course(w.other.siteId, await rows.product(w.other.siteId), { title: 'Advanced Marketing' });

      m.scaling = await rows.module(siteId, c.c1, 2, { title: 'Scaling Up', publishing_option: 'draft' });
      m.basics = await rows.module(siteId, c.c1, 1, {
        title: 'Marketing Fundamentals',
        description: 'Introduction to marketing concepts',
        poster_image_url: 'https://cdn.example.com/m1.jpg',
      });
      m.c3only = await rows.module(siteId, c.c3, 1, { title: 'Filming' });
      // Lesson positions count within their module, as upstream documents.
      l.scaling2 = await rows.lesson(siteId, c.c1, m.scaling, 2, { title: 'Hiring' });
      l.basics2 = await rows.lesson(siteId, c.c1, m.basics, 2, { title: 'Audiences', status: 'duplicating', publishing_option: 'drip' });
      l.scaling1 = await rows.lesson(siteId, c.c1, m.scaling, 1, { title: 'Automation' });
      l.basics1 = await rows.lesson(siteId, c.c1, m.basics, 1, { title: 'Marketing Basics' });
      l.c3only = await rows.lesson(siteId, c.c3, m.c3only, 1, { title: 'Lighting' });
      media.video = await rows.media(siteId, l.basics1, { kind: 'video', title: 'Intro video', url: 'https://cdn.example.com/intro.mp4', duration_seconds: 90 });
      media.audio = await rows.media(siteId, l.basics1, { kind: 'audio', title: 'Intro audio', url: 'https://cdn.example.com/intro.mp3', duration_seconds: 30 });
      media.download = await rows.media(siteId, l.scaling1, { kind: 'download', title: 'Checklist', url: 'https://cdn.example.com/list.pdf', duration_seconds: null });
      await rows.media(siteId, l.c3only, { title: 'Other course media' });

      o.monthly = await rows.offer(siteId, { title: 'Marketing Monthly', token: 'monthly', payment_type: 'subscription' });
      o.lifetime = await rows.offer(siteId, { title: 'Marketing Lifetime', token: 'lifetime', price_in_cents: 29900 });
      o.other = await rows.offer(siteId, { title: 'Other Offer', token: 'other' });
      await rows.offerProduct(o.monthly, products.p1);
      await rows.offerProduct(o.lifetime, products.p1);
      await rows.offerProduct(o.lifetime, products.p2);
      await rows.offerProduct(o.other, products.p3);
    });
    after(() => w.t.close());

    const ids = (type: string, list: string[]) => ({ data: list.map((id) => ({ type, id })) });
    const c1Object = () => ({
      id: c.c1,
      type: 'courses',
      attributes: {
        title: 'Advanced Marketing',
        description: 'Master level marketing course',
        created_at: '2026-01-05T10:00:00.000Z',
        thumbnail_url: 'https://cdn.example.com/c1.jpg',
      },
      relationships: {
        site: { data: { type: 'sites', id: w.siteId } },
        offers: ids('offers', [o.lifetime, o.monthly]),
        modules: ids('modules', [m.basics, m.scaling]),
        lessons: ids('lessons', [l.basics1, l.basics2, l.scaling1, l.scaling2]),
      },
      links: { self: selfUrl('courses', c.c1) },
    });

    readResourceTests({
      resource: courses,
      world: () => w,
      fixtures: () => c,
      upstream: UPSTREAM,
      all: () => [c.c1, c.c4, c.c2, c.c3],
      sorts: {
        title: () => [c.c1, c.c4, c.c2, c.c3],
        created_at: () => [c.c1, c.c3, c.c2, c.c4],
      },
      filters: [
        { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [c.second] },
        { name: 'publish_status_eq', query: () => 'filter[publish_status_eq]=draft', expect: () => [c.c2, c.c4] },
        { name: 'title_eq', query: () => 'filter[title_eq]=Content Creation', expect: () => [c.c3] },
        { name: 'title_cont', query: () => 'filter[title_cont]=MARK', expect: () => [c.c1] },
        { name: 'description_cont', query: () => 'filter[description_cont]=the', expect: () => [c.c4] },
      ],
      sparse: ['title', 'thumbnail_url'],
      show: c1Object,
      foreign: () => c.foreign,
    });

    it(`shows a course with ${SEED_INCLUDE}: linkage, included once each, outline order`, async () => {
      const res = await getJson(w, `/v1/courses/${c.c1}?${SEED_INCLUDE}`);
      assertUpstream(UPSTREAM, 'show', res);
      const body = res.json();
      const self = selfUrl('courses', c.c1);
      assert.deepEqual(body.links, { self, current: `${self}?${SEED_INCLUDE}` });
      assert.deepEqual(body.data, c1Object());
      assertIncludedDistinct(body);
      // Modules by position, lessons by module position then their own, media of those lessons,
      // then the offers of the course's product.
      assert.deepEqual(includedKeys(body), [
        `modules:${m.basics}`,
        `modules:${m.scaling}`,
        `lessons:${l.basics1}`,
        `lessons:${l.basics2}`,
        `lessons:${l.scaling1}`,
        `lessons:${l.scaling2}`,
        `media:${media.video}`,
        `media:${media.audio}`,
        `media:${media.download}`,
        `offers:${o.lifetime}`,
        `offers:${o.monthly}`,
      ]);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const byKey = new Map<string, any>(body.included.map((r: { type: string; id: string }) => [`${r.type}:${r.id}`, r]));
      assert.deepEqual(byKey.get(`modules:${m.basics}`), {
        id: m.basics,
        type: 'modules',
        attributes: {
          title: 'Marketing Fundamentals',
          description: 'Introduction to marketing concepts',
          position: '1',
          poster_image_url: 'https://cdn.example.com/m1.jpg',
          publishing_option: 'published',
        },
        relationships: { course: { data: { type: 'courses', id: c.c1 } } },
      });
      assert.deepEqual(byKey.get(`lessons:${l.basics2}`), {
        id: l.basics2,
        type: 'lessons',
        attributes: { title: 'Audiences', position: '2', status: 'duplicating', publishing_option: 'drip' },
        relationships: {
          course: { data: { type: 'courses', id: c.c1 } },
          module: { data: { type: 'modules', id: m.basics } },
          media: { data: [] },
        },
      });
      assert.deepEqual(byKey.get(`lessons:${l.basics1}`).relationships.media, ids('media', [media.video, media.audio]));
      assert.deepEqual(byKey.get(`lessons:${l.scaling1}`).relationships.media, ids('media', [media.download]));
      assert.deepEqual(byKey.get(`media:${media.video}`), {
        id: media.video,
        type: 'media',
        attributes: { kind: 'video', title: 'Intro video', url: 'https://cdn.example.com/intro.mp4', duration_seconds: 90, duration_in_minutes: 1.5 },
        relationships: { lesson: { data: { type: 'lessons', id: l.basics1 } } },
      });
      assert.equal(byKey.get(`media:${media.download}`).attributes.duration_in_minutes, null);
      const lifetime = byKey.get(`offers:${o.lifetime}`);
      assert.equal(lifetime.attributes.title, 'Marketing Lifetime');
      assert.equal(lifetime.attributes.price_in_cents, 29900);
      assert.deepEqual(lifetime.links, { self: selfUrl('offers', o.lifetime) });
    });

    it('applies sparse fieldsets to included types, as upstream’s example does', async () => {
      const query = 'include=modules,lessons,lessons.media&fields[courses]=title,thumbnail_url&fields[modules]=title&fields[lessons]=title&fields[media]=duration_in_minutes';
      const res = await getJson(w, `/v1/courses/${c.c1}?${query}`);
      assertUpstream(UPSTREAM, 'show', res);
      const body = res.json();
      assert.deepEqual(body.data.attributes, { title: 'Advanced Marketing', thumbnail_url: 'https://cdn.example.com/c1.jpg' });
      assert.deepEqual(
        body.included.map((r: { type: string; attributes: object }) => [r.type, r.attributes]),
        [
          ['modules', { title: 'Marketing Fundamentals' }],
          ['modules', { title: 'Scaling Up' }],
          ['lessons', { title: 'Marketing Basics' }],
          ['lessons', { title: 'Audiences' }],
          ['lessons', { title: 'Automation' }],
          ['lessons', { title: 'Hiring' }],
          ['media', { duration_in_minutes: 1.5 }],
          ['media', { duration_in_minutes: 0.5 }],
          ['media', { duration_in_minutes: null }],
        ],
      );
    });

    it('includes the records of a course without modules as empty linkage and nothing included', async () => {
      const res = await getJson(w, `/v1/courses/${c.c2}?${SEED_INCLUDE}`);
      assertUpstream(UPSTREAM, 'show', res);
      const body = res.json();
      assert.deepEqual(body.data.relationships, {
        site: { data: { type: 'sites', id: w.siteId } },
        offers: ids('offers', [o.lifetime]),
        modules: ids('modules', []),
        lessons: ids('lessons', []),
      });
      assert.deepEqual(includedKeys(body), [`offers:${o.lifetime}`]);
    });

    it('lists courses with includes: every course’s records once, grouped by parent', async () => {
      const res = await getJson(w, `/v1/courses?filter[site_id]=${w.siteId}&${SEED_INCLUDE}&sort=created_at`);
      assertUpstream(UPSTREAM, 'list', res);
      const body = res.json();
      assertIncludedDistinct(body);
      const c3 = body.data.find((d: { id: string }) => d.id === c.c3);
      assert.deepEqual(c3.relationships.modules, ids('modules', [m.c3only]));
      assert.deepEqual(c3.relationships.lessons, ids('lessons', [l.c3only]));
      assert.deepEqual(c3.relationships.offers, ids('offers', [o.other]));
      // The lifetime offer belongs to two courses and is included once.
      assert.equal(includedKeys(body).filter((k) => k === `offers:${o.lifetime}`).length, 1);
      assert.equal(includedKeys(body).filter((k) => k.startsWith('lessons:')).length, 5);
      assert.equal(includedKeys(body).filter((k) => k.startsWith('media:')).length, 4);
    });

    it('costs one query per include edge, however many modules, lessons and media a course has', async () => {
      // What a read costs, not an answer from the cache: each measured request follows a change of
      // the site's data version, as any write to it makes (src/db/site-counters.ts).
      const newVersion = () => sql`update site_counters set value = value + 1 where counter = 'version' and site_id = ${Number(w.siteId)}`.execute(w.t.handle.db);
      const tablesOf = async (courseId: string) => {
        await newVersion();
        const { result, statements } = await w.t.queries.during(() => w.t.get(`/v1/courses/${courseId}?${SEED_INCLUDE}`, w.token));
        assert.equal(result.statusCode, 200, result.body);
        return statements.map(mainTable);
      };
      const big = await tablesOf(c.c1); // 2 modules, 4 lessons, 3 media, 2 offers
      const small = await tablesOf(c.c3); // 1 module, 1 lesson, 1 media, 1 offer
      const empty = await tablesOf(c.c2); // nothing but an offer
      const edges = ['modules', 'lessons', 'media', 'offers'];
      for (const tables of [big, small]) {
        assert.deepEqual(tables.slice(-5), ['courses', ...edges], tables.join(', '));
      }
      assert.deepEqual(big, small);
      // With no lessons the media edge has no parents and costs nothing.
      assert.deepEqual(empty.slice(-4), ['courses', 'modules', 'lessons', 'offers']);

      await newVersion();
      const list = await w.t.queries.during(() => w.t.get(`/v1/courses?filter[site_id]=${w.siteId}&${SEED_INCLUDE}&page[size]=1&sort=title`, w.token));
      await newVersion();
      const listAll = await w.t.queries.during(() => w.t.get(`/v1/courses?filter[site_id]=${w.siteId}&${SEED_INCLUDE}&page[size]=25`, w.token));
      const withoutCount = (s: string[]) => s.filter((x) => !/^select count\(\*\) as "count"/.test(x)).map(mainTable);
      assert.deepEqual(withoutCount(list.statements).slice(-5), ['courses', ...edges]);
      assert.deepEqual(withoutCount(listAll.statements), withoutCount(list.statements));
    });

    it('refuses include=offers without view:offers, and the course without view:products', async () => {
      const noOffers = await w.t.keyWith(w.t.tenant.ownerId, PERMISSION_NAMES.filter((p) => p !== 'view:offers'));
      const res = await getJson(w, `/v1/courses/${c.c1}?${SEED_INCLUDE}`, 403, noOffers.token);
      assert.match(res.json().errors[0].detail, /view:offers/);
      const plain = await getJson(w, `/v1/courses/${c.c1}?include=modules,lessons,lessons.media`, 200, noOffers.token);
      assertUpstream(UPSTREAM, 'show', plain);
    });

    it('rejects an unknown include path naming the relationship', async () => {
      const res = await getJson(w, `/v1/courses/${c.c1}?include=lessons.videos`, 400);
      assert.equal(res.json().errors[0].source.parameter, 'include');
      assert.match(res.json().errors[0].detail, /videos/);
    });
  });
}
