// The request journal (GET /v1/test_helpers/requests, docs/sandbox.md): the last requests of each
// account's keys, for integrators to see what their code really sent and got back.
//
// Kept off the hot path: answering a request only pushes an entry on this process's buffer (in
// onSend, before the answer leaves, so a journal read that follows it in this process finds it).
// The buffer is written in one transaction per batch (every BATCH_MS, or at BATCH_SIZE entries),
// when redaction and cutting happen too; each account written is then trimmed to its newest
// `size` entries. A journal read flushes this process's buffer first; other processes' entries
// show up within BATCH_MS. Closing the app flushes what is left before the database closes.
//
// What is journaled: requests that authenticated with a key (a Bearer token, or client credentials
// or a refresh token at /v1/oauth/token and /v1/oauth/revoke), so the account is known. Not the
// journal's own reads (GET /v1/test_helpers/requests), which would otherwise push out what they
// look for. Headers are never kept; bodies and query strings are redacted (redaction.ts).
//
// Each entry says whether the upstream API would accept its request, and if not why
// (upstream-check.ts: set lookups over the route's precomputed vocabulary, in every mode).
//
// Each entry keeps the sites its request reached (the engine's note, Principal.touchedSites) and
// its key's user: a user limited to some sites reads the entries about its sites only
// (site-scope.ts), whichever key made them.
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Insertable } from 'kysely';
import type { DatabaseHandle } from '../db/connect.js';
import type { RequestJournalTable } from '../db/schema.js';
import { upstreamVerdict } from '../jsonapi/upstream-check.js';
import { cutToBytes, redactText, redactUrl } from './redaction.js';
import { siteColumns } from './site-scope.js';

/** The largest body kept, in UTF-8 bytes. */
export const JOURNAL_BODY_BYTES = 4096;
const BATCH_MS = 100;
const BATCH_SIZE = 100;
/**
 * Entries a process holds while its writes lag (a loaded or unreachable database): beyond this
 * the journal drops new entries rather than grow without bound, and logs how many with the next
 * batch. It is an aid; the API's answers never wait for it.
 */
const MAX_PENDING = 50 * BATCH_SIZE;

/** The journal's reads are not journaled. */
export const JOURNAL_READ_PATH = '/v1/test_helpers/requests';

interface PendingEntry {
  /** The key's account, client id and user: the principal's, or those of the key a token request authenticated. */
  key: { accountId: number; clientId: string; userId: number };
  /** The sites the request reached (Principal.touchedSites). */
  siteIds: number[];
  requestId: string;
  method: string;
  url: string;
  status: number;
  durationMs: number;
  requestBody: unknown;
  responseBody: unknown;
  at: Date;
  /** Why the upstream API would not accept the request; null when it would. */
  notUpstreamBecause: string | null;
}

export interface RequestJournalOptions {
  handle: DatabaseHandle;
  /** Entries kept per account (REQUEST_JOURNAL_SIZE); 0 keeps none. */
  size: number;
  /** Real time. */
  now: () => Date;
  log: FastifyBaseLogger;
}

