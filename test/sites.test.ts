// GET /v1/sites and GET /v1/sites/:id: document shape, paging and its links, sorting,
// filtering, sparse fieldsets and timestamp rendering.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSite } from '../src/domain/accounts.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from './support/harness.js';

type Res = Awaited<ReturnType<TestApp['request']>>;

const ids = (res: Res): string[] => res.json().data.map((s: { id: string }) => s.id);
const ISO_MILLIS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

for (const dialect of DIALECTS) {
  describe(`GET /v1/sites [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    // Created a minute apart (Charlie half a second later still), so created_at orders them.
    let test: string; // "Test Site", 12:00:00.000
    let bravo: string; // "Bravo Bakery", 12:01:00.000
    let alpha: string; // "Alpha Academy", 12:02:00.000
    let charlie: string; // "Charlie Crafts", 12:03:00.500
    let testSubdomain: string;
    let byTitle: string[];

    before(async () => {
      t = await createTestApp(dialect);
      test = String(t.tenant.siteId);
      const { accountId } = t.tenant;
      t.clock.advance(60);
      bravo = String(await createSite(t.handle, { accountId, title: 'Bravo Bakery', subdomain: 'bravo-bakery' }, t.clock));
      t.clock.advance(60);
      alpha = String(await createSite(t.handle, { accountId, title: 'Alpha Academy', subdomain: 'alpha-academy' }, t.clock));
      t.clock.advance(60.5);
      charlie = String(await createSite(t.handle, { accountId, title: 'Charlie Crafts', subdomain: 'charlie-crafts' }, t.clock));
      token = await t.token();
      byTitle = [alpha, bravo, charlie, test];
      testSubdomain = (await t.get(`/v1/sites/${test}`, token)).json().data.attributes.subdomain;
    });
    after(() => t.close());

    const list = async (query: string): Promise<Res> => {
      const res = await t.get(`/v1/sites${query === '' ? '' : `?${query}`}`, token);
      assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
      assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/);
      return res as Res;
    };

    it('lists sites as JSON:API resource objects with paging links and meta', async () => {
      const res = await list('');
      const body = res.json();
      assert.deepEqual(Object.keys(body).sort(), ['data', 'links', 'meta']);
      assert.deepEqual(ids(res), byTitle);
      assert.deepEqual(body.data[0], {
        id: alpha,
        type: 'sites',
        attributes: {
          title: 'Alpha Academy',
          subdomain: 'alpha-academy',
          created_at: '2026-06-01T12:02:00.000Z',
          updated_at: '2026-06-01T12:02:00.000Z',
        },
        links: { self: `${PUBLIC_URL}/v1/sites/${alpha}` },
      });
      assert.deepEqual(body.data[3], {
        id: test,
        type: 'sites',
        attributes: {
          title: 'Test Site',
          subdomain: testSubdomain,
          created_at: '2026-06-01T12:00:00.000Z',
          updated_at: '2026-06-01T12:00:00.000Z',
        },
        links: { self: `${PUBLIC_URL}/v1/sites/${test}` },
      });
      for (const site of body.data) {
        assert.equal(site.type, 'sites');
        assert.equal(typeof site.id, 'string');
        assert.deepEqual(Object.keys(site.attributes), ['title', 'subdomain', 'created_at', 'updated_at']);
        assert.equal(site.links.self, `http://sitebiz.test/v1/sites/${site.id}`);
      }
      const page = `${PUBLIC_URL}/v1/sites?page[number]=1&page[size]=25`;
      assert.deepEqual(body.links, { self: page, first: page, prev: null, next: null, last: page });
      assert.deepEqual(body.meta, { total_pages: 1, total_count: 4, current_page: 1 });
    });

    it('renders timestamps as ISO 8601 UTC with milliseconds and Z', async () => {
      const res = await list('sort=created_at');
      for (const site of res.json().data) {
        assert.match(site.attributes.created_at, ISO_MILLIS_UTC);
        assert.match(site.attributes.updated_at, ISO_MILLIS_UTC);
      }
      const shown = (await t.get(`/v1/sites/${charlie}`, token)).json();
      assert.equal(shown.data.attributes.created_at, '2026-06-01T12:03:00.500Z');
      assert.equal(shown.data.attributes.updated_at, '2026-06-01T12:03:00.500Z');
    });

    it('pages through every site with page[size]=1, without overlap or gap', async () => {
      const seen: string[] = [];
      for (let n = 1; n <= 4; n++) {
        const res = await list(`page[size]=1&page[number]=${n}`);
        const body = res.json();
        assert.deepEqual(ids(res), [byTitle[n - 1]], `page ${n}`);
        assert.deepEqual(body.meta, { total_pages: 4, total_count: 4, current_page: n });
        const at = (k: number) => `${PUBLIC_URL}/v1/sites?page[number]=${k}&page[size]=1`;
        assert.deepEqual(body.links, {
          self: at(n),
          first: at(1),
          prev: n > 1 ? at(n - 1) : null,
          next: n < 4 ? at(n + 1) : null,
          last: at(4),
        });
        seen.push(...ids(res));
      }
      assert.deepEqual(seen, byTitle);
      assert.equal(new Set(seen).size, 4);
    });

    it('pages with a size that does not divide the count', async () => {
      const first = await list('page[size]=3');
      assert.deepEqual(ids(first), [alpha, bravo, charlie]);
      assert.deepEqual(first.json().meta, { total_pages: 2, total_count: 4, current_page: 1 });
      assert.equal(first.json().links.next, `${PUBLIC_URL}/v1/sites?page[number]=2&page[size]=3`);
      const second = await list('page[number]=2&page[size]=3');
      assert.deepEqual(ids(second), [test]);
      assert.deepEqual(second.json().meta, { total_pages: 2, total_count: 4, current_page: 2 });
      assert.equal(second.json().links.next, null);
      assert.equal(second.json().links.prev, `${PUBLIC_URL}/v1/sites?page[number]=1&page[size]=3`);
    });

    it('answers a page past the end with no data, the true count and a prev link to the last page', async () => {
      const res = await list('page[number]=9&page[size]=2');
      const body = res.json();
      assert.deepEqual(body.data, []);
      assert.deepEqual(body.meta, { total_pages: 2, total_count: 4, current_page: 9 });
      assert.equal(body.links.self, `${PUBLIC_URL}/v1/sites?page[number]=9&page[size]=2`);
      assert.equal(body.links.prev, `${PUBLIC_URL}/v1/sites?page[number]=2&page[size]=2`);
      assert.equal(body.links.next, null);
      assert.equal(body.links.last, `${PUBLIC_URL}/v1/sites?page[number]=2&page[size]=2`);
    });

    it('keeps sort, fields and filters in every paging link, and the links can be followed', async () => {
      const res = await list('sort=-title&fields[sites]=title&page[size]=2&page[number]=1&filter[title_cont]=a');
      const body = res.json();
      // Every title holds an "a" except "Test Site".
      assert.deepEqual(ids(res), [charlie, bravo]);
      const at = (k: number) => `${PUBLIC_URL}/v1/sites?page[number]=${k}&page[size]=2&sort=-title&fields[sites]=title&filter[title_cont]=a`;
      assert.deepEqual(body.links, { self: at(1), first: at(1), prev: null, next: at(2), last: at(2) });
      assert.deepEqual(body.meta, { total_pages: 2, total_count: 3, current_page: 1 });

      const next = await t.get(body.links.next.slice(PUBLIC_URL.length), token);
      assert.equal(next.statusCode, 200);
      assert.deepEqual(ids(next as Res), [alpha]);
      assert.deepEqual(next.json().data[0].attributes, { title: 'Alpha Academy' });
      assert.deepEqual(next.json().links, { self: at(2), first: at(1), prev: at(1), next: null, last: at(2) });
    });

    it('encodes parameter values in links so that they survive a round trip', async () => {
      const res = await list('filter[search]=a%26b%20c%2Bd&fields[sites]=title,subdomain');
      const self: string = res.json().links.self;
      assert.equal(self, `${PUBLIC_URL}/v1/sites?page[number]=1&page[size]=25&filter[search]=a%26b%20c%2Bd&fields[sites]=title,subdomain`);
      const again = await t.get(self.slice(PUBLIC_URL.length), token);
      assert.equal(again.statusCode, 200);
      assert.equal(again.json().links.self, self);
    });

    it('sorts by title, -title, created_at, -created_at, subdomain and -subdomain', async () => {
      const cases: Array<[string, string[]]> = [
        ['title', [alpha, bravo, charlie, test]],
        ['-title', [test, charlie, bravo, alpha]],
        ['created_at', [test, bravo, alpha, charlie]],
        ['-created_at', [charlie, alpha, bravo, test]],
        ['updated_at', [test, bravo, alpha, charlie]],
        ['subdomain', [alpha, bravo, charlie, test]],
        ['-subdomain', [test, charlie, bravo, alpha]],
      ];
      for (const [sort, expected] of cases) {
        const res = await list(`sort=${sort}`);
        assert.deepEqual(ids(res), expected, sort);
        assert.equal(res.json().links.self, `${PUBLIC_URL}/v1/sites?page[number]=1&page[size]=25&sort=${sort}`);
      }
    });

    it('pages a descending sort with page[size]=1 in the same order as one page', async () => {
      const seen: string[] = [];
      for (let n = 1; n <= 4; n++) seen.push(...ids(await list(`sort=-created_at&page[size]=1&page[number]=${n}`)));
      assert.deepEqual(seen, [charlie, alpha, bravo, test]);
    });

    it('filters by title_cont and subdomain_cont, ignoring case', async () => {
      assert.deepEqual(ids(await list('filter[title_cont]=ACADEMY')), [alpha]);
      assert.deepEqual(ids(await list('filter[title_cont]=academy')), [alpha]);
      assert.deepEqual(ids(await list('filter[title_cont]=a')), [alpha, bravo, charlie]);
      assert.deepEqual(ids(await list('filter[subdomain_cont]=BAK')), [bravo]);
      assert.deepEqual(ids(await list('filter[subdomain_cont]=-crafts')), [charlie]);
      assert.deepEqual(ids(await list('filter[title_cont]=zzz')), []);
      const none = (await list('filter[title_cont]=zzz')).json();
      assert.deepEqual(none.meta, { total_pages: 0, total_count: 0, current_page: 1 });
      assert.equal(none.links.next, null);
      assert.equal(none.links.last, `${PUBLIC_URL}/v1/sites?page[number]=1&page[size]=25&filter[title_cont]=zzz`);
    });

    it('matches LIKE wildcards in filter text literally', async () => {
      assert.deepEqual(ids(await list('filter[title_cont]=%25')), []);
      assert.deepEqual(ids(await list('filter[title_cont]=_')), []);
      assert.deepEqual(ids(await list('filter[subdomain_cont]=_')), []);
      assert.deepEqual(ids(await list('filter[search]=%25')), []);
      assert.deepEqual(ids(await list('filter[title_cont]=%5C')), []);
    });

    it('filters by title_eq exactly, and by title_start and title_end', async () => {
      assert.deepEqual(ids(await list('filter[title_eq]=Bravo%20Bakery')), [bravo]);
      assert.deepEqual(ids(await list('filter[title_eq]=Bravo')), []);
      assert.deepEqual(ids(await list('filter[title_start]=bravo')), [bravo]);
      assert.deepEqual(ids(await list('filter[title_end]=SITE')), [test]);
      assert.deepEqual(ids(await list('filter[subdomain_eq]=alpha-academy')), [alpha]);
    });

    it('filters by search over title and subdomain', async () => {
      assert.deepEqual(ids(await list('filter[search]=charlie')), [charlie]);
      assert.deepEqual(ids(await list('filter[search]=BAKERY')), [bravo]);
      // "-crafts" is only in the subdomain (the title has a space).
      assert.deepEqual(ids(await list('filter[search]=-crafts')), [charlie]);
      assert.deepEqual(ids(await list('filter[search]=%20academy')), [alpha]);
      assert.deepEqual(ids(await list('filter[search]=nothing-like-this')), []);
    });

    it('filters by created_at with ISO 8601 dates and date-times', async () => {
      assert.deepEqual(ids(await list('filter[created_at_gt]=2026-06-01T12:01:00Z')), [alpha, charlie]);
      assert.deepEqual(ids(await list('filter[created_at_gt]=2026-06-01T12:01:00.000Z')), [alpha, charlie]);
      assert.deepEqual(ids(await list('filter[created_at_gte]=2026-06-01T12:01:00.000Z')), [alpha, bravo, charlie]);
      assert.deepEqual(ids(await list('filter[created_at_lt]=2026-06-01T12:01:00Z')), [test]);
      assert.deepEqual(ids(await list('filter[created_at_lte]=2026-06-01T12:01:00Z')), [bravo, test]);
      // An offset is honoured: 14:01+02:00 is 12:01Z.
      assert.deepEqual(ids(await list('filter[created_at_gt]=2026-06-01T14:01:00%2B02:00')), [alpha, charlie]);
      // Milliseconds count: Charlie was created at 12:03:00.500.
      assert.deepEqual(ids(await list('filter[created_at_gt]=2026-06-01T12:03:00.499Z')), [charlie]);
      assert.deepEqual(ids(await list('filter[created_at_gt]=2026-06-01T12:03:00.500Z')), []);
      // A date alone is midnight UTC.
      assert.deepEqual(ids(await list('filter[created_at_gt]=2026-06-01')), byTitle);
      assert.deepEqual(ids(await list('filter[created_at_gt]=2026-06-02')), []);
      assert.deepEqual(ids(await list('filter[updated_at_lt]=2026-06-01T12:02:00Z')), [bravo, test]);
    });

    it('combines filters with AND, together with a sort', async () => {
      const res = await list('filter[title_cont]=a&filter[created_at_lt]=2026-06-01T12:02:30Z&sort=-created_at');
      assert.deepEqual(ids(res), [alpha, bravo]);
    });

    it('returns only the requested fields with fields[sites]', async () => {
      const titleOnly = (await list('fields[sites]=title')).json();
      assert.deepEqual(titleOnly.data[0], {
        id: alpha,
        type: 'sites',
        attributes: { title: 'Alpha Academy' },
        links: { self: `${PUBLIC_URL}/v1/sites/${alpha}` },
      });
      for (const site of titleOnly.data) assert.deepEqual(Object.keys(site.attributes), ['title']);

      const two = (await list('fields[sites]=subdomain,created_at')).json();
      assert.deepEqual(two.data[0].attributes, { subdomain: 'alpha-academy', created_at: '2026-06-01T12:02:00.000Z' });

      const none = (await list('fields[sites]=')).json();
      for (const site of none.data) assert.deepEqual(site.attributes, {});
      assert.deepEqual(none.data.map((s: { id: string }) => s.id), byTitle);
    });

    it('sorts and filters on fields left out of the sparse fieldset', async () => {
      const res = await list('fields[sites]=subdomain&sort=-created_at&filter[title_cont]=a');
      assert.deepEqual(ids(res), [charlie, alpha, bravo]);
      assert.deepEqual(res.json().data[0].attributes, { subdomain: 'charlie-crafts' });
    });

    it('shows one site with links self and current', async () => {
      const res = await t.get(`/v1/sites/${bravo}`, token);
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/);
      assert.deepEqual(res.json(), {
        data: {
          id: bravo,
          type: 'sites',
          attributes: {
            title: 'Bravo Bakery',
            subdomain: 'bravo-bakery',
            created_at: '2026-06-01T12:01:00.000Z',
            updated_at: '2026-06-01T12:01:00.000Z',
          },
          links: { self: `${PUBLIC_URL}/v1/sites/${bravo}` },
        },
        links: { self: `${PUBLIC_URL}/v1/sites/${bravo}`, current: `${PUBLIC_URL}/v1/sites/${bravo}` },
      });
    });

    it('keeps the query string in links.current of a shown site, and applies fields[sites]', async () => {
      const res = await t.get(`/v1/sites/${alpha}?fields[sites]=title,subdomain`, token);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), {
        data: {
          id: alpha,
          type: 'sites',
          attributes: { title: 'Alpha Academy', subdomain: 'alpha-academy' },
          links: { self: `${PUBLIC_URL}/v1/sites/${alpha}` },
        },
        links: {
          self: `${PUBLIC_URL}/v1/sites/${alpha}`,
          current: `${PUBLIC_URL}/v1/sites/${alpha}?fields[sites]=title,subdomain`,
        },
      });
    });

    it('answers 400 for list-only parameters on a shown site', async () => {
      for (const [query, parameter] of [
        ['sort=title', 'sort'],
        ['page[size]=1', 'page[size]'],
        ['page[number]=1', 'page[number]'],
        ['filter[title_cont]=a', 'filter[title_cont]'],
      ]) {
        const res = await t.get(`/v1/sites/${alpha}?${query}`, token);
        assert.equal(res.statusCode, 400, query);
        assert.equal(res.json().errors[0].source.parameter, parameter, query);
      }
    });
  });

  describe(`GET /v1/sites with equal sort values [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let same: string[];

    before(async () => {
      t = await createTestApp(dialect);
      same = [];
      // Same title, same timestamps: only the id tells them apart.
      for (const subdomain of ['same-one', 'same-two', 'same-three', 'same-four', 'same-five']) {
        same.push(String(await createSite(t.handle, { accountId: t.tenant.accountId, title: 'Same', subdomain }, t.clock)));
      }
      token = await t.token();
    });
    after(() => t.close());

    const pages = async (query: string, count: number): Promise<string[]> => {
      const out: string[] = [];
      for (let n = 1; n <= count; n++) {
        const res = await t.get(`/v1/sites?filter[title_eq]=Same&page[size]=2&page[number]=${n}&${query}`, token);
        assert.equal(res.statusCode, 200, res.body);
        out.push(...res.json().data.map((s: { id: string }) => s.id));
      }
      return out;
    };

    it('breaks ties by id, in the direction of the sort, so pages neither overlap nor skip', async () => {
      const ascending = [...same].sort((a, b) => Number(a) - Number(b));
      assert.deepEqual(await pages('sort=title', 3), ascending);
      assert.deepEqual(await pages('sort=created_at', 3), ascending);
      assert.deepEqual(await pages('sort=-title', 3), [...ascending].reverse());
      assert.deepEqual(await pages('sort=-updated_at', 3), [...ascending].reverse());
    });
  });
}
