// Faults on demand (docs/sandbox.md "Faults on demand"): requests of an account's keys that match
// one of its faults get the fault's answer (a JSON:API error) or its delay, or both. Runs after
// authentication (the account is known), never for /v1/test_helpers/*. A fault limited to sites
// (made by a user limited to them) answers only requests of keys whose every site is among them:
// the request's own sites are not known before it runs, the key's are.
//
// Cheap: authentication reads accounts.faults_version with the principal (no query of its own).
// It is 0 for an account that never had faults, which costs nothing more; otherwise each process
// keeps a copy of the account's faults for that version, read once. Creating or deleting a fault
// raises the version in the same transaction, so every process, whichever served the change,
// sees it from the next request on. A `times` fault is spent by a conditional UPDATE per hit
// (remaining > 0), so that processes sharing the database answer exactly `times` requests with it
// between them; a process whose copy holds a fault spent meanwhile drops its copy.
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { DatabaseHandle } from '../db/connect.js';
import { ApiError } from '../jsonapi/errors.js';
import { pathOf } from '../jsonapi/routes.js';
import { sitesOf } from './site-scope.js';

export const FAULT_STATUSES = [429, 500, 502, 503, 504] as const;
export const MAX_LATENCY_MS = 60_000;
/** Retry-After of a 429 or 503 fault, in seconds. */
export const FAULT_RETRY_AFTER_SECONDS = 1;
const TEST_HELPERS = '/v1/test_helpers';
/** Accounts whose faults a process keeps; beyond this it starts over. */
const CACHE_LIMIT = 10_000;

const TITLES: Record<number, string> = {
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** What a fault did to a request: a delay, an error status, or both. */
export interface InjectedFault {
  latency: boolean;
  status: number | null;
}

interface ActiveFault {
  id: number;
  /** Null: any method. */
  method: string | null;
  pattern: RegExp;
  status: number | null;
  latencyMs: number | null;
  /** Null: not counted (every match, or `rate` of them). */
  remaining: number | null;
  rate: number | null;
  /** The sites the fault is limited to; null: the whole account. */
  siteIds: number[] | null;
}

/** A path pattern where `*` stands for any text (slashes included), as a whole-path RegExp. */
export function pathPattern(path: string): RegExp {
  const escaped = path.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`);
}

/** Whether a path is one of the test helpers, which faults never touch. */
export function isTestHelperPath(path: string): boolean {
  return path === TEST_HELPERS || path.startsWith(`${TEST_HELPERS}/`);
}

export class FaultInjector {
  /** Each account's faults, as read when its faults_version was `version`. */
  private readonly cache = new Map<number, { version: number; faults: ActiveFault[] }>();

  constructor(
    private readonly handle: DatabaseHandle,
    private readonly random: () => number = Math.random,
    /** Told of every fault that answers or delays a request (metrics). */
    private readonly onInjected?: (fault: InjectedFault) => void,
  ) {}

  /** Forget the account's faults (one of them was spent). */
  private invalidate(accountId: number): void {
    this.cache.delete(accountId);
  }

  /** The onRequest hook of the authenticated routes, after the Bearer check. */
  readonly inject = async (request: FastifyRequest): Promise<void> => {
    const principal = request.principal;
    if (!principal?.faultsVersion) return;
    const faults = await this.faultsOf(principal.accountId, principal.faultsVersion);
    if (faults.length === 0) return;
    const path = pathOf(request);
    if (isTestHelperPath(path)) return;
    for (const fault of faults) {
      if (fault.method !== null && fault.method !== request.method) continue;
      if (fault.siteIds !== null && !withinSites(principal.siteIds, fault.siteIds)) continue;
      if (!fault.pattern.test(path)) continue;
      if (fault.rate !== null && this.random() >= fault.rate) continue;
      if (!(await this.spend(principal.accountId, fault))) continue;
      this.onInjected?.({ latency: Boolean(fault.latencyMs), status: fault.status });
      if (fault.latencyMs) await sleep(fault.latencyMs);
      if (fault.status !== null) throw faultError(fault, request.method, path);
      return;
    }
  };

  /** Counts a hit; for a `times` fault only while some remain (false: spent, by another process perhaps). */
  private async spend(accountId: number, fault: ActiveFault): Promise<boolean> {
    const { db } = this.handle;
    if (fault.remaining === null) {
      await db.updateTable('sandbox_faults').set({ hits: sql`hits + 1` }).where('id', '=', fault.id).execute();
      return true;
    }
    const spent = await db
      .updateTable('sandbox_faults')
      .set({ remaining: sql`remaining - 1`, hits: sql`hits + 1` })
      .where('id', '=', fault.id)
      .where('remaining', '>', 0)
      .executeTakeFirst();
    if (Number(spent.numUpdatedRows) === 1) return true;
    this.invalidate(accountId);
    return false;
  }

  private async faultsOf(accountId: number, version: number): Promise<ActiveFault[]> {
    const cached = this.cache.get(accountId);
    if (cached && cached.version === version) return cached.faults;
    const rows = await this.handle.db
      .selectFrom('sandbox_faults')
      .select(['id', 'method', 'path', 'status', 'latency_ms', 'remaining', 'rate', 'site_ids', 'site_count'])
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('remaining', 'is', null), eb('remaining', '>', 0)]))
      .orderBy('id')
      .execute();
    const faults = rows.map((row) => ({
      id: Number(row.id),
      method: row.method,
      pattern: pathPattern(row.path),
      status: row.status === null ? null : Number(row.status),
      latencyMs: row.latency_ms === null ? null : Number(row.latency_ms),
      remaining: row.remaining === null ? null : Number(row.remaining),
      rate: row.rate === null ? null : Number(row.rate),
      siteIds: Number(row.site_count) === 0 ? null : sitesOf(row.site_ids),
    }));
    // Read after the version was: a change since is newer than `version`, and the next request
    // (holding the newer version) reads again.
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(accountId, { version, faults });
    return faults;
  }
}

/**
 * Whether a fault limited to `faultSites` may answer a request of a key reaching `requestSites`:
 * only when each of those is one of the fault's, so that it never answers a request that could be
 * about another site (a key reaching no site is about none of the fault's).
 */
function withinSites(requestSites: readonly number[], faultSites: readonly number[]): boolean {
  return requestSites.length > 0 && requestSites.every((id) => faultSites.includes(id));
}

/** Raises the account's faults_version: run in the transaction that creates or deletes a fault. */
export async function faultsChanged(db: DatabaseHandle['db'], accountId: number): Promise<void> {
  await db.updateTable('accounts').set({ faults_version: sql`faults_version + 1` }).where('id', '=', accountId).execute();
}

function faultError(fault: ActiveFault, method: string, path: string): ApiError {
  const status = fault.status!;
  const headers: Record<string, string> = status === 429 || status === 503 ? { 'retry-after': String(FAULT_RETRY_AFTER_SECONDS) } : {};
  return new ApiError(
    status,
    [{ code: 'fault_injected', title: TITLES[status] ?? 'Error', detail: `Sandbox fault ${fault.id} answered ${method} ${path} with ${status} (DELETE /v1/test_helpers/faults/${fault.id} removes it)` }],
    headers,
  );
}
