// Read replicas (DATABASE_REPLICA_URL, docs/scaling.md "Read replicas"): PostgreSQL streaming
// replicas that serve the JSON:API engine's reads of GET requests, without weakening what the API
// promises. The model is GitLab's database load balancer:
// - Read-your-writes. After a request of an account that may have written (any method but GET,
//   HEAD and OPTIONS), the primary's WAL position is recorded for the account before the answer
//   leaves (account_write_positions). The next request reads it with its token, on the primary,
//   and its reads go only to a replica that has replayed past it; otherwise to the primary. The
//   position lives in the database, so every process behind a load balancer honours it.
// - Bounded lag. Every PROBE_INTERVAL_MS a probe asks the primary for its WAL position and each
//   replica for its replay position. A replica's lag is how long ago the primary stood where the
//   replica now is; a replica lagging more than DATABASE_REPLICA_MAX_LAG_MS, not in recovery (a
//   promoted one), or not answering serves nothing until a probe finds it well again.
// - No errors from replicas. A read that fails on a replica because the replica is down, restarting
//   or cancelled the statement (a conflict with recovery) runs again on the primary, and the replica
//   is left out until the next good probe.
// - Exact where it must be. Tokens, keys, rate limits, console sessions, writes and every read
//   outside the engine's GET reads stay on the primary: the replica is used only where a principal
//   carries `replicaReadsAfter` (src/auth/authenticate.ts sets it for GET and HEAD).
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely';
import pg from 'pg';
import type { ReplicaConfig } from '../config.js';
import { redactUrl } from '../config.js';
import type { RunSelect } from './connect.js';
import type { DialectTraits } from './dialect-traits.js';
import type { Database } from './schema.js';

/** How often each process probes the primary's and the replicas' WAL positions. */
export const PROBE_INTERVAL_MS = 100;
/** A new replica connection that takes longer than this fails, and the read goes to the primary. */
const REPLICA_CONNECT_TIMEOUT_MS = 1_000;
/** How long a probe waits for an answer before it counts as a failure. */
const PROBE_TIMEOUT_MS = 1_000;

/** Where a request's reads run: the engine reads through `db` and `runSelect` as it would the primary's. */
export interface ReadSource {
  db: Kysely<Database>;
  runSelect: RunSelect;
}

export interface ReplicaStatus {
  url: string;
  /** Whether it serves reads now. */
  serving: boolean;
  /** Why not, when it does not. */
  reason?: string;
  /** How far behind the primary it was at the last probe, ms (undefined before one answered). */
  lagMs?: number;
  /** Reads it served, and reads that failed on it and ran again on the primary. */
  reads: number;
  fallbacks: number;
}

/** The primary, as the replica set falls back to it. */
export interface PrimaryAccess {
  pool: pg.Pool;
  runSelect: RunSelect;
  traits: DialectTraits;
}

interface Sample {
  at: number;
  position: bigint;
}

/** One replica: its pool, what the last probe found, and its read source (which falls back to the primary). */
class Replica {
  readonly pool: pg.Pool;
  readonly source: ReadSource;
  replayed: bigint | undefined;
  lagMs: number | undefined;
  /** Why it serves no reads now (undefined: it may). */
  unusable: string | undefined = 'not probed yet';
  reads = 0;
  fallbacks = 0;

  constructor(
    readonly url: string,
    poolOptions: pg.PoolConfig,
    primary: PrimaryAccess,
    makeRunSelect: (pool: pg.Pool) => RunSelect,
  ) {
    this.pool = new pg.Pool({ ...poolOptions, connectionString: url, connectionTimeoutMillis: REPLICA_CONNECT_TIMEOUT_MS });
    const runOnReplica = makeRunSelect(this.pool);
    const runSelect: RunSelect = async <Row>(name: string, text: string, parameters: readonly unknown[]): Promise<Row[]> => {
      this.reads++;
      try {
        return await runOnReplica<Row>(name, text, parameters);
      } catch (error) {
        if (!this.failsOver(error, primary.traits)) throw error;
        return primary.runSelect<Row>(name, text, parameters);
      }
    };
    this.source = { db: new Kysely<Database>({ dialect: new PostgresDialect({ pool: this.failoverPool(primary) }) }), runSelect };
  }

