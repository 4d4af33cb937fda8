// Substring search at scale: trigram indexes that narrow a "contains" filter to the few rows that
// can match, so `filter[search]` and `filter[email_contains]` cost the size of the answer, not of
// the site. Everything about how each database does it lives in this file.
//
// The meaning of a contains filter never changes: ASCII case-insensitive, wildcards matched
// literally (containsText in src/jsonapi/resource.ts, likeInsensitive in DialectTraits). The
// index only proposes candidates; the exact condition always decides. So results are identical
// with or without the index, and a text the index cannot serve (shorter than a trigram) simply
// runs the plain condition.
//
// - SQLite: an FTS5 table with the `trigram` tokenizer per indexed table, in external-content
//   mode (`content='<table>'`): it stores only the index, not a second copy of the text, and
//   FTS5's 'rebuild' command can rebuild it from the table after a bulk load. (A contentless
//   table would need its own re-insert of every row to rebuild.) Triggers keep it in step with
//   every insert, delete and update of an indexed column. A query narrows with
//   `<row id> IN (SELECT rowid FROM <fts> WHERE <fts> MATCH '"text"')`: a phrase of trigrams, so
//   exactly the rows holding the text as a substring, after FTS5's Unicode case folding (a
//   superset of the ASCII folding of the exact condition, which then decides).
// - PostgreSQL: one multicolumn GIN index with pg_trgm's `gin_trgm_ops` over the ASCII-lowered
//   columns, `translate(col, 'A..Z', 'a..z')`. That expression is exactly what likeInsensitive
//   compares on PostgreSQL, so the exact condition is itself served by the index (pg_trgm
//   rechecks every candidate row against the LIKE). ILIKE or lower() would fold all of Unicode,
//   which is not the definition. A text without a trigram makes pg_trgm ask for a full index
//   scan, which the planner costs as such and answers with the plain scan instead.
import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import type { AnyEB } from '../jsonapi/resource.js';
import type { DatabaseHandle } from './connect.js';
import { escapeLike, postgresAsciiLower, postgresTraits, type DialectName } from './dialect-traits.js';
import { DERIVED_DATA } from './derived-data.js';

/** Text columns of one table, indexed together for substring search. */
export interface TrigramIndex {
  /** Name of the index's objects: the FTS5 table (SQLite), the GIN index is `<name>_trgm` (PostgreSQL). */
  name: string;
  /** The indexed table; its integer primary key `id` identifies the rows. */
  table: string;
  columns: readonly string[];
}

/**
 * Every text filter of contacts and customers reads these contact columns (contact-filters.ts);
 * those lists reach a million rows per site. Catalogue tables (offers, products, pages, tags, ...)
 * hold hundreds of rows per site and their contains filters scan them, which costs less than an
 * index would.
 */
export const CONTACT_TEXT_INDEX: TrigramIndex = {
  name: 'contacts_text',
  table: 'contacts',
  columns: [
    'name',
    'email',
    'phone_number',
    'mobile_phone_number',
    'address_line_1',
    'address_line_2',
    'address_city',
    'address_state',
    'address_country',
    'address_zip',
  ],
};

export const TRIGRAM_INDEXES: readonly TrigramIndex[] = [CONTACT_TEXT_INDEX];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

interface TrigramDialect {
  /** Whether the index can narrow a search for this text (it holds at least one trigram). */
  serves(text: string): boolean;
  /**
   * A condition `rowId IN (rows of index.table where, for every text, one of columns contains
   * it)`, possibly with false positives, to put beside the exact condition; undefined when the
   * exact condition uses the index by itself.
   */
  candidates(eb: AnyEB, index: TrigramIndex, rowId: string, columns: readonly string[], texts: readonly string[]): Expression<SqlBool> | undefined;
  /**
   * The exact condition for a text most rows contain, written so that the list is read in its own
   * order and each row checked (the page fills within a few rows).
   */
  common(exact: Expression<SqlBool>): Expression<SqlBool>;
  /**
   * How many rows of the sites the index proposes for these texts, counting no further than
   * `cap`, and (where the database needs to be told which plan to take) their ids when fewer;
   * undefined when no text is long enough for the index.
   */
  probe(
    db: AnyDb,
    index: TrigramIndex,
    columns: readonly string[],
    texts: readonly string[],
    siteIds: readonly number[],
    cap: number,
  ): Promise<TrigramProbe | undefined>;
  /** Creates the index and whatever keeps it current, indexing the rows already there. */
  create(db: AnyDb, index: TrigramIndex): Promise<void>;
  /** Stops row-by-row upkeep before a bulk load. */
  suspend(db: AnyDb, index: TrigramIndex): Promise<void>;
  /** Rebuilds the index from the table and resumes upkeep. */
  rebuild(db: AnyDb, index: TrigramIndex): Promise<void>;
}

