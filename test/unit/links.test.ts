// Links, pure: query strings keep brackets and commas readable yet parse back to the same
// parameters, and paging links keep every other parameter of the request.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pageLinks, queryString } from '../../src/jsonapi/links.js';
import { parseQueryString } from '../../src/jsonapi/query-parser.js';

describe('queryString', () => {
  // [pairs, query string]
  const CASES: Array<[Array<[string, string]>, string]> = [
    [[], ''],
    [[['sort', '-title']], '?sort=-title'],
    [[['fields[sites]', 'title,subdomain']], '?fields[sites]=title,subdomain'],
    [[['include', 'author,chapters.notes']], '?include=author,chapters.notes'],
    [[['page[number]', '2'], ['page[size]', '10']], '?page[number]=2&page[size]=10'],
    [[['filter[title_cont]', 'a b']], '?filter[title_cont]=a%20b'],
    [[['filter[title_cont]', 'a+b']], '?filter[title_cont]=a%2Bb'],
    [[['filter[title_cont]', 'a&b=c']], '?filter[title_cont]=a%26b%3Dc'],
    [[['filter[title_cont]', '100%']], '?filter[title_cont]=100%25'],
    [[['filter[title_cont]', '#1/2?']], '?filter[title_cont]=%231%2F2%3F'],
    [[['filter[title_cont]', 'é☃']], '?filter[title_cont]=%C3%A9%E2%98%83'],
    [[['filter[title_cont]', '[x]']], '?filter[title_cont]=%5Bx%5D'],
    [[['filter[codes][]', 'a'], ['filter[codes][]', 'b']], '?filter[codes][]=a&filter[codes][]=b'],
    [[['filter[a b]', '']], '?filter[a%20b]='],
  ];
  for (const [pairs, expected] of CASES) {
    it(`${JSON.stringify(pairs)} → ${expected || '(empty)'}`, () => {
      assert.equal(queryString(pairs), expected);
    });
  }

  it('parses back to the same parameters, whatever they hold', () => {
    const pairs: Array<[string, string]> = [
      ['filter[title_cont]', 'a b+c&d=e,f%g#h/i?j'],
      ['filter[café]', 'é ☃ \\ "q"'],
      ['fields[books]', 'title,pages'],
      ['include', 'author,chapters.notes'],
      ['filter[codes][]', 'x,y'],
      ['filter[codes][]', ''],
      ['sort', '-published_at'],
    ];
    const parsed = parseQueryString(queryString(pairs).slice(1));
    assert.deepEqual(parsed.pairs, pairs);
  });
});

describe('pageLinks', () => {
  const BASE = 'http://sitebiz.test/v1/books';
  const links = (raw: string, page: { number: number; size: number }, totalPages: number) =>
    pageLinks(BASE, parseQueryString(raw), page, totalPages);
  const at = (n: number, size: number, rest = '') => `${BASE}?page[number]=${n}&page[size]=${size}${rest}`;

  it('links a middle page, page parameters first, the others in request order', () => {
    const rest = '&sort=-title&filter[author_id_in]=1,2&fields[books]=title';
    assert.deepEqual(links('sort=-title&page[size]=10&filter[author_id_in]=1,2&page[number]=2&fields[books]=title', { number: 2, size: 10 }, 5), {
      self: at(2, 10, rest),
      first: at(1, 10, rest),
      prev: at(1, 10, rest),
      next: at(3, 10, rest),
      last: at(5, 10, rest),
    });
  });

  it('has no prev on the first page and no next on the last', () => {
    assert.deepEqual(links('', { number: 1, size: 25 }, 3), {
      self: at(1, 25),
      first: at(1, 25),
      prev: null,
      next: at(2, 25),
      last: at(3, 25),
    });
    const last = links('', { number: 3, size: 25 }, 3);
    assert.equal(last.prev, at(2, 25));
    assert.equal(last.next, null);
  });

  it('links a single page and an empty list to page 1', () => {
    for (const total of [0, 1]) {
      assert.deepEqual(links('sort=id', { number: 1, size: 5 }, total), {
        self: at(1, 5, '&sort=id'),
        first: at(1, 5, '&sort=id'),
        prev: null,
        next: null,
        last: at(1, 5, '&sort=id'),
      });
    }
  });

  it('points prev of a page past the end at the last page', () => {
    assert.deepEqual(links('page[number]=9', { number: 9, size: 25 }, 3), {
      self: at(9, 25),
      first: at(1, 25),
      prev: at(3, 25),
      next: null,
      last: at(3, 25),
    });
    assert.equal(links('page[number]=4', { number: 4, size: 25 }, 0).prev, at(1, 25));
  });

  it('encodes the values of kept parameters', () => {
    const self = links('filter[title_cont]=s%20%26%20B&include=author,chapters', { number: 1, size: 25 }, 1).self;
    assert.equal(self, at(1, 25, '&filter[title_cont]=s%20%26%20B&include=author,chapters'));
  });
});