  /**
   * Whether a failed read runs again on the primary: when the replica rather than the statement
   * failed (it is down or restarting, the connection broke, it cancelled the statement for a
   * conflict with recovery, 40001 on a standby, or it refused a write, 25006, which only a bug
   * would send). Then the replica is also left out until the next good probe.
   */
  failsOver(error: unknown, traits: DialectTraits): boolean {
    const code = (error as { code?: unknown }).code;
    const failed = traits.isUnavailable(error) || code === '40001' || code === '25006' || (error instanceof Error && /timeout exceeded when trying to connect/.test(error.message));
    if (failed) {
      this.fallbacks++;
      this.unusable = `a read failed on it: ${error instanceof Error ? error.message : String(error)}`;
    }
    return failed;
  }

  /**
   * The pool Kysely reads through: connections of the replica whose statements run again on the
   * primary when the replica fails them, and connections of the primary when the replica cannot be
   * reached at all.
   */
  private failoverPool(primary: PrimaryAccess): PostgresPool {
    return {
      connect: async (): Promise<PostgresPoolClient> => {
        let client: pg.PoolClient;
        try {
          client = await this.pool.connect();
        } catch (error) {
          if (!this.failsOver(error, primary.traits)) throw error;
          return primary.pool.connect();
        }
        let broken: Error | undefined;
        return {
          query: ((text: unknown, parameters?: unknown[]) => {
            // A cursor (streamed rows) is handed over as it is: it is not retried.
            if (typeof text !== 'string') return client.query(text as never);
            this.reads++;
            return client.query(text, parameters).catch((error: unknown) => {
              if (!this.failsOver(error, primary.traits)) throw error;
              broken = error as Error;
              return primary.pool.query(text, parameters);
            });
          }) as unknown as PostgresPoolClient['query'],
          // A connection that failed is destroyed, not handed to the next read.
          release: () => client.release(broken),
        };
      },
      end: () => this.pool.end(),
    };
  }
}

export class ReplicaSet {
  private readonly replicas: Replica[];
  /** The primary's WAL positions at recent probes, oldest first: what a replica's lag is measured against. */
  private samples: Sample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private probing: Promise<void> | undefined;
  private next = 0;

  constructor(
    private readonly config: ReplicaConfig,
    private readonly primary: PrimaryAccess,
    poolOptions: pg.PoolConfig,
    /** Sets up a new pool's connections (error listeners, session settings) and gives its runSelect. */
    makeRunSelect: (pool: pg.Pool) => RunSelect,
  ) {
    this.replicas = config.connectionStrings.map((url) => new Replica(url, poolOptions, primary, makeRunSelect));
  }

  /** Probes once (so the first requests may already use a replica that is there), then every PROBE_INTERVAL_MS. */
  async start(): Promise<void> {
    await this.probe();
    this.timer = setInterval(() => void this.probe(), PROBE_INTERVAL_MS);
    this.timer.unref();
  }

  /**
   * A replica that has replayed the primary's WAL up to `position` (bytes) and is within the lag
   * bound, taken in turn; undefined when none is (the reads then go to the primary).
   */
  sourceAfter(position: number): ReadSource | undefined {
    const wanted = BigInt(position);
    const count = this.replicas.length;
    for (let i = 0; i < count; i++) {
      const replica = this.replicas[(this.next + i) % count]!;
      if (replica.unusable === undefined && replica.replayed !== undefined && replica.replayed >= wanted) {
        this.next = (this.next + i + 1) % count;
        return replica.source;
      }
    }
    return undefined;
  }

  /**
   * Records that the account may just have written: its next reads wait for a replica that has
   * replayed past the primary's current WAL position. One statement, which commits without waiting
   * for its WAL flush (set_config(..., true) lasts until the statement's own commit): it is
   * bookkeeping, and a crash that loses it also restarts the primary the replicas follow. The
   * insert position covers every commit that has returned, whatever synchronous_commit they ran
   * with. (No explicit BEGIN: a multi-statement string that failed half-way would leave its
   * connection inside an aborted transaction.)
   */
  async recordWrite(accountId: number): Promise<void> {
    await this.primary.pool.query(
      `with unsynchronized as (select set_config('synchronous_commit', 'off', true))
       insert into account_write_positions (account_id, wal_position)
       select $1, pg_current_wal_insert_lsn() - '0/0' from unsynchronized
       on conflict (account_id) do update set wal_position = greatest(account_write_positions.wal_position, excluded.wal_position)`,
      [accountId],
    );
  }

