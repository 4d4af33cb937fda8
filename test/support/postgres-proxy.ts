// A TCP proxy to PostgreSQL in the test process that the test can cut (every connection dropped,
// new ones refused, as during a restart), stall (connections accepted and never answered, as when
// the network loses the server) and restore: PostgreSQL going away without restarting it.
import { createServer, connect, type Server, type Socket } from 'node:net';

type Mode = 'forward' | 'refuse' | 'stall';

/** A TCP proxy to PostgreSQL that can drop, refuse and stall connections. */
export class PostgresProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private mode: Mode = 'forward';
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    await this.listen(0);
  }

  /** Drops every connection and, for `refuse`, stops listening; for `stall`, accepts and never answers. */
  async cut(mode: Exclude<Mode, 'forward'>): Promise<void> {
    this.mode = mode;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (mode === 'refuse') await this.close();
    else if (!this.server) await this.listen(this.port);
  }

  async restore(): Promise<void> {
    this.mode = 'forward';
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (!this.server) await this.listen(this.port);
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private listen(port: number): Promise<void> {
    const server = createServer((client) => {
      this.track(client);
      if (this.mode !== 'forward') return; // stall: say nothing
      const upstream = this.track(connect(this.target.port, this.target.host));
      client.pipe(upstream).pipe(client);
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        const address = server.address();
        this.port = typeof address === 'object' && address ? address.port : port;
        resolve();
      });
    });
  }

  private track(socket: Socket): Socket {
    this.sockets.add(socket);
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.sockets.delete(socket));
    return socket;
  }
}
