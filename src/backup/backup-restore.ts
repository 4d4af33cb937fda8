// `sitebiz backup` and `sitebiz restore` for either database (docs/operations.md "Backups"):
// SQLite copies its file (sqlite-backup.ts), PostgreSQL writes sitebiz's own dump
// (postgres-dump.ts). A restore writes only into an empty database, and leaves it migrated to this
// version: a backup taken by an older sitebiz restores, then migrates.
import { closeSync, openSync, readSync } from 'node:fs';
import type { DatabaseConfig } from '../config.js';
import { connectDatabase, migrateTo, migrateToLatest, type DatabaseHandle } from '../db/connect.js';
import { MIGRATIONS } from '../db/migrations/index.js';
import { AdminError } from '../domain/accounts.js';
import { checkDump, dumpPostgres, loadDump, postgresTables } from './postgres-dump.js';
import type { Progress } from './progress.js';
import { backupSqlite, restoreSqlite, SQLITE_HEADER, sqliteBackupMigrations, sqliteTables } from './sqlite-backup.js';

export interface BackupResult {
  file: string;
  dialect: 'sqlite' | 'postgres';
  bytes: number;
  milliseconds: number;
  /** SQLite: the copy's PRAGMA integrity_check ("ok"). */
  integrity?: string;
  /** PostgreSQL: rows per table. */
  rows?: Record<string, number>;
}

export async function backupDatabase(database: DatabaseConfig, file: string, progress?: Progress): Promise<BackupResult> {
  if (database.dialect === 'sqlite') {
    if (database.filename === ':memory:') throw new AdminError('an in-memory database has nothing another process can back up');
    const copy = await backupSqlite(database.filename, file, progress);
    return { file, dialect: 'sqlite', bytes: copy.bytes, milliseconds: copy.milliseconds, integrity: copy.integrity };
  }
  const handle = await connectDatabase(database, { poolSize: 1 });
  try {
    const dump = await dumpPostgres(handle, file, progress);
    return { file, dialect: 'postgres', bytes: dump.bytes, milliseconds: dump.milliseconds, rows: dump.rows };
  } finally {
    await handle.close();
  }
}

export interface RestoreResult {
  file: string;
  dialect: 'sqlite' | 'postgres';
  /** The version of the backup: the last migration it had. */
  backupMigration: string | null;
  /** Migrations applied after loading (the backup was older than this sitebiz). */
  migrationsApplied: string[];
  rows?: Record<string, number>;
  milliseconds: number;
}

/** What a backup file is, from its first bytes. */
function kindOf(file: string): 'sqlite' | 'postgres' {
  const bytes = Buffer.alloc(16);
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    throw new AdminError(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    readSync(fd, bytes, 0, 16, 0);
  } finally {
    closeSync(fd);
  }
  if (bytes.toString('latin1') === SQLITE_HEADER) return 'sqlite';
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return 'postgres';
  throw new AdminError(`${file} is not a sitebiz backup (neither a SQLite file nor a sitebiz PostgreSQL dump)`);
}

/** A backup whose migrations this version does not all know was taken by a newer sitebiz. */
function checkVersion(migrations: readonly string[]): void {
  const known = new Set(MIGRATIONS.map((m) => m.name));
  const unknown = migrations.filter((name) => !known.has(name));
  if (unknown.length > 0) throw new AdminError(`the backup was taken by a newer sitebiz (it has migrations ${unknown.join(', ')}); restore it with that version or later`);
}

function refuseNonEmpty(description: string, tables: string[]): void {
  if (tables.length === 0) return;
  const shown = tables.slice(0, 5).join(', ') + (tables.length > 5 ? ', ...' : '');
  throw new AdminError(
    `${description} is not empty (${tables.length} table(s): ${shown}); restore writes only into an empty database, and wrote nothing. Point DATABASE_URL at a new database (or file), or drop this one first`,
  );
}

export async function restoreDatabase(database: DatabaseConfig, file: string, progress?: Progress): Promise<RestoreResult> {
  const started = performance.now();
  const kind = kindOf(file);
  if (kind !== database.dialect) {
    throw new AdminError(`${file} is a backup of a ${kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'} database: restore it into ${kind === 'sqlite' ? 'a sqlite: DATABASE_URL' : 'a postgres:// DATABASE_URL'}`);
  }
  if (database.dialect === 'sqlite') {
    if (database.filename === ':memory:') throw new AdminError('restore into a database file (DATABASE_URL=sqlite:<path>), not into memory');
    refuseNonEmpty(`SQLite ${database.filename}`, sqliteTables(database.filename));
    const migrations = sqliteBackupMigrations(file);
    checkVersion(migrations);
    await restoreSqlite(file, database.filename, progress);
    const migrationsApplied = await migrateAfterRestore(database);
    return { file, dialect: 'sqlite', backupMigration: migrations.at(-1) ?? null, migrationsApplied, milliseconds: Math.round(performance.now() - started) };
  }
  const handle = await connectDatabase(database, { poolSize: 1 });
  try {
    return { ...(await restorePostgres(handle, file, progress)), milliseconds: Math.round(performance.now() - started) };
  } finally {
    await handle.close();
  }
}

/**
 * A PostgreSQL restore into the handle's schema (its search_path): refuses a schema with tables,
 * reads the whole dump once to check it (nothing is written for a torn or newer file), makes the
 * schema of the backup's version, loads the rows in one transaction, then migrates to this version.
 */
export async function restorePostgres(handle: DatabaseHandle, file: string, progress?: Progress): Promise<Omit<RestoreResult, 'milliseconds'>> {
  refuseNonEmpty(handle.description, await postgresTables(handle));
  const checked = await checkDump(file).catch((error: Error) => {
    throw new AdminError(error.message);
  });
  checkVersion(checked.header.migrations);
  const backupMigration = checked.header.migrations.at(-1) ?? null;
  if (backupMigration !== null) await migrateTo(handle, backupMigration);
  // The load is one transaction: a failure leaves the empty schema of the backup's version, and
  // a retry must start from an empty database again.
  const rows = await loadDump(handle, file, checked, progress).catch((error: Error) => {
    throw new Error(`loading the rows failed, none was kept (${error.message}); ${handle.description} now holds the empty tables of ${backupMigration}: drop them (or the database) before restoring again`);
  });
  const migrationsApplied = await migrateToLatest(handle);
  return { file, dialect: 'postgres', backupMigration, migrationsApplied, rows };
}

async function migrateAfterRestore(database: DatabaseConfig): Promise<string[]> {
  const handle = await connectDatabase(database, { poolSize: 1 });
  try {
    return await migrateToLatest(handle);
  } finally {
    await handle.close();
  }
}
