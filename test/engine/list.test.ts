// The generic list: paging, links, meta counts, sorting, predicate and named filters, on fixture
// resources and on every database. Expected ids come from the tables in fixtures.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DIALECTS, PUBLIC_URL } from '../support/harness.js';
import {
  createFixtureApp,
  getBadParameter,
  getOk,
  idsOf,
  insertSpecimens,
  path,
  type FixtureApp,
} from './fixtures.js';

/** Books in the default order (title ascending). */
const ALL_BY_TITLE = [2, 6, 4, 5, 3, 7, 1];

// [filter parameters, expected ids in default (title) order]
type FilterCase = [Record<string, string>, number[]];

const PREDICATE_CASES: FilterCase[] = [
  // string
  [{ 'filter[title_eq]': 'C Programming' }, [4]],
  [{ 'filter[title_eq]': 'c programming' }, []],
  [{ 'filter[title_not_eq]': 'C Programming' }, [2, 6, 5, 3, 7, 1]],
  [{ 'filter[title_cont]': 'pro' }, [4, 3]],
  [{ 'filter[title_cont]': 'PRO' }, [4, 3]],
  [{ 'filter[title_i_cont]': 'ENGINE' }, [2]],
  [{ 'filter[title_not_cont]': 'pro' }, [2, 6, 5, 7, 1]],
  [{ 'filter[title_start]': 'gr' }, [1]],
  [{ 'filter[title_start]': 'Data_' }, [5]],
  [{ 'filter[title_end]': 'S' }, [2, 6, 5, 3, 7]],
  [{ 'filter[title_in]': 'Graph Theory,C Programming,Nope' }, [4, 1]],
  [{ 'filter[title_not_in]': 'Graph Theory, C Programming' }, [2, 6, 5, 3, 7]],
  [{ 'filter[title_null]': 'true' }, []],
  [{ 'filter[title_null]': 'false' }, ALL_BY_TITLE],
  [{ 'filter[title_cont]': 's & B' }, [6]],
  // nullable string: null never matches a negative predicate
  [{ 'filter[subtitle_eq]': 'PROOFS for all' }, [3]],
  [{ 'filter[subtitle_not_eq]': 'Notes on Babbage' }, [4, 5, 3, 7]],
  [{ 'filter[subtitle_cont]': 'proofs' }, [3]],
  [{ 'filter[subtitle_not_cont]': '%' }, [2, 5, 3]],
  [{ 'filter[subtitle_start]': 'the' }, [4]],
  [{ 'filter[subtitle_end]': 'ALL' }, [3]],
  [{ 'filter[subtitle_in]': '50% off,with_underscores' }, [5, 7]],
  [{ 'filter[subtitle_not_in]': '50% off,with_underscores' }, [2, 4, 3]],
  [{ 'filter[subtitle_null]': 'true' }, [6, 1]],
  [{ 'filter[subtitle_null]': 'false' }, [2, 4, 5, 3, 7]],
  // LIKE wildcards in the value match literally (unescaped, each of these would match more)
  [{ 'filter[subtitle_cont]': '%' }, [4, 7]],
  [{ 'filter[subtitle_cont]': '0%' }, [4, 7]],
  [{ 'filter[subtitle_cont]': '%_' }, []],
  [{ 'filter[subtitle_cont]': '_' }, [5]],
  [{ 'filter[subtitle_cont]': 's_' }, []],
  [{ 'filter[subtitle_start]': '%' }, []],
  [{ 'filter[subtitle_end]': '%' }, []],
  [{ 'filter[title_cont]': '_' }, [5]],
  [{ 'filter[title_cont]': '\\' }, []],
  [{ 'filter[title_cont]': '\\%' }, []],
  // integer
  [{ 'filter[pages_eq]': '120' }, [2, 3]],
  [{ 'filter[pages_not_eq]': '120' }, [6, 4, 5, 7, 1]],
  [{ 'filter[pages_gt]': '272' }, [6, 5, 1]],
  [{ 'filter[pages_gte]': '272' }, [6, 4, 5, 1]],
  [{ 'filter[pages_gteq]': '272' }, [6, 4, 5, 1]],
  [{ 'filter[pages_lt]': '120' }, [7]],
  [{ 'filter[pages_lte]': '120' }, [2, 3, 7]],
  [{ 'filter[pages_lteq]': '120' }, [2, 3, 7]],
  [{ 'filter[pages_in]': '88, 500' }, [7, 1]],
  [{ 'filter[pages_not_in]': '88,500,120' }, [6, 4, 5]],
  [{ 'filter[pages_null]': 'false' }, ALL_BY_TITLE],
  [{ 'filter[pages_null]': 'true' }, []],
  [{ 'filter[pages_gt]': '-5' }, ALL_BY_TITLE],
  // number (numeric(10,2) column)
  [{ 'filter[price_eq]': '19.99' }, [2, 3]],
  [{ 'filter[price_not_eq]': '19.99' }, [6, 4, 5, 7, 1]],
  [{ 'filter[price_gt]': '42.5' }, [5, 1]],
  [{ 'filter[price_gte]': '42.5' }, [4, 5, 1]],
  [{ 'filter[price_gteq]': '42.50' }, [4, 5, 1]],
  [{ 'filter[price_lt]': '19.99' }, [7]],
  [{ 'filter[price_lte]': '19.99' }, [2, 3, 7]],
  [{ 'filter[price_lteq]': '35' }, [2, 6, 3, 7]],
  [{ 'filter[price_in]': '9.5,60' }, [7, 1]],
  [{ 'filter[price_not_in]': '9.5,60' }, [2, 6, 4, 5, 3]],
  [{ 'filter[price_null]': 'true' }, []],
  // boolean (0/1 on SQLite, true/false on PostgreSQL)
  [{ 'filter[in_print_eq]': 'true' }, [2, 4, 3]],
  [{ 'filter[in_print_eq]': 'TRUE' }, [2, 4, 3]],
  [{ 'filter[in_print_eq]': '1' }, [2, 4, 3]],
  [{ 'filter[in_print_eq]': 'false' }, [6, 7]],
  [{ 'filter[in_print_eq]': '0' }, [6, 7]],
  [{ 'filter[in_print_not_eq]': 'true' }, [6, 7]],
  [{ 'filter[in_print_not_eq]': 'false' }, [2, 4, 3]],
  [{ 'filter[in_print_null]': 'true' }, [5, 1]],
  [{ 'filter[in_print_null]': 'false' }, [2, 6, 4, 3, 7]],
  // datetime (text on SQLite, timestamptz on PostgreSQL); milliseconds count
  [{ 'filter[published_at_gt]': '2026-05-30T08:00:00.000Z' }, [7]],
  [{ 'filter[published_at_gte]': '2026-05-30T08:00:00.000Z' }, [2, 7]],
  [{ 'filter[published_at_gteq]': '2026-05-30T08:00:00Z' }, [2, 7]],
  [{ 'filter[published_at_lt]': '2025-01-15' }, [4]],
  [{ 'filter[published_at_lte]': '2025-01-15' }, [6, 4]],
  [{ 'filter[published_at_lteq]': '2025-01-15T00:00:00.000Z' }, [6, 4]],
  [{ 'filter[published_at_eq]': '2024-02-29T12:30:00.123Z' }, [4]],
  [{ 'filter[published_at_eq]': '2024-02-29T12:30:00.123' }, [4]],
  [{ 'filter[published_at_eq]': '2024-02-29T14:30:00.123+02:00' }, [4]],
  [{ 'filter[published_at_eq]': '2024-02-29 12:30:00.123Z' }, [4]],
  [{ 'filter[published_at_eq]': '2024-02-29T12:30:00.12Z' }, []],
  [{ 'filter[published_at_eq]': '2024-02-29T12:30:00Z' }, []],
  [{ 'filter[published_at_gt]': '2026-05-25T23:59:59.998Z' }, [2, 3, 7]],
  [{ 'filter[published_at_gt]': '2026-05-25T23:59:59.999Z' }, [2, 7]],
  [{ 'filter[published_at_not_eq]': '2026-05-30T08:00:00.000Z' }, [6, 4, 3, 7]],
  [{ 'filter[published_at_in]': '2025-01-15,2026-05-31T12:00:00Z' }, [6, 7]],
  [{ 'filter[published_at_not_in]': '2025-01-15' }, [2, 4, 3, 7]],
  [{ 'filter[published_at_null]': 'true' }, [5, 1]],
  [{ 'filter[published_at_null]': 'false' }, [2, 6, 4, 3, 7]],
  // json: only _null
  [{ 'filter[metadata_null]': 'true' }, [6, 5, 1]],
  [{ 'filter[metadata_null]': 'false' }, [2, 4, 3, 7]],
  // id
  [{ 'filter[author_id_eq]': '2' }, [6, 4]],
  [{ 'filter[author_id_not_eq]': '2' }, [2, 5, 3, 7]],
  [{ 'filter[author_id_in]': '1,3' }, [2, 5, 3, 7]],
  [{ 'filter[author_id_not_in]': '1' }, [6, 4, 5, 3]],
  [{ 'filter[author_id_null]': 'true' }, [1]],
  [{ 'filter[author_id_null]': 'false' }, [2, 6, 4, 5, 3, 7]],
  // an attribute stored in a column of another name
  [{ 'filter[code_eq]': 'CP-4' }, [4]],
  [{ 'filter[code_start]': 'd' }, [5]],
  // an attribute computed by SQL (a count of the book's chapters)
  [{ 'filter[chapter_count_eq]': '0' }, [6, 5, 7, 1]],
  [{ 'filter[chapter_count_gt]': '0' }, [2, 4, 3]],
  [{ 'filter[chapter_count_gte]': '2' }, [2, 4]],
  [{ 'filter[chapter_count_in]': '1,3' }, [4, 3]],
  [{ 'filter[chapter_count_not_in]': '0' }, [2, 4, 3]],
];

