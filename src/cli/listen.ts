// `sitebiz listen --forward-to <url>`: the `stripe listen` of sitebiz. It starts an HTTP listener
// on 127.0.0.1 (a free port), subscribes one temporary hook per event on the site (hooks have one
// event each) pointing at it, and forwards every delivery the running server's worker posts there
// to <url>, with the delivery's headers (webhook-id, webhook-timestamp, webhook-signature, ...) and
// body unchanged, so the receiver checks the signature as it would in production. The server is
// answered with the receiver's own status, headers' content type and body, so the delivery log
// shows what the receiver said; when the receiver cannot be reached the answer is 502 (504 when it
// did not answer in time), so the delivery fails and is retried on the usual schedule.
//
// The hooks of one session share one signing secret (printed at start, or given with
// --signing-secret), as a Stripe CLI session does. They are removed on SIGINT/SIGTERM. A listener
// killed without that leaves hooks whose target is http://127.0.0.1:<port>/sitebiz-listen/<session>/<event>:
// each start asks every such hook of the site whether its listener still answers, and removes the
// hooks of those that do not.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createEngine } from '../engine.js';
import type { Principal } from '../auth/principal.js';
import type { Config } from '../config.js';
import { connectDatabase, migrateToLatest } from '../db/connect.js';
import { AdminError } from '../domain/accounts.js';
import { createHook, deleteHook, HOOK_EVENT_NAMES, newSigningSecret } from '../domain/hooks.js';
import type { JsonApiEngine } from '../jsonapi/engine.js';
import { accountPrincipal, siteOption } from './account-principal.js';
import { configFrom, out, UsageError, type Command } from './command.js';

/** The path of a listener's hooks: /sitebiz-listen/<session>/<event>. */
const LISTEN_PATH = '/sitebiz-listen/';
const LISTEN_TARGET = /^http:\/\/127\.0\.0\.1:(\d+)\/sitebiz-listen\/([0-9a-f]+)\/[a-z_]+$/;
/** How long a start waits for an older listener to say it is alive. */
const PROBE_TIMEOUT_MS = 1_000;
/** Of the receiver's answer, what is handed back to the server (it keeps 2 KB for the log). */
const ANSWER_LIMIT_BYTES = 64 * 1024;
/** Headers of one connection, not of the message (RFC 9110 §7.6.1), and the receiver's host. */
const HOP_BY_HOP = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-connection', 'content-length']);

export interface ListenHook {
  id: string;
  event: string;
  target_url: string;
}

export interface DeliveryLine {
  at: string;
  event: string;
  webhook_id: string | null;
  /** What the server was answered: the receiver's status, or 502/504 when the forward failed. */
  status: number;
  /** The receiver's status; null when it could not be reached. */
  forward_status: number | null;
  duration_ms: number;
  error?: string;
}

interface Forwarded {
  status: number | null;
  contentType: string | undefined;
  body: Buffer;
  error?: string;
  timedOut?: boolean;
}

/** Posts the delivery to `target` as it came: its headers (without hop-by-hop ones) and body. */
function forward(target: URL, headers: http.IncomingHttpHeaders, body: Buffer, timeoutMs: number): Promise<Forwarded> {
  const outgoing: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) outgoing[name] = value;
  outgoing['content-length'] = String(body.length);
  const transport = target.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const done = (result: Forwarded) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const request = transport.request(target, { method: 'POST', headers: outgoing, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      response.on('data', (chunk: Buffer) => {
        if (kept < ANSWER_LIMIT_BYTES) chunks.push(chunk.subarray(0, ANSWER_LIMIT_BYTES - kept));
        kept += chunk.length;
      });
      const finish = () => done({ status: response.statusCode ?? 502, contentType: response.headers['content-type'], body: Buffer.concat(chunks) });
      response.on('end', finish);
      response.on('error', finish);
      response.on('close', finish);
    });
    const timer = setTimeout(() => {
      request.destroy();
      done({ status: null, contentType: undefined, body: Buffer.alloc(0), error: `no answer within ${timeoutMs} ms`, timedOut: true });
    }, timeoutMs);
    request.on('error', (error) => done({ status: null, contentType: undefined, body: Buffer.alloc(0), error: error.message || 'the connection failed' }));
    request.end(body);
  });
}

/** Whether the listener behind a hook's target still answers for its session. */
async function listenerAlive(targetUrl: string, session: string): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get(targetUrl, { agent: false, timeout: PROBE_TIMEOUT_MS }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        try {
          resolve(response.statusCode === 200 && (JSON.parse(text) as { sitebiz_listen?: string }).sitebiz_listen === session);
        } catch {
          resolve(false);
        }
      });
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}

