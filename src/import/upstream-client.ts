// The import's client of the upstream API: OAuth client credentials, then GETs that respect the
// source. At most `concurrency` requests are in flight; a 429 or 503 waits what Retry-After says;
// other 5xx answers, timeouts and network errors are retried with exponential backoff and full
// jitter; a 401 fetches a new token once (tokens expire during a long import); a 403 stops the
// import with the source's own detail, which names the permission the key lacks.
import { setTimeout as sleep } from 'node:timers/promises';

/** A JSON:API document as the source answers it (only what the import reads). */
export interface UpstreamDocument {
  data: UpstreamRecord | UpstreamRecord[] | null;
  included?: UpstreamRecord[];
  meta?: { total_pages?: number; total_count?: number };
  links?: { next?: string | null };
}

export interface UpstreamRecord {
  id: string;
  type: string;
  attributes?: Record<string, unknown>;
  relationships?: Record<string, { data?: Linkage | Linkage[] | null }>;
}

export interface Linkage {
  type: string;
  id: string;
}

/** Why an import stops: the source refused (401, 403, another 4xx) or kept failing. */
export class ImportError extends Error {
  constructor(
    readonly code: 'unauthorized' | 'forbidden' | 'refused' | 'unavailable' | 'conflict' | 'interrupted',
    message: string,
  ) {
    super(message);
  }
}

export interface UpstreamClientOptions {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Requests in flight at most. */
  concurrency: number;
  /** Tries per request before giving up (the first included). */
  maxAttempts?: number;
  /** Time to wait for an answer's headers and body. */
  timeoutMs?: number;
  /** Upper bound of a backoff delay. */
  maxDelayMs?: number;
  /** Stops waiting and sending when aborted (Ctrl-C). */
  signal?: AbortSignal;
}

export interface ClientStats {
  requests: number;
  retries: number;
}

const DEFAULT_ATTEMPTS = 10;
const DEFAULT_TIMEOUT_MS = 60_000;
const BASE_DELAY_MS = 250;
const DEFAULT_MAX_DELAY_MS = 30_000;
/** Longest Retry-After honoured as given; beyond it the source is asked again sooner than it said. */
const MAX_RETRY_AFTER_MS = 120_000;

export class UpstreamClient {
  readonly stats: ClientStats = { requests: 0, retries: 0 };
  private token: Promise<string> | undefined;
  private inFlight = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly base: string;

  constructor(private readonly options: UpstreamClientOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  }

  /** GET /v1/<path> with these query parameters (bracket keys as given); the parsed document. */
  async get(path: string, params: Record<string, string> = {}): Promise<UpstreamDocument> {
    const query = new URLSearchParams(params).toString();
    const url = `${this.base}/v1/${path}${query ? `?${query}` : ''}`;
    let refreshed = false;
    for (let attempt = 1; ; attempt++) {
      const token = await this.accessToken();
      const outcome = await this.send(url, { headers: { authorization: `Bearer ${token}`, accept: 'application/vnd.api+json' } });
      if (outcome.kind === 'answer') {
        const { status, body, retryAfterMs } = outcome;
        if (status === 200) return JSON.parse(body) as UpstreamDocument;
        if (status === 401 && !refreshed) {
          refreshed = true;
          this.token = undefined;
          continue;
        }
        if (status === 401) throw new ImportError('unauthorized', `The source refused the key's token (401) at GET ${url}: ${errorDetail(body)}`);
        if (status === 403) throw new ImportError('forbidden', `The key may not read ${path.split('/')[0]} (403 at GET ${url}): ${errorDetail(body)}`);
        if (status !== 429 && status !== 408 && status < 500) throw new ImportError('refused', `The source answered ${status} to GET ${url}: ${errorDetail(body)}`);
        if (attempt >= this.attempts) throw new ImportError('unavailable', `The source kept failing: ${status} to GET ${url} after ${attempt} tries: ${errorDetail(body)}`);
        await this.pause(retryAfterMs ?? this.backoff(attempt));
      } else {
        if (attempt >= this.attempts) throw new ImportError('unavailable', `The source could not be reached at GET ${url} after ${attempt} tries: ${outcome.message}`);
        await this.pause(this.backoff(attempt));
      }
      this.stats.retries++;
    }
  }

