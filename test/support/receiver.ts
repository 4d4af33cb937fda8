// A real webhook receiver for the delivery tests: node:http on 127.0.0.1 (port 0), recording
// every request it gets (path, headers, raw body) and answering as the test says.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The raw body, as signed. */
  body: string;
  /** Wall-clock time it arrived (performance.now()). */
  at: number;
}

/**
 * What to do with a request: answer it, cut the connection, hold it open until `release`, or send
 * the status line and the start of a body and hold the rest until `release`.
 */
export type Reaction =
  | { status: number; body?: string; headers?: Record<string, string>; delayMs?: number }
  | { drop: true }
  | { hold: true }
  | { status: number; partial: string };

export class Receiver {
  readonly received: Received[] = [];
  /** Decides each answer; 200 with an empty body unless a test says otherwise. */
  react: (request: Received) => Reaction = () => ({ status: 200 });
  private readonly held: http.ServerResponse[] = [];
  private readonly waiters: Array<() => void> = [];

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<Receiver> {
    const server = http.createServer();
    const receiver = new Receiver(server);
    server.on('request', (req, res) => receiver.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path = '/hooks'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Requests whose webhook-id is `id`. */
  withId(id: string): Received[] {
    return this.received.filter((r) => r.headers['webhook-id'] === id);
  }

  /** Resolves once `count` requests in all have arrived (fails after `timeoutMs`). */
  async waitFor(count: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (Date.now() > deadline) throw new Error(`the receiver got ${this.received.length} of ${count} requests within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 20);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Answers every held request with `status` (ends those whose answer had begun). */
  release(status = 200): void {
    for (const res of this.held.splice(0)) (res.headersSent ? res : res.writeHead(status)).end();
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: Received = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: performance.now() };
      this.received.push(request);
      for (const wake of this.waiters.splice(0)) wake();
      const reaction = this.react(request);
      if ('drop' in reaction) req.socket.destroy();
      else if ('hold' in reaction) this.held.push(res);
      else if ('partial' in reaction) {
        res.writeHead(reaction.status);
        res.write(reaction.partial);
        this.held.push(res);
      }
      else if (reaction.delayMs) setTimeout(() => res.writeHead(reaction.status, reaction.headers).end(reaction.body ?? ''), reaction.delayMs);
      else res.writeHead(reaction.status, reaction.headers).end(reaction.body ?? '');
    });
  }
}
