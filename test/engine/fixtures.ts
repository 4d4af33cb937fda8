// Fixture resources for the engine's own tests: a small library domain declared with the same
// DSL as the API's resources, over tables that exist only in these tests. The engine must serve
// them without naming them; the tests then pin its behaviour with exact ids.
//
//   authors ──< books >── book_genres ──< genres          (to-one, to-many, through)
//                 ├──< chapters ──< notes                    (nested)
//                 ├─── cover                                 (has-one; covers need filter[site_id])
//                 └──< book_awards >── awards                (through, keyed by books.sku_code)
//   specimens: one column of every attribute type, for codec round trips
//
// Every fixture table carries site_id (tenancy kind 'site'). Rows belong to the tenant's site
// unless marked OTHER: those belong to a second account's site and must never be served.
import type { ColumnDataType, ColumnDefinitionBuilder, Kysely } from 'kysely';
import type { DatabaseHandle } from '../../src/db/connect.js';
import { escapeLike } from '../../src/db/dialect-traits.js';
import { createAccount, createSite } from '../../src/domain/accounts.js';
import type { ResourceDefinition } from '../../src/jsonapi/resource.js';
import { attr, defineResource, namedFilter, rel } from '../../src/jsonapi/resource.js';
import { users } from '../../src/resources/users.js';
import { createTestApp, type DialectName, type TestApp } from '../support/harness.js';

// ---------------------------------------------------------------------------------------------
// Declarations

export const authors = defineResource({
  type: 'authors',
  table: 'authors',
  description: 'Fixture: authors of books.',
  readPermission: 'view:contacts',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: 'name',
  attributes: {
    name: attr.string({ sort: true, filter: true }),
    email: attr.string({ sort: true, filter: true, nullable: true }),
    created_at: attr.datetime({ sort: true, filter: true }),
  },
  relationships: {
    books: rel.toMany('books', 'author_id'),
    /** A to-many with a condition on the related records. */
    short_books: rel.toMany('books', 'author_id', { where: (eb) => eb('books.pages', '<', 200) }),
  },
});

export const books = defineResource({
  type: 'books',
  table: 'books',
  description: 'Fixture: books, with an attribute of every type.',
  readPermission: 'view:contacts',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: 'title',
  attributes: {
    title: attr.string({ sort: true, filter: true }),
    subtitle: attr.string({ sort: true, filter: true, nullable: true }),
    pages: attr.integer({ sort: true, filter: true }),
    price: attr.number({ sort: true, filter: true }),
    in_print: attr.boolean({ sort: true, filter: true, nullable: true }),
    published_at: attr.datetime({ sort: true, filter: true, nullable: true }),
    metadata: attr.json({ filter: true, nullable: true }),
    author_id: attr.id({ filter: true, nullable: true }),
    /** An attribute whose column has another name. */
    code: attr.string({ column: 'sku_code', sort: true, filter: ['eq', 'start'] }),
    label: attr.computed('string', ['title', 'pages'], (row) => `${String(row.title)} (${String(row.pages)} pages)`),
    /** Computed by SQL, so sortable and filterable; counts only the book's own site's chapters. */
    chapter_count: attr.integer({
      sort: true,
      filter: true,
      sql: (eb, ctx) =>
        eb
          .selectFrom('chapters')
          .select((sub) => sub.fn.countAll().as('n'))
          .whereRef('chapters.book_id', '=', `${ctx.table}.id`)
          .whereRef('chapters.site_id', '=', `${ctx.table}.site_id`),
    }),
  },
  relationships: {
    author: rel.toOne('authors', 'author_id'),
    chapters: rel.toMany('chapters', 'book_id'),
    genres: rel.toManyThrough('genres', { table: 'book_genres', sourceKey: 'book_id', targetKey: 'genre_id' }, { links: true }),
    cover: rel.hasOne('covers', 'book_id'),
    awards: rel.toManyThrough('awards', { table: 'book_awards', sourceKey: 'book_sku', targetKey: 'award_id', sourceColumn: 'sku_code' }),
  },
  includeNarrowing: {
    chapters: {
      search: (eb, text, ctx) => ctx.traits.likeInsensitive(eb, eb.ref(`${ctx.table}.title`), `%${escapeLike(text)}%`),
    },
  },
  filters: {
    search: namedFilter('string', 'Title or subtitle contains the text', (eb, value, ctx) =>
      eb.or([
        ctx.traits.likeInsensitive(eb, eb.ref('books.title'), `%${escapeLike(value)}%`),
        ctx.traits.likeInsensitive(eb, eb.ref('books.subtitle'), `%${escapeLike(value)}%`),
      ]),
    ),
    available: namedFilter('boolean', 'In print or not', (eb, value, ctx) => eb('books.in_print', '=', ctx.traits.encodeBoolean(value))),
    author: namedFilter('id', 'Written by this author', (eb, id) => eb('books.author_id', '=', id)),
    authors: namedFilter('ids', 'Written by one of these authors', (eb, ids) => eb('books.author_id', 'in', ids)),
    published_within: namedFilter('days', 'Published in the last N days', (eb, { since }, ctx) =>
      eb('books.published_at', '>=', ctx.traits.encodeTimestamp(since)),
    ),
    min_price: namedFilter('decimal', 'Costs at least this much', (eb, amount) => eb('books.price', '>=', amount)),
    min_pages: namedFilter('integer', 'Has at least this many pages', (eb, n) => eb('books.pages', '>=', n)),
    codes: namedFilter('strings', 'Has one of these codes', (eb, codes) => eb('books.sku_code', 'in', codes)),
    published_before: namedFilter('date', 'Published before this moment', (eb, date, ctx) =>
      eb('books.published_at', '<', ctx.traits.encodeTimestamp(date.at)),
    ),
  },
});

