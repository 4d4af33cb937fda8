// Includes, linkage, sparse fieldsets, include permissions and tenancy, and the query bound (one
// query per include edge whatever the page size), on fixture resources and on every database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DIALECTS } from '../support/harness.js';
import {
  createFixtureApp,
  FIXTURE_TABLES,
  getBadParameter,
  getOk,
  idsOf,
  includedKeys,
  path,
  type FixtureApp,
  type Json,
} from './fixtures.js';

/** Relationship linkage of each primary record, as `id → [ids]` or `id → id|null`. */
function linkage(doc: Json, relationship: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const r of doc.data as Json[]) {
    const data = r.relationships?.[relationship]?.data;
    out[r.id] = data === undefined ? 'absent' : Array.isArray(data) ? data.map((d: Json) => d.id) : data === null ? null : data.id;
  }
  return out;
}

function included(doc: Json, type: string, id: string): Json {
  const found = (doc.included as Json[]).find((r) => r.type === type && r.id === id);
  assert.ok(found, `${type}:${id} is not included`);
  return found;
}

const FIXTURE_TABLE = new RegExp(`"(?:${FIXTURE_TABLES.join('|')})"`);

for (const dialect of DIALECTS) {
  describe(`engine: includes [${dialect}]`, () => {
    let t: FixtureApp;
    let token: string;
    before(async () => {
      t = await createFixtureApp(dialect);
      token = await t.token();
    });
    after(() => t.close());

    describe('relationship kinds', () => {
      it('to-one: linkage from the key, the related records included once each', async () => {
        const doc = await getOk(t, '/v1/books?include=author&sort=id', token);
        assert.deepEqual(linkage(doc, 'author'), { 1: null, 2: '1', 3: '3', 4: '2', 5: '3', 6: '2', 7: '1' });
        assert.deepEqual(includedKeys(doc), ['authors:1', 'authors:2', 'authors:3']);
        const ada = included(doc, 'authors', '1');
        assert.deepEqual(ada.attributes, { name: 'Ada Lovelace', email: 'ada@example.com', created_at: '2026-01-01T00:00:00.000Z' });
        assert.equal(ada.links.self, 'http://sitebiz.test/v1/authors/1');
        assert.deepEqual(included(doc, 'authors', '2').attributes.email, null);
      });

      it('to-many by foreign key: linkage in the target’s default order, records of other sites left out', async () => {
        const doc = await getOk(t, '/v1/authors?include=books', token);
        assert.deepEqual(idsOf(doc), [1, 2, 3, 4]);
        // Book 101 (another site) names author 1 as well.
        assert.deepEqual(linkage(doc, 'books'), { 1: ['2', '7'], 2: ['6', '4'], 3: ['5', '3'], 4: [] });
        assert.deepEqual(includedKeys(doc), ['books:2', 'books:3', 'books:4', 'books:5', 'books:6', 'books:7']);
        assert.equal(included(doc, 'books', '4').attributes.title, 'C Programming');
      });

      it('to-many with a condition: only the related records that meet it', async () => {
        const doc = await getOk(t, '/v1/authors?include=short_books', token);
        assert.deepEqual(linkage(doc, 'short_books'), { 1: ['2', '7'], 2: [], 3: ['3'], 4: [] });
        assert.deepEqual(linkage(doc, 'books'), { 1: ['2', '7'], 2: ['6', '4'], 3: ['5', '3'], 4: [] });
        assert.deepEqual(includedKeys(doc), ['books:2', 'books:3', 'books:7']);
        const plain = await getOk(t, '/v1/authors', token);
        assert.deepEqual(linkage(plain, 'short_books'), linkage(doc, 'short_books'));
      });

      it('to-one with a resource link: the related record’s URL in the object’s links', async () => {
        const doc = await getOk(t, '/v1/books?include=chapters&sort=id&filter[author]=1', token);
        assert.deepEqual(included(doc, 'chapters', '1').links, {
          book: 'http://sitebiz.test/v1/books/2',
          self: 'http://sitebiz.test/v1/chapters/1',
        });
        const chapters = await getOk(t, '/v1/chapters?sort=id&page[size]=1', token);
        assert.deepEqual(chapters.data[0].links, { book: 'http://sitebiz.test/v1/books/2', self: 'http://sitebiz.test/v1/chapters/1' });
      });

      it('to-many through a join table: each related record once, however many parents share it', async () => {
        const doc = await getOk(t, '/v1/books?include=genres&sort=id', token);
        // Genres in name order: Computing (2), History (3), Mathematics (1); genre 101 is another site's.
        assert.deepEqual(linkage(doc, 'genres'), { 1: [], 2: ['2', '3'], 3: ['2', '1'], 4: ['2'], 5: ['2'], 6: [], 7: [] });
        assert.deepEqual(includedKeys(doc), ['genres:1', 'genres:2', 'genres:3']);
        assert.deepEqual(included(doc, 'genres', '2').attributes, { name: 'Computing' });
        assert.equal(doc.data[1].relationships.genres.links.self, 'http://sitebiz.test/v1/books/2/relationships/genres');
      });

      it('to-many through a join table keyed by a text column of the parent', async () => {
        const doc = await getOk(t, '/v1/books?include=awards&sort=id', token);
        assert.deepEqual(linkage(doc, 'awards'), { 1: [], 2: ['1', '2'], 3: [], 4: ['2'], 5: [], 6: [], 7: [] });
        assert.deepEqual(includedKeys(doc), ['awards:1', 'awards:2']);
        const plain = await getOk(t, '/v1/books?sort=id', token);
        assert.deepEqual(linkage(plain, 'awards'), linkage(doc, 'awards'));
      });

      it('has-one: linkage from the target’s key, included or not', async () => {
        const doc = await getOk(t, '/v1/books?include=cover&sort=id', token);
        // Book 3's only cover belongs to another site.
        assert.deepEqual(linkage(doc, 'cover'), { 1: null, 2: '1', 3: null, 4: '2', 5: null, 6: null, 7: null });
        assert.deepEqual(includedKeys(doc), ['covers:1', 'covers:2']);
        assert.deepEqual(included(doc, 'covers', '2').attributes, { url: 'https://img.example/cp.png' });
        const plain = await getOk(t, '/v1/books?sort=id', token);
        assert.deepEqual(linkage(plain, 'cover'), linkage(doc, 'cover'));
        assert.equal(plain.included, undefined);
      });

      it('renders to-many linkage of the primary records without include, and no included member', async () => {
        const doc = await getOk(t, '/v1/books?sort=id', token);
        assert.deepEqual(linkage(doc, 'chapters'), { 1: [], 2: ['2', '1'], 3: ['6'], 4: ['3', '5', '4'], 5: [], 6: [], 7: [] });
        assert.deepEqual(linkage(doc, 'genres'), { 1: [], 2: ['2', '3'], 3: ['2', '1'], 4: ['2'], 5: ['2'], 6: [], 7: [] });
        assert.equal(doc.included, undefined);
        const empty = await getOk(t, '/v1/books?sort=id&include=', token);
        assert.equal(empty.included, undefined);
      });
    });

    describe('nested paths', () => {
      it('books?include=chapters.notes: both levels, linkage on the included chapters', async () => {
        const doc = await getOk(t, '/v1/books?include=chapters.notes&sort=id', token);
        assert.deepEqual(linkage(doc, 'chapters'), { 1: [], 2: ['2', '1'], 3: ['6'], 4: ['3', '5', '4'], 5: [], 6: [], 7: [] });
        assert.deepEqual(includedKeys(doc), [
          'chapters:1', 'chapters:2', 'chapters:3', 'chapters:4', 'chapters:5', 'chapters:6',
          'notes:1', 'notes:2', 'notes:3', 'notes:4', 'notes:5',
        ]);
        const notesOf = (id: string) => included(doc, 'chapters', id).relationships.notes.data.map((d: Json) => d.id);
        assert.deepEqual(['1', '2', '3', '4', '5', '6'].map(notesOf), [['5'], ['1', '2'], ['3'], [], [], ['4']]);
        assert.deepEqual(included(doc, 'chapters', '3').relationships.book.data, { type: 'books', id: '4' });
        assert.deepEqual(included(doc, 'chapters', '2').attributes, { title: 'First', position: 1 });
        assert.deepEqual(included(doc, 'notes', '3').attributes, { body: 'Intro note' });
      });

      it('authors?include=books.chapters and three levels deep', async () => {
        const two = await getOk(t, '/v1/authors?include=books.chapters', token);
        assert.deepEqual(includedKeys(two), [
          'books:2', 'books:3', 'books:4', 'books:5', 'books:6', 'books:7',
          'chapters:1', 'chapters:2', 'chapters:3', 'chapters:4', 'chapters:5', 'chapters:6',
        ]);
        assert.deepEqual(included(two, 'books', '4').relationships.chapters.data.map((d: Json) => d.id), ['3', '5', '4']);
        const three = await getOk(t, '/v1/authors?include=books.chapters.notes&filter[name_eq]=Brian%20Kernighan', token);
        assert.deepEqual(idsOf(three), [2]);
        assert.deepEqual(includedKeys(three), [
          'books:4', 'books:6', 'chapters:3', 'chapters:4', 'chapters:5', 'notes:3',
        ]);
        await getBadParameter(t, '/v1/authors?include=books.chapters.notes.chapter', token, 'include');
      });

      it('chapters?include=notes,book: the book of another site is not included', async () => {
        const doc = await getOk(t, '/v1/chapters?include=notes,book&sort=id', token);
        assert.deepEqual(idsOf(doc), [1, 2, 3, 4, 5, 6, 7]);
        assert.deepEqual(linkage(doc, 'notes'), { 1: ['5'], 2: ['1', '2'], 3: ['3'], 4: [], 5: [], 6: ['4'], 7: [] });
        assert.deepEqual(includedKeys(doc), ['books:2', 'books:3', 'books:4', 'notes:1', 'notes:2', 'notes:3', 'notes:4', 'notes:5']);
      });

      it('merges repeated and overlapping paths', async () => {
        const doc = await getOk(t, '/v1/books?include=chapters,chapters.notes,chapters&sort=id&filter[author]=1', token);
        assert.deepEqual(idsOf(doc), [2, 7]);
        assert.deepEqual(includedKeys(doc), ['chapters:1', 'chapters:2', 'notes:1', 'notes:2', 'notes:5']);
      });
    });

    describe('the included member', () => {
      it('never repeats primary data, but includes the related records that are not primary', async () => {
        const doc = await getOk(t, '/v1/books?include=author.books&sort=id&page[size]=2', token);
        assert.deepEqual(idsOf(doc), [1, 2]);
        // Author 1 wrote books 2 (primary) and 7 (not on this page).
        assert.deepEqual(includedKeys(doc), ['authors:1', 'books:7']);
        assert.deepEqual(included(doc, 'authors', '1').relationships.books.data, [
          { type: 'books', id: '2' },
          { type: 'books', id: '7' },
        ]);
      });

      it('leaves out records reached back from the primary data', async () => {
        const authors = await getOk(t, '/v1/authors?include=books.author', token);
        assert.deepEqual(includedKeys(authors), ['books:2', 'books:3', 'books:4', 'books:5', 'books:6', 'books:7']);
        const genres = await getOk(t, '/v1/genres?include=books.genres', token);
        assert.deepEqual(idsOf(genres), [2, 3, 1]);
        assert.deepEqual(linkage(genres, 'books'), { 2: ['2', '4', '5', '3'], 3: ['2'], 1: ['3'] });
        assert.deepEqual(includedKeys(genres), ['books:2', 'books:3', 'books:4', 'books:5']);
      });

      it('holds no duplicates', async () => {
        for (const url of [
          '/v1/books?include=author,genres,chapters.notes,chapters.book.author,cover,awards',
          '/v1/genres?include=books.author,books.genres',
          '/v1/notes?include=chapter.book.chapters',
        ]) {
          const doc = await getOk(t, url, token);
          const keys = includedKeys(doc);
          assert.ok(keys.length > 0, url);
          assert.equal(new Set(keys).size, keys.length, `${url}: ${keys.join(' ')}`);
          const primary = new Set((doc.data as Json[]).map((r) => `${r.type}:${r.id}`));
          assert.deepEqual(keys.filter((k) => primary.has(k)), [], url);
        }
      });
    });

    describe('sparse fieldsets', () => {
      it('narrow the attributes of primary and included types; relationships stay', async () => {
        const doc = await getOk(
          t,
          '/v1/books?include=author,chapters&fields[books]=title,label&fields[authors]=name&fields[chapters]=position&sort=id&page[size]=2',
          token,
        );
        assert.deepEqual(doc.data[0].attributes, { title: 'Graph Theory', label: 'Graph Theory (500 pages)' });
        assert.deepEqual(doc.data[1].attributes, { title: 'Analytical Engines', label: 'Analytical Engines (120 pages)' });
        assert.deepEqual(Object.keys(doc.data[1].relationships).sort(), ['author', 'awards', 'chapters', 'cover', 'genres']);
        assert.deepEqual(doc.data[1].relationships.author.data, { type: 'authors', id: '1' });
        assert.deepEqual(linkage(doc, 'chapters'), { 1: [], 2: ['2', '1'] });
        assert.deepEqual(included(doc, 'authors', '1').attributes, { name: 'Ada Lovelace' });
        assert.deepEqual(included(doc, 'chapters', '1').attributes, { position: 2 });
        assert.deepEqual(included(doc, 'chapters', '1').relationships.book.data, { type: 'books', id: '2' });
      });

      it('apply to SQL-computed attributes and may name no attribute at all', async () => {
        const counted = await getOk(t, '/v1/books?fields[books]=chapter_count&sort=id', token);
        assert.deepEqual((counted.data as Json[]).map((r) => r.attributes), [
          { chapter_count: 0 },
          { chapter_count: 2 },
          { chapter_count: 1 },
          { chapter_count: 3 },
          { chapter_count: 0 },
          { chapter_count: 0 },
          { chapter_count: 0 },
        ]);
        const none = await getOk(t, '/v1/books?fields[books]=&sort=id&page[size]=1', token);
        assert.deepEqual(none.data[0].attributes, {});
        assert.deepEqual(none.data[0].relationships.author.data, null);
      });

      it('reject types not in the response and unknown fields', async () => {
        await getBadParameter(t, '/v1/books?fields[genres]=name', token, 'fields[genres]');
        await getBadParameter(t, '/v1/books?fields[nope]=x', token, 'fields[nope]');
        await getBadParameter(t, '/v1/books?fields[books]=title,nope', token, 'fields[books]');
        await getBadParameter(t, '/v1/books?include=author&fields[authors]=title', token, 'fields[authors]');
      });
    });

    describe('include errors', () => {
      it('rejects unknown paths with a 400 naming include', async () => {
        for (const include of ['nope', 'author.nope', 'chapters.notes.nope', 'title', 'author..books']) {
          await getBadParameter(t, path('/v1/books', { include }), token, 'include');
        }
      });
    });

    describe('permissions', () => {
      let limited: string;
      before(async () => {
        limited = (await t.keyWith(t.tenant.ownerId, ['view:contacts'])).token;
      });

      it('answers 403 when an included type needs a permission the key lacks', async () => {
        for (const url of ['/v1/books?include=genres', '/v1/authors?include=books.genres', '/v1/books/2?include=genres', '/v1/genres']) {
          const res = await t.get(url, limited);
          assert.equal(res.statusCode, 403, url);
          const error = res.json().errors[0];
          assert.equal(error.code, 'forbidden');
          assert.match(error.detail, /view:products/);
        }
      });

      it('serves the includes the key may read', async () => {
        const doc = await getOk(t, '/v1/books?include=chapters.notes,author&sort=id', limited);
        assert.deepEqual(idsOf(doc), [1, 2, 3, 4, 5, 6, 7]);
        assert.equal(includedKeys(doc).length, 14);
      });
    });

    describe('show', () => {
      it('includes related records of one record, within the tenant', async () => {
        const doc = await getOk(t, '/v1/books/4?include=chapters.notes,genres,author,cover,awards', token);
        assert.equal(doc.data.id, '4');
        assert.deepEqual(doc.data.relationships.chapters.data.map((d: Json) => d.id), ['3', '5', '4']);
        assert.deepEqual(includedKeys(doc), [
          'authors:2', 'awards:2', 'chapters:3', 'chapters:4', 'chapters:5', 'covers:2', 'genres:2', 'notes:3',
        ]);
        assert.deepEqual(doc.links.self, 'http://sitebiz.test/v1/books/4');
      });

      it('answers 404 for another site’s record', async () => {
        const res = await t.get('/v1/books/101', token);
        assert.equal(res.statusCode, 404);
        assert.equal(res.json().errors[0].code, 'not_found');
      });

      it('narrows an included to-many relationship with filter[<name>_search|_page|_per]', async () => {
        const search = await getOk(t, '/v1/books/4?include=chapters&filter[chapters_search]=o', token);
        assert.deepEqual(search.data.relationships.chapters.data.map((d: Json) => d.id), ['3', '4']);
        assert.deepEqual(includedKeys(search), ['chapters:3', 'chapters:4']);
        const page1 = await getOk(t, '/v1/books/4?include=chapters&filter[chapters_per]=2', token);
        assert.deepEqual(includedKeys(page1), ['chapters:3', 'chapters:5']);
        const page2 = await getOk(t, '/v1/books/4?include=chapters&filter[chapters_per]=2&filter[chapters_page]=2', token);
        assert.deepEqual(page2.data.relationships.chapters.data.map((d: Json) => d.id), ['4']);
        assert.deepEqual(includedKeys(page2), ['chapters:4']);
        // Ignored when the relationship is not included.
        const ignored = await getOk(t, '/v1/books/4?filter[chapters_search]=o', token);
        assert.deepEqual(ignored.data.relationships.chapters.data.map((d: Json) => d.id), ['3', '5', '4']);
        for (const [query, parameter] of [
          ['filter[chapters_per]=0', 'filter[chapters_per]'],
          ['filter[chapters_per]=101', 'filter[chapters_per]'],
          ['filter[chapters_page]=x', 'filter[chapters_page]'],
          ['filter[chapters_search]=', 'filter[chapters_search]'],
          ['filter[genres_search]=x', 'filter[genres_search]'],
          ['filter[pages_gt]=1', 'filter[pages_gt]'],
          ['sort=title', 'sort'],
          ['page[size]=1', 'page[size]'],
        ] as const) {
          await getBadParameter(t, `/v1/books/4?include=chapters&${query}`, token, parameter);
        }
      });
    });

    describe('query bound', () => {
      /** Statements on fixture tables only: authentication's own queries do not count. */
      const engineStatements = async (url: string) => {
        const { result, statements } = await t.queries.during(() => t.get(url, token));
        assert.equal(result.statusCode, 200, result.body);
        const fixtures = statements.filter((s) => FIXTURE_TABLE.test(s));
        const counts = fixtures.filter((s) => /^select count\(\*\) as "count" from/i.test(s));
        return { doc: result.json(), total: fixtures.length, counts: counts.length };
      };

      it('costs one query per include edge, whatever the page size', async () => {
        const url = (size: number) => `/v1/books?include=author,chapters.notes&sort=id&page[size]=${size}`;
        const small = await engineStatements(url(2));
        const large = await engineStatements(url(50));
        assert.deepEqual(idsOf(small.doc), [1, 2]);
        assert.deepEqual(idsOf(large.doc), [1, 2, 3, 4, 5, 6, 7]);
        assert.equal(includedKeys(large.doc).length, 3 + 6 + 5);
        // The page, 3 include edges (author, chapters, chapters.notes) and the linkage of the 3
        // relationships rendered but not included (genres, cover, awards); a full page also
        // needs COUNT(*), a short one tells the total itself.
        assert.deepEqual({ total: small.total, counts: small.counts }, { total: 8, counts: 1 });
        assert.deepEqual({ total: large.total, counts: large.counts }, { total: 7, counts: 0 });
      });

      it('stays bounded for through and nested edges from many parents', async () => {
        const url = (size: number) => `/v1/authors?include=books.genres,books.chapters.notes&sort=id&page[size]=${size}`;
        const small = await engineStatements(url(1));
        const large = await engineStatements(url(100));
        assert.deepEqual(idsOf(large.doc), [1, 2, 3, 4]);
        // page + books + genres + chapters + notes + linkage of short_books (+ COUNT for the
        // full page of one)
        assert.equal(small.total - small.counts, 6);
        assert.equal(large.total - large.counts, 6);
        assert.equal(small.counts, 1);
        assert.equal(large.counts, 0);
      });

      it('costs the same on a show', async () => {
        const one = await engineStatements('/v1/books/4?include=author,chapters.notes');
        assert.equal(one.doc.data.id, '4');
        assert.equal(one.total, 7);
      });
    });
  });
}