/** Removes the site's hooks of listeners that no longer answer; their ids. */
export async function removeStaleListenHooks(engine: JsonApiEngine, principal: Principal, siteId: number): Promise<string[]> {
  const hooks = await engine.transact(principal, (ctx) =>
    ctx.handle.db.selectFrom('hooks').select(['id', 'target_url']).where('site_id', '=', siteId).where('target_url', 'like', `http://127.0.0.1:%${LISTEN_PATH}%`).orderBy('id').execute(),
  );
  const alive = new Map<string, boolean>();
  const stale: number[] = [];
  for (const hook of hooks) {
    const match = LISTEN_TARGET.exec(hook.target_url);
    if (!match) continue;
    const key = `${match[1]}/${match[2]}`;
    if (!alive.has(key)) alive.set(key, await listenerAlive(hook.target_url, match[2]!));
    if (!alive.get(key)) stale.push(Number(hook.id));
  }
  await removeHooks(engine, principal, siteId, stale);
  return stale.map(String);
}

async function removeHooks(engine: JsonApiEngine, principal: Principal, siteId: number, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await engine.transact(principal, async (ctx, records) => {
    await records.lockSites([siteId]);
    // deleteHook also cancels the hook's deliveries not yet made.
    for (const id of ids) await deleteHook(ctx, { id, siteId });
  });
}

/** One hook per event on the site, all signed with `secret`, targeting the listener. */
async function subscribe(engine: JsonApiEngine, principal: Principal, siteId: number, events: readonly string[], base: string, secret: string): Promise<ListenHook[]> {
  return engine.transact(principal, async (ctx, records) => {
    await records.lockSites([siteId]);
    const hooks: ListenHook[] = [];
    for (const event of events) {
      const targetUrl = `${base}/${event}`;
      const { id } = await createHook(ctx, { attributes: { event, target_url: targetUrl }, relationships: {}, meta: {}, targets: { site: { id: siteId, siteId } } });
      hooks.push({ id: String(id), event, target_url: targetUrl });
    }
    await ctx.handle.db.updateTable('hooks').set({ signing_secret: secret }).where('id', 'in', hooks.map((h) => Number(h.id))).execute();
    return hooks;
  });
}

function parseEvents(values: Record<string, string | boolean | undefined>): string[] {
  const raw = values.events;
  if (raw === undefined) return [...HOOK_EVENT_NAMES];
  const events = [...new Set(String(raw).split(',').map((e) => e.trim()).filter(Boolean))];
  const unknown = events.filter((e) => !HOOK_EVENT_NAMES.includes(e));
  if (events.length === 0 || unknown.length > 0) {
    throw new UsageError(`--events takes a comma list of ${HOOK_EVENT_NAMES.join(', ')}${unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''}`);
  }
  return events;
}

