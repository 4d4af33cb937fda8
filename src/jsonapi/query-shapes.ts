// Queries compiled once per shape. Building and compiling a Kysely query costs about as much as
// running a small one on SQLite, and a list request runs several. The SQL text of a query depends
// only on its shape (which table, fields, sort, how many sites, which filters and how each
// compiled); the values change per request. So each query is described by a shape key and its
// parameter values, computed cheaply, and the SQL text is compiled once per key and reused; on
// SQLite the text then finds its prepared statement in the statement cache (src/db/connect.ts),
// on PostgreSQL the server parses the same text each time.
//
// The first compilation of every shape checks the parameters it produced against the ones computed
// for it: a shape whose parameters cannot be predicted (a declaration that puts a value somewhere
// unexpected) is remembered as such and always built in full, so a wrong guess can cost speed but
// never change an answer.
import { CompiledQuery, createQueryId, expressionBuilder, sql, type Compilable, type Expression, type Kysely } from 'kysely';
import type { DatabaseHandle } from '../db/connect.js';
import { LruMap } from './list-caches.js';
import type { AnyEB } from './resource.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/** A piece of a query (a condition) as SQL text and its parameters, for shape keys. */
export interface Fragment {
  sql: string;
  parameters: readonly unknown[];
}

const UNPREDICTABLE = Symbol('unpredictable');
let shapesNamed = 0;

/** A shape's SQL text, and the name its prepared statement goes by on PostgreSQL. */
interface CompiledShape {
  name: string;
  sql: string;
}

export class QueryShapes {
  private readonly compiled = new LruMap<string, CompiledShape | typeof UNPREDICTABLE>(5_000);
  /** How often shapes were reused and compiled, for the benchmark's report. */
  readonly stats = { reused: 0, compiled: 0, unpredictable: 0 };

  constructor(
    private readonly db: AnyDb,
    /** Runs compiled SQL on the driver directly (DatabaseHandle.runSelect); Kysely otherwise. */
    private readonly runSelect?: DatabaseHandle['runSelect'],
  ) {}

  /** Compiles one expression on its own, for its text (part of a shape key) and its parameters. */
  fragment(build: (eb: AnyEB) => Expression<unknown>): Fragment {
    const node = sql`${build(expressionBuilder())}`.toOperationNode();
    const compiled = this.db.getExecutor().compileQuery(node as never, createQueryId());
    return { sql: compiled.sql, parameters: compiled.parameters };
  }

  /**
   * Runs the query of shape `key` with `parameters` (which must be the values the built query binds,
   * in order). `build` is called only the first time a shape is seen, or for unpredictable shapes.
   */
  async run<Row>(key: string, parameters: readonly unknown[], build: () => Compilable<unknown>): Promise<Row[]> {
    const known = this.compiled.get(key);
    if (known !== undefined && known !== UNPREDICTABLE) {
      this.stats.reused++;
      const direct = this.runSelect?.<Row>(known.name, known.sql, parameters);
      if (direct) return direct;
      return (await this.db.executeQuery<Row>(CompiledQuery.raw(known.sql, [...parameters]))).rows;
    }
    const query = build().compile();
    if (known === undefined) {
      this.stats.compiled++;
      const predictable = sameValues(query.parameters, parameters);
      if (!predictable) this.stats.unpredictable++;
      // Names are unique in the process (pools may be shared), one per SQL text; PostgreSQL keeps
      // one prepared statement per name and connection.
      this.compiled.set(key, predictable ? { name: `sitebiz_shape_${++shapesNamed}`, sql: query.sql } : UNPREDICTABLE);
    }
    return (await this.db.executeQuery<Row>(query as CompiledQuery<Row>)).rows;
  }
}

function sameValues(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (x instanceof Date && y instanceof Date && x.getTime() === y.getTime()) continue;
    return false;
  }
  return true;
}