const NAMED_FILTER_CASES: FilterCase[] = [
  // string
  [{ 'filter[search]': 'proofs' }, [3]],
  [{ 'filter[search]': 'notes' }, [2]],
  [{ 'filter[search]': 'ENGINES' }, [2]],
  [{ 'filter[search]': '%' }, [4, 7]],
  // boolean
  [{ 'filter[available]': 'true' }, [2, 4, 3]],
  [{ 'filter[available]': 'false' }, [6, 7]],
  [{ 'filter[available]': '0' }, [6, 7]],
  // id
  [{ 'filter[author]': '3' }, [5, 3]],
  [{ 'filter[author]': '4' }, []],
  // ids
  [{ 'filter[authors]': '1,2' }, [2, 6, 4, 7]],
  [{ 'filter[authors]': '1, 3' }, [2, 5, 3, 7]],
  // days, counted back from the test clock (2026-06-01T12:00:00.000Z)
  [{ 'filter[published_within]': '2' }, [7]],
  [{ 'filter[published_within]': '3' }, [2, 7]],
  [{ 'filter[published_within]': '7' }, [2, 3, 7]],
  [{ 'filter[published_within]': '1000' }, [2, 6, 4, 3, 7]],
  // decimal
  [{ 'filter[min_price]': '42.50' }, [4, 5, 1]],
  [{ 'filter[min_price]': '42.51' }, [5, 1]],
  [{ 'filter[min_price]': '19.99' }, [2, 6, 4, 5, 3, 1]],
  [{ 'filter[min_price]': '60' }, [1]],
  // integer
  [{ 'filter[min_pages]': '300' }, [6, 5, 1]],
  [{ 'filter[min_pages]': '0' }, ALL_BY_TITLE],
  // strings
  [{ 'filter[codes]': 'AE-2,CP-4' }, [2, 4]],
  [{ 'filter[codes]': 'GT-1, nope' }, [1]],
  // date
  [{ 'filter[published_before]': '2025-01-15' }, [4]],
  [{ 'filter[published_before]': '2026-05-26T00:00:00+02:00' }, [6, 4]],
  [{ 'filter[published_before]': '2026-05-26T00:00:00Z' }, [6, 4, 3]],
];

