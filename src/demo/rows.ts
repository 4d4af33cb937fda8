// Rows before they are written. The generator builds plain rows whose foreign keys point at
// other rows (not ids), with Dates, booleans and objects as values; the writer inserts them in
// dependency order, learns each row's id, and encodes values for the dialect.
import type { Insertable } from 'kysely';
import type { Database } from '../db/schema.js';

export type TableName = keyof Database;

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * A column value before encoding: a Row stands for its id, a Date for a timestamp, a boolean for
 * a flag, and an array or plain object for JSON.
 */
export type Value = string | number | boolean | Date | null | AnyRow | JsonValue;

/** The columns of a table (checked against src/db/schema.ts), each holding a Value. */
export type Draft<T extends TableName> = { [K in keyof Insertable<Database[T]>]: Value };

export class Row<T extends TableName> {
  /** Set by the writer once the row is inserted (tables with an id column only). */
  id: number | undefined;

  constructor(
    readonly table: T,
    readonly values: Draft<T>,
  ) {}
}

export type AnyRow = Row<TableName>;

/** Rows grouped by table, in the order they were added. */
export class RowSet {
  private readonly byTable = new Map<TableName, AnyRow[]>();

  add<T extends TableName>(table: T, values: Draft<T>): Row<T> {
    const row = new Row(table, values);
    let list = this.byTable.get(table);
    if (!list) {
      list = [];
      this.byTable.set(table, list);
    }
    list.push(row as unknown as AnyRow);
    return row;
  }

  rows(table: TableName): readonly AnyRow[] {
    return this.byTable.get(table) ?? [];
  }

  tables(): TableName[] {
    return [...this.byTable.keys()];
  }

  clear(): void {
    this.byTable.clear();
  }
}

/** Tables whose rows have no id of their own (join tables): inserted without RETURNING. */
export const TABLES_WITHOUT_ID: ReadonlySet<TableName> = new Set<TableName>([
  'contact_taggings',
  'offer_products',
  'form_tags',
  'form_email_sequences',
  'purchase_transactions',
  'user_sites',
]);
