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
// The receiver is an HTTP server in the bench's process on 127.0.0.1.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Dataset } from './datasets.js';
import { HttpClient } from './http-client.js';
import { HOST, sleep, stopChild } from './processes.js';
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
async function formOf(server: RunningServer, siteId: string): Promise<string> {
  const forms = await server.api.json<{ data: Array<{ id: string }> }>(`/v1/forms?filter[site_id]=${siteId}&page[size]=1`);
  const form = forms.data[0];
  if (!form) throw new Error(`webhook bench: site ${siteId} has no form`);
  return form.id;
}

async function createHooks(server: RunningServer, siteId: string, targetUrl: string): Promise<void> {
  for (let i = 0; i < HOOKS; i++) {
    await server.api.ok('/v1/hooks', {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.api+json' },
      body: JSON.stringify({
        data: { type: 'hooks', attributes: { event: 'form_submission', target_url: `${targetUrl}/${i}` }, relationships: { site: { data: { type: 'sites', id: siteId } } } },
      }),
    });
  }
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