const COMBINED_CASES: FilterCase[] = [
  [{ 'filter[pages_gte]': '120', 'filter[in_print_eq]': 'true', 'filter[title_cont]': 'o' }, [4, 3]],
  [{ 'filter[authors]': '1,2', 'filter[price_lt]': '30' }, [2, 7]],
  [{ 'filter[search]': 'proofs', 'filter[available]': 'false' }, []],
  [{ 'filter[published_at_gt]': '2026-05-25T23:59:59.998Z', 'filter[published_at_lt]': '2026-05-26' }, [3]],
  [{ 'filter[subtitle_null]': 'false', 'filter[metadata_null]': 'true', 'filter[author]': '3' }, [5]],
];

// [filter parameter, bad value]
const BAD_FILTER_VALUES: Array<[string, string]> = [
  ['filter[pages_eq]', 'abc'],
  ['filter[pages_gt]', '1.5'],
  ['filter[pages_in]', '1,x'],
  ['filter[pages_in]', ' , '],
  ['filter[price_gt]', 'cheap'],
  ['filter[price_lt]', ''],
  ['filter[price_lt]', 'Infinity'],
  ['filter[in_print_eq]', 'yes'],
  ['filter[published_at_gt]', 'yesterday'],
  ['filter[published_at_lt]', '2026-13-01'],
  ['filter[published_at_lt]', '2026-02-30'],
  ['filter[published_at_in]', '2026-01-01,soon'],
  ['filter[author_id_eq]', 'x'],
  ['filter[title_cont]', ''],
  ['filter[title_null]', 'maybe'],
  ['filter[search]', ''],
  ['filter[search]', '  '],
  ['filter[available]', 'maybe'],
  ['filter[author]', 'abc'],
  ['filter[authors]', '1,x'],
  ['filter[authors]', ''],
  ['filter[published_within]', '0'],
  ['filter[published_within]', 'x'],
  ['filter[min_price]', '1.234'],
  ['filter[min_price]', 'abc'],
  ['filter[min_pages]', '-1'],
  ['filter[min_pages]', 'x'],
  ['filter[codes]', ' , '],
  ['filter[published_before]', 'soon'],
  ['filter[published_before]', '2026-02-30'],
  ['filter[chapter_count_gt]', 'some'],
];

