// Webhook delivery (issue 9): how fast queued deliveries reach a receiver, and how soon after its
// commit an event's first attempt starts.
//
//   - Latency: one form submission at a time (the receiver idle, as the target says), each
//     event delivered to 3 hooks; per event, the time from sending the submission to the first
//     of its deliveries arriving at the receiver. That includes the write itself, so it is an
//     upper bound of commit-to-first-attempt.
//   - Throughput: a server with its delivery worker off (--webhook-worker off) takes the
//     submissions, 3 deliveries queued per event; it stops, and a server with the worker on
//     starts over the same database: deliveries per second from its start until the receiver has
//     every webhook-id. The receiver answers 204 at once, so the figure is sitebiz's own.
//   - Fairness between tenants (issue 21), measured as the probe measured it: a second account,
//     B, makes 6 hooks to a listener that accepts connections and never answers, and one hook to
//     the receiver; then 20 events. Then, one at a time, account A's events (one hook, to the
//     receiver) and B's (its healthy hook's delivery timed): the time from sending each to its
//     arrival. Defaults of `serve` (32 slots, 10 s timeout), one process.
// The receiver is an HTTP server in the bench's process on 127.0.0.1, and so is the listener.
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { credentialsFrom, type Dataset } from './datasets.js';
import { HttpClient } from './http-client.js';
import { HOST, runToEnd, sleep, startNode, stopChild } from './processes.js';
import { startServer, type RunningServer } from './sitebiz-server.js';
import { percentile } from './stats.js';

export interface WebhookFigures {
  events: number;
  hooks: number;
  /** Deliveries per second draining the queue. */
  deliveriesPerSecond: number;
  drainSeconds: number;
  /** Submissions per second while queueing (the write load the events came from). */
  queueingEventsPerSecond: number;
  latency: { samples: number; p50: number; p99: number };
}

export interface WebhookOptions {
  events: number;
  latencySamples: number;
  /** Concurrent submitters while queueing. */
  connections: number;
}

const HOOKS = 3;

/** Receives deliveries: the first arrival time of each webhook-id and of each event (body id). */
class Receiver {
  readonly firstByWebhookId = new Map<string, number>();
  readonly firstByEvent = new Map<string, number>();
  private waiters: Array<() => void> = [];
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const at = performance.now();
        const id = String(req.headers['webhook-id'] ?? '');
        if (!this.firstByWebhookId.has(id)) this.firstByWebhookId.set(id, at);
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string };
        if (!this.firstByEvent.has(body.id)) this.firstByEvent.set(body.id, at);
        res.writeHead(204).end();
        for (const wake of this.waiters.splice(0)) wake();
      });
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server!.listen(0, HOST, resolve));
    return `http://${HOST}:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  /** Resolves once `count` distinct webhook-ids arrived; rejects after `timeoutMs`. */
  async waitForDeliveries(count: number, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (this.firstByWebhookId.size < count) {
      if (performance.now() > deadline) throw new Error(`webhook bench: ${this.firstByWebhookId.size} of ${count} deliveries arrived within ${timeoutMs / 1000} s`);
      await Promise.race([new Promise<void>((resolve) => this.waiters.push(resolve)), sleep(200)]);
    }
  }

  close(): Promise<void> {
    this.server?.closeAllConnections();
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** A form of the site to submit to (any form: each submission is one form_submission event). */
async function formOf(server: RunningServer | HttpClient, siteId: string): Promise<string> {
  const client = server instanceof HttpClient ? server : server.api;
  const forms = await client.json<{ data: Array<{ id: string }> }>(`/v1/forms?filter[site_id]=${siteId}&page[size]=1`);
  const form = forms.data[0];
  if (!form) throw new Error(`webhook bench: site ${siteId} has no form`);
  return form.id;
}

async function createHooks(server: RunningServer, siteId: string, targetUrl: string): Promise<void> {
  for (let i = 0; i < HOOKS; i++) await createHook(server.api, siteId, `${targetUrl}/${i}`);
}

async function createHook(client: HttpClient, siteId: string, targetUrl: string): Promise<void> {
  await client.ok('/v1/hooks', {
    method: 'POST',
    headers: { 'content-type': 'application/vnd.api+json' },
    body: JSON.stringify({
      data: { type: 'hooks', attributes: { event: 'form_submission', target_url: targetUrl }, relationships: { site: { data: { type: 'sites', id: siteId } } } },
    }),
  });
}

let unique = 0;
const submission = (label: string) =>
  JSON.stringify({ data: { type: 'form_submissions', attributes: { name: 'Bench Submitter', email: `bench-hook-${label}-${Date.now().toString(36)}-${unique++}@example.test` } } });

/** Submits the form once; returns the submission's id (the `id` of its deliveries' body). */
async function submit(client: HttpClient, formId: string, label: string): Promise<string> {
  const doc = await client.json<{ data: { id: string } }>(`/v1/forms/${formId}/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/vnd.api+json' },
    body: submission(label),
  });
  return doc.data.id;
}