const codePoints = (text: string) => [...text].length;


/** FTS5 query syntax: a double-quoted string is one phrase of literal text; `"` is doubled. */
const ftsPhrase = (text: string) => `"${text.replace(/"/g, '""')}"`;

function sqliteTriggers(index: TrigramIndex): string[] {
  const { name, table, columns } = index;
  const list = columns.join(', ');
  const values = (row: 'new' | 'old') => columns.map((c) => `${row}.${c}`).join(', ');
  const changed = columns.map((c) => `old.${c} is not new.${c}`).join(' or ');
  return [
    `create trigger if not exists ${name}_insert after insert on ${table} begin
       insert into ${name}(rowid, ${list}) values (new.id, ${values('new')});
     end`,
    // External content: FTS5 removes a row's entries given the values it indexed.
    `create trigger if not exists ${name}_delete after delete on ${table} begin
       insert into ${name}(${name}, rowid, ${list}) values ('delete', old.id, ${values('old')});
     end`,
    `create trigger if not exists ${name}_update after update of id, ${list} on ${table}
     when old.id is not new.id or ${changed} begin
       insert into ${name}(${name}, rowid, ${list}) values ('delete', old.id, ${values('old')});
       insert into ${name}(rowid, ${list}) values (new.id, ${values('new')});
     end`,
  ];
}

/** One FTS5 MATCH for every text: FTS5 intersects their row lists itself. */
function ftsQuery(columns: readonly string[], texts: readonly string[]): string | undefined {
  const served = texts.filter((t) => SQLITE.serves(t));
  if (served.length === 0) return undefined;
  const scope = `{${columns.join(' ')}}`;
  return served.map((t) => `${scope}: ${ftsPhrase(t)}`).join(' AND ');
}

const SQLITE: TrigramDialect = {
  // The trigram tokenizer indexes every run of three characters; shorter text matches nothing.
  serves: (text) => codePoints(text) >= 3,
  // Without the FTS subquery nothing else can serve the condition: SQLite reads the list in order.
  common: (exact) => exact,
  async probe(db, index, columns, texts, siteIds, cap) {
    const query = ftsQuery(columns, texts);
    if (query === undefined || siteIds.length === 0) return undefined;
    const counted = await sql<{ n: number }>`select count(*) as n from (
        select 1 from ${sql.table(index.name)} join ${sql.table(index.table)} on ${sql.ref(`${index.table}.id`)} = ${sql.table(index.name)}.rowid
        where ${sql.table(index.name)} match ${query} and ${sql.ref(`${index.table}.site_id`)} in (${sql.join(siteIds)})
        limit ${cap})`.execute(db);
    // The FTS subquery of `candidates` is the plan for few matches; SQLite follows it as written.
    return { candidates: Number(counted.rows[0]?.n ?? 0) };
  },
  candidates(eb, index, rowId, columns, texts) {
    const query = ftsQuery(columns, texts);
    if (query === undefined) return undefined;
    // The list is driven by the candidate set: a text that matches nothing costs one index probe,
    // a rare one a few row reads, whatever the size of the site. SQLite fixes the plan before it
    // knows how many rows match, so a text common to most rows reads and sorts all of them (still
    // without a scan of the text); see docs/architecture.md, "Text search".
    return eb(
      eb.ref(rowId),
      'in',
      eb.selectFrom(index.name).select(sql`rowid`.as('rowid')).where(sql<SqlBool>`${sql.table(index.name)} match ${query}`),
    );
  },
  async create(db, index) {
    await sql
      .raw(
        `create virtual table ${index.name} using fts5(${index.columns.join(', ')},
           content='${index.table}', content_rowid='id', tokenize='trigram')`,
      )
      .execute(db);
    await SQLITE.rebuild(db, index);
  },
  async suspend(db, index) {
    for (const kind of ['insert', 'delete', 'update']) await sql.raw(`drop trigger if exists ${index.name}_${kind}`).execute(db);
  },
  async rebuild(db, index) {
    await sql.raw(`insert into ${index.name}(${index.name}) values ('rebuild')`).execute(db);
    for (const statement of sqliteTriggers(index)) await sql.raw(statement).execute(db);
  },
};