// Filters that do not exist: predicates a type does not take, computed attributes, unknown names.
const UNKNOWN_FILTERS = [
  'filter[metadata_eq]',
  'filter[in_print_gt]',
  'filter[author_id_cont]',
  'filter[label_eq]',
  'filter[title_zzz]',
  'filter[nope]',
  'filter[sku_code_eq]',
];

// [sort, ids]: every sortable type in both directions. Nulls sort last ascending and first
// descending; equal values fall back to id in the same direction.
const SORT_CASES: Array<[string, number[]]> = [
  ['title', [2, 6, 4, 5, 3, 7, 1]],
  ['-title', [1, 7, 3, 5, 4, 6, 2]],
  ['subtitle', [7, 2, 3, 4, 5, 1, 6]],
  ['-subtitle', [6, 1, 5, 4, 3, 2, 7]],
  ['pages', [7, 2, 3, 4, 6, 5, 1]],
  ['-pages', [1, 5, 6, 4, 3, 2, 7]],
  ['price', [7, 2, 3, 6, 4, 5, 1]],
  ['-price', [1, 5, 4, 6, 3, 2, 7]],
  ['in_print', [6, 7, 2, 3, 4, 1, 5]],
  ['-in_print', [5, 1, 4, 3, 2, 7, 6]],
  ['published_at', [4, 6, 3, 2, 7, 1, 5]],
  ['-published_at', [5, 1, 7, 2, 3, 6, 4]],
  ['code', [2, 6, 4, 5, 3, 7, 1]],
  ['-code', [1, 7, 3, 5, 4, 6, 2]],
  ['chapter_count', [1, 5, 6, 7, 3, 2, 4]],
  ['-chapter_count', [4, 2, 3, 7, 6, 5, 1]],
  ['id', [1, 2, 3, 4, 5, 6, 7]],
  ['-id', [7, 6, 5, 4, 3, 2, 1]],
];

const link = (query: string) => `${PUBLIC_URL}/v1/books?${query}`;

