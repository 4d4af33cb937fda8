// The main thread's side of generator-worker.ts: one worker per site, asked for one batch at a
// time, so at most one batch waits while another is written.
import { Worker } from 'node:worker_threads';
import type { EncodedBatch } from './people-batch.js';
import type { SiteJob } from './people-generator.js';

type Reply = { batch: EncodedBatch; contacts: number } | { done: true } | { error: string };

/**
 * The worker's module beside this one. Compiled (dist/, as bin/sitebiz.js runs) it is plain
 * JavaScript and starts as it is. Run from src/ through tsx (tests, `npm run dev`), the worker
 * needs tsx too, and tsx's loader does not reach worker threads however the main thread got it:
 * then the worker starts from a line of JavaScript that registers tsx and imports the TypeScript.
 */
function workerEntry(): { code: string | URL; eval: boolean } {
  const compiled = import.meta.url.endsWith('.js');
  const entry = new URL(compiled ? './generator-worker.js' : './generator-worker.ts', import.meta.url);
  if (compiled) return { code: entry, eval: false };
  // Resolved here: code evaluated in a worker resolves bare names from the working directory,
  // which need not be the checkout.
  const tsxApi = import.meta.resolve('tsx/esm/api');
  return { code: `import(${JSON.stringify(tsxApi)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); });`, eval: true };
}

export class GeneratorThread {
  private readonly worker: Worker;
  private waiting: { resolve: (reply: Reply) => void; reject: (error: Error) => void } | undefined;
  private failure: Error | undefined;

  constructor(job: SiteJob) {
    const entry = workerEntry();
    this.worker = new Worker(entry.code, { eval: entry.eval, workerData: job, execArgv: [] });
    this.worker.on('message', (reply: Reply) => {
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.resolve(reply);
    });
    const fail = (error: Error) => {
      this.failure = error;
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.reject(error);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => {
      if (this.waiting) fail(new Error(`seed: the generator thread exited (code ${code})`));
    });
  }

  /** The next batch, or null when the site is complete. */
  async next(): Promise<{ batch: EncodedBatch; contacts: number } | null> {
    if (this.failure) throw this.failure;
    if (this.waiting) throw new Error('seed: one batch at a time');
    const reply = await new Promise<Reply>((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.worker.postMessage('next');
    });
    if ('error' in reply) throw new Error(`seed: generating failed: ${reply.error}`);
    if ('done' in reply) return null;
    return reply;
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}
