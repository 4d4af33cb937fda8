// sitebiz as the bench runs it: `bin/sitebiz.js serve` in a child process on a free port of
// 127.0.0.1 over one seeded dataset, with an access token from its own OAuth endpoint.
import type { Dataset } from './datasets.js';
import { HttpClient } from './http-client.js';
import { HOST, freePort, isRunning, runToEnd, sleep, startNode, type Child } from './processes.js';

export interface RunningServer {
  child: Child;
  baseUrl: string;
  accessToken: string;
  /**
   * A client that sends the token, and the session cookie of a console sign-in as the account's
   * owner (the API ignores the cookie and the console the token), so the same client measures
   * API requests and console pages side by side.
   */
  api: HttpClient;
}

export interface ServerOptions {
  /** `serve --workers`; undefined leaves serve's default. */
  workers: string | undefined;
  /** Start-up includes migrations, which on a kept million-contact database may take a while. */
  readyTimeoutMs: number;
  /** More `serve` options (the webhook bench turns the delivery worker off with them). */
  extraArgs?: string[];
  /** The server's environment instead of the bench's own (the observability bench sets METRICS and OTEL_*). */
  env?: NodeJS.ProcessEnv;
}

export async function startServer(dataset: Dataset, options: ServerOptions): Promise<RunningServer> {
  const port = await freePort();
  const baseUrl = `http://${HOST}:${port}`;
  const args = ['bin/sitebiz.js', 'serve', '--database-url', dataset.url, '--port', String(port), '--host', HOST, '--public-url', baseUrl];
  // A token that outlives the longest run; warnings only, so logging costs the server nothing.
  args.push('--access-token-ttl', String(24 * 3600), '--log-level', 'warn');
  // Rate limiting off: the bench drives one key at thousands of requests a second, and figures
  // stay comparable with runs from before the limits existed.
  args.push('--rate-limit', '0');
  if (options.workers !== undefined) args.push('--workers', options.workers);
  args.push(...(options.extraArgs ?? []));
  const child = startNode(`sitebiz serve (${dataset.kind}, ${dataset.contacts} contacts)`, args, options.env);
  const client = new HttpClient(baseUrl);
  await waitForHttp(child, client, options.readyTimeoutMs);
  const token = await client.json<{ access_token?: string }>('/v1/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: dataset.credentials.clientId,
      client_secret: dataset.credentials.clientSecret,
    }).toString(),
  });
  if (!token.access_token) throw new Error('POST /v1/oauth/token gave no access_token');
  const cookie = await consoleSessionCookie(dataset, client);
  client.close();
  return { child, baseUrl, accessToken: token.access_token, api: new HttpClient(baseUrl, { authorization: `Bearer ${token.access_token}`, cookie }) };
}

/** Signs in to the console as a newcomer does: a one-time link from the command line, opened once. */
async function consoleSessionCookie(dataset: Dataset, client: HttpClient): Promise<string> {
  const printed = await runToEnd(
    startNode('sitebiz users sign-in-link', ['bin/sitebiz.js', 'users', 'sign-in-link', '--database-url', dataset.url, '--public-url', client.baseUrl, '--json']),
    120_000,
  );
  const url = (JSON.parse(printed.trim().split('\n').pop()!) as { sign_in_url?: string }).sign_in_url;
  if (!url) throw new Error(`users sign-in-link printed no link: ${printed}`);
  const res = await client.send(new URL(url).pathname);
  const headers = res.rawHeaders;
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i]!.toLowerCase() === 'set-cookie' && headers[i + 1]!.startsWith('sitebiz_console=')) return headers[i + 1]!.split(';')[0]!;
  }
  throw new Error(`the console sign-in link answered ${res.status} without a session cookie`);
}

async function waitForHttp(child: Child, client: HttpClient, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!isRunning(child)) throw new Error(`${child.name} exited before it answered:\n${child.output()}`);
    try {
      if ((await client.send('/v1/version', { timeoutMs: 5000 })).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${child.name} did not answer /v1/version within ${timeoutMs / 1000} s:\n${child.output()}`);
    await sleep(200);
  }
}

/**
 * A new, empty site in the dataset's account for the write load, so that the contacts it creates
 * never change the size of the measured site (kept databases see several runs).
 */
export async function createWriteSite(dataset: Dataset): Promise<string> {
  const stamp = `${Date.now().toString(36)}${process.pid.toString(36)}`;
  const args = ['bin/sitebiz.js', 'sites', 'create', '--account', dataset.credentials.accountId, '--title', `Bench writes ${stamp}`];
  args.push('--subdomain', `bench-writes-${stamp}`, '--json', '--database-url', dataset.url, '--log-level', 'warn');
  const output = await runToEnd(startNode('sitebiz sites create', args), 120_000);
  const id = (JSON.parse(output.trim().split('\n').pop() ?? '{}') as { id?: string }).id;
  if (!id) throw new Error(`sitebiz sites create printed no id: ${output}`);
  return id;
}