  /** What each replica looked like at the last probe, for operators and tests. */
  status(): ReplicaStatus[] {
    return this.replicas.map((r) => ({
      url: redactUrl(r.url),
      serving: r.unusable === undefined,
      ...(r.unusable !== undefined ? { reason: r.unusable } : {}),
      ...(r.lagMs !== undefined ? { lagMs: r.lagMs } : {}),
      reads: r.reads,
      fallbacks: r.fallbacks,
    }));
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.probing;
    await Promise.all(this.replicas.map((r) => r.source.db.destroy()));
  }

  /** One round: the primary's position first, then each replica's replay position against it. */
  private probe(): Promise<void> {
    // A slow round is not stacked on: the next tick finds it still running and skips.
    this.probing ??= this.probeRound().finally(() => (this.probing = undefined));
    return this.probing;
  }

  private async probeRound(): Promise<void> {
    const now = Date.now();
    try {
      const { rows } = await withTimeout(this.primary.pool.query<{ position: string }>(`select (pg_current_wal_insert_lsn() - '0/0')::bigint::text as position`));
      this.samples.push({ at: now, position: BigInt(rows[0]!.position) });
    } catch {
      // Without the primary's position no lag can be known: the samples age out below, and with
      // them every replica's right to serve.
    }
    // Keep samples back to the lag bound (and one older, which bounds the lag of a replica between).
    const horizon = now - this.config.maxLagMs;
    let drop = 0;
    while (drop + 1 < this.samples.length && this.samples[drop + 1]!.at <= horizon) drop++;
    if (drop > 0) this.samples = this.samples.slice(drop);
    await Promise.all(this.replicas.map((replica) => this.probeReplica(replica, now)));
  }

  private async probeReplica(replica: Replica, now: number): Promise<void> {
    try {
      const { rows } = await withTimeout(
        replica.pool.query<{ recovering: boolean; replayed: string | null }>(
          `select pg_is_in_recovery() as recovering, (pg_last_wal_replay_lsn() - '0/0')::bigint::text as replayed`,
        ),
      );
      const row = rows[0]!;
      if (!row.recovering || row.replayed === null) {
        replica.replayed = undefined;
        replica.unusable = 'it is not a replica in recovery (promoted, or a primary)';
        return;
      }
      replica.replayed = BigInt(row.replayed);
      replica.lagMs = this.lagOf(replica.replayed, now);
      replica.unusable =
        replica.lagMs === undefined
          ? 'its lag is not known (the primary is not answering the probes, or the replica is behind every probe since this process started)'
          : replica.lagMs > this.config.maxLagMs
            ? `it lags ${replica.lagMs} ms behind the primary (DATABASE_REPLICA_MAX_LAG_MS is ${this.config.maxLagMs})`
            : undefined;
    } catch (error) {
      replica.unusable = `the probe failed: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  /**
   * At most how long ago the primary stood where the replica is now: the newest sample the replica
   * has reached says it has everything the primary had at that sample's time. Undefined when that
   * cannot be told: no recent sample (the primary is not answering the probes), or the replica is
   * behind every sample while they do not reach back to the lag bound yet (a process just started).
   */
  private lagOf(replayed: bigint, now: number): number | undefined {
    const newest = this.samples[this.samples.length - 1];
    if (!newest || now - newest.at > Math.max(this.config.maxLagMs, 3 * PROBE_INTERVAL_MS)) return undefined;
    for (let i = this.samples.length - 1; i >= 0; i--) {
      const sample = this.samples[i]!;
      if (sample.position <= replayed) return now - sample.at;
    }
    const oldest = this.samples[0]!;
    return oldest.at <= now - this.config.maxLagMs ? now - oldest.at : undefined;
  }
}

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
