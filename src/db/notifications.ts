// PostgreSQL LISTEN on a connection of its own (a pooled connection cannot keep a LISTEN: the pool
// hands it to other queries and may close it). The connection is made again after any failure,
// waiting longer each time (0.25 s doubling up to 30 s), so a database that is briefly away costs
// nothing but missed wake-ups, which the listener's owner makes up for: it is told every time the
// connection is (re)made, as anything may have happened while it was away.
import pg from 'pg';

export interface NotificationHandlers {
  /** A notification arrived on the channel, or the connection was (re)made. */
  onNotify(): void;
  /** The connection failed; it is made again after `retryInMs`. */
  onError?(error: Error, retryInMs: number): void;
}

export interface NotificationListener {
  close(): Promise<void>;
}

const FIRST_RETRY_MS = 250;
const LONGEST_RETRY_MS = 30_000;
const CONNECT_TIMEOUT_MS = 5_000;

export function listenForNotifications(connectionString: string, channel: string, handlers: NotificationHandlers): NotificationListener {
  let closed = false;
  let client: pg.Client | undefined;
  let retryMs = FIRST_RETRY_MS;
  let retryTimer: NodeJS.Timeout | undefined;

  const connect = async () => {
    retryTimer = undefined;
    if (closed) return;
    const current = new pg.Client({ connectionString, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true });
    client = current;
    let failed = false;
    const fail = (error: Error) => {
      if (failed || closed || client !== current) return;
      failed = true;
      client = undefined;
      current.removeAllListeners('notification');
      void current.end().catch(() => {});
      handlers.onError?.(error, retryMs);
      retryTimer = setTimeout(() => void connect(), retryMs);
      retryTimer.unref();
      retryMs = Math.min(retryMs * 2, LONGEST_RETRY_MS);
    };
    current.on('error', fail);
    current.on('end', () => fail(new Error('the notification connection ended')));
    current.on('notification', (message) => {
      if (message.channel === channel) handlers.onNotify();
    });
    try {
      await current.connect();
      await current.query(`listen ${current.escapeIdentifier(channel)}`);
    } catch (error) {
      fail(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (closed) {
      await current.end().catch(() => {});
      return;
    }
    retryMs = FIRST_RETRY_MS;
    handlers.onNotify();
  };
  void connect();

  return {
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      const current = client;
      client = undefined;
      await current?.end().catch(() => {});
    },
  };
}
