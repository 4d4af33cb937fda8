// GET /v1/landing_pages, /v1/website_pages and /v1/blog_posts (with include=blog), and their
// shows. Landing pages take every suffix of the seed's table (eq, not_eq, cont, not_cont, gt, gte,
// lt, lte, start, end) on title, publish_at, created_at and updated_at, plus filter[published].
// Read with view:pages.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { blogPosts, landingPages, websitePages } from '../../src/resources/pages.js';
import { DIALECTS } from '../support/harness.js';
import {
  assertIncludedDistinct,
  assertUpstream,
  at,
  createWorld,
  getJson,
  idsOf,
  includedKeys,
  readResourceTests,
  selfUrl,
  type FilterCase,
  type UpstreamCheck,
  type World,
} from '../support/catalogue-fixtures.js';

const LANDING: UpstreamCheck = { list: '/v1/landing_pages', show: '/v1/landing_pages/{id}' };
const WEBSITE: UpstreamCheck = { list: '/v1/website_pages', show: '/v1/website_pages/{id}' };
const BLOG: UpstreamCheck = { list: '/v1/blog_posts', show: '/v1/blog_posts/{id}' };

for (const dialect of DIALECTS) {
  describe(`landing pages, website pages and blog posts [${dialect}]`, () => {
    let w: World;
    // The test clock reads 2026-06-01T12:00:00.000Z: pages published before it are live.
    const lp = { spring: '', webinar: '', summer: '', friday: '', sales: '', second: '', foreign: '' };
    const wp = { about: '', contact: '', home: '', team: '', second: '', foreign: '' };
    const bp = { growth: '', draft: '', launch: '', pricing: '', second: '', foreign: '' };
    const blogs = { news: '', guides: '' };

    before(async () => {
      w = await createWorld(dialect);
      const { rows, siteId } = w;
      const page = (title: string, publish: string | null, created: string, updated: string) =>
        rows.landingPage(siteId, {
          title,
          url: `https://example.com/lp/${title.toLowerCase().replace(/ /g, '-')}`,
          publish_at: publish === null ? null : at(publish),
          created_at: at(created),
          updated_at: at(updated),
        });
      lp.spring = await page('Spring Sale', '2026-03-15T09:00:00.000Z', '2026-03-01T08:00:00.000Z', '2026-03-10T08:00:00.000Z');
      lp.webinar = await page('Webinar Signup', null, '2026-04-01T08:00:00.000Z', '2026-04-20T08:00:00.000Z');
      lp.summer = await page('Summer Launch', '2026-07-01T00:00:00.000Z', '2026-05-01T08:00:00.000Z', '2026-05-01T08:00:00.000Z');
      // Published and created at the same moments as Spring Sale: the id breaks those ties.
      lp.friday = await page('Black Friday', '2026-03-15T09:00:00.000Z', '2026-03-01T08:00:00.000Z', '2026-05-15T10:30:00.000Z');
      lp.sales = await page('Sales Page', '2026-05-20T17:45:30.250Z', '2026-05-10T08:15:00.000Z', '2026-05-20T17:45:30.250Z');
      lp.second = await rows.landingPage(w.secondSiteId, { title: 'Spring Sale' });
      lp.foreign = await rows.landingPage(w.other.siteId, { title: 'Spring Sale' });

      const webPage = (title: string, url: string | null, created: string, updated: string) =>
        rows.websitePage(siteId, { title, url, created_at: at(created), updated_at: at(updated) });
      wp.about = await webPage('About Us', 'https://example.com/about', '2026-01-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z');
      wp.contact = await webPage('Contact', null, '2026-02-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z');
      wp.home = await webPage('Home', 'https://example.com/', '2026-01-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z');
      wp.team = await webPage('Meet the Team', 'https://example.com/team', '2026-03-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z');
      wp.second = await rows.websitePage(w.secondSiteId, { title: 'Home' });
      wp.foreign = await rows.websitePage(w.other.siteId, { title: 'Home' });

      blogs.news = await rows.blog(siteId, { title: 'News' });
      blogs.guides = await rows.blog(siteId, { title: 'Guides' });
      const post = (blog: string, title: string, published: string | null, created: string) =>
        rows.blogPost(siteId, blog, {
          title,
          slug: title.toLowerCase().replace(/ /g, '-'),
          url: `https://example.com/blog/${title.toLowerCase().replace(/ /g, '-')}`,
          content: `<p>${title}</p>`,
          page_title: `${title} | ${blog === blogs.news ? 'News' : 'Guides'}`,
          page_description: `Read ${title}`,
          published_at: published === null ? null : at(published),
          created_at: at(created),
        });
      bp.growth = await post(blogs.news, 'Growth Tips', '2026-04-01T10:00:00.000Z', '2026-03-30T10:00:00.000Z');
      bp.draft = await post(blogs.news, 'Draft Ideas', null, '2026-05-01T10:00:00.000Z');
      // Published at the same moment as Growth Tips: the id breaks the tie.
      bp.launch = await post(blogs.guides, 'Launch Recap', '2026-04-01T10:00:00.000Z', '2026-03-31T10:00:00.000Z');
      bp.pricing = await post(blogs.guides, 'Pricing Guide', '2026-05-15T10:00:00.000Z', '2026-05-10T10:00:00.000Z');
      bp.second = await rows.blogPost(w.secondSiteId, await rows.blog(w.secondSiteId), { title: 'Growth Tips' });
      bp.foreign = await rows.blogPost(w.other.siteId, await rows.blog(w.other.siteId), { title: 'Growth Tips' });
    });
    after(() => w.t.close());

    const site = () => ({ data: { type: 'sites', id: w.siteId } });

    describe('landing_pages', () => {
      // [suffix, value, expected] per attribute; every suffix of the seed's table.
      const cases = (): Record<string, Array<[string, string, () => string[]]>> => ({
        title: [
          ['eq', 'Spring Sale', () => [lp.spring]],
          ['not_eq', 'Spring Sale', () => [lp.webinar, lp.summer, lp.friday, lp.sales]],
          ['cont', 'SALE', () => [lp.spring, lp.sales]],
          ['not_cont', 'sale', () => [lp.webinar, lp.summer, lp.friday]],
          ['start', 's', () => [lp.spring, lp.summer, lp.sales]],
          ['end', 'E', () => [lp.spring, lp.sales]],
          ['gt', 'Spring Sale', () => [lp.summer, lp.webinar]],
          ['gte', 'Spring Sale', () => [lp.spring, lp.summer, lp.webinar]],
          ['lt', 'Sales Page', () => [lp.friday]],
          ['lte', 'Sales Page', () => [lp.friday, lp.sales]],
        ],
        publish_at: [
          ['eq', '2026-03-15T09:00:00Z', () => [lp.spring, lp.friday]],
          // A page never scheduled has no publish_at to differ: it does not match.
          ['not_eq', '2026-03-15T09:00:00Z', () => [lp.summer, lp.sales]],
          // Text suffixes read the ISO 8601 UTC rendering.
          ['cont', '-03-15', () => [lp.spring, lp.friday]],
          ['not_cont', '-03-', () => [lp.summer, lp.sales]],
          ['start', '2026-07', () => [lp.summer]],
          ['end', '.250Z', () => [lp.sales]],
          ['gt', '2026-03-15T09:00:00Z', () => [lp.sales, lp.summer]],
          ['gte', '2026-03-15T09:00:00Z', () => [lp.spring, lp.friday, lp.sales, lp.summer]],
          // A date alone is its midnight (UTC).
          ['lt', '2026-05-20', () => [lp.spring, lp.friday]],
          ['lte', '2026-05-20T17:45:30.250Z', () => [lp.spring, lp.friday, lp.sales]],
          ['null', 'true', () => [lp.webinar]],
        ],
        created_at: [
          ['eq', '2026-03-01T08:00:00.000Z', () => [lp.spring, lp.friday]],
          ['not_eq', '2026-03-01T08:00:00.000Z', () => [lp.webinar, lp.summer, lp.sales]],
          ['cont', '-05-', () => [lp.summer, lp.sales]],
          ['not_cont', '-05-', () => [lp.spring, lp.webinar, lp.friday]],
          ['start', '2026-04', () => [lp.webinar]],
          ['end', 'T08:00:00.000Z', () => [lp.spring, lp.webinar, lp.summer, lp.friday]],
          ['gt', '2026-04-01T08:00:00Z', () => [lp.summer, lp.sales]],
          ['gte', '2026-04-01T08:00:00Z', () => [lp.webinar, lp.summer, lp.sales]],
          ['lt', '2026-04-01T08:00:00Z', () => [lp.spring, lp.friday]],
          ['lte', '2026-04-01T08:00:00Z', () => [lp.spring, lp.webinar, lp.friday]],
        ],
        updated_at: [
          ['eq', '2026-05-01T08:00:00Z', () => [lp.summer]],
          ['not_eq', '2026-05-01T08:00:00Z', () => [lp.spring, lp.webinar, lp.friday, lp.sales]],
          ['cont', '-05-', () => [lp.summer, lp.friday, lp.sales]],
          ['not_cont', '-05-', () => [lp.spring, lp.webinar]],
          ['start', '2026-04', () => [lp.webinar]],
          ['end', '30.250Z', () => [lp.sales]],
          ['gt', '2026-05-01T08:00:00Z', () => [lp.friday, lp.sales]],
          ['gte', '2026-05-01T08:00:00Z', () => [lp.summer, lp.friday, lp.sales]],
          ['lt', '2026-05-01T08:00:00Z', () => [lp.spring, lp.webinar]],
          ['lte', '2026-05-01T08:00:00Z', () => [lp.spring, lp.webinar, lp.summer]],
        ],
      });
      const predicateCases: FilterCase<unknown>[] = Object.entries(cases()).flatMap(([attribute, list]) =>
        list.map(([suffix, value, expect]) => ({
          name: `${attribute}_${suffix}`,
          query: () => `filter[${attribute}_${suffix}]=${encodeURIComponent(value)}`,
          expect: () => cases()[attribute]!.find(([s]) => s === suffix)![2](),
        })),
      );

      readResourceTests({
        resource: landingPages,
        world: () => w,
        fixtures: () => lp,
        upstream: LANDING,
        all: () => [lp.friday, lp.sales, lp.spring, lp.summer, lp.webinar],
        sorts: {
          title: () => [lp.friday, lp.sales, lp.spring, lp.summer, lp.webinar],
          // A page never scheduled sorts after every date ascending, first descending.
          publish_at: () => [lp.spring, lp.friday, lp.sales, lp.summer, lp.webinar],
          created_at: () => [lp.spring, lp.friday, lp.webinar, lp.summer, lp.sales],
          updated_at: () => [lp.spring, lp.webinar, lp.summer, lp.friday, lp.sales],
        },
        filters: [
          { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [lp.second] },
          { name: 'published', query: () => 'filter[published]=true', expect: () => [lp.spring, lp.friday, lp.sales] },
          // Not published: never scheduled, or scheduled after now.
          { name: 'published', query: () => 'filter[published]=false', expect: () => [lp.webinar, lp.summer] },
          ...predicateCases,
        ],
        sparse: ['title', 'publish_at'],
        show: () => ({
          id: lp.sales,
          type: 'landing_pages',
          attributes: {
            title: 'Sales Page',
            url: 'https://example.com/lp/sales-page',
            publish_at: '2026-05-20T17:45:30.250Z',
            created_at: '2026-05-10T08:15:00.000Z',
            updated_at: '2026-05-20T17:45:30.250Z',
          },
          relationships: { site: site() },
          links: { self: selfUrl('landing_pages', lp.sales) },
        }),
        foreign: () => lp.foreign,
      });

      it('tests every suffix of the seed’s table on each of its four attributes', () => {
        const seed = ['eq', 'not_eq', 'cont', 'not_cont', 'gt', 'gte', 'lt', 'lte', 'start', 'end'];
        for (const attribute of ['title', 'publish_at', 'created_at', 'updated_at']) {
          const tested = new Set(cases()[attribute]!.map(([suffix]) => suffix));
          assert.deepEqual(seed.filter((s) => !tested.has(s)), [], attribute);
          assert.deepEqual(landingPages.attributes[attribute]!.predicates.filter((s) => s !== 'null').sort(), [...seed].sort(), attribute);
        }
      });

      it('moves a page into filter[published]=true when its publish_at passes', async () => {
        const list = async (value: string, token = w.token) =>
          idsOf(await getJson(w, `/v1/landing_pages?filter[site_id]=${w.siteId}&filter[published]=${value}&sort=publish_at`, 200, token));
        w.t.clock.current = new Date('2026-07-01T00:00:00.000Z');
        try {
          // Tokens expire with the clock: one granted a month later.
          const later = await w.t.token();
          assert.deepEqual(await list('true', later), [lp.spring, lp.friday, lp.sales, lp.summer]);
          assert.deepEqual(await list('false', later), [lp.webinar]);
        } finally {
          w.t.clock.current = new Date('2026-06-01T12:00:00.000Z');
        }
        assert.deepEqual(await list('1'), [lp.spring, lp.friday, lp.sales]);
        const bad = await getJson(w, `/v1/landing_pages?filter[site_id]=${w.siteId}&filter[published]=yes`, 400);
        assert.equal(bad.json().errors[0].source.parameter, 'filter[published]');
      });

      it('combines filters so that a page must match all of them', async () => {
        const res = await getJson(w, `/v1/landing_pages?filter[site_id]=${w.siteId}&filter[title_start]=s&filter[published]=true&sort=-publish_at`);
        assertUpstream(LANDING, 'list', res);
        assert.deepEqual(idsOf(res), [lp.sales, lp.spring]);
      });

      it('rejects a suffix the seed does not list, and a malformed timestamp', async () => {
        for (const [query, parameter] of [
          ['filter[created_at_null]=true', 'filter[created_at_null]'],
          ['filter[title_in]=a,b', 'filter[title_in]'],
          ['filter[publish_at_gt]=yesterday', 'filter[publish_at_gt]'],
        ] as const) {
          const res = await getJson(w, `/v1/landing_pages?filter[site_id]=${w.siteId}&${query}`, 400);
          assert.equal(res.json().errors[0].source.parameter, parameter, query);
        }
      });
    });

    describe('website_pages', () => {
      readResourceTests({
        resource: websitePages,
        world: () => w,
        fixtures: () => wp,
        upstream: WEBSITE,
        all: () => [wp.team, wp.contact, wp.home, wp.about],
        sorts: {
          title: () => [wp.about, wp.contact, wp.home, wp.team],
          created_at: () => [wp.about, wp.home, wp.contact, wp.team],
          updated_at: () => [wp.contact, wp.about, wp.team, wp.home],
        },
        filters: [
          { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [wp.second] },
          { name: 'title_eq', query: () => 'filter[title_eq]=Home', expect: () => [wp.home] },
          { name: 'title_cont', query: () => 'filter[title_cont]=T', expect: () => [wp.about, wp.contact, wp.team] },
        ],
        sparse: ['title'],
        show: () => ({
          id: wp.contact,
          type: 'website_pages',
          attributes: { title: 'Contact', url: null, created_at: '2026-02-01T00:00:00.000Z', updated_at: '2026-02-01T00:00:00.000Z' },
          relationships: { site: site() },
          links: { self: selfUrl('website_pages', wp.contact) },
        }),
        foreign: () => wp.foreign,
      });
    });

    describe('blog_posts', () => {
      readResourceTests({
        resource: blogPosts,
        world: () => w,
        fixtures: () => bp,
        upstream: BLOG,
        // Newest first; a draft (no published_at) sorts as if later than every date.
        all: () => [bp.draft, bp.pricing, bp.launch, bp.growth],
        sorts: {
          title: () => [bp.draft, bp.growth, bp.launch, bp.pricing],
          published_at: () => [bp.growth, bp.launch, bp.pricing, bp.draft],
          created_at: () => [bp.growth, bp.launch, bp.draft, bp.pricing],
        },
        filters: [
          { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [bp.second] },
          { name: 'title_eq', query: () => 'filter[title_eq]=Launch Recap', expect: () => [bp.launch] },
          { name: 'title_cont', query: () => 'filter[title_cont]=I', expect: () => [bp.draft, bp.growth, bp.pricing] },
          { name: 'slug_eq', query: () => 'filter[slug_eq]=pricing-guide', expect: () => [bp.pricing] },
          { name: 'published_at_gt', query: () => 'filter[published_at_gt]=2026-04-01T10:00:00Z', expect: () => [bp.pricing] },
          { name: 'published_at_gte', query: () => 'filter[published_at_gte]=2026-04-01T10:00:00Z', expect: () => [bp.growth, bp.launch, bp.pricing] },
          { name: 'published_at_lt', query: () => 'filter[published_at_lt]=2026-05-01', expect: () => [bp.growth, bp.launch] },
          { name: 'published_at_lte', query: () => 'filter[published_at_lte]=2026-05-15T10:00:00.000Z', expect: () => [bp.growth, bp.launch, bp.pricing] },
          { name: 'published_at_null', query: () => 'filter[published_at_null]=true', expect: () => [bp.draft] },
        ],
        sparse: ['title', 'slug'],
        show: () => ({
          id: bp.growth,
          type: 'blog_posts',
          attributes: {
            title: 'Growth Tips',
            url: 'https://example.com/blog/growth-tips',
            content: '<p>Growth Tips</p>',
            slug: 'growth-tips',
            page_title: 'Growth Tips | News',
            page_description: 'Read Growth Tips',
            published_at: '2026-04-01T10:00:00.000Z',
            created_at: '2026-03-30T10:00:00.000Z',
            updated_at: '2026-03-30T10:00:00.000Z',
          },
          // site: a sitebiz extension (the upstream names the blog only), so a list spanning sites says each post's site.
          relationships: { blog: { data: { type: 'blogs', id: blogs.news } }, site: site() },
          links: { self: selfUrl('blog_posts', bp.growth) },
        }),
        foreign: () => bp.foreign,
      });

      it('includes each post’s blog once, on list and show', async () => {
        const res = await getJson(w, `/v1/blog_posts?filter[site_id]=${w.siteId}&include=blog`);
        assertUpstream(BLOG, 'list', res);
        const body = res.json();
        assertIncludedDistinct(body);
        // Both blogs once each (a to-one edge promises no order among its records).
        assert.deepEqual(includedKeys(body).sort(), [`blogs:${blogs.guides}`, `blogs:${blogs.news}`].sort());
        // Blogs have no route of their own, so no links.self.
        assert.deepEqual(
          body.included.find((r: { id: string }) => r.id === blogs.news),
          { id: blogs.news, type: 'blogs', attributes: { title: 'News' }, relationships: { site: site() } },
        );

        const shown = await getJson(w, `/v1/blog_posts/${bp.pricing}?include=blog&fields[blogs]=title`);
        assertUpstream(BLOG, 'show', shown);
        assert.deepEqual(shown.json().data.relationships, { blog: { data: { type: 'blogs', id: blogs.guides } }, site: site() });
        assert.deepEqual(includedKeys(shown.json()), [`blogs:${blogs.guides}`]);
      });
    });
  });
}
