// A query built and compiled once, then run many times with new parameter values. Building and
// compiling a Kysely query costs about as much as running a small one on SQLite, so hot paths
// with a fixed shape (the token check on every request) compile theirs at start-up.
import { CompiledQuery, type Compilable, type Kysely } from 'kysely';

export class ReusableQuery<Row> {
  private constructor(
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    private readonly db: Kysely<any>,
    private readonly sql: string,
    private readonly parameterCount: number,
  ) {}

  /**
   * Compiles `query`, which must be built with placeholder values in the order `execute` will
   * pass the real ones (checked by count).
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  static compile<Row>(db: Kysely<any>, query: Compilable<Row>): ReusableQuery<Row> {
    const compiled = query.compile();
    return new ReusableQuery<Row>(db, compiled.sql, compiled.parameters.length);
  }

  async execute(parameters: readonly unknown[]): Promise<Row[]> {
    if (parameters.length !== this.parameterCount) {
      throw new Error(`query takes ${this.parameterCount} parameters, got ${parameters.length}`);
    }
    const result = await this.db.executeQuery<Row>(CompiledQuery.raw(this.sql, [...parameters]));
    return result.rows;
  }
}
