// A query built and compiled once, then run many times with new parameter values. Building and
// compiling a Kysely query costs about as much as running a small one on SQLite, so hot paths
// with a fixed shape (the token check on every request) compile theirs at start-up.
import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import type { DatabaseHandle } from './connect.js';

export class ReusableQuery<Row> {
  private constructor(
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    private readonly db: Kysely<any>,
    private readonly name: string,
    private readonly sql: string,
    private readonly parameterCount: number,
    private readonly runSelect: DatabaseHandle['runSelect'],
  ) {}

  /**
   * Compiles `query`, which must be built with placeholder values in the order `execute` will
   * pass the real ones (checked by count).
   */
  static compile<Row>(
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    db: Kysely<any>,
    /** The prepared statement's name on PostgreSQL: one per query. */
    name: string,
    /** Runs it on the driver directly when given (DatabaseHandle.runSelect). */
    runSelect: DatabaseHandle['runSelect'],
    query: Compilable<Row>,
  ): ReusableQuery<Row> {
    const compiled = query.compile();
    return new ReusableQuery<Row>(db, name, compiled.sql, compiled.parameters.length, runSelect);
  }

  async execute(parameters: readonly unknown[]): Promise<Row[]> {
    if (parameters.length !== this.parameterCount) {
      throw new Error(`query takes ${this.parameterCount} parameters, got ${parameters.length}`);
    }
    const direct = this.runSelect?.<Row>(this.name, this.sql, parameters);
    if (direct) return direct;
    const result = await this.db.executeQuery<Row>(CompiledQuery.raw(this.sql, [...parameters]));
    return result.rows;
  }
}
