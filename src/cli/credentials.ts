// How a new key is handed to a person, by `init` and by `serve` on a new database; and how the
// hints of `serve` name the commands that act on its database.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tokenRequestCommand } from '../auth/oauth-routes.js';
import { redactUrl, SETTINGS, type DatabaseConfig, type SettingSource } from '../config.js';
import type { InitResult } from '../domain/initialize.js';

/** The lines that hand a new key to a person: the ids, the secret and a curl line for a token. */
export function credentialLines(result: InitResult): string[] {
  return [
    `Base URL:      ${result.base_url}`,
    `Site id:       ${result.site_id}`,
    `client_id:     ${result.client_id}`,
    `client_secret: ${result.client_secret}`,
    'Get a token:',
    `  ${tokenRequestCommand(result.base_url, result.client_id, result.client_secret)}`,
    ...(result.sign_in_url ? [`Console:       ${result.sign_in_url}`, '               (a one-time sign-in link for the owner, valid 15 minutes)'] : []),
  ];
}

/** A command's start, `npm run sitebiz --`, made to act on one database, and what else it needs. */
export interface CommandHint {
  /** What goes before `npm run sitebiz -- <command>`: '' or `DATABASE_URL=... ` (a trailing space). */
  prefix: string;
  /** When the commands need more than the prefix, how to run them ("Run the commands below <caveat>"): where the password comes from. */
  caveat?: string;
}

/** The checkout this code is part of (dist/cli/ or src/cli/, two levels down): where `npm run` runs. */
const CHECKOUT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * How to run a command on the database of a server, printed in the server's hints ("For
 * credentials: ... init"), so that the hint, run as printed from the checkout, acts on that
 * database rather than on the default one:
 * - SQLite: nothing when the file is the default one of the checkout (data/sitebiz.db, which
 *   `npm run` finds from anywhere in it), else `DATABASE_URL=sqlite:<absolute path>` (the server's
 *   directory may not be the checkout, so a relative path would point elsewhere);
 * - PostgreSQL without a password in the URL: `DATABASE_URL=<url>`;
 * - with a password: never printed, as the server's output goes to logs. When DATABASE_URL came
 *   from the environment, the command is run in the same environment (the shell that exported it,
 *   `docker exec`, the unit's environment file), where it is set already; when it came from a flag,
 *   the URL without its password, which node-postgres completes from PGPASSWORD or ~/.pgpass.
 * An in-memory database has no hint: no other process can reach it.
 */
export function commandHint(database: DatabaseConfig, source: SettingSource, cwd: string = process.cwd()): CommandHint | undefined {
  if (database.dialect === 'sqlite') {
    if (database.filename === ':memory:') return undefined;
    const file = resolve(cwd, database.filename);
    const defaultFile = resolve(CHECKOUT, SETTINGS.databaseUrl.default.slice('sqlite:'.length));
    return { prefix: file === defaultFile ? '' : `DATABASE_URL=${shellWord(`sqlite:${file}`)} ` };
  }
  const url = new URL(database.url);
  if (url.password === '') return { prefix: `DATABASE_URL=${shellWord(database.url)} ` };
  if (source === 'environment') {
    return { prefix: '', caveat: `in the environment this server runs in, where DATABASE_URL (${redactUrl(database.url)}) is set:` };
  }
  url.password = '';
  return {
    prefix: `DATABASE_URL=${shellWord(url.href)} `,
    caveat: "with the password of this server's --database-url in PGPASSWORD (or ~/.pgpass), as it is not printed:",
  };
}

/** A word the shell reads back as `text`: as it is when it has nothing special, else in single quotes. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
