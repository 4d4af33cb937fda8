// The throttles on secrets under concurrency, measured as the outside probe of issue 21 did: an
// app listening on 127.0.0.1 gets simultaneous requests, each on a connection of its own, and
// each waits at most 15 s for its answer.
//   console: 40 simultaneous wrong passwords for one account from one address; then 16 sign-ins
//            from 16 addresses (127.0.0.2-17), 15 wrong and the right password last.
//   OAuth:   the same two shapes at /v1/oauth/token with wrong client secrets of one client_id
//            (AUTH_FAILURE_LIMIT=10, the console's per-account limit, so that 16 attempts pass it).
// "Checked" is every answer that needed the secret checked (401, or 303/200 for the right one),
// plus every request left without an answer (it was being checked); 429 was refused before.
//
//   [REDIS_URL=redis://127.0.0.1:6379] node --import tsx bench/secret-throttle.ts [sqlite|postgres]
//   (postgres: TEST_DATABASE_URL)
import { request as httpRequest } from 'node:http';
import { hashPassword } from '../src/console/passwords.js';
import { createTestApp, type DialectName } from '../test/support/harness.js';

const dialect = (process.argv[2] ?? 'sqlite') as DialectName;
const ANSWER_WITHIN_MS = 15_000;
const PASSWORD = 'the right password, long enough';

interface Outcome {
  status: number | 'no answer';
  retryAfter?: string;
}

function post(port: number, path: string, body: string, localAddress: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, method: 'POST', localAddress, agent: false, headers: { 'content-type': 'application/x-www-form-urlencoded', connection: 'close' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, ...(res.headers['retry-after'] ? { retryAfter: String(res.headers['retry-after']) } : {}) }));
      },
    );
    req.setTimeout(ANSWER_WITHIN_MS, () => {
      req.destroy();
      resolve({ status: 'no answer' });
    });
    req.on('error', () => resolve({ status: 'no answer' }));
    req.end(body);
  });
}

function summary(outcomes: Outcome[], success: number): string {
  const count = (s: Outcome['status']) => outcomes.filter((o) => o.status === s).length;
  const checked = count(401) + count(success) + count('no answer');
  const refused = outcomes.filter((o) => o.status === 429);
  const withRetryAfter = refused.filter((o) => Number(o.retryAfter) > 0).length;
  const others = outcomes.filter((o) => ![401, 429, success, 'no answer'].includes(o.status)).map((o) => o.status);
  return `checked ${checked}, 401 ${count(401)}, 429 ${refused.length} (Retry-After on ${withRetryAfter}), ${success} ${count(success)}, no answer in 15 s ${count('no answer')}${others.length ? `, other ${others.join(' ')}` : ''}`;
}

// With REDIS_URL the OAuth counts live in Redis (under a namespace of this run), as behind a balancer.
const redisUrl = process.env.REDIS_URL;
const t = await createTestApp(dialect, {
  env: { AUTH_FAILURE_LIMIT: '10', ...(redisUrl ? { REDIS_URL: redisUrl } : {}) },
  redisNamespace: `sitebiz-bench-${process.pid}-${Date.now()}:`,
});
const where = `${dialect}${redisUrl ? ', Redis' : ''}`;
try {
  const email = `owner-${t.tenant.accountId}@example.com`;
  await t.handle.db.updateTable('users').set({ password_hash: await hashPassword(PASSWORD) }).where('id', '=', t.tenant.ownerId).execute();
  // A second client id for the second OAuth shape: the first one stays locked for the minute.
  const other = await t.keyWith(t.tenant.ownerId, ['view:contacts']);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (t.app.server.address() as { port: number }).port;
  const signIn = (password: string, from: string) => post(port, '/console/sign-in', new URLSearchParams({ email, password }).toString(), from);
  const token = (secret: string, from: string) =>
    post(port, '/v1/oauth/token', new URLSearchParams({ grant_type: 'client_credentials', client_id: t.tenant.clientId, client_secret: secret }).toString(), from);
  // Hashes of requests left unanswered still run: a sign-in queued behind them (an unknown email
  // from an address of its own spends one hash too) answers once they are done, so that each shape
  // starts on an idle server.
  const settle = async () => {
    while ((await post(port, '/console/sign-in', new URLSearchParams({ email: 'nobody@example.com', password: 'x' }).toString(), '127.0.0.200')).status === 'no answer');
    await t.handle.db.deleteFrom('console_sign_in_failures').execute();
  };
  const from = (i: number) => `127.0.0.${i + 2}`;
  const last = (n: number, right: (i: number) => Promise<Outcome>, wrong: (i: number) => Promise<Outcome>) =>
    Promise.all(Array.from({ length: n }, (_, i) => (i === n - 1 ? right(i) : wrong(i))));

  console.log(`[${where}] console, 40 simultaneous wrong passwords, one account: ${summary(await Promise.all(Array.from({ length: 40 }, (_, i) => signIn(`wrong ${i}`, '127.0.0.1'))), 303)}`);
  await settle();
  const sixteen = await last(16, (i) => signIn(PASSWORD, from(i)), (i) => signIn(`wrong ${i}`, from(i)));
  console.log(`[${where}] console, 16 addresses, right password last: ${summary(sixteen, 303)}; the right one answered ${sixteen[15]!.status}`);

  await settle();
  console.log(`[${where}] OAuth, 40 simultaneous wrong secrets, one client_id: ${summary(await Promise.all(Array.from({ length: 40 }, (_, i) => token(`wrong-${i}`, '127.0.0.1'))), 200)}`);
  const tokenOf = (secret: string, at: string) =>
    post(port, '/v1/oauth/token', new URLSearchParams({ grant_type: 'client_credentials', client_id: other.clientId, client_secret: secret }).toString(), at);
  const oauthSixteen = await last(16, (i) => tokenOf(other.clientSecret, from(i + 20)), (i) => tokenOf(`wrong-${i}`, from(i + 20)));
  console.log(`[${where}] OAuth, 16 addresses, right secret last: ${summary(oauthSixteen, 200)}; the right one answered ${oauthSixteen[15]!.status}`);
} finally {
  await t.close();
}