export async function measureWebhookDelivery(dataset: Dataset, options: WebhookOptions): Promise<WebhookFigures> {
  const receiver = new Receiver();
  const targetUrl = await receiver.start();
  const siteId = dataset.credentials.siteId;
  try {
    // Queueing: the worker off, so nothing is delivered while the events are written.
    let server = await startServer(dataset, { workers: '1', readyTimeoutMs: 120_000, extraArgs: ['--webhook-worker', 'off'] });
    let queueingSeconds: number;
    let formId: string;
    try {
      await createHooks(server, siteId, targetUrl);
      formId = await formOf(server, siteId);
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: options.connections }, async () => {
          const client = server.api.withHeaders({});
          try {
            while (next < options.events) {
              next++;
              await submit(client, formId, 'queue');
            }
          } finally {
            client.close();
          }
        }),
      );
      queueingSeconds = (performance.now() - started) / 1000;
    } finally {
      server.api.close();
      await stopChild(server.child);
    }
    const expected = options.events * HOOKS;
    console.log(`    queued ${options.events.toLocaleString('en-US')} events (${expected.toLocaleString('en-US')} deliveries) in ${queueingSeconds.toFixed(1)} s`);

    // Draining: timed from the start of the process that delivers (its start-up included).
    const drainStarted = performance.now();
    server = await startServer(dataset, { workers: '1', readyTimeoutMs: 120_000 });
    try {
      await receiver.waitForDeliveries(expected, 10 * 60_000);
      const drainSeconds = (receiver.firstByWebhookId.size > 0 ? Math.max(...receiver.firstByWebhookId.values()) - drainStarted : 0) / 1000;
      console.log(`    delivered ${expected.toLocaleString('en-US')} in ${drainSeconds.toFixed(1)} s`);

      // Latency: one event at a time, the receiver idle.
      const latencies: number[] = [];
      for (let i = 0; i < options.latencySamples; i++) {
        const sent = performance.now();
        const id = await submit(server.api, formId, 'latency');
        const deadline = performance.now() + 10_000;
        while (!receiver.firstByEvent.has(id)) {
          if (performance.now() > deadline) throw new Error(`webhook bench: submission ${id} was not delivered within 10 s`);
          await sleep(1);
        }
        latencies.push(receiver.firstByEvent.get(id)! - sent);
        await sleep(20);
      }
      latencies.sort((a, b) => a - b);
      return {
        events: options.events,
        hooks: HOOKS,
        deliveriesPerSecond: expected / drainSeconds,
        drainSeconds,
        queueingEventsPerSecond: options.events / queueingSeconds,
        latency: { samples: latencies.length, p50: percentile(latencies, 50), p99: percentile(latencies, 99) },
      };
    } finally {
      server.api.close();
      await stopChild(server.child);
    }
  } finally {
    await receiver.close();
  }
}

export interface FairnessFigures {
  stalledHooks: number;
  stalledEvents: number;
  /** Connections the stalled listener held when the samples ended (B's attempts in flight). */
  stalledInFlight: number;
  /** Account A's deliveries, and B's healthy hook's: ms from sending the event to its arrival. */
  otherAccount: LatencyFigures;
  sameAccountHealthy: LatencyFigures;
  /** Whether every sample was taken (false: the time budget ran out first). */
  complete: boolean;
}

export interface LatencyFigures {
  samples: number;
  p50: number;
  p99: number;
  max: number;
}

export interface FairnessOptions {
  /** Samples of each: A's deliveries and B's healthy hook's. */
  samples: number;
  /** Sampling stops after this long (before the change each sample waited for timeouts). */
  maxSeconds: number;
}

const STALLED_HOOKS = 6;
const STALLED_EVENTS = 20;

