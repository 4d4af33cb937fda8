// Helpers of the write suites: JSON:API requests with a body, row counts that prove a refused
// request wrote nothing, a second account to prove records of others behave as missing, and the
// assertion every refusal makes (status, code, source.pointer).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createAccount, createSite, createUser } from '../../src/domain/accounts.js';
import type { TestApp } from './harness.js';

export type Res = Awaited<ReturnType<TestApp['request']>>;

export const JSONAPI = 'application/vnd.api+json';

/** A request whose body is `body` (JSON-encoded unless already a string). */
export function send(
  t: TestApp,
  method: 'POST' | 'PATCH' | 'DELETE',
  url: string,
  token: string,
  body?: unknown,
  contentType = JSONAPI,
): Promise<Res> {
  return t.request({
    method,
    url,
    token,
    ...(body === undefined ? {} : { headers: { 'content-type': contentType }, payload: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

/** Rows per table, to compare before and after a request. */
export async function rowCounts(t: TestApp, tables: readonly string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const db = t.handle.db as any;
  for (const table of tables) {
    const row = await db.selectFrom(table).select((eb: any) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    counts[table] = Number(row.n);
  }
  return counts;
}

/** Every row of a table, as the driver returns them, for before/after comparisons. */
export async function rowsOf(t: TestApp, table: string): Promise<unknown[]> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (t.handle.db as any).selectFrom(table).selectAll().orderBy('id').execute();
}

/** Asserts an error document: the status, the first error's code and (when given) its pointer. */
export function assertError(res: Res, status: number, code?: string, pointer?: string): void {
  assert.equal(res.statusCode, status, `expected ${status}: ${res.body}`);
  assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/, 'errors are JSON:API documents');
  const errors = res.json().errors as Array<{ status: string; code: string; source?: { pointer?: string } }>;
  assert.ok(Array.isArray(errors) && errors.length > 0, `an errors array: ${res.body}`);
  // With problems of several kinds the response is 400 and each error keeps its own status.
  if (status !== 400) for (const e of errors) assert.equal(e.status, String(status), `every error carries the status: ${res.body}`);
  if (code !== undefined) assert.ok(errors.some((e) => e.code === code), `an error with code ${code}: ${res.body}`);
  if (pointer !== undefined) assert.ok(errors.some((e) => e.source?.pointer === pointer), `an error at ${pointer}: ${res.body}`);
}

/** Another account with one site, unreachable by the test tenant. */
export async function otherAccount(t: TestApp): Promise<{ accountId: number; siteId: number; ownerId: number }> {
  const accountId = await createAccount(t.handle, { name: 'Other Account' }, t.clock);
  const ownerId = await createUser(t.handle, { accountId, name: 'Other Owner', email: `other-${accountId}@example.com`, role: 'owner' }, t.clock);
  const siteId = await createSite(t.handle, { accountId, title: 'Other Site', subdomain: `other-${randomBytes(4).toString('hex')}` }, t.clock);
  return { accountId, siteId, ownerId };
}