export const chapters = defineResource({
  type: 'chapters',
  table: 'chapters',
  description: 'Fixture: chapters of books, ordered by position.',
  readPermission: 'view:contacts',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: 'position',
  attributes: {
    title: attr.string({ filter: ['eq'] }),
    position: attr.integer({ sort: true, filter: true }),
  },
  relationships: {
    book: rel.toOne('books', 'book_id', { resourceLink: true }),
    notes: rel.toMany('notes', 'chapter_id'),
  },
});

export const notes = defineResource({
  type: 'notes',
  table: 'notes',
  description: 'Fixture: notes on chapters.',
  readPermission: 'view:contacts',
  tenancy: { kind: 'site', column: 'site_id' },
  attributes: { body: attr.string() },
  relationships: { chapter: rel.toOne('chapters', 'chapter_id') },
});

/** Needs a permission that the other fixtures do not, for the include-permission tests. */
export const genres = defineResource({
  type: 'genres',
  table: 'genres',
  description: 'Fixture: genres, joined to books through book_genres.',
  readPermission: 'view:products',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: 'name',
  attributes: { name: attr.string({ sort: true }) },
  relationships: {
    books: rel.toManyThrough('books', { table: 'book_genres', sourceKey: 'genre_id', targetKey: 'book_id' }),
  },
});

/** The target of a has-one; listing covers always needs filter[site_id]. */
export const covers = defineResource({
  type: 'covers',
  table: 'covers',
  description: 'Fixture: at most one cover per book.',
  readPermission: 'view:contacts',
  tenancy: { kind: 'site', column: 'site_id', siteFilter: 'required' },
  attributes: { url: attr.string() },
  relationships: { book: rel.toOne('books', 'book_id') },
});

/** Joined to books by their text code, not their id. */
export const awards = defineResource({
  type: 'awards',
  table: 'awards',
  description: 'Fixture: awards, joined to books through book_awards by sku code.',
  readPermission: 'view:contacts',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: 'name',
  attributes: { name: attr.string({ sort: true }) },
});

