// The bench's own requests (set-up, probes, walks, sequential latency samples): one keep-alive
// connection per client, as a connector or curl loop would use, and any non-2xx is an error that
// names the request and quotes the answer.
import { Agent, request as httpRequest } from 'node:http';

export interface HttpResponse {
  status: number;
  rawHeaders: string[];
  body: Buffer;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
}

export class HttpClient {
  /** One socket, reused: latency samples measure the server, not connection set-up. */
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1 });

  constructor(
    readonly baseUrl: string,
    private readonly defaultHeaders: Record<string, string> = {},
  ) {}

  withHeaders(headers: Record<string, string>): HttpClient {
    return new HttpClient(this.baseUrl, { ...this.defaultHeaders, ...headers });
  }

  send(path: string, options: RequestOptions = {}): Promise<HttpResponse> {
    const method = options.method ?? 'GET';
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        new URL(path, this.baseUrl),
        { method, headers: { ...this.defaultHeaders, ...options.headers }, agent: this.agent, timeout: options.timeoutMs ?? 120_000 },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${options.timeoutMs ?? 120_000} ms`)));
      req.on('error', reject);
      req.end(options.body);
    });
  }

  /** Sends and requires a 2xx answer. */
  async ok(path: string, options: RequestOptions = {}): Promise<HttpResponse> {
    const res = await this.send(path, options);
    if (res.status < 200 || res.status > 299) throw new NotOk(`${options.method ?? 'GET'} ${path}`, res);
    return res;
  }

  /** Sends, requires a 2xx answer, and parses it as JSON. */
  async json<T = JsonDocument>(path: string, options: RequestOptions = {}): Promise<T> {
    return JSON.parse((await this.ok(path, options)).body.toString('utf8')) as T;
  }

  close(): void {
    this.agent.destroy();
  }
}

export class NotOk extends Error {
  constructor(
    readonly request: string,
    readonly response: HttpResponse,
  ) {
    super(`${request} answered ${response.status}: ${response.body.toString('utf8').slice(0, 600)}`);
  }
}

/** The parts of a JSON:API document the bench reads. */
export interface JsonDocument {
  data?: ResourceObject | ResourceObject[] | null;
  meta?: { total_count?: number; total_pages?: number } & Record<string, unknown>;
  links?: { next?: string | null } & Record<string, unknown>;
  errors?: Array<{ detail?: string; source?: { parameter?: string } }>;
}

export interface ResourceObject {
  id: string;
  type: string;
  attributes?: Record<string, unknown>;
}

export function listOf(document: JsonDocument): ResourceObject[] {
  if (!Array.isArray(document.data)) throw new Error('expected a list document (data: [...])');
  return document.data;
}

export function totalCount(document: JsonDocument, what: string): number {
  const total = document.meta?.total_count;
  if (typeof total !== 'number') throw new Error(`${what}: the answer has no meta.total_count`);
  return total;
}

/** Node's http server writes these itself, or they describe the connection, not the response. */
const CONNECTION_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

export function responseHeaderPairs(rawHeaders: string[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (!CONNECTION_HEADERS.has(name.toLowerCase())) pairs.push([name, rawHeaders[i + 1]!]);
  }
  return pairs;
}
