// Where an import stands (import_runs, import_pages: 0019_import_checkpoints). A run is one source
// (base URL and client id) into one account; it is `running` until every step is written. Each
// page of a step is checked off in the transaction that writes its records, so after any
// interruption (Ctrl-C, kill -9, the network gone) a page is either written and checked off or
// neither, and the same command continues with the pages that are not.
import type { Kysely, Transaction } from 'kysely';
import type { DatabaseHandle } from '../db/connect.js';
import type { Database } from '../db/schema.js';

export interface ImportRun {
  id: number;
  accountId: number;
  offsets: Record<string, number>;
  startedAt: Date;
}

/** The page number that marks a whole step done. */
const STEP_DONE = 0;

export const sourceKey = (baseUrl: string, clientId: string): string => `${baseUrl.replace(/\/+$/, '')} ${clientId}`;

export async function unfinishedRun(handle: DatabaseHandle, source: string): Promise<ImportRun | undefined> {
  const row = await handle.db
    .selectFrom('import_runs')
    .select(['id', 'account_id', 'id_offsets', 'started_at'])
    .where('source', '=', source)
    .where('status', '=', 'running')
    .orderBy('id', 'desc')
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    id: Number(row.id),
    accountId: Number(row.account_id),
    offsets: JSON.parse(row.id_offsets) as Record<string, number>,
    startedAt: new Date(handle.traits.decodeTimestamp(row.started_at)!),
  };
}

export async function startRun(trx: Kysely<Database>, handle: DatabaseHandle, input: { source: string; accountId: number; offsets: Record<string, number>; startedAt: Date }): Promise<ImportRun> {
  const row = await trx
    .insertInto('import_runs')
    .values({
      source: input.source,
      account_id: input.accountId,
      id_offsets: JSON.stringify(input.offsets),
      status: 'running',
      started_at: handle.traits.encodeTimestamp(input.startedAt),
      finished_at: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: Number(row.id), accountId: input.accountId, offsets: input.offsets, startedAt: input.startedAt };
}

export async function finishRun(handle: DatabaseHandle, runId: number, at: Date): Promise<void> {
  await handle.db.updateTable('import_runs').set({ status: 'done', finished_at: handle.traits.encodeTimestamp(at) }).where('id', '=', runId).execute();
}

/** The pages of a step already written: page → records. */
export async function writtenPages(handle: DatabaseHandle, runId: number, step: string): Promise<Map<number, number>> {
  const rows = await handle.db.selectFrom('import_pages').select(['page', 'records']).where('run_id', '=', runId).where('step', '=', step).execute();
  return new Map(rows.map((r) => [Number(r.page), Number(r.records)]));
}

export function isStepDone(pages: ReadonlyMap<number, number>): boolean {
  return pages.has(STEP_DONE);
}

/** Records written by a step's pages (not counting the done mark). */
export function recordsOf(pages: ReadonlyMap<number, number>): number {
  let n = 0;
  for (const [page, records] of pages) if (page !== STEP_DONE) n += records;
  return n;
}

/** Checks a page off, in the transaction that wrote its records. */
export async function checkPage(trx: Transaction<Database>, runId: number, step: string, page: number, records: number): Promise<void> {
  await trx.insertInto('import_pages').values({ run_id: runId, step, page, records }).execute();
}

export async function checkStep(handle: DatabaseHandle, runId: number, step: string): Promise<void> {
  await handle.db.insertInto('import_pages').values({ run_id: runId, step, page: STEP_DONE, records: 0 }).execute();
}