export const specimens = defineResource({
  type: 'specimens',
  table: 'specimens',
  description: 'Fixture: one nullable column of every attribute type.',
  readPermission: null,
  tenancy: { kind: 'site', column: 'site_id' },
  attributes: {
    flag: attr.boolean({ sort: true, filter: true, nullable: true }),
    happened_at: attr.datetime({ sort: true, filter: true, nullable: true }),
    count: attr.integer({ sort: true, filter: true, nullable: true }),
    amount: attr.number({ sort: true, filter: true, nullable: true }),
    doc: attr.json({ filter: true, nullable: true }),
    ref: attr.id({ column: 'ref_id', filter: true, nullable: true }),
    label: attr.string({ sort: true, filter: true, nullable: true }),
  },
});

/**
 * The registry of the engine tests. `users` is the API's own declaration: GET /v1/me needs it,
 * and buildApp mounts that route whatever the resources are.
 */
export const FIXTURE_RESOURCES: readonly ResourceDefinition[] = [
  users,
  authors,
  books,
  chapters,
  notes,
  genres,
  covers,
  awards,
  specimens,
];

/** Tables that only fixture resources use; statements naming them are the engine's own work. */
export const FIXTURE_TABLES = [
  'authors',
  'books',
  'chapters',
  'notes',
  'genres',
  'book_genres',
  'covers',
  'awards',
  'book_awards',
  'specimens',
] as const;

// ---------------------------------------------------------------------------------------------
// Tables

type Id = number | string;
type Timestamp = string | Date;
type Flag = number | boolean;

export type FixtureTables = {
  authors: { id: Id; site_id: Id; name: string; email: string | null; created_at: Timestamp };
  books: {
    id: Id;
    site_id: Id;
    author_id: Id | null;
    title: string;
    subtitle: string | null;
    pages: number;
    price: number | string;
    in_print: Flag | null;
    published_at: Timestamp | null;
    metadata: unknown;
    sku_code: string;
  };
  chapters: { id: Id; site_id: Id; book_id: Id; position: number; title: string };
  notes: { id: Id; site_id: Id; chapter_id: Id; body: string };
  genres: { id: Id; site_id: Id; name: string };
  book_genres: { book_id: Id; genre_id: Id };
  covers: { id: Id; site_id: Id; book_id: Id; url: string };
  awards: { id: Id; site_id: Id; name: string };
  book_awards: { book_sku: string; award_id: Id };
  specimens: {
    id: Id;
    site_id: Id;
    flag: Flag | null;
    happened_at: Timestamp | null;
    count: number | string | null;
    amount: number | null;
    doc: unknown;
    ref_id: Id | null;
    label: string | null;
  };
};

export function fixtureDb(handle: DatabaseHandle): Kysely<FixtureTables> {
  return handle.db.withTables<FixtureTables>() as unknown as Kysely<FixtureTables>;
}

