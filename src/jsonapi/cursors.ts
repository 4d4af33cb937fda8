// Opaque cursors for cursor paging (`page[after]`, `page[before]`). A cursor names a position in
// one list: the sort key value and id of a record, plus what makes the position meaningful (the
// type, the sort and the sites). It is signed, so a cursor that was edited, or that belongs to
// another list, sort or site, is refused with a 400 instead of silently paging somewhere else.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { invalidParameter } from './errors.js';

/** A sort key value as the cursor stores it: timestamps as ISO text, numbers as numbers. */
export type CursorValue = string | number | boolean | null;

export interface CursorPosition {
  /** The sort key's value at the position (absent when the list is sorted by id alone). */
  value: CursorValue;
  id: number;
}

/** What a cursor is bound to: it only works on the same list, in the same order, on the same sites. */
export interface CursorScope {
  type: string;
  sort: string;
  siteIds: readonly number[];
}

const VERSION = 1;

export class CursorCodec {
  constructor(private readonly key: Buffer) {}

  encode(scope: CursorScope, position: CursorPosition): string {
    const body = Buffer.from(JSON.stringify([VERSION, scope.type, scope.sort, scope.siteIds, position.value, position.id])).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  /** The position a cursor names, or a 400 naming `parameter`. */
  decode(parameter: string, cursor: string, scope: CursorScope): CursorPosition {
    const refuse = (why: string) => invalidParameter(parameter, `${parameter} is not a cursor of this list: ${why}`);
    const dot = cursor.indexOf('.');
    if (dot <= 0) throw refuse('it is not a cursor this server issued');
    const body = cursor.slice(0, dot);
    const given = Buffer.from(cursor.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.sign(body), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refuse('it is not a cursor this server issued, or it was changed');
    let parts: unknown;
    try {
      parts = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      throw refuse('it is not a cursor this server issued');
    }
    if (!Array.isArray(parts) || parts.length !== 6 || parts[0] !== VERSION) throw refuse('it comes from another version of the server');
    const [, type, sort, siteIds, value, id] = parts as [number, string, string, number[], CursorValue, number];
    if (type !== scope.type) throw refuse(`it belongs to the ${type} list`);
    if (sort !== scope.sort) throw refuse(`it was made for sort=${sort}; use it with that sort or start again with ${parameter}=`);
    if (siteIds.join(',') !== scope.siteIds.join(',')) throw refuse('it was made for another site');
    return { value, id };
  }

  private sign(body: string): string {
    return createHmac('sha256', this.key).update(body).digest().subarray(0, 16).toString('base64url');
  }
}

/** A driver value of a sort key as a cursor keeps it. */
export function cursorValue(raw: unknown): CursorValue {
  if (raw === null || raw === undefined) return null;
  if (raw instanceof Date) return raw.toISOString();
  if (typeof raw === 'bigint') return raw.toString();
  if (typeof raw === 'number' || typeof raw === 'string' || typeof raw === 'boolean') return raw;
  return String(raw);
}