/** The schema pg_trgm is installed in (its operator classes are named through it). */
async function pgTrgmSchema(db: AnyDb): Promise<string | undefined> {
  const { rows } = await sql<{ schema: string }>`
    select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db);
  return rows[0]?.schema;
}

/**
 * Installs pg_trgm once per database, in `public` so that every schema's search_path finds it. Test
 * processes migrate schemas side by side, and `create extension if not exists` is not safe against
 * a concurrent create: a transaction-scoped advisory lock makes them take turns.
 */
async function ensurePgTrgm(db: AnyDb): Promise<string> {
  await sql`select pg_advisory_xact_lock(hashtext('sitebiz: create extension pg_trgm'))`.execute(db);
  const existing = await pgTrgmSchema(db);
  if (existing !== undefined) return existing;
  await sql`create extension if not exists pg_trgm with schema public`.execute(db);
  return 'public';
}

async function createGinIndex(db: AnyDb, index: TrigramIndex, trgmSchema: string): Promise<void> {
  const opclass = `"${trgmSchema.replace(/"/g, '""')}".gin_trgm_ops`;
  const keys = index.columns.map((c) => `${postgresAsciiLower(c)} ${opclass}`).join(', ');
  await sql.raw(`create index if not exists ${index.name}_trgm on ${index.table} using gin (${keys})`).execute(db);
}

/** Rows of the site a PostgreSQL probe looks at first, and how many of them make a text common (a page of 25 within the first 2,000 rows read in list order, on average). */
const COMMON_SAMPLE = 2_000;
const COMMON_SAMPLE_MATCHES = 25;

const POSTGRES: TrigramDialect = {
  // pg_trgm takes trigrams from runs of letters and digits; three ASCII ones surely make one.
  serves: (text) => /[A-Za-z0-9]{3}/.test(text),
  // The exact condition is itself the indexed expression: nothing to add for the index to be usable.
  candidates: () => undefined,
  // The planner cannot know the text is common and would collect every match through the GIN
  // index and sort them (seconds on a million contacts). A subquery it may not flatten (OFFSET 0)
  // is a check per row that no index serves: the list is read in its order and stops at a page.
  common: (exact) => sql<SqlBool>`(select ${exact} offset 0)`,
  // Whether the index is used is the planner's choice, and for a page in list order with a text few
  // rows contain its estimate goes wrong: it reads the list in order looking for matches that are
  // not there (seconds on a million contacts). So the probe asks the index for the candidates'
  // ids (the GIN index answers, the ASCII-folded LIKE rechecks), and below the cap the list query
  // is given them as `rowId = any(ids)`.
  async probe(db, index, columns, texts, siteIds, cap) {
    if (siteIds.length === 0 || !texts.some((t) => POSTGRES.serves(t))) return undefined;
    const table = index.table;
    const matches = (eb: ExpressionBuilder<any, any>, from: string) => // eslint-disable-line @typescript-eslint/no-explicit-any
      eb.and(texts.map((text) => eb.or(columns.map((c) => postgresTraits.likeInsensitive(eb, eb.ref(`${from}.${c}`), `%${escapeLike(text)}%`)))));
    // A GIN bitmap cannot stop early: for a text most rows contain it would collect them all. So
    // first a look at a sample of the site's rows: a text found often there is common, and the list
    // in its own order finds a page of it within a few rows.
    const sample = await db
      .selectFrom((eb) => eb.selectFrom(table).select(columns.map((c) => `${table}.${c}`)).where(`${table}.site_id`, 'in', siteIds).limit(COMMON_SAMPLE).as('sample'))
      .select((eb) => eb.fn.countAll().as('n'))
      .where((eb) => matches(eb, 'sample'))
      .executeTakeFirst();
    if (Number(sample?.n ?? 0) >= COMMON_SAMPLE_MATCHES) return { candidates: cap };
    const found = await db
      .selectFrom(table)
      .select(`${table}.id as id`)
      .where(`${table}.site_id`, 'in', siteIds)
      .where((eb) => matches(eb, table))
      .limit(cap)
      .execute();
    return found.length < cap ? { candidates: found.length, ids: found.map((r) => Number(r.id)) } : { candidates: found.length };
  },
  async create(db, index) {
    await createGinIndex(db, index, await ensurePgTrgm(db));
  },
  // Maintaining a GIN index row by row during a bulk load costs far more than building it once.
  async suspend(db, index) {
    await sql.raw(`drop index if exists ${index.name}_trgm`).execute(db);
  },
  async rebuild(db, index) {
    await db.transaction().execute(async (trx) => {
      // Building the index in memory instead of in sorted runs on disk; local to this transaction.
      await sql`set local maintenance_work_mem = '256MB'`.execute(trx);
      await createGinIndex(trx, index, await ensurePgTrgm(trx));
    });
  },
};

