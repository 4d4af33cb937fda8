// sitebiz as the bench runs it: `bin/sitebiz.js serve` in a child process on a free port of
// 127.0.0.1 over one seeded dataset, with an access token from its own OAuth endpoint.
import type { Dataset } from './datasets.js';
import { HttpClient } from './http-client.js';
import { HOST, freePort, isRunning, runToEnd, sleep, startNode, type Child } from './processes.js';

export interface RunningServer {
  child: Child;
  baseUrl: string;
  accessToken: string;
  /** A client that sends the token. */
  api: HttpClient;
}

export interface ServerOptions {
  /** `serve --workers`; undefined leaves serve's default. */
  workers: string | undefined;
  /** Start-up includes migrations, which on a kept million-contact database may take a while. */
  readyTimeoutMs: number;
  /** More `serve` options (the webhook bench turns the delivery worker off with them). */
  extraArgs?: string[];
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
  const child = startNode(`sitebiz serve (${dataset.kind}, ${dataset.contacts} contacts)`, args);
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
  client.close();
  if (!token.access_token) throw new Error('POST /v1/oauth/token gave no access_token');
  return { child, baseUrl, accessToken: token.access_token, api: new HttpClient(baseUrl, { authorization: `Bearer ${token.access_token}` }) };
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