/** Accepts connections and never answers: each attempt to it waits for its deadline. */
class StalledListener {
  private readonly sockets = new Set<Socket>();
  private readonly server = createTcpServer((socket) => {
    this.sockets.add(socket);
    socket.on('data', () => {});
    socket.on('error', () => {});
    socket.on('close', () => this.sockets.delete(socket));
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, HOST, resolve));
    return `http://${HOST}:${(this.server.address() as AddressInfo).port}/stalled`;
  }

  get open(): number {
    return this.sockets.size;
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const latencyFigures = (values: number[]): LatencyFigures => {
  const sorted = [...values].sort((a, b) => a - b);
  return { samples: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? Number.NaN };
};

/** Account B: `sitebiz seed` of a small account (a site with forms, an owner and a key). */
async function seedSecondAccount(dataset: Dataset): Promise<{ siteId: string; clientId: string; clientSecret: string }> {
  const args = ['bin/sitebiz.js', 'seed', '--contacts', '14', '--sites', '1', '--seed', '2', '--no-snapshot', '--json', '--database-url', dataset.url, '--log-level', 'warn'];
  return credentialsFrom(await runToEnd(startNode('sitebiz seed (account B)', args), 120_000), 'sitebiz seed (account B)');
}

export async function measureTenantFairness(dataset: Dataset, options: FairnessOptions): Promise<FairnessFigures> {
  const receiver = new Receiver();
  const stalled = new StalledListener();
  const targetUrl = await receiver.start();
  const stalledUrl = await stalled.start();
  // Started first: its console sign-in (startServer) names no user, which needs one account.
  const server = await startServer(dataset, { workers: '1', readyTimeoutMs: 120_000 });
  const b = await seedSecondAccount(dataset);
  const token = await server.api.json<{ access_token: string }>('/v1/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: b.clientId, client_secret: b.clientSecret }).toString(),
  });
  const bApi = new HttpClient(server.baseUrl, { authorization: `Bearer ${token.access_token}` });
  try {
    const aSite = dataset.credentials.siteId;
    await createHook(server.api, aSite, `${targetUrl}/a`);
    for (let i = 0; i < STALLED_HOOKS; i++) await createHook(bApi, b.siteId, `${stalledUrl}/${i}`);
    await createHook(bApi, b.siteId, `${targetUrl}/b-healthy`);
    const aForm = await formOf(server, aSite);
    const bForm = await formOf(bApi, b.siteId);
    for (let i = 0; i < STALLED_EVENTS; i++) await submit(bApi, bForm, 'stall');
    const settle = performance.now() + 10_000;
    while (stalled.open < STALLED_HOOKS && performance.now() < settle) await sleep(50);
    await sleep(1_000);
    console.log(`    account B: ${STALLED_HOOKS} stalled hooks, ${STALLED_EVENTS} events; ${stalled.open} attempts held by the listener`);

    const timeOne = async (client: HttpClient, formId: string, label: string): Promise<number | undefined> => {
      const sent = performance.now();
      const id = await submit(client, formId, label);
      const deadline = sent + 60_000;
      while (!receiver.firstByEvent.has(id)) {
        if (performance.now() > deadline) return undefined;
        await sleep(1);
      }
      return receiver.firstByEvent.get(id)! - sent;
    };
    const otherAccount: number[] = [];
    const sameAccount: number[] = [];
    const stopAt = performance.now() + options.maxSeconds * 1000;
    let complete = true;
    for (let i = 0; i < options.samples; i++) {
      if (performance.now() > stopAt) {
        complete = false;
        break;
      }
      const a = await timeOne(server.api, aForm, 'fair-a');
      const healthy = await timeOne(bApi, bForm, 'fair-b');
      // A sample that never arrived counts as the minute waited for it.
      otherAccount.push(a ?? 60_000);
      sameAccount.push(healthy ?? 60_000);
      // 200 ms apart: 100 samples span two deadlines of the stalled attempts (10 s), when their
      // slots free and are claimed again.
      await sleep(200);
    }
    const figures: FairnessFigures = {
      stalledHooks: STALLED_HOOKS,
      stalledEvents: STALLED_EVENTS,
      stalledInFlight: stalled.open,
      otherAccount: latencyFigures(otherAccount),
      sameAccountHealthy: latencyFigures(sameAccount),
      complete,
    };
    const show = (f: LatencyFigures) => `p50 ${f.p50.toFixed(1)} ms, p99 ${f.p99.toFixed(1)} ms, max ${f.max.toFixed(1)} ms (${f.samples})`;
    console.log(`    account A: ${show(figures.otherAccount)}; B's healthy hook: ${show(figures.sameAccountHealthy)}`);
    return figures;
  } finally {
    bApi.close();
    server.api.close();
    await stopChild(server.child);
    await stalled.close();
    await receiver.close();
  }
}