  private get attempts(): number {
    return this.options.maxAttempts ?? DEFAULT_ATTEMPTS;
  }

  /** Full jitter: a random delay up to the exponential bound (AWS's "Exponential Backoff and Jitter"). */
  private backoff(attempt: number): number {
    const bound = Math.min(this.options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (attempt - 1));
    return bound / 2 + Math.random() * (bound / 2);
  }

  private async pause(ms: number): Promise<void> {
    this.checkAborted();
    await sleep(ms, undefined, this.options.signal ? { signal: this.options.signal } : {}).catch(() => {});
    this.checkAborted();
  }

  private checkAborted(): void {
    if (this.options.signal?.aborted) throw new ImportError('interrupted', 'The import was interrupted; run the same command again to continue where it stopped');
  }

  private accessToken(): Promise<string> {
    this.token ??= this.fetchToken().catch((error: unknown) => {
      this.token = undefined;
      throw error;
    });
    return this.token;
  }

  private async fetchToken(): Promise<string> {
    const url = `${this.base}/v1/oauth/token`;
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: this.options.clientId, client_secret: this.options.clientSecret }).toString();
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.send(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
      if (outcome.kind === 'answer') {
        if (outcome.status === 200) return String((JSON.parse(outcome.body) as { access_token: string }).access_token);
        if (outcome.status === 400 || outcome.status === 401 || outcome.status === 403) {
          throw new ImportError('unauthorized', `The source refused the client credentials (${outcome.status} at POST ${url}): ${errorDetail(outcome.body)}`);
        }
        if (outcome.status !== 429 && outcome.status < 500) throw new ImportError('refused', `The source answered ${outcome.status} to POST ${url}: ${errorDetail(outcome.body)}`);
        if (attempt >= this.attempts) throw new ImportError('unavailable', `The source kept failing: ${outcome.status} to POST ${url} after ${attempt} tries`);
        await this.pause(outcome.retryAfterMs ?? this.backoff(attempt));
      } else {
        if (attempt >= this.attempts) throw new ImportError('unavailable', `The source could not be reached at POST ${url} after ${attempt} tries: ${outcome.message}`);
        await this.pause(this.backoff(attempt));
      }
      this.stats.retries++;
    }
  }

  /** One request within the concurrency bound: its answer, or why none came. */
  private async send(
    url: string,
    init: RequestInit,
  ): Promise<{ kind: 'answer'; status: number; body: string; retryAfterMs: number | undefined } | { kind: 'failure'; message: string }> {
    await this.acquire();
    try {
      this.checkAborted();
      this.stats.requests++;
      const timeout = AbortSignal.timeout(this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
      const signal = this.options.signal ? AbortSignal.any([timeout, this.options.signal]) : timeout;
      try {
        const response = await fetch(url, { ...init, signal });
        const body = await response.text();
        return { kind: 'answer', status: response.status, body, retryAfterMs: retryAfter(response.headers.get('retry-after')) };
      } catch (error) {
        this.checkAborted();
        return { kind: 'failure', message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
      }
    } finally {
      this.release();
    }
  }

  private async acquire(): Promise<void> {
    if (this.inFlight < this.options.concurrency) {
      this.inFlight++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.inFlight--;
  }
}

/** Retry-After in seconds or as an HTTP date, in ms (bounded); undefined when absent or unreadable. */
export function retryAfter(header: string | null): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = /^\d+$/.test(header.trim()) ? Number(header.trim()) * 1000 : Date.parse(header) - Date.now();
  if (!Number.isFinite(seconds)) return undefined;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, seconds));
}

/** The detail of a JSON:API error document (or an OAuth error), else the start of the body. */
function errorDetail(body: string): string {
  try {
    const parsed = JSON.parse(body) as { errors?: Array<{ detail?: string; title?: string }>; error_description?: string; error?: string };
    const first = parsed.errors?.[0];
    if (first) return first.detail ?? first.title ?? body.slice(0, 300);
    if (parsed.error_description || parsed.error) return String(parsed.error_description ?? parsed.error);
  } catch {
    // Not JSON: a proxy's page.
  }
  return body.slice(0, 300);
}
