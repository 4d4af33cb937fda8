// Several processes behind a load balancer (issue 19): three `sitebiz serve` processes on one
// PostgreSQL database, each through PgBouncer in transaction mode, sharing rate limits in Redis,
// behind HAProxy (round-robin, test/support/haproxy.ts, the configuration docs/scaling.md shows).
// Every request below goes through HAProxy. Which process answered a request is read from that
// process's own log (its request id), not from anything added to the answers.
//
// - reads and writes are answered on every process;
// - a cursor walk whose pages are served by different processes returns every contact once;
// - a console session made on one process works on the others;
// - the per-key rate limit and the failed-authentication limit are counted once, in Redis;
// - a rolling restart under a load of reads, writes and events that cause webhooks (SIGTERM one
//   process, wait for its exit, start it again on its port, wait until HAProxy has it up, next):
//   no request fails, and every webhook reaches the local receiver exactly once.
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Haproxy, HAPROXY_SKIP, haproxyConfig } from './support/haproxy.js';
import { PgBouncer, PGBOUNCER_SKIP } from './support/pgbouncer.js';
import { Receiver } from './support/receiver.js';
import { freePort, freshDatabase, request, startServe, type FreshDatabase, type RequestOptions, type ServeProcess } from './support/serve-process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PROCESSES = 3;
/** The failed client authentications a minute the processes allow (AUTH_FAILURE_LIMIT). */
const AUTH_FAILURE_LIMIT = 4;
/** High enough for the load, low enough that the count is visible in RateLimit-Remaining. */
const RATE_LIMIT = 100_000;
/** How long the load runs before the first restart and after the last. */
const LOAD_MARGIN_MS = 1_500;

const REDIS_BASE = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function redisSkip(): Promise<string | false> {
  const probe = new Redis(REDIS_BASE, { lazyConnect: true, connectTimeout: 1_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await probe.connect();
    if ((await probe.ping()) === 'PONG') return false;
  } catch {
    // unreachable: below
  } finally {
    probe.disconnect();
  }
  return process.env.CI ? false : `Redis is not reachable at ${REDIS_BASE} (set TEST_REDIS_URL)`;
}

const skip = PGBOUNCER_SKIP || HAPROXY_SKIP || (await redisSkip());

describe('the tested HAProxy configuration', () => {
  it('is the one docs/scaling.md shows, line for line', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'scaling.md'), 'utf8');
    const block = /<!-- haproxy\.cfg[^>]*-->\n```haproxy\n([\s\S]*?)```/.exec(doc)?.[1];
    assert.ok(block, 'docs/scaling.md has a ```haproxy block after <!-- haproxy.cfg ... -->');
    assert.equal(block, haproxyConfig({ port: 8080, backends: [3001, 3002, 3003], socket: '/run/haproxy/sitebiz.sock' }));
  });
});

/** One `serve` slot: its port and every process that has run on it (a restart adds one). */
interface Slot {
  port: number;
  runs: ServeProcess[];
}