for (const dialect of DIALECTS) {
  describe(`engine: lists [${dialect}]`, () => {
    let t: FixtureApp;
    let token: string;
    before(async () => {
      t = await createFixtureApp(dialect);
      token = await t.token();
      await insertSpecimens(
        t.handle,
        t.tenant.siteId,
        Array.from({ length: 130 }, (_, i) => ({ id: i + 1, count: i + 1 })),
      );
    });
    after(() => t.close());

    const ids = async (params: Record<string, string | number>, base = '/v1/books') => idsOf(await getOk(t, path(base, params), token));
    const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

    describe('paging', () => {
      it('pages through with page[number] and page[size], with meta counts and links on every page', async () => {
        const p1 = await getOk(t, path('/v1/books', { sort: 'id', 'page[size]': 3 }), token);
        assert.deepEqual(idsOf(p1), [1, 2, 3]);
        assert.deepEqual(p1.meta, { total_pages: 3, total_count: 7, current_page: 1 });
        assert.deepEqual(p1.links, {
          self: link('page[number]=1&page[size]=3&sort=id'),
          first: link('page[number]=1&page[size]=3&sort=id'),
          prev: null,
          next: link('page[number]=2&page[size]=3&sort=id'),
          last: link('page[number]=3&page[size]=3&sort=id'),
        });

        const p2 = await getOk(t, path('/v1/books', { sort: 'id', 'page[size]': 3, 'page[number]': 2 }), token);
        assert.deepEqual(idsOf(p2), [4, 5, 6]);
        assert.deepEqual(p2.meta, { total_pages: 3, total_count: 7, current_page: 2 });
        assert.equal(p2.links.prev, link('page[number]=1&page[size]=3&sort=id'));
        assert.equal(p2.links.next, link('page[number]=3&page[size]=3&sort=id'));

        // A short last page: the count comes from the page itself and must still be right.
        const p3 = await getOk(t, path('/v1/books', { sort: 'id', 'page[size]': 3, 'page[number]': 3 }), token);
        assert.deepEqual(idsOf(p3), [7]);
        assert.deepEqual(p3.meta, { total_pages: 3, total_count: 7, current_page: 3 });
        assert.equal(p3.links.prev, link('page[number]=2&page[size]=3&sort=id'));
        assert.equal(p3.links.next, null);
        assert.equal(p3.links.self, link('page[number]=3&page[size]=3&sort=id'));
      });

      it('answers an empty page past the end with the true counts, prev pointing at the last page', async () => {
        const p4 = await getOk(t, path('/v1/books', { sort: 'id', 'page[size]': 3, 'page[number]': 4 }), token);
        assert.deepEqual(p4.data, []);
        assert.deepEqual(p4.meta, { total_pages: 3, total_count: 7, current_page: 4 });
        assert.equal(p4.links.prev, link('page[number]=3&page[size]=3&sort=id'));
        assert.equal(p4.links.next, null);
        assert.equal(p4.links.last, link('page[number]=3&page[size]=3&sort=id'));

        const p9 = await getOk(t, path('/v1/books', { sort: 'id', 'page[size]': 3, 'page[number]': 9 }), token);
        assert.deepEqual(p9.data, []);
        assert.equal(p9.meta.total_count, 7);
        assert.equal(p9.links.prev, link('page[number]=3&page[size]=3&sort=id'));
      });

      it('counts a full single page exactly (the page alone cannot tell whether more follow)', async () => {
        const full = await getOk(t, path('/v1/books', { sort: 'id', 'page[size]': 7 }), token);
        assert.deepEqual(idsOf(full), [1, 2, 3, 4, 5, 6, 7]);
        assert.deepEqual(full.meta, { total_pages: 1, total_count: 7, current_page: 1 });
        assert.equal(full.links.next, null);
        assert.equal(full.links.last, link('page[number]=1&page[size]=7&sort=id'));
      });

      it('counts filtered lists, on full, short and empty pages', async () => {
        const p1 = await getOk(t, path('/v1/books', { 'filter[in_print_eq]': 'true', 'page[size]': 2 }), token);
        assert.deepEqual(idsOf(p1), [2, 4]);
        assert.deepEqual(p1.meta, { total_pages: 2, total_count: 3, current_page: 1 });
        assert.equal(p1.links.next, link('page[number]=2&page[size]=2&filter[in_print_eq]=true'));
        const p2 = await getOk(t, path('/v1/books', { 'filter[in_print_eq]': 'true', 'page[size]': 2, 'page[number]': 2 }), token);
        assert.deepEqual(idsOf(p2), [3]);
        assert.deepEqual(p2.meta, { total_pages: 2, total_count: 3, current_page: 2 });
        const p3 = await getOk(t, path('/v1/books', { 'filter[in_print_eq]': 'true', 'page[size]': 2, 'page[number]': 3 }), token);
        assert.deepEqual(p3.data, []);
        assert.deepEqual(p3.meta, { total_pages: 2, total_count: 3, current_page: 3 });
        const full = await getOk(t, path('/v1/books', { 'filter[in_print_eq]': 'true', 'page[size]': 3 }), token);
        assert.deepEqual(idsOf(full), [2, 4, 3]);
        assert.deepEqual(full.meta, { total_pages: 1, total_count: 3, current_page: 1 });
      });

      it('answers a list with no match: no pages, one-page links', async () => {
        const none = await getOk(t, path('/v1/books', { 'filter[pages_gt]': 1000 }), token);
        assert.deepEqual(none.data, []);
        assert.deepEqual(none.meta, { total_pages: 0, total_count: 0, current_page: 1 });
        assert.deepEqual(none.links, {
          self: link('page[number]=1&page[size]=25&filter[pages_gt]=1000'),
          first: link('page[number]=1&page[size]=25&filter[pages_gt]=1000'),
          prev: null,
          next: null,
          last: link('page[number]=1&page[size]=25&filter[pages_gt]=1000'),
        });
        const second = await getOk(t, path('/v1/books', { 'filter[pages_gt]': 1000, 'page[number]': 2 }), token);
        assert.deepEqual(second.data, []);
        assert.deepEqual(second.meta, { total_pages: 0, total_count: 0, current_page: 2 });
        assert.equal(second.links.prev, link('page[number]=1&page[size]=25&filter[pages_gt]=1000'));
        assert.equal(second.links.next, null);
      });

      it('defaults to 25 records a page and serves at most 100', async () => {
        const byDefault = await getOk(t, '/v1/specimens', token);
        assert.deepEqual(idsOf(byDefault), range(1, 25));
        assert.deepEqual(byDefault.meta, { total_pages: 6, total_count: 130, current_page: 1 });
        assert.equal(byDefault.links.last, `${PUBLIC_URL}/v1/specimens?page[number]=6&page[size]=25`);
        const sixth = await getOk(t, '/v1/specimens?page[number]=6', token);
        assert.deepEqual(idsOf(sixth), range(126, 130));

        const max = await getOk(t, '/v1/specimens?page[size]=100', token);
        assert.deepEqual(idsOf(max), range(1, 100));
        assert.deepEqual(max.meta, { total_pages: 2, total_count: 130, current_page: 1 });
        const rest = await getOk(t, '/v1/specimens?page[size]=100&page[number]=2', token);
        assert.deepEqual(idsOf(rest), range(101, 130));
        assert.deepEqual(rest.meta, { total_pages: 2, total_count: 130, current_page: 2 });
      });

      it('serves a page[size] above 100 as pages of 100, and its links say 100 (docs/paging.md)', async () => {
        // A published client of the upstream API walks contacts with page[size]=500.
        const first = await getOk(t, '/v1/specimens?page[size]=500', token);
        assert.deepEqual(idsOf(first), range(1, 100));
        assert.deepEqual(first.meta, { total_pages: 2, total_count: 130, current_page: 1 });
        assert.equal(first.links.self, `${PUBLIC_URL}/v1/specimens?page[number]=1&page[size]=100`);
        assert.equal(first.links.next, `${PUBLIC_URL}/v1/specimens?page[number]=2&page[size]=100`);
        const second = await getOk(t, '/v1/specimens?page[number]=2&page[size]=101', token);
        assert.deepEqual(idsOf(second), range(101, 130));

        const cursor = await getOk(t, '/v1/specimens?page[after]=&page[size]=1000000000', token);
        assert.deepEqual(idsOf(cursor), range(1, 100));
        assert.equal(cursor.links.self, `${PUBLIC_URL}/v1/specimens?page[after]=&page[size]=100`);
        assert.match(cursor.links.next ?? '', /page\[size\]=100(&|$)/);
        const rest = await getOk(t, cursor.links.next!.slice(PUBLIC_URL.length), token);
        assert.deepEqual(idsOf(rest), range(101, 130));
      });

      for (const [query, parameter] of [
        ['page[size]=0', 'page[size]'],
        ['page[size]=-1', 'page[size]'],
        ['page[size]=abc', 'page[size]'],
        ['page[size]=1.5', 'page[size]'],
        ['page[size]=', 'page[size]'],
        ['page[number]=0', 'page[number]'],
        ['page[number]=-1', 'page[number]'],
        ['page[number]=two', 'page[number]'],
        ['page[offset]=10', 'page[offset]'],
        ['page[size]=10&page[size]=20', 'page[size]'],
      ] as const) {
        it(`rejects ${query} with a 400 naming ${parameter}`, async () => {
          await getBadParameter(t, `/v1/specimens?${query}`, token, parameter);
        });
      }

      it('follows next links through every page without overlap or gap, even across equal sort values', async () => {
        for (const [sort, expected] of [
          ['pages', [7, 2, 3, 4, 6, 5, 1]],
          ['-price', [1, 5, 4, 6, 3, 2, 7]],
          ['in_print', [6, 7, 2, 3, 4, 1, 5]],
          ['-published_at', [5, 1, 7, 2, 3, 6, 4]],
        ] as const) {
          const seen: number[] = [];
          let next: string | null = path('/v1/books', { sort, 'page[size]': 2 });
          let pages = 0;
          while (next !== null) {
            const doc = await getOk(t, next.replace(PUBLIC_URL, ''), token);
            seen.push(...idsOf(doc));
            next = doc.links.next;
            pages += 1;
          }
          assert.deepEqual(seen, expected, `sort=${sort}`);
          assert.equal(pages, 4, `sort=${sort}`);
        }
      });
    });

    describe('links', () => {
      it('are full URLs that keep every other parameter, page parameters first', async () => {
        const doc = await getOk(
          t,
          '/v1/books?sort=-pages&filter[title_cont]=n&include=author&fields[books]=title,pages&page[size]=2&page[number]=2',
          token,
        );
        assert.deepEqual(idsOf(doc), [2, 7]);
        const rest = 'sort=-pages&filter[title_cont]=n&include=author&fields[books]=title,pages';
        assert.deepEqual(doc.links, {
          self: link(`page[number]=2&page[size]=2&${rest}`),
          first: link(`page[number]=1&page[size]=2&${rest}`),
          prev: link(`page[number]=1&page[size]=2&${rest}`),
          next: null,
          last: link(`page[number]=2&page[size]=2&${rest}`),
        });
        const first = await getOk(t, doc.links.first.replace(PUBLIC_URL, ''), token);
        assert.deepEqual(idsOf(first), [4, 3]);
        assert.equal(first.links.next, doc.links.self);
      });

      it('percent-encode values that need it and still lead back to the same records', async () => {
        const doc = await getOk(t, path('/v1/books', { 'filter[title_cont]': 's & B', 'fields[books]': 'title' }), token);
        assert.deepEqual(idsOf(doc), [6]);
        assert.equal(doc.links.self, link('page[number]=1&page[size]=25&filter[title_cont]=s%20%26%20B&fields[books]=title'));
        const again = await getOk(t, doc.links.self.replace(PUBLIC_URL, ''), token);
        assert.deepEqual(idsOf(again), [6]);
        assert.deepEqual(again.data[0].attributes, { title: 'Bits & Bytes' });

        const percent = await getOk(t, path('/v1/books', { 'filter[subtitle_cont]': '0%' }), token);
        assert.equal(percent.links.self, link('page[number]=1&page[size]=25&filter[subtitle_cont]=0%25'));
        assert.deepEqual(idsOf(await getOk(t, percent.links.self.replace(PUBLIC_URL, ''), token)), [4, 7]);
      });
    });

    describe('sorting', () => {
      it('sorts by the default sort (title) when the request has none', async () => {
        assert.deepEqual(await ids({}), ALL_BY_TITLE);
      });

      for (const [sort, expected] of SORT_CASES) {
        it(`sort=${sort}`, async () => {
          assert.deepEqual(await ids({ sort }), expected);
        });
      }

      it('puts nulls last ascending and first descending on a nullable string of another resource', async () => {
        assert.deepEqual(await ids({ sort: 'email' }, '/v1/authors'), [1, 3, 2, 4]);
        assert.deepEqual(await ids({ sort: '-email' }, '/v1/authors'), [4, 2, 3, 1]);
      });

      it('rejects unknown, unsortable, computed and multiple sort keys with a 400 naming sort', async () => {
        for (const sort of ['nope', 'metadata', 'author_id', 'label', 'sku_code', 'title,pages', '--title', '']) {
          await getBadParameter(t, path('/v1/books', { sort }), token, 'sort');
        }
      });
    });

    describe('predicate filters', () => {
      for (const [params, expected] of PREDICATE_CASES) {
        const [[key, value]] = Object.entries(params) as [[string, string]];
        it(`${key}=${value}`, async () => {
          assert.deepEqual(await ids(params), expected);
        });
      }
    });

    describe('named filters', () => {
      for (const [params, expected] of NAMED_FILTER_CASES) {
        const [[key, value]] = Object.entries(params) as [[string, string]];
        it(`${key}=${value}`, async () => {
          assert.deepEqual(await ids(params), expected);
        });
      }
    });

    describe('combined filters', () => {
      for (const [params, expected] of COMBINED_CASES) {
        it(`AND of ${Object.keys(params).join(', ')}`, async () => {
          assert.deepEqual(await ids(params), expected);
        });
      }

      it('take a list filter as a repeated filter[name][] too', async () => {
        assert.deepEqual(idsOf(await getOk(t, '/v1/books?filter[codes][]=AE-2&filter[codes][]=CP-4', token)), [2, 4]);
        assert.deepEqual(idsOf(await getOk(t, '/v1/books?filter[pages_in][]=88&filter[pages_in][]=500', token)), [7, 1]);
        await getBadParameter(t, '/v1/books?filter[codes]=AE-2&filter[codes][]=CP-4', token, 'filter[codes][]');
      });

      it('combine with sort and paging', async () => {
        const doc = await getOk(t, path('/v1/books', { 'filter[pages_gte]': 120, 'filter[in_print_null]': 'false', sort: '-price', 'page[size]': 2 }), token);
        assert.deepEqual(idsOf(doc), [4, 6]);
        assert.deepEqual(doc.meta, { total_pages: 2, total_count: 4, current_page: 1 });
        const next = await getOk(t, doc.links.next.replace(PUBLIC_URL, ''), token);
        assert.deepEqual(idsOf(next), [3, 2]);
      });
    });

    describe('bad filters', () => {
      for (const [parameter, value] of BAD_FILTER_VALUES) {
        it(`rejects ${parameter}=${JSON.stringify(value)} with a 400 naming it`, async () => {
          const error = await getBadParameter(t, path('/v1/books', { [parameter]: value }), token, parameter);
          assert.equal(error.code, 'invalid_parameter');
          assert.equal(error.status, '400');
        });
      }

      for (const parameter of UNKNOWN_FILTERS) {
        it(`rejects the unknown ${parameter} with a 400 naming it`, async () => {
          const error = await getBadParameter(t, path('/v1/books', { [parameter]: '1' }), token, parameter);
          assert.match(error.detail, /Unknown filter/);
        });
      }

      it('reports a bad value even when the other filters are good', async () => {
        await getBadParameter(t, path('/v1/books', { 'filter[title_cont]': 'o', 'filter[pages_gt]': 'many' }), token, 'filter[pages_gt]');
      });

      it('rejects a repeated filter', async () => {
        await getBadParameter(t, '/v1/books?filter[pages_gt]=1&filter[pages_gt]=2', token, 'filter[pages_gt]');
      });
    });

    describe('site scope', () => {
      it('honours filter[site_id] for the tenant’s site and hides every other site', async () => {
        assert.deepEqual(await ids({ 'filter[site_id]': t.tenant.siteId }), ALL_BY_TITLE);
        const res = await t.get(path('/v1/books', { 'filter[site_id]': t.otherSiteId }), token);
        assert.equal(res.statusCode, 404);
        assert.equal(res.json().errors[0].source.parameter, 'filter[site_id]');
        // Another tenant's book matches this filter by every column but its site.
        assert.deepEqual(await ids({ 'filter[title_start]': 'Al' }), []);
        assert.deepEqual(await ids({ 'filter[pages_eq]': 120, sort: 'id' }), [2, 3]);
      });

      it('requires filter[site_id] of a resource that says so, and then lists that site only', async () => {
        await getBadParameter(t, '/v1/covers', token, 'filter[site_id]');
        assert.deepEqual(await ids({ 'filter[site_id]': t.tenant.siteId }, '/v1/covers'), [1, 2]);
      });
    });
  });

  describe(`engine: IGNORE_UNKNOWN_FILTERS=true [${dialect}]`, () => {
    let t: FixtureApp;
    let token: string;
    before(async () => {
      t = await createFixtureApp(dialect, { IGNORE_UNKNOWN_FILTERS: 'true' });
      token = await t.token();
    });
    after(() => t.close());

    it('ignores unknown filters but still rejects bad values of known ones', async () => {
      const doc = await getOk(t, path('/v1/books', { 'filter[nope]': 'x', 'filter[metadata_eq]': '1', 'filter[author]': 2 }), token);
      assert.deepEqual(idsOf(doc), [6, 4]);
      await getBadParameter(t, path('/v1/books', { 'filter[nope]': 'x', 'filter[author]': 'two' }), token, 'filter[author]');
    });
  });
}