const DIALECTS: Record<DialectName, TrigramDialect> = { sqlite: SQLITE, postgres: POSTGRES };

/** Whether a trigram index can narrow a search for `text` on this database. */
export function trigramIndexServes(dialect: DialectName, text: string): boolean {
  return DIALECTS[dialect].serves(text);
}

/**
 * The candidate rows of a contains condition from the index: `rowId IN (...)`, to be ANDed with
 * the exact condition, or undefined when the exact condition needs no help (PostgreSQL) or the
 * index cannot serve any of the texts. `rowId` is the expression that holds the indexed table's
 * id in the query (`contacts.id`, or `customers.contact_id` on a list of customers).
 */
export function trigramCandidates(
  eb: AnyEB,
  dialect: DialectName,
  index: TrigramIndex,
  rowId: string,
  columns: readonly string[],
  texts: readonly string[],
): Expression<SqlBool> | undefined {
  for (const column of columns) {
    if (!index.columns.includes(column)) throw new Error(`${index.table}.${column} is not in the trigram index ${index.name}`);
  }
  return DIALECTS[dialect].candidates(eb, index, rowId, columns, texts);
}

/**
 * Above this many candidate rows in the request's sites, reading the list in its own order and
 * checking each row's text finds a page sooner than reading and sorting every candidate: with
 * 2,000 matches a page of 25 needs at most 1 row in 80 of a million-contact site to be read.
 */
export const TRIGRAM_CANDIDATE_CAP = 2_000;

/** What the index proposes for a search in the request's sites (see `probeTrigramCandidates`). */
export interface TrigramProbe {
  /** Candidate rows, counted up to TRIGRAM_CANDIDATE_CAP. */
  candidates: number;
  /** PostgreSQL, below the cap: the candidates' ids, for the list query to start from. */
  ids?: readonly number[];
}

/**
 * Asks the index how many rows of the sites it proposes, up to TRIGRAM_CANDIDATE_CAP, for a
 * filter's probe (NamedFilterDef.probe); `trigramNarrowed` takes the answer to choose the plan.
 */
export async function probeTrigramCandidates(
  db: AnyDb,
  dialect: DialectName,
  index: TrigramIndex,
  columns: readonly string[],
  texts: readonly string[],
  siteIds: readonly number[],
): Promise<TrigramProbe | undefined> {
  return DIALECTS[dialect].probe(db, index, columns, texts, siteIds, TRIGRAM_CANDIDATE_CAP);
}

/** The exact condition of a common text, as the database should run it (see TrigramDialect.common). */
export function trigramCommon(dialect: DialectName, exact: Expression<SqlBool>): Expression<SqlBool> {
  return DIALECTS[dialect].common(exact);
}

/** Creates a trigram index (migrations). */
export async function createTrigramIndex(db: AnyDb, dialect: DialectName, index: TrigramIndex): Promise<void> {
  await DIALECTS[dialect].create(db, index);
}

DERIVED_DATA.push({
  name: 'trigram text search indexes',
  kind: 'index',
  async suspend(handle: DatabaseHandle) {
    for (const index of TRIGRAM_INDEXES) await DIALECTS[handle.traits.name].suspend(handle.db, index);
  },
  async rebuild(handle: DatabaseHandle) {
    for (const index of TRIGRAM_INDEXES) await DIALECTS[handle.traits.name].rebuild(handle.db, index);
  },
});
