// `sitebiz users set-password` and `sitebiz users sign-in-link`: how people get into the console
// (docs/console.md "Signing in").
import { cliActor } from '../audit/audit-events.js';
import { AdminError, findUserByEmail, soleAccountOwner } from '../domain/accounts.js';
import { hashPassword, PasswordPolicyError } from '../console/passwords.js';
import { ConsoleSessions, consoleSignInUrl, SIGN_IN_LINK_TTL_MS } from '../console/sessions.js';
import type { DatabaseHandle } from '../db/connect.js';
import { configFrom, report, serverBaseUrl, UsageError, withDatabase, type Command } from './command.js';

async function userByEmail(handle: DatabaseHandle, email: string) {
  const user = await findUserByEmail(handle, email);
  if (!user) throw new AdminError(`there is no user with the email ${email}`);
  return user;
}

/** Standard input, whole, without the one line break a shell's echo or a here-string adds. */
async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new UsageError('--password-stdin reads the password from standard input: pipe it in (e.g. printf %s "$PASSWORD" | ...)');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

export const setPasswordCommand: Command = {
  usage: 'sitebiz users set-password --email <email> --password-stdin [--json]',
  details: ['The password is never taken as an argument (it would be in the shell history and the process list).'],
  options: { email: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
  async run(values) {
    if (typeof values.email !== 'string' || values.email.trim() === '') throw new UsageError('--email is required');
    if (values['password-stdin'] !== true) throw new UsageError('--password-stdin is required: the password is read from standard input');
    const password = await readStdin();
    let hash: string;
    try {
      hash = await hashPassword(password);
    } catch (error) {
      if (error instanceof PasswordPolicyError) throw new UsageError(error.message);
      throw error;
    }
    const user = await withDatabase(configFrom(values), async (h) => {
      const found = await userByEmail(h, values.email as string);
      await new ConsoleSessions(h).setPassword(found.id, hash, cliActor());
      return found;
    });
    report(values, { user_id: String(user.id), email: user.email, password_set: true }, [`Set the console password of ${user.email} (user ${user.id}).`]);
  },
};

export const signInLinkCommand: Command = {
  usage: 'sitebiz users sign-in-link [--email <email>] [--json]',
  details: [
    `The link works once, for ${SIGN_IN_LINK_TTL_MS / 60_000} minutes. Its base is PUBLIC_URL (or http://HOST:PORT) when given`,
    '(--public-url, --host, --port, or their environment variables), else the address of the server that last started on the database.',
  ],
  options: { email: { type: 'string' } },
  async run(values) {
    const config = configFrom(values);
    const result = await withDatabase(config, async (h) => {
      const userId = typeof values.email === 'string' ? (await userByEmail(h, values.email)).id : await soleAccountOwner(h, '--email <email>', 'the user');
      const token = await new ConsoleSessions(h).createSignInLink(userId);
      return { userId, url: consoleSignInUrl(await serverBaseUrl(values, config, h), token) };
    });
    report(values, { user_id: String(result.userId), sign_in_url: result.url }, [
      `Console sign-in link for user ${result.userId} (works once, for ${SIGN_IN_LINK_TTL_MS / 60_000} minutes):`,
      `  ${result.url}`,
    ]);
  },
};