describe(`${PROCESSES} serve processes behind HAProxy, on PostgreSQL through PgBouncer, rate limits in Redis`, () => {
  let bouncer: PgBouncer;
  let db: FreshDatabase;
  let proxy: Haproxy;
  let receiver: Receiver;
  let scratch: string;
  let serveArgs: (port: number) => string[];
  let serveEnv: Record<string, string>;
  const slots: Slot[] = [];
  let token: string;
  let siteId: string;
  let consoleLink: string;
  // Kept-alive connections to HAProxy, each closed by us after 5 s idle: before HAProxy's `timeout
  // http-keep-alive` (10 s) closes it, which a request sent at that moment would meet as a hang-up.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32, timeout: 5_000 });

  /** A request to HAProxy, with a request id that tells in the logs which process answered. */
  const send = (options: Omit<RequestOptions, 'requestId'> & { requestId?: string }) =>
    request(proxy.port, { agent, token, requestId: `lb-${randomBytes(6).toString('hex')}`, ...options });

  /** The slot whose process logged this request id (its line follows the answer, by a pipe). */
  const servedBy = async (requestId: string): Promise<number> => {
    const needle = `"reqId":"${requestId}"`;
    for (const deadline = Date.now() + 5_000; Date.now() < deadline; await sleep(20)) {
      const found = slots.findIndex((slot) => slot.runs.some((run) => run.stdout.includes(needle)));
      if (found >= 0) return found;
    }
    assert.fail(`no process logged ${requestId}`);
  };

  const start = async (slot: Slot) => {
    const run = startServe(scratch, serveArgs(slot.port), serveEnv);
    slot.runs.push(run);
    await run.waitFor(/sitebiz is serving/);
    return run;
  };

  before(async () => {
    if (skip) return;
    scratch = mkdtempSync(join(tmpdir(), 'sitebiz-balancer-'));
    bouncer = await PgBouncer.start('transaction');
    db = await freshDatabase('postgres');
    receiver = await Receiver.start();
    const proxyPort = await freePort();
    for (let i = 0; i < PROCESSES; i++) slots.push({ port: await freePort(), runs: [] });
    serveArgs = (port) => ['--port', String(port), '--database-url', bouncer.through(db.url), '--public-url', `http://127.0.0.1:${proxyPort}`];
    serveEnv = {
      DATABASE_POOLER: 'transaction',
      // A database number of its own: other runs on this Redis count the same key ids.
      REDIS_URL: `${REDIS_BASE}/${randomInt(1, 16)}`,
      RATE_LIMIT: String(RATE_LIMIT),
      AUTH_FAILURE_LIMIT: String(AUTH_FAILURE_LIMIT),
      // HAProxy's address: its X-Forwarded-For names the client that per-address limits count.
      TRUST_PROXY: '127.0.0.1',
      // SIGTERM drains for 2 s (GET /readyz 503) before the listener closes: HAProxy's checks
      // (every 500 ms, out after 2) take the process out first.
      SHUTDOWN_DRAIN_MS: '2000',
    };
    // The first makes the demo account (and prints its credentials); the others find it.
    const first = await start(slots[0]!);
    await Promise.all(slots.slice(1).map(start));
    proxy = await Haproxy.start(slots.map((s) => s.port), proxyPort);
    await proxy.waitFor('UP');

    const { clientId, clientSecret } = first.credentials();
    consoleLink = new URL(/Console:\s+(\S+)/.exec(first.stdout)![1]!).pathname;
    const grant = await send({ method: 'POST', path: '/v1/oauth/token', form: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret } });
    assert.equal(grant.status, 200, grant.body);
    token = (JSON.parse(grant.body) as { access_token: string }).access_token;
    siteId = (JSON.parse((await send({ path: '/v1/sites' })).body) as { data: Array<{ id: string }> }).data[0]!.id;
  });

  after(async () => {
    if (skip) return;
    agent.destroy();
    await proxy?.stop();
    await Promise.all(slots.flatMap((slot) => slot.runs.filter((run) => run.child.exitCode === null).map((run) => run.stop())));
    await receiver?.close();
    await db?.cleanup();
    await bouncer?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('answers reads and writes on every process', { skip }, async () => {
    const served = new Set<number>();
    for (let i = 0; i < PROCESSES * 2; i++) {
      const requestId = `rw-read-${i}`;
      const read = await send({ path: '/v1/contacts?page[size]=5', requestId });
      assert.equal(read.status, 200, read.body);
      served.add(await servedBy(requestId));
    }
    for (let i = 0; i < PROCESSES; i++) {
      const requestId = `rw-write-${i}`;
      const created = await send({ method: 'POST', path: '/v1/contacts', requestId, json: newContact(siteId, `rw-${i}`) });
      assert.equal(created.status, 201, created.body);
      served.add(await servedBy(requestId));
    }
    assert.deepEqual([...served].sort(), [0, 1, 2]);
  });

  it('walks every contact once with cursor pages served by different processes', { skip }, async () => {
    const total = (JSON.parse((await send({ path: '/v1/contacts?page[size]=1' })).body) as { meta: { total_count: number } }).meta.total_count;
    const seen = new Set<string>();
    const servedPages: number[] = [];
    let next: string | null = `/v1/contacts?filter[site_id]=${siteId}&sort=name&page[size]=20&page[after]=`;
    for (let page = 0; next; page++) {
      const requestId = `walk-${page}`;
      const res = await send({ path: next, requestId });
      assert.equal(res.status, 200, res.body);
      const body = JSON.parse(res.body) as { data: Array<{ id: string }>; links: { next: string | null } };
      for (const record of body.data) {
        assert.ok(!seen.has(record.id), `contact ${record.id} came twice`);
        seen.add(record.id);
      }
      servedPages.push(await servedBy(requestId));
      // links.next is absolute, on the balancer's PUBLIC_URL.
      next = body.links.next ? new URL(body.links.next).pathname + new URL(body.links.next).search : null;
    }
    assert.equal(seen.size, total);
    assert.ok(servedPages.length >= PROCESSES, `${servedPages.length} pages`);
    assert.deepEqual([...new Set(servedPages)].sort(), [0, 1, 2], `pages by process: ${servedPages}`);
  });

  it('keeps a console session signed in on one process on every other', { skip }, async () => {
    const link = await send({ path: consoleLink, requestId: 'console-link' });
    assert.equal(link.status, 303, link.body);
    const cookie = [link.headers['set-cookie']].flat().find((c) => c?.startsWith('sitebiz_console='))?.split(';')[0];
    assert.ok(cookie, 'the sign-in link set a session cookie');
    const served = new Set<number>([await servedBy('console-link')]);
    for (let i = 0; i < PROCESSES; i++) {
      const requestId = `console-${i}`;
      const home = await send({ path: '/console', requestId, headers: { cookie } });
      assert.equal(home.status, 200, `${home.status} ${home.headers.location ?? ''}`);
      assert.match(home.body, /<meta name="csrf-token"/);
      served.add(await servedBy(requestId));
    }
    assert.deepEqual([...served].sort(), [0, 1, 2]);
  });

  it('counts an API key\'s requests once across the processes (Redis)', { skip }, async () => {
    const remaining: number[] = [];
    const served = new Set<number>();
    for (let i = 0; i < PROCESSES * 3; i++) {
      const requestId = `limit-${i}`;
      const res = await send({ path: '/v1/me', requestId });
      assert.equal(res.status, 200, res.body);
      remaining.push(Number(res.headers['ratelimit-remaining']));
      served.add(await servedBy(requestId));
    }
    assert.equal(served.size, PROCESSES);
    // Counted by each process alone, nine requests over three would take three off each count.
    for (let i = 1; i < remaining.length; i++) assert.ok(remaining[i]! <= remaining[i - 1]! - 1, `RateLimit-Remaining: ${remaining}`);
    assert.ok(remaining[0]! - remaining.at(-1)! >= remaining.length - 1, `RateLimit-Remaining: ${remaining}`);
  });

  it('survives a rolling restart under load: no request fails, every webhook arrives exactly once', { skip, timeout: 120_000 }, async () => {
    const tagId = await unwatchedTag();
    const hook = await send({
      method: 'POST',
      path: '/v1/hooks',
      json: { data: { type: 'hooks', attributes: { event: 'tag_added', target_url: receiver.url('/balanced'), resource_id: Number(tagId) }, relationships: { site: { data: { type: 'sites', id: siteId } } } } },
    });
    assert.equal(hook.status, 201, hook.body);

    const load = new Load(send, siteId, tagId);
    const running = load.run(6);
    const restarts: string[] = [];
    try {
      await sleep(LOAD_MARGIN_MS);
      for (const [i, slot] of slots.entries()) {
        const exit = await slot.runs.at(-1)!.stop('SIGTERM');
        assert.deepEqual(exit, { code: 0, signal: null }, `process ${i + 1} stopped cleanly`);
        await start(slot);
        await proxy.waitFor('UP', [`s${i + 1}`]);
        restarts.push(`s${i + 1} at ${load.summary()}`);
      }
      await sleep(LOAD_MARGIN_MS);
    } finally {
      load.stop();
      await running;
    }
    assert.deepEqual(load.failures.slice(0, 10), [], `${load.failures.length} failed of ${load.summary()}; HAProxy's log:\n${proxy.log().slice(-3000)}`);
    assert.ok(load.tagged.length >= 20, `events caused: ${load.tagged.length}`);
    // Every request reached a process that was later stopped, or one started during the load.
    for (const slot of slots) assert.equal(slot.runs.length, 2);

    // Every event delivered once, with its own webhook-id; nothing more arrives afterwards.
    await receiver.waitFor(load.tagged.length, 30_000);
    await sleep(2_000);
    const arrived = receiver.received.filter((r) => r.path === '/balanced');
    const ids = arrived.map((r) => String(r.headers['webhook-id']));
    assert.equal(new Set(ids).size, ids.length, `duplicate deliveries: ${ids.filter((id, i) => ids.indexOf(id) !== i)}`);
    // A delivery's body names the record that caused it: here the tagged contact.
    const contacts = arrived.map((r) => (JSON.parse(r.body) as { id: string }).id).sort();
    assert.deepEqual(contacts, [...load.tagged].sort(), `restarts: ${restarts.join('; ')}`);
    const hookId = (JSON.parse(hook.body) as { data: { id: string } }).data.id;
    const rows = await queryDatabase<{ status: string; n: string }>(db.url, `select status, count(*) as n from webhook_deliveries where hook_id = ${Number(hookId)} group by status`);
    assert.deepEqual(rows.map((r) => [r.status, Number(r.n)]), [['succeeded', load.tagged.length]]);
  });

  it('counts failed client authentications once across the processes (Redis), per client address behind HAProxy', { skip }, async () => {
    // Client addresses of this run only: failures counted by an earlier run in the same minute (on
    // the same Redis database) must not count here.
    const address = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
    const [first, second, third] = [address(), address(), address()];
    // Per client_id: one unknown id failing from one address, each attempt maybe on another process.
    const clientId = `sbz_unknown_${randomBytes(4).toString('hex')}`;
    const statuses: number[] = [];
    for (let i = 0; i <= AUTH_FAILURE_LIMIT; i++) {
      const res = await send({ method: 'POST', path: '/v1/oauth/token', form: { grant_type: 'client_credentials', client_id: clientId, client_secret: 'wrong' }, headers: { 'x-forwarded-for': first } });
      statuses.push(res.status);
    }
    assert.deepEqual(statuses, [...Array(AUTH_FAILURE_LIMIT).fill(401), 429]);
    // Per address: another client address failing with new ids each time is locked out after the
    // limit, while a third address, behind the same HAProxy, still gets its own answer.
    const perAddress: number[] = [];
    for (let i = 0; i <= AUTH_FAILURE_LIMIT; i++) {
      const res = await send({ method: 'POST', path: '/v1/oauth/token', form: { grant_type: 'client_credentials', client_id: `sbz_unknown_${randomBytes(4).toString('hex')}`, client_secret: 'wrong' }, headers: { 'x-forwarded-for': second } });
      perAddress.push(res.status);
    }
    assert.deepEqual(perAddress, [...Array(AUTH_FAILURE_LIMIT).fill(401), 429]);
    const other = await send({ method: 'POST', path: '/v1/oauth/token', form: { grant_type: 'client_credentials', client_id: `sbz_unknown_${randomBytes(4).toString('hex')}`, client_secret: 'wrong' }, headers: { 'x-forwarded-for': third } });
    assert.equal(other.status, 401, 'another client behind the same balancer is not locked out by the first');
  });

  /** A tag no demo hook watches (the demo watches one for tag_added). */
  async function unwatchedTag(): Promise<string> {
    const tags = JSON.parse((await send({ path: `/v1/contact_tags?filter[site_id]=${siteId}&page[size]=100` })).body) as { data: Array<{ id: string }> };
    const hooks = JSON.parse((await send({ path: '/v1/hooks?page[size]=100' })).body) as { data: Array<{ attributes: { resource_id: number | null } }> };
    const watched = new Set(hooks.data.map((h) => String(h.attributes.resource_id)));
    return tags.data.find((tag) => !watched.has(tag.id))!.id;
  }
});

const newContact = (siteId: string, name: string) => ({
  data: { type: 'contacts', attributes: { name, email: `${name}-${randomBytes(4).toString('hex')}@example.com` }, relationships: { site: { data: { type: 'sites', id: siteId } } } },
});

/**
 * Users sending requests one after another until stopped: reads of contacts and of /v1/me, and
 * every third turn a new contact tagged (one tag_added event, so one webhook). Any other answer
 * than the expected status, or a connection error, is a failure.
 */
class Load {
  readonly failures: string[] = [];
  /** Contacts tagged, each one webhook owed. */
  readonly tagged: string[] = [];
  private requests = 0;
  private stopped = false;

  constructor(
    private readonly send: (options: Omit<RequestOptions, 'requestId'>) => Promise<{ status: number; body: string }>,
    private readonly siteId: string,
    private readonly tagId: string,
  ) {}

  run(users: number): Promise<void> {
    return Promise.all(Array.from({ length: users }, (_, user) => this.user(user))).then(() => {});
  }

  stop(): void {
    this.stopped = true;
  }

  summary(): string {
    return `${this.requests} requests, ${this.tagged.length} events`;
  }

  private async user(user: number): Promise<void> {
    for (let turn = 0; !this.stopped; turn++) {
      if (turn % 3 === 2) {
        const created = await this.expect(201, { method: 'POST', path: '/v1/contacts', json: newContact(this.siteId, `load-${user}-${turn}`) });
        if (!created) continue;
        const id = (JSON.parse(created) as { data: { id: string } }).data.id;
        const tagged = await this.expect(200, { method: 'POST', path: `/v1/contacts/${id}/relationships/tags`, json: { data: [{ type: 'contact_tags', id: this.tagId }] } });
        if (tagged !== undefined) this.tagged.push(id);
      } else {
        await this.expect(200, { path: turn % 3 === 0 ? '/v1/contacts?page[size]=10&sort=-created_at' : '/v1/me' });
      }
    }
  }

  /** The body when the answer has `status`; otherwise records a failure. */
  private async expect(status: number, options: Omit<RequestOptions, 'requestId'>): Promise<string | undefined> {
    this.requests++;
    try {
      const res = await this.send(options);
      if (res.status === status) return res.body;
      this.failures.push(`${options.method ?? 'GET'} ${options.path}: ${res.status} ${res.body.slice(0, 300)}`);
    } catch (error) {
      this.failures.push(`${options.method ?? 'GET'} ${options.path}: ${(error as Error).message}`);
    }
    return undefined;
  }
}

async function queryDatabase<T>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
