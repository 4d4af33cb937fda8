// Who is making a request, resolved once per request from the Bearer token.
import type { AuditActor } from '../audit/audit-events.js';

export interface Principal {
  accountId: number;
  userId: number;
  apiKeyId: number;
  grantId: number;
  role: string;
  permissions: ReadonlySet<string>;
  /** Sites of the account this user may access, ascending. */
  siteIds: readonly number[];
  /**
   * How far the account's sandbox clock is ahead of real time, ms (0 unless moved with
   * POST /v1/test_helpers/clock/advance). "Now" for this principal's requests is
   * accountNow(realNow, principal).
   */
  clockOffsetMs: number;
  /** The API key's client id. */
  clientId?: string;
  /**
   * accounts.faults_version: 0 while the account never had sandbox faults; it goes up with each
   * one created or deleted (src/sandbox/faults.ts keeps its copy of the faults by it).
   */
  faultsVersion?: number;
  /**
   * Set on requests that only read (GET, HEAD): their reads may go to a read replica that has
   * replayed the primary's WAL up to this position (bytes), the account's last write
   * (src/db/replicas.ts). Absent: every read goes to the primary.
   */
  replicaReadsAfter?: number;
  /**
   * Set on requests that only read: the data version of each of siteIds (src/db/site-counters.ts),
   * read on the primary with the token, before anything else the request reads. The answer cache
   * keys what the request reads from the primary by it (src/jsonapi/engine.ts).
   */
  siteVersions?: ReadonlyMap<number, string>;
  /**
   * The sites this request's reads and writes reached so far, as the engine notes them
   * (noteTouchedSites): the sandbox's request journal records them, and a user limited to some
   * sites sees the requests about its own sites only. Set per API request by authentication.
   */
  touchedSites?: Set<number>;
  /**
   * Who the audit log names for this principal's administrative actions (src/audit/): the API key
   * and the request's address, the console's signed-in user, or the CLI. Absent: auditActorOf
   * derives it from the key (or sitebiz itself).
   */
  actor?: AuditActor;
  /** UPSTREAM_STRICT: answers carry only what the upstream API has (docs/upstream-strict.md). */
  upstreamOnly?: boolean;
}

/** Notes sites a request reached (Principal.touchedSites); nothing for a principal that keeps no note. */
export function noteTouchedSites(principal: Principal, siteIds: Iterable<number>): void {
  const touched = principal.touchedSites;
  if (touched) for (const id of siteIds) touched.add(id);
}

/**
 * The principal without its note of touched sites: for the reads that render what a write just
 * wrote, which reach no site the write did not (a show's scope is every site of the user).
 */
export function withoutSiteNote(principal: Principal): Principal {
  if (principal.touchedSites === undefined) return principal;
  const { touchedSites: _, ...rest } = principal;
  return rest;
}

/**
 * The principal with every read on the primary: for reads of what this process has just written
 * outside the request's own writes (the request journal's buffer), which no write position covers.
 */
export function readingFromPrimary(principal: Principal): Principal {
  if (principal.replicaReadsAfter === undefined) return principal;
  const { replicaReadsAfter: _, ...rest } = principal;
  return rest;
}

/** The account's "now": real time moved by the account's sandbox clock. */
export function accountNow(realNow: Date, principal: Pick<Principal, 'clockOffsetMs'>): Date {
  return !principal.clockOffsetMs ? realNow : new Date(realNow.getTime() + principal.clockOffsetMs);
}

/** Real time at an account time of the principal's account (queues and leases run on real time). */
export function realTimeOf(accountTime: Date, principal: Pick<Principal, 'clockOffsetMs'>): Date {
  return !principal.clockOffsetMs ? accountTime : new Date(accountTime.getTime() - principal.clockOffsetMs);
}