export class RequestJournal {
  private buffer: PendingEntry[] = [];
  /** Entries dropped since the last batch because MAX_PENDING were waiting. */
  private dropped = 0;
  /** Entries of batches handed to the writer and not yet written. */
  private queued = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly options: RequestJournalOptions) {}

  get enabled(): boolean {
    return this.options.size > 0;
  }

  /** Records every journaled request of `app` (call on the root instance). */
  install(app: FastifyInstance): void {
    if (!this.enabled) return;
    app.addHook('onSend', async (request, reply, payload) => {
      this.observe(request, reply, payload);
      return payload;
    });
    // Added after the database's onClose hook, so it runs before it (last added, first run).
    app.addHook('onClose', async () => {
      if (this.timer) clearTimeout(this.timer);
      await this.flush();
    });
  }

  private observe(request: FastifyRequest, reply: FastifyReply, payload: unknown): void {
    const principal = request.principal;
    const key = principal ? { accountId: principal.accountId, clientId: principal.clientId, userId: principal.userId } : request.clientKey;
    if (!key?.clientId) return;
    const url = request.url;
    if (url.startsWith(JOURNAL_READ_PATH) && (url.length === JOURNAL_READ_PATH.length || url[JOURNAL_READ_PATH.length] === '?' || url[JOURNAL_READ_PATH.length] === '/')) return;
    if (this.buffer.length + this.queued >= MAX_PENDING) {
      this.dropped++;
      return;
    }
    const durationMs = reply.elapsedTime;
    const verdict = upstreamVerdict(request);
    this.buffer.push({
      key: { accountId: key.accountId, clientId: key.clientId, userId: key.userId },
      siteIds: principal?.touchedSites ? [...principal.touchedSites] : [],
      requestId: String(request.id),
      method: request.method,
      url,
      status: reply.statusCode,
      durationMs,
      requestBody: request.body,
      responseBody: payload,
      at: new Date(this.options.now().getTime() - Math.round(durationMs)),
      notUpstreamBecause: verdict.upstream ? null : verdict.reason,
    });
    if (this.buffer.length >= BATCH_SIZE) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), BATCH_MS);
      this.timer.unref();
    }
  }

  /** Writes what this process has buffered; resolves once it is in the database (or was dropped). */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const batch = this.buffer;
    this.buffer = [];
    if (this.dropped > 0) {
      this.options.log.warn({ dropped: this.dropped }, 'request journal entries dropped while its writes lagged');
      this.dropped = 0;
    }
    // One write at a time, in order: a read that flushes waits for the writes before its own.
    this.queued += batch.length;
    this.writing = this.writing.then(async () => {
      try {
        if (batch.length > 0) await this.write(batch);
      } finally {
        this.queued -= batch.length;
      }
    });
    return this.writing;
  }

  private async write(batch: PendingEntry[]): Promise<void> {
    const { db, traits } = this.options.handle;
    try {
      const rows: Insertable<RequestJournalTable>[] = batch.map((entry) => ({
        account_id: entry.key.accountId,
        client_id: entry.key.clientId,
        request_id: entry.requestId,
        method: entry.method,
        path: redactUrl(entry.url),
        status: entry.status,
        duration_ms: Math.round(entry.durationMs * 1000) / 1000,
        request_body: bodyText(entry.requestBody),
        response_body: bodyText(entry.responseBody),
        created_at: traits.encodeTimestamp(entry.at),
        user_id: entry.key.userId,
        ...siteColumns(entry.siteIds),
        upstream: traits.encodeBoolean(entry.notUpstreamBecause === null),
        upstream_reason: entry.notUpstreamBecause,
      }));
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < rows.length; i += BATCH_SIZE) await trx.insertInto('request_journal').values(rows.slice(i, i + BATCH_SIZE)).execute();
      });
      // Trimmed after the commit, one statement per account: two processes trimming one account
      // at once then never hold each other's rows in one transaction.
      for (const accountId of new Set(batch.map((entry) => entry.key.accountId))) await this.trim(accountId);
    } catch (error) {
      // The journal is an aid: a batch that cannot be written is dropped, never an API failure.
      this.options.log.warn({ err: error, entries: batch.length }, 'request journal batch not written');
    }
  }

  /** Deletes the account's entries older than its newest `size`. */
  private async trim(accountId: number): Promise<void> {
    const { db } = this.options.handle;
    await db
      .deleteFrom('request_journal')
      .where('account_id', '=', accountId)
      .where('id', '<=', (eb) =>
        eb.selectFrom('request_journal').select('id').where('account_id', '=', accountId).orderBy('id', 'desc').limit(1).offset(this.options.size),
      )
      .execute();
  }
}

/** A body as the journal keeps it: JSON text (a parsed request body is written back as JSON), redacted and cut. */
function bodyText(body: unknown): string | null {
  if (body === undefined || body === null) return null;
  let text: string;
  if (typeof body === 'string') text = body;
  else if (Buffer.isBuffer(body)) text = body.toString('utf8');
  else if (typeof body === 'object' && typeof (body as { pipe?: unknown }).pipe === 'function') return null; // a stream
  else text = JSON.stringify(body) ?? '';
  if (text === '') return null;
  // Only the start is kept: redact twice as many characters as can be kept (each is at least a
  // byte), not a whole list page. A secret cut short there is still redacted (redaction.ts).
  return cutToBytes(redactText(text.slice(0, 2 * JOURNAL_BODY_BYTES)), JOURNAL_BODY_BYTES);
}