/** Creates the fixture tables with the dialect's column types. Run as createTestApp's `prepare`. */
export async function createFixtureTables(handle: DatabaseHandle): Promise<void> {
  const t = handle.traits;
  const schema = fixtureDb(handle).schema;
  const siteId = (c: ColumnDefinitionBuilder) => c.notNull().references('sites.id').onDelete('cascade');

  await t
    .addIdColumn(schema.createTable('authors'))
    .addColumn('site_id', t.foreignKeyType, siteId)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('created_at', t.timestampType, (c) => c.notNull())
    .execute();

  await t
    .addIdColumn(schema.createTable('books'))
    .addColumn('site_id', t.foreignKeyType, siteId)
    .addColumn('author_id', t.foreignKeyType, (c) => c.references('authors.id'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('subtitle', 'text')
    .addColumn('pages', 'integer', (c) => c.notNull())
    .addColumn('price', 'numeric(10, 2)', (c) => c.notNull())
    .addColumn('in_print', t.booleanType)
    .addColumn('published_at', t.timestampType)
    .addColumn('metadata', t.jsonType)
    .addColumn('sku_code', 'text', (c) => c.notNull())
    .execute();

  await t
    .addIdColumn(schema.createTable('chapters'))
    .addColumn('site_id', t.foreignKeyType, siteId)
    .addColumn('book_id', t.foreignKeyType, (c) => c.notNull().references('books.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .execute();

  await t
    .addIdColumn(schema.createTable('notes'))
    .addColumn('site_id', t.foreignKeyType, siteId)
    .addColumn('chapter_id', t.foreignKeyType, (c) => c.notNull().references('chapters.id'))
    .addColumn('body', 'text', (c) => c.notNull())
    .execute();

  await t
    .addIdColumn(schema.createTable('genres'))
    .addColumn('site_id', t.foreignKeyType, siteId)
    .addColumn('name', 'text', (c) => c.notNull())
    .execute();

  await schema
    .createTable('book_genres')
    .addColumn('book_id', t.foreignKeyType, (c) => c.notNull().references('books.id'))
    .addColumn('genre_id', t.foreignKeyType, (c) => c.notNull().references('genres.id'))
    .addPrimaryKeyConstraint('book_genres_pk', ['book_id', 'genre_id'])
    .execute();

  await t
    .addIdColumn(schema.createTable('covers'))
    .addColumn('site_id', t.foreignKeyType, siteId)
    .addColumn('book_id', t.foreignKeyType, (c) => c.notNull().references('books.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .execute();

  await t
    .addIdColumn(schema.createTable('awards'))
    .addColumn('site_id', t.foreignKeyType, siteId)
    .addColumn('name', 'text', (c) => c.notNull())
    .execute();

  await schema
    .createTable('book_awards')
    .addColumn('book_sku', 'text', (c) => c.notNull())
    .addColumn('award_id', t.foreignKeyType, (c) => c.notNull().references('awards.id'))
    .addPrimaryKeyConstraint('book_awards_pk', ['book_sku', 'award_id'])
    .execute();

  // 'bigint' is INTEGER affinity on SQLite and int8 on PostgreSQL (which pg returns as a string).
  const bigint: ColumnDataType = 'bigint';
  await t
    .addIdColumn(schema.createTable('specimens'))
    .addColumn('site_id', t.foreignKeyType, siteId)
    .addColumn('flag', t.booleanType)
    .addColumn('happened_at', t.timestampType)
    .addColumn('count', bigint)
    .addColumn('amount', 'double precision')
    .addColumn('doc', t.jsonType)
    .addColumn('ref_id', t.foreignKeyType)
    .addColumn('label', 'text')
    .execute();
}

// ---------------------------------------------------------------------------------------------
// Rows

/** Ids of rows that belong to the other account's site; they must never be served. */
export const OTHER = { author: 101, book: 101, chapter: 101, note: 101, genre: 101, cover: 101, award: 101 } as const;

/**
 * The tenant's books. Titles are not in id order, so that sorting is visible; pairs share
 * pages, price and in_print so that the id tiebreaker is visible; nullable columns have two
 * nulls each.
 *
 * | id | title               | subtitle          | pages | price | in_print | published_at             | author |
 * |  1 | Graph Theory        | null              |  500  | 60    | null     | null                     | null   |
 * |  2 | Analytical Engines  | Notes on Babbage  |  120  | 19.99 | true     | 2026-05-30T08:00:00.000Z | 1      |
 * |  3 | Elegant Proofs      | PROOFS for all    |  120  | 19.99 | true     | 2026-05-25T23:59:59.999Z | 3      |
 * |  4 | C Programming       | The 100% Guide    |  272  | 42.5  | true     | 2024-02-29T12:30:00.123Z | 2      |
 * |  5 | Data_Structures     | with_underscores  |  450  | 55.25 | null     | null                     | 3      |
 * |  6 | Bits & Bytes        | null              |  300  | 35    | false    | 2025-01-15T00:00:00.000Z | 2      |
 * |  7 | Functional Patterns | 50% off           |   88  | 9.5   | false    | 2026-05-31T12:00:00.000Z | 1      |
 */
export const BOOKS = [
  { id: 1, title: 'Graph Theory', subtitle: null, pages: 500, price: 60, in_print: null, published_at: null, metadata: null, author_id: null, sku_code: 'GT-1' },
  { id: 2, title: 'Analytical Engines', subtitle: 'Notes on Babbage', pages: 120, price: 19.99, in_print: true, published_at: '2026-05-30T08:00:00.000Z', metadata: { edition: 2 }, author_id: 1, sku_code: 'AE-2' },
  { id: 3, title: 'Elegant Proofs', subtitle: 'PROOFS for all', pages: 120, price: 19.99, in_print: true, published_at: '2026-05-25T23:59:59.999Z', metadata: [1, 2, 3], author_id: 3, sku_code: 'EP-3' },
  { id: 4, title: 'C Programming', subtitle: 'The 100% Guide', pages: 272, price: 42.5, in_print: true, published_at: '2024-02-29T12:30:00.123Z', metadata: { tags: ['c'] }, author_id: 2, sku_code: 'CP-4' },
  { id: 5, title: 'Data_Structures', subtitle: 'with_underscores', pages: 450, price: 55.25, in_print: null, published_at: null, metadata: null, author_id: 3, sku_code: 'DS-5' },
  { id: 6, title: 'Bits & Bytes', subtitle: null, pages: 300, price: 35, in_print: false, published_at: '2025-01-15T00:00:00.000Z', metadata: null, author_id: 2, sku_code: 'BB-6' },
  { id: 7, title: 'Functional Patterns', subtitle: '50% off', pages: 88, price: 9.5, in_print: false, published_at: '2026-05-31T12:00:00.000Z', metadata: { a: null }, author_id: 1, sku_code: 'FP-7' },
] as const;

export const AUTHORS = [
  { id: 1, name: 'Ada Lovelace', email: 'ada@example.com', created_at: '2026-01-01T00:00:00.000Z' },
  { id: 2, name: 'Brian Kernighan', email: null, created_at: '2026-01-02T00:00:00.000Z' },
  { id: 3, name: 'Cora Diaz', email: 'cora@example.org', created_at: '2026-01-03T00:00:00.000Z' },
  { id: 4, name: 'Edsger Dijkstra', email: null, created_at: '2026-01-04T00:00:00.000Z' },
] as const;

/** Book 2's chapters are stored out of position order; chapter 7 points at the OTHER book. */
export const CHAPTERS = [
  { id: 1, book_id: 2, position: 2, title: 'Second' },
  { id: 2, book_id: 2, position: 1, title: 'First' },
  { id: 3, book_id: 4, position: 1, title: 'Intro' },
  { id: 4, book_id: 4, position: 3, title: 'Pointers' },
  { id: 5, book_id: 4, position: 2, title: 'Types' },
  { id: 6, book_id: 3, position: 1, title: 'Lemmas' },
  { id: 7, book_id: OTHER.book, position: 1, title: 'Stray' },
] as const;

export const NOTES = [
  { id: 1, chapter_id: 2, body: 'Remember the first' },
  { id: 2, chapter_id: 2, body: 'And again' },
  { id: 3, chapter_id: 3, body: 'Intro note' },
  { id: 4, chapter_id: 6, body: 'Lemma note' },
  { id: 5, chapter_id: 1, body: 'Second note' },
] as const;

export const GENRES = [
  { id: 1, name: 'Mathematics' },
  { id: 2, name: 'Computing' },
  { id: 3, name: 'History' },
] as const;

export const BOOK_GENRES: ReadonlyArray<readonly [book: number, genre: number]> = [
  [2, 2],
  [2, 3],
  [2, OTHER.genre],
  [4, 2],
  [3, 1],
  [3, 2],
  [5, 2],
];

/** Book 3's only cover belongs to the OTHER site, so book 3 has none. */
export const COVERS = [
  { id: 1, book_id: 2, url: 'https://img.example/ae.png' },
  { id: 2, book_id: 4, url: 'https://img.example/cp.png' },
] as const;

export const AWARDS = [
  { id: 1, name: 'Hugo' },
  { id: 2, name: 'Nebula' },
] as const;

/** Keyed by the books' text codes (AE-2 is book 2, CP-4 book 4). */
export const BOOK_AWARDS: ReadonlyArray<readonly [sku: string, award: number]> = [
  ['AE-2', 2],
  ['AE-2', 1],
  ['CP-4', 2],
  ['CP-4', OTHER.award],
];

export interface FixtureApp extends TestApp {
  /** The site of a second account; rows there must never be served to the tenant. */
  otherSiteId: number;
}

/** A test app serving the fixture resources, with the tables created and the rows inserted. */
export async function createFixtureApp(dialect: DialectName, env?: Record<string, string>): Promise<FixtureApp> {
  const t = await createTestApp(dialect, { resources: FIXTURE_RESOURCES, prepare: createFixtureTables, ...(env ? { env } : {}) });
  // The tenant's site exists only once createTestApp returns, so the rows go in now.
  const otherAccount = await createAccount(t.handle, { name: 'Other Account' }, t.clock);
  const otherSiteId = await createSite(t.handle, { accountId: otherAccount, title: 'Other Site', subdomain: `other-${otherAccount}-${dialect}` }, t.clock);
  await seedLibrary(t.handle, t.tenant.siteId, otherSiteId);
  return Object.assign(t, { otherSiteId });
}

async function seedLibrary(handle: DatabaseHandle, site: number, other: number): Promise<void> {
  const db = fixtureDb(handle);
  const { encodeBoolean, encodeTimestamp, encodeJson } = handle.traits;
  const ts = (iso: string | null) => (iso === null ? null : encodeTimestamp(new Date(iso)));
  const bool = (b: boolean | null) => (b === null ? null : encodeBoolean(b));
  const json = (v: unknown) => (v === null ? null : encodeJson(v));

  await db
    .insertInto('authors')
    .values([
      ...AUTHORS.map((a) => ({ ...a, site_id: site, created_at: ts(a.created_at)! })),
      { id: OTHER.author, site_id: other, name: 'Aaron Outsider', email: 'aaron@other.example', created_at: ts('2026-01-01T00:00:00.000Z')! },
    ])
    .execute();
  await db
    .insertInto('books')
    .values([
      ...BOOKS.map((b) => ({
        ...b,
        site_id: site,
        in_print: bool(b.in_print),
        published_at: ts(b.published_at),
        metadata: json(b.metadata),
      })),
      // Another tenant's book by the tenant's own author 1: it must not show up among her books.
      {
        id: OTHER.book,
        site_id: other,
        author_id: 1,
        title: 'Alien Algorithms',
        subtitle: 'Notes from elsewhere',
        pages: 120,
        price: 19.99,
        in_print: bool(true),
        published_at: ts('2026-05-31T00:00:00.000Z'),
        metadata: null,
        sku_code: 'AA-101',
      },
    ])
    .execute();
  await db
    .insertInto('chapters')
    .values([
      ...CHAPTERS.map((c) => ({ ...c, site_id: site })),
      // Another tenant's chapter hanging off the tenant's book 4, first by position.
      { id: OTHER.chapter, site_id: other, book_id: 4, position: 0, title: 'Alien chapter' },
    ])
    .execute();
  await db
    .insertInto('notes')
    .values([...NOTES.map((n) => ({ ...n, site_id: site })), { id: OTHER.note, site_id: other, chapter_id: 3, body: 'Alien note' }])
    .execute();
  await db
    .insertInto('genres')
    .values([...GENRES.map((g) => ({ ...g, site_id: site })), { id: OTHER.genre, site_id: other, name: 'Alien genre' }])
    .execute();
  await db
    .insertInto('book_genres')
    .values(BOOK_GENRES.map(([book_id, genre_id]) => ({ book_id, genre_id })))
    .execute();
  await db
    .insertInto('covers')
    .values([...COVERS.map((c) => ({ ...c, site_id: site })), { id: OTHER.cover, site_id: other, book_id: 3, url: 'https://img.example/alien.png' }])
    .execute();
  await db
    .insertInto('awards')
    .values([...AWARDS.map((a) => ({ ...a, site_id: site })), { id: OTHER.award, site_id: other, name: 'Alien prize' }])
    .execute();
  await db
    .insertInto('book_awards')
    .values(BOOK_AWARDS.map(([book_sku, award_id]) => ({ book_sku, award_id })))
    .execute();
}

export interface SpecimenRow {
  id: number;
  flag?: boolean | null;
  happened_at?: Date | null;
  count?: number | null;
  amount?: number | null;
  doc?: unknown;
  ref_id?: number | null;
  label?: string | null;
}

/** Inserts specimens through the dialect's encoders (undefined columns stay null). */
export async function insertSpecimens(handle: DatabaseHandle, siteId: number, rows: readonly SpecimenRow[]): Promise<void> {
  const { encodeBoolean, encodeTimestamp, encodeJson } = handle.traits;
  const db = fixtureDb(handle);
  for (let i = 0; i < rows.length; i += 200) {
    await db
      .insertInto('specimens')
      .values(
        rows.slice(i, i + 200).map((r) => ({
          id: r.id,
          site_id: siteId,
          flag: r.flag === undefined || r.flag === null ? null : encodeBoolean(r.flag),
          happened_at: r.happened_at ? encodeTimestamp(r.happened_at) : null,
          count: r.count ?? null,
          amount: r.amount ?? null,
          doc: r.doc === undefined ? null : encodeJson(r.doc),
          ref_id: r.ref_id ?? null,
          label: r.label ?? null,
        })),
      )
      .execute();
  }
}

// ---------------------------------------------------------------------------------------------
// Reading responses

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** GETs a URL that must answer 200 and returns the parsed document. */
export async function getOk(t: TestApp, url: string, token: string): Promise<Json> {
  const res = await t.get(url, token);
  if (res.statusCode !== 200) throw new Error(`GET ${url} answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

/** The ids of a list document's primary data, as numbers, in order. */
export function idsOf(doc: Json): number[] {
  return (doc.data as Array<{ id: string }>).map((r) => Number(r.id));
}

/** `type:id` of every included record, sorted, for order-free comparison. */
export function includedKeys(doc: Json): string[] {
  return ((doc.included ?? []) as Array<{ type: string; id: string }>).map((r) => `${r.type}:${r.id}`).sort(byTypeThenId);
}

function byTypeThenId(a: string, b: string): number {
  const [ta = '', ia = ''] = a.split(':');
  const [tb = '', ib = ''] = b.split(':');
  return ta === tb ? Number(ia) - Number(ib) : ta < tb ? -1 : 1;
}

/** GETs a URL that must answer 400 naming `parameter`; returns the error object. */
export async function getBadParameter(t: TestApp, url: string, token: string, parameter: string): Promise<Json> {
  const res = await t.get(url, token);
  if (res.statusCode !== 400) throw new Error(`GET ${url} answered ${res.statusCode}, expected 400: ${res.body.slice(0, 300)}`);
  const error = res.json().errors[0];
  if (error?.source?.parameter !== parameter) {
    throw new Error(`GET ${url}: expected source.parameter ${parameter}, got ${JSON.stringify(error)}`);
  }
  return error;
}

/** A request path with parameters; values are percent-encoded, bracketed keys stay readable. */
export function path(base: string, params: Record<string, string | number> = {}): string {
  const pairs = Object.entries(params).map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`);
  return pairs.length === 0 ? base : `${base}?${pairs.join('&')}`;
}
