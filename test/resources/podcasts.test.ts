// GET /v1/podcasts and GET /v1/podcasts/{id} (with include=episodes). Read with view:products.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { podcasts } from '../../src/resources/podcasts.js';
import { DIALECTS } from '../support/harness.js';
import {
  assertIncludedDistinct,
  assertUpstream,
  at,
  createWorld,
  getJson,
  includedKeys,
  readResourceTests,
  selfUrl,
  withoutSeedOnlyAttributes,
  type UpstreamCheck,
  type World,
} from '../support/catalogue-fixtures.js';

const seedOnly = withoutSeedOnlyAttributes({ podcasts: ['description'] });
const UPSTREAM: UpstreamCheck = {
  list: '/v1/podcasts',
  show: '/v1/podcasts/{id}',
  // The seed lists `description` among a podcast's fields; upstream's podcast schema does not.
  // The seed wins: it is left out of the check, every other attribute stays strict. And the seed
  // says `prev` and `next` are null when there is no such page, where upstream's podcast list
  // types them as strings: null paging links are left out of the check too.
  adjust: (body) => {
    for (const key of ['prev', 'next']) if (body.links && body.links[key] === null) delete body.links[key];
    return seedOnly(body);
  },
};

for (const dialect of DIALECTS) {
  describe(`podcasts [${dialect}]`, () => {
    let w: World;
    const pd = { marketing: '', behind: '', creator: '', daily: '', second: '', foreign: '' };
    const ep = { second: '', first: '', third: '', other: '' };

    before(async () => {
      w = await createWorld(dialect);
      const { rows, siteId } = w;
      const podcast = async (values: Parameters<typeof rows.podcast>[2]) => rows.podcast(siteId, await rows.product(siteId), values);
      pd.marketing = await podcast({
        title: 'Marketing Minute',
        description: 'One minute of marketing a day',
        language: 'en',
        owner_email: 'avery@example.com',
        author: 'Avery Quinn',
        status: 'ready',
        show_type: 'episodic',
        thumbnail_url: 'https://cdn.example.com/mm-thumb.jpg',
        cover_art_url: 'https://cdn.example.com/mm-cover.jpg',
        categories: ['Business', 'Marketing'],
        directories: [{ id: 'apple', url: 'https://podcasts.apple.com/mm', config: { explicit: false } }],
        migrated_to_url: null,
        migrated: false,
        public: true,
        ready: true,
        distribution_ready: true,
        url: 'https://example.com/podcasts/marketing-minute',
        created_at: at('2026-01-01T08:00:00.000Z'),
        updated_at: at('2026-05-01T08:00:00.000Z'),
      });
      pd.behind = await podcast({
        title: 'Behind the Scenes',
        status: 'importing',
        show_type: 'serial',
        author: null,
        migrated: true,
        migrated_to_url: 'https://elsewhere.example.com/bts',
        public: false,
        ready: false,
        distribution_ready: false,
        created_at: at('2026-02-01T00:00:00.000Z'),
        updated_at: at('2026-02-01T00:00:00.000Z'),
      });
      // Created at the same moment as "Behind the Scenes": the id breaks the tie.
      pd.creator = await podcast({ title: 'Creator Chats', status: 'ready', created_at: at('2026-02-01T00:00:00.000Z'), updated_at: at('2026-03-01T00:00:00.000Z') });
      pd.daily = await podcast({ title: 'Daily Drop', status: 'failed', created_at: at('2026-03-01T00:00:00.000Z'), updated_at: at('2026-03-02T00:00:00.000Z') });
      pd.second = await rows.podcast(w.secondSiteId, await rows.product(w.secondSiteId), { title: 'Marketing Minute' });
      pd.foreign = await rows.podcast(w.other.siteId, await rows.product(w.other.siteId), { title: 'Marketing Minute' });

      ep.second = await rows.podcastEpisode(siteId, pd.marketing, 2, {
        title: 'Pricing',
        description: 'How to price',
        duration_seconds: 65,
        audio_url: 'https://cdn.example.com/ep2.mp3',
        published_at: at('2026-04-02T06:00:00.000Z'),
        created_at: at('2026-04-01T06:00:00.000Z'),
      });
      ep.first = await rows.podcastEpisode(siteId, pd.marketing, 1, { title: 'Welcome' });
      ep.third = await rows.podcastEpisode(siteId, pd.marketing, 3, { title: 'Upcoming', published_at: null });
      ep.other = await rows.podcastEpisode(siteId, pd.creator, 1, { title: 'Pilot' });
    });
    after(() => w.t.close());

    const marketing = () => ({
      id: pd.marketing,
      type: 'podcasts',
      attributes: {
        title: 'Marketing Minute',
        description: 'One minute of marketing a day',
        language: 'en',
        owner_email: 'avery@example.com',
        author: 'Avery Quinn',
        status: 'ready',
        show_type: 'episodic',
        thumbnail_url: 'https://cdn.example.com/mm-thumb.jpg',
        cover_art_url: 'https://cdn.example.com/mm-cover.jpg',
        categories: ['Business', 'Marketing'],
        directories: [{ id: 'apple', url: 'https://podcasts.apple.com/mm', config: { explicit: false } }],
        migrated_to_url: null,
        migrated: false,
        public: true,
        ready: true,
        distribution_ready: true,
        url: 'https://example.com/podcasts/marketing-minute',
        created_at: '2026-01-01T08:00:00.000Z',
        updated_at: '2026-05-01T08:00:00.000Z',
      },
      relationships: { site: { data: { type: 'sites', id: w.siteId } } },
      links: { self: selfUrl('podcasts', pd.marketing) },
    });

    readResourceTests({
      resource: podcasts,
      world: () => w,
      fixtures: () => pd,
      upstream: UPSTREAM,
      all: () => [pd.behind, pd.creator, pd.daily, pd.marketing],
      sorts: {
        title: () => [pd.behind, pd.creator, pd.daily, pd.marketing],
        status: () => [pd.daily, pd.behind, pd.marketing, pd.creator],
        created_at: () => [pd.marketing, pd.behind, pd.creator, pd.daily],
        updated_at: () => [pd.behind, pd.creator, pd.daily, pd.marketing],
      },
      filters: [
        { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [pd.second] },
        { name: 'title_eq', query: () => 'filter[title_eq]=Creator Chats', expect: () => [pd.creator] },
        { name: 'title_cont', query: () => 'filter[title_cont]=IN', expect: () => [pd.behind, pd.marketing] },
        { name: 'status_eq', query: () => 'filter[status_eq]=ready', expect: () => [pd.creator, pd.marketing] },
        { name: 'show_type_eq', query: () => 'filter[show_type_eq]=serial', expect: () => [pd.behind] },
      ],
      sparse: ['title', 'status', 'categories'],
      show: marketing,
      foreign: () => pd.foreign,
    });

    it('validates a middle page, where prev and next are strings, without adjustment', async () => {
      const res = await getJson(w, `/v1/podcasts?filter[site_id]=${w.siteId}&page[size]=1&page[number]=2`);
      const body = res.json();
      assert.equal(typeof body.links.prev, 'string');
      assert.equal(typeof body.links.next, 'string');
      assertUpstream({ ...UPSTREAM, adjust: seedOnly }, 'list', res);
      assert.deepEqual(body.meta, { total_pages: 4, total_count: 4, current_page: 2 });
    });

    it('shows a podcast with include=episodes in episode order', async () => {
      const res = await getJson(w, `/v1/podcasts/${pd.marketing}?include=episodes`);
      assertUpstream(UPSTREAM, 'show', res);
      const body = res.json();
      const self = selfUrl('podcasts', pd.marketing);
      assert.deepEqual(body.links, { self, current: `${self}?include=episodes` });
      assert.deepEqual(body.data, {
        ...marketing(),
        relationships: {
          site: { data: { type: 'sites', id: w.siteId } },
          episodes: { data: [ep.first, ep.second, ep.third].map((id) => ({ type: 'podcast_episodes', id })) },
        },
      });
      assertIncludedDistinct(body);
      assert.deepEqual(includedKeys(body), [ep.first, ep.second, ep.third].map((id) => `podcast_episodes:${id}`));
      assert.deepEqual(body.included[1], {
        id: ep.second,
        type: 'podcast_episodes',
        attributes: {
          title: 'Pricing',
          description: 'How to price',
          episode_number: 2,
          duration_seconds: 65,
          audio_url: 'https://cdn.example.com/ep2.mp3',
          published_at: '2026-04-02T06:00:00.000Z',
          created_at: '2026-04-01T06:00:00.000Z',
        },
        relationships: { podcast: { data: { type: 'podcasts', id: pd.marketing } } },
      });
      assert.equal(body.included[2].attributes.published_at, null);

      const none = await getJson(w, `/v1/podcasts/${pd.daily}?include=episodes`);
      assertUpstream(UPSTREAM, 'show', none);
      assert.deepEqual(none.json().data.relationships.episodes, { data: [] });
      assert.deepEqual(none.json().included, []);
    });

    it('lists podcasts with include=episodes, each episode under its own podcast', async () => {
      const res = await getJson(w, `/v1/podcasts?filter[site_id]=${w.siteId}&include=episodes&fields[podcast_episodes]=title`);
      assertUpstream(UPSTREAM, 'list', res);
      const body = res.json();
      const linkage = Object.fromEntries(
        body.data.map((d: { id: string; relationships: { episodes: { data: { id: string }[] } } }) => [d.id, d.relationships.episodes.data.map((e) => e.id)]),
      );
      assert.deepEqual(linkage, { [pd.behind]: [], [pd.creator]: [ep.other], [pd.daily]: [], [pd.marketing]: [ep.first, ep.second, ep.third] });
      assertIncludedDistinct(body);
      assert.deepEqual(
        body.included.map((r: { attributes: object }) => r.attributes),
        // One query for the edge, in episode order (then id) across podcasts.
        [{ title: 'Welcome' }, { title: 'Pilot' }, { title: 'Pricing' }, { title: 'Upcoming' }],
      );
    });

    it('renders no episodes linkage unless episodes are included', async () => {
      const res = await getJson(w, `/v1/podcasts/${pd.marketing}`);
      assert.deepEqual(Object.keys(res.json().data.relationships), ['site']);
    });
  });
}