function parseForwardTo(values: Record<string, string | boolean | undefined>): URL {
  const raw = values['forward-to'];
  if (typeof raw !== 'string' || raw === '') throw new UsageError('--forward-to <url> is required, such as http://localhost:4000/hooks');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--forward-to takes an http or https URL, got ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--forward-to takes an http or https URL, got ${JSON.stringify(raw)}`);
  return url;
}

function parseSecret(values: Record<string, string | boolean | undefined>): string {
  const raw = values['signing-secret'];
  if (raw === undefined) return newSigningSecret();
  const text = String(raw);
  const key = text.startsWith('whsec_') ? Buffer.from(text.slice(6), 'base64') : Buffer.alloc(0);
  if (key.length < 24 || key.length > 64) throw new UsageError('--signing-secret takes a secret such as whsec_<base64 of 24 to 64 bytes> (one printed by an earlier listen)');
  return text;
}

function line(d: DeliveryLine): string {
  const answer = d.forward_status === null ? `${d.status} (forward failed: ${d.error})` : String(d.status);
  return `${d.at}  ${d.event.padEnd(17)}  ${d.webhook_id ?? '-'}  -> ${answer}  ${d.duration_ms} ms`;
}

/** Resolves with the first SIGINT or SIGTERM. */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

async function listen(config: Config, values: Record<string, string | boolean | undefined>): Promise<void> {
  const json = values.json === true;
  const forwardTo = parseForwardTo(values);
  const events = parseEvents(values);
  const secret = parseSecret(values);
  const siteId = siteOption(values);
  if (config.mode === 'production') {
    throw new AdminError('listen needs sandbox mode: in production mode the server delivers to public addresses only, and the listener is on 127.0.0.1');
  }
  const handle = await connectDatabase(config.database);
  const session = randomBytes(8).toString('hex');
  // Below the server's own deadline, so that a slow receiver is reported by this listener.
  const forwardTimeoutMs = Math.max(100, config.webhookTimeoutMs - 500);
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const event = request.url?.split('/').pop() ?? '';
      if (request.method === 'GET' && request.url?.startsWith(`${LISTEN_PATH}${session}/`)) {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ sitebiz_listen: session }));
        return;
      }
      if (request.method !== 'POST' || !request.url?.startsWith(`${LISTEN_PATH}${session}/`)) {
        response.writeHead(404).end();
        return;
      }
      const started = performance.now();
      const at = new Date().toISOString();
      void forward(forwardTo, request.headers, Buffer.concat(chunks), forwardTimeoutMs).then((result) => {
        const status = result.status ?? (result.timedOut ? 504 : 502);
        if (result.status === null) {
          response
            .writeHead(status, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: `sitebiz listen could not forward to ${forwardTo.href}: ${result.error}` }));
        } else {
          response.writeHead(status, result.contentType ? { 'content-type': result.contentType } : {}).end(result.body);
        }
        const webhookId = request.headers['webhook-id'];
        const delivered: DeliveryLine = {
          at,
          event,
          webhook_id: typeof webhookId === 'string' ? webhookId : null,
          status,
          forward_status: result.status,
          duration_ms: Math.round(performance.now() - started),
          ...(result.error ? { error: result.error } : {}),
        };
        out(json ? JSON.stringify(delivered) : line(delivered));
      });
    });
  });
  let hooks: ListenHook[] = [];
  let engine: JsonApiEngine | undefined;
  let principal: Principal | undefined;
  let site = 0;
  try {
    await migrateToLatest(handle);
    const target = await accountPrincipal(handle, siteId === undefined ? {} : { siteId });
    principal = target.principal;
    site = target.siteId;
    engine = await createEngine(config, handle);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const port = (server.address() as AddressInfo).port;
    const removed = await removeStaleListenHooks(engine, principal, site);
    const stopped = untilSignal();
    hooks = await subscribe(engine, principal, site, events, `http://127.0.0.1:${port}${LISTEN_PATH}${session}`, secret);
    const start = { listening: true, site_id: String(site), port, forward_to: forwardTo.href, signing_secret: secret, hooks, removed_stale_hooks: removed };
    if (json) out(JSON.stringify(start));
    else {
      if (removed.length > 0) out(`Removed ${removed.length} hooks left by listeners that stopped without cleaning up (${removed.join(', ')}).`);
      out(`Ready! Forwarding ${events.join(', ')} of site ${site} to ${forwardTo.href}`);
      out(`Listening on 127.0.0.1:${port}; hooks ${hooks.map((h) => h.id).join(', ')} (removed on Ctrl-C).`);
      out(`Your webhook signing secret is ${secret} (every hook of this session)`);
    }
    await stopped;
  } finally {
    if (engine && principal && hooks.length > 0) {
      await removeHooks(engine, principal, site, hooks.map((h) => Number(h.id)));
      out(json ? JSON.stringify({ stopped: true, removed_hooks: hooks.map((h) => h.id) }) : `Removed hooks ${hooks.map((h) => h.id).join(', ')}.`);
    }
    server.closeIdleConnections();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    const cut = setTimeout(() => server.closeAllConnections(), 2_000);
    if (server.listening) await closed;
    clearTimeout(cut);
    await handle.close();
  }
}

export const listenCommand: Command = {
  usage: 'sitebiz listen --forward-to <url> [--events a,b] [--site <id>] [--signing-secret whsec_...] [--json] [config flags]',
  details: [
    `Subscribes one hook per event (default all: ${HOOK_EVENT_NAMES.join(', ')}) on the demo site (or --site), targeting a`,
    'listener on 127.0.0.1; the running server\'s worker posts deliveries there and each is forwarded to --forward-to with its',
    'headers and body (signed with the session\'s secret, printed at start). The server is answered with the receiver\'s status;',
    '502 when the receiver cannot be reached, 504 when it does not answer in time (the delivery then fails and is retried).',
    'Prints one line per delivery. Ctrl-C (SIGINT) or SIGTERM removes the hooks; hooks of listeners killed without that are',
    'removed by the next listen on the site. Sandbox mode only.',
    '--json: one object at start (port, hooks, signing_secret), one per delivery, one when stopped.',
  ],
  options: { 'forward-to': { type: 'string' }, events: { type: 'string' }, site: { type: 'string' }, 'signing-secret': { type: 'string' } },
  async run(values) {
    await listen(configFrom(values), values);
  },
};
