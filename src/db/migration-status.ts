// Where a database stands against this version's migrations (src/db/migrations/): for
// `sitebiz migrate --status`, for `serve` with MIGRATE_ON_START=off (which waits for a current
// schema) and for GET /readyz. One small read of Kysely's migration table, no lock.
import { sql } from 'kysely';
import type { DatabaseHandle } from './connect.js';
import { MIGRATIONS, type AppMigration } from './migrations/index.js';

/** Kysely's default name for the table of applied migrations. */
const MIGRATION_TABLE = 'kysely_migration';

export interface AppliedMigration {
  name: string;
  /** When it was applied (Kysely writes an ISO 8601 time). */
  appliedAt: string;
}

export interface MigrationStatus {
  applied: AppliedMigration[];
  /** This version's migrations not applied yet, in the order `sitebiz migrate` applies them. */
  pending: AppMigration[];
  /** Applied migrations this version does not know: the database was migrated by a newer sitebiz. */
  unknown: string[];
}

/** The migrations applied to the database, oldest first; none when it has no migration table. */
export async function appliedMigrations(handle: DatabaseHandle): Promise<AppliedMigration[]> {
  const table = handle.schema !== undefined ? sql.table(`${handle.schema}.${MIGRATION_TABLE}`) : sql.table(MIGRATION_TABLE);
  try {
    const { rows } = await sql<{ name: string; timestamp: string }>`select name, timestamp from ${table} order by name`.execute(handle.db);
    return rows.map((r) => ({ name: r.name, appliedAt: String(r.timestamp) }));
  } catch (error) {
    if (isMissingTable(error)) return [];
    throw error;
  }
}

/** A new database: nothing migrated yet (SQLite: "no such table"; PostgreSQL: 42P01). */
function isMissingTable(error: unknown): boolean {
  return (error as { code?: unknown }).code === '42P01' || /no such table/i.test((error as Error).message ?? '');
}

export async function migrationStatus(handle: DatabaseHandle): Promise<MigrationStatus> {
  const applied = await appliedMigrations(handle);
  const names = new Set(applied.map((m) => m.name));
  const known = new Set(MIGRATIONS.map((m) => m.name));
  return {
    applied,
    pending: MIGRATIONS.filter((m) => !names.has(m.name)),
    unknown: applied.map((m) => m.name).filter((name) => !known.has(name)),
  };
}

/**
 * The names of this version's migrations the database lacks (empty: the schema is current).
 * Cheap enough for a readiness probe: one read of a table of a few dozen rows.
 */
export async function pendingMigrations(handle: DatabaseHandle): Promise<string[]> {
  return (await migrationStatus(handle)).pending.map((m) => m.name);
}
