// The small part of autocannon's programmatic API the bench uses (the package has no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Options {
      url: string;
      method?: string;
      headers?: Record<string, string>;
      connections?: number;
      pipelining?: number;
      duration?: number;
      timeout?: number;
      /** Requests sent in turn; setupRequest may change each one before it goes. */
      requests?: Array<{ setupRequest?: (request: Request) => Request }>;
      /** Return the raw per-run result (encoded histograms), to merge with aggregateResult. */
      skipAggregateResult?: boolean;
    }

    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string;
    }

    /** Counters common to raw (skipAggregateResult) and aggregated results. */
    interface Result {
      totalCompletedRequests?: number;
      totalRequests?: number;
      duration: number;
      errors: number;
      timeouts: number;
      mismatches: number;
      non2xx: number;
      resets: number;
      '2xx': number;
      statusCodeStats: Record<string, { count: number }>;
    }

    interface Instance extends EventEmitter {
      on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTimeMs: number) => void): this;
      on(event: string, listener: (...args: unknown[]) => void): this;
      stop(): void;
    }
  }

  function autocannon(options: autocannon.Options, callback: (error: Error | null, result: autocannon.Result) => void): autocannon.Instance;
  export = autocannon;
}
