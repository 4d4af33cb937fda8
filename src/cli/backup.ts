// `sitebiz backup <file>` and `sitebiz restore <file>` (src/backup/, docs/operations.md "Backups").
// Neither migrates first: a backup copies the database as it is, and a restore makes the schema
// of the backup's version itself before migrating to this one.
import { resolve } from 'node:path';
import { configFrom, report, UsageError, type Command } from './command.js';

function fileOf(positionals: string[], usage: string): string {
  const file = positionals[0];
  if (file === undefined || positionals.length > 1) throw new UsageError(`name one file: ${usage}`);
  return resolve(file);
}

const size = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

export const backupCommand: Command = {
  usage: 'sitebiz backup <file> [--json] [config flags]',
  details: [
    'A consistent copy of DATABASE_URL\'s database as of the moment the backup starts, taken while servers serve and write.',
    '  SQLite: a SQLite file (the online backup API inside one read transaction), checked with PRAGMA integrity_check.',
    '  PostgreSQL: sitebiz\'s own gzipped dump (one REPEATABLE READ transaction; no pg_dump needed, any server version).',
    'The file appears only once it is whole (it is written as <file>.partial first). Progress goes to stderr.',
    '--json: {file, dialect, bytes, milliseconds, integrity (SQLite), rows (PostgreSQL, per table)}.',
  ],
  options: {},
  async run(values, positionals) {
    const file = fileOf(positionals, backupCommand.usage);
    const config = configFrom(values);
    const [{ backupDatabase }, { backupProgress }] = await Promise.all([import('../backup/backup-restore.js'), import('./progress.js')]);
    const progress = backupProgress('backup', config.database.dialect === 'sqlite' ? 'pages' : 'rows (estimated total)');
    const result = await backupDatabase(config.database, file, progress);
    progress.finish(`backup: ${size(result.bytes)} in ${(result.milliseconds / 1000).toFixed(1)} s`);
    report(values, { ...result }, [
      `Backed up ${config.database.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL'} to ${file} (${size(result.bytes)}, ${result.milliseconds} ms)${result.integrity ? `; integrity_check: ${result.integrity}` : ''}.`,
      `Restore with: sitebiz restore ${file} --database-url <an empty database>`,
    ]);
  },
};

export const restoreCommand: Command = {
  usage: 'sitebiz restore <file> [--json] [config flags]',
  details: [
    'Puts a backup made by `sitebiz backup` into DATABASE_URL\'s database, which must be empty (a new SQLite file, or a',
    'PostgreSQL database or schema without tables): a non-empty one is refused and nothing is written. Then migrates it',
    'to this version (a backup of an older sitebiz restores and is upgraded). Stop the servers of the target first.',
    '--json: {file, dialect, backupMigration, migrationsApplied, rows (PostgreSQL), milliseconds}.',
  ],
  options: {},
  async run(values, positionals) {
    const file = fileOf(positionals, restoreCommand.usage);
    const config = configFrom(values);
    const [{ restoreDatabase }, { backupProgress }] = await Promise.all([import('../backup/backup-restore.js'), import('./progress.js')]);
    const progress = backupProgress('restore', config.database.dialect === 'sqlite' ? 'pages' : 'rows');
    const result = await restoreDatabase(config.database, file, progress);
    progress.finish(`restore: done in ${(result.milliseconds / 1000).toFixed(1)} s`);
    report(values, { ...result }, [
      `Restored ${file} into ${config.database.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL'} (backup at ${result.backupMigration ?? 'no migration'}).`,
      result.migrationsApplied.length > 0 ? `Then migrated: ${result.migrationsApplied.join(', ')}.` : 'It was at this version already: no migration to apply.',
    ]);
  },
};
