// Stage 1 of a request, pure: the raw query string becomes a ParsedQuery, or a 400 that names the
// parameter at fault.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../src/jsonapi/errors.js';
import { parseQueryString, splitList, type ParsedQuery } from '../../src/jsonapi/query-parser.js';

/** A ParsedQuery as plain data, for deepEqual. */
function plain(q: ParsedQuery) {
  return {
    page: q.page,
    sort: q.sort,
    include: q.include,
    fields: Object.fromEntries(q.fields),
    filters: Object.fromEntries(q.filters),
    pairs: q.pairs,
  };
}

const EMPTY = { page: {}, sort: undefined, include: undefined, fields: {}, filters: {}, pairs: [] };

// [raw query string, expected parse]
const ACCEPTED: Array<[string, ReturnType<typeof plain>]> = [
  ['', EMPTY],
  ['sort=-title', { ...EMPTY, sort: '-title', pairs: [['sort', '-title']] }],
  ['sort=', { ...EMPTY, sort: '', pairs: [['sort', '']] }],
  ['include=author,chapters.notes', { ...EMPTY, include: 'author,chapters.notes', pairs: [['include', 'author,chapters.notes']] }],
  [
    'page[number]=2&page[size]=10',
    { ...EMPTY, page: { number: '2', size: '10' }, pairs: [['page[number]', '2'], ['page[size]', '10']] },
  ],
  [
    'fields[books]=title,pages&fields[authors]=name',
    {
      ...EMPTY,
      fields: { books: 'title,pages', authors: 'name' },
      pairs: [['fields[books]', 'title,pages'], ['fields[authors]', 'name']],
    },
  ],
  ['filter[title_cont]=a%20b', { ...EMPTY, filters: { title_cont: 'a b' }, pairs: [['filter[title_cont]', 'a b']] }],
  ['filter[title_cont]=a+b', { ...EMPTY, filters: { title_cont: 'a b' }, pairs: [['filter[title_cont]', 'a b']] }],
  ['filter[title_cont]=a%2Bb', { ...EMPTY, filters: { title_cont: 'a+b' }, pairs: [['filter[title_cont]', 'a+b']] }],
  ['filter[title_cont]=100%25', { ...EMPTY, filters: { title_cont: '100%' }, pairs: [['filter[title_cont]', '100%']] }],
  ['filter%5Btitle%5D=x', { ...EMPTY, filters: { title: 'x' }, pairs: [['filter[title]', 'x']] }],
  ['filter[x]=a=b', { ...EMPTY, filters: { x: 'a=b' }, pairs: [['filter[x]', 'a=b']] }],
  ['filter[x]=', { ...EMPTY, filters: { x: '' }, pairs: [['filter[x]', '']] }],
  ['filter[x]', { ...EMPTY, filters: { x: '' }, pairs: [['filter[x]', '']] }],
  ['filter[site_id]=3&&sort=id', { ...EMPTY, sort: 'id', filters: { site_id: '3' }, pairs: [['filter[site_id]', '3'], ['sort', 'id']] }],
  ['filter[café]=é', { ...EMPTY, filters: { 'café': 'é' }, pairs: [['filter[café]', 'é']] }],
  // A list filter: each repeat of filter[name][] adds a value.
  [
    'filter[codes][]=a&filter[codes][]=b&filter[codes][]=c',
    {
      ...EMPTY,
      filters: { codes: 'a,b,c' },
      pairs: [['filter[codes][]', 'a'], ['filter[codes][]', 'b'], ['filter[codes][]', 'c']],
    },
  ],
  // Every family at once, pairs in request order.
  [
    'include=a&filter[b_eq]=1&sort=c&fields[d]=e&page[size]=5',
    {
      page: { size: '5' },
      sort: 'c',
      include: 'a',
      fields: { d: 'e' },
      filters: { b_eq: '1' },
      pairs: [['include', 'a'], ['filter[b_eq]', '1'], ['sort', 'c'], ['fields[d]', 'e'], ['page[size]', '5']],
    },
  ],
];

// [raw query string, the parameter the 400 must name]
const REJECTED: Array<[string, string]> = [
  // repeats
  ['sort=a&sort=b', 'sort'],
  ['include=a&include=b', 'include'],
  ['page[number]=1&page[number]=2', 'page[number]'],
  ['fields[books]=a&fields[books]=b', 'fields[books]'],
  ['filter[x]=1&filter[x]=2', 'filter[x]'],
  ['filter[x]=1&filter[x][]=2', 'filter[x][]'],
  ['filter[x][]=1&filter[x]=2', 'filter[x]'],
  // unknown families and members
  ['foo=1', 'foo'],
  ['page=1', 'page'],
  ['page[offset]=10', 'page[offset]'],
  ['page[limit]=10', 'page[limit]'],
  ['page[]=1', 'page[]'],
  ['filter[]=x', 'filter[]'],
  ['fields[]=x', 'fields[]'],
  ['filter=x', 'filter'],
  ['Filter[x]=1', 'Filter[x]'],
  ['SORT=id', 'SORT'],
  // nested or broken brackets
  ['filter[a][b]=1', 'filter[a][b]'],
  ['fields[books][x]=1', 'fields[books][x]'],
  ['filter[[x]]=1', 'filter[[x]]'],
  ['filter[x]]=1', 'filter[x]]'],
  ['filter[x=1', 'filter[x'],
  ['page[size][]=1', 'page[size][]'],
];

describe('parseQueryString', () => {
  for (const [raw, expected] of ACCEPTED) {
    it(`reads ${JSON.stringify(raw)}`, () => {
      assert.deepEqual(plain(parseQueryString(raw)), expected);
    });
  }

  for (const [raw, parameter] of REJECTED) {
    it(`rejects ${JSON.stringify(raw)} naming ${parameter}`, () => {
      assert.throws(
        () => parseQueryString(raw),
        (error: unknown) => {
          assert.ok(error instanceof ApiError);
          assert.equal(error.status, 400);
          assert.equal(error.errors.length, 1);
          assert.equal(error.errors[0]?.code, 'invalid_parameter');
          assert.deepEqual(error.errors[0]?.source, { parameter });
          return true;
        },
      );
    });
  }

  it('names the parameter and says what is wrong', () => {
    assert.throws(() => parseQueryString('sort=a&sort=b'), /sort is given more than once/);
    assert.throws(() => parseQueryString('page[offset]=1'), /use page\[number\] and page\[size\]/);
    assert.throws(() => parseQueryString('foo=1'), /Unknown query parameter foo/);
  });
});

describe('splitList', () => {
  const CASES: Array<[string, string[]]> = [
    ['', []],
    ['a', ['a']],
    ['a,b', ['a', 'b']],
    [' a , b ,, c ,', ['a', 'b', 'c']],
    [' , ', []],
    ['a b,c', ['a b', 'c']],
  ];
  for (const [raw, expected] of CASES) {
    it(`${JSON.stringify(raw)} → ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(splitList(raw), expected);
    });
  }
});
