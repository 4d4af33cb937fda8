// The primary of `serve --workers N`: forks the workers, replaces one that dies (with a backoff, so
// a worker that crashes at start does not spin), and stops them all gracefully. It holds no
// request state and never listens itself: node:cluster hands the connections of the shared port to
// the workers in turn.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';

/** A restart waits at least this long: a terminal's Ctrl-C reaches the workers and the primary at
 * once, and a worker that finished first must not be replaced while the primary is stopping. */
const RESTART_MIN_DELAY_MS = 500;
const RESTART_MAX_DELAY_MS = 30_000;
/** A worker that ran this long before dying was healthy: its replacement starts without backoff. */
const HEALTHY_UPTIME_MS = 10_000;

export interface SupervisorOptions {
  workers: number;
  log: Logger;
  /** How long workers may take to finish their requests once told to stop. */
  stopGraceMs: number;
}

interface Slot {
  index: number;
  worker?: Worker;
  startedAt: number;
  /** Deaths in a row that came soon after the start; each doubles the wait before the next. */
  quickDeaths: number;
  restartTimer?: NodeJS.Timeout;
}

export class WorkerStartError extends Error {}

export class WorkerSupervisor {
  private readonly slots: Slot[];
  private stopping = false;

  constructor(private readonly options: SupervisorOptions) {
    this.slots = Array.from({ length: options.workers }, (_, index) => ({ index, startedAt: 0, quickDeaths: 0 }));
  }

  /**
   * Forks every worker and resolves once each listens. A worker that exits before it listens
   * (a port in use, a bad database) fails the start: the others are stopped and this rejects.
   */
  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      let listening = 0;
      let failed = false;
      for (const slot of this.slots) {
        const worker = this.fork(slot);
        worker.once('listening', () => {
          if (++listening === this.slots.length && !failed) resolve();
        });
        worker.once('exit', (code, signal) => {
          if (listening === this.slots.length || failed) return;
          failed = true;
          this.stopping = true;
          reject(new WorkerStartError(`worker ${slot.index + 1} exited (${describeExit(code, signal)}) before it listened; its error is above`));
        });
      }
    }).catch(async (error: unknown) => {
      await this.stop();
      throw error;
    });
    // From here on a death is replaced rather than failing the start.
    for (const slot of this.slots) slot.worker?.on('exit', (code, signal) => this.onUnexpectedExit(slot, code, signal));
    this.options.log.info({ workers: this.slots.length, pids: this.pids() }, 'every worker is listening');
  }

  pids(): number[] {
    return this.slots.flatMap((slot) => (slot.worker?.process.pid === undefined ? [] : [slot.worker.process.pid]));
  }

  /**
   * Tells every worker to stop (SIGTERM: no new connections, finish the requests in flight) and
   * waits for them. Resolves with the workers that did not exit cleanly, after killing any still
   * running once the grace period is over.
   *
   * The last worker is told only once the others have exited. node:cluster's primary accepts the
   * connections and hands them to the workers one at a time; when the last worker closes its
   * listener, the connections the primary holds that no worker took yet are closed unanswered
   * (ECONNRESET for requests sent before the signal: 3 of 20 under load, test/shutdown.test.ts).
   * While one worker still listens, they go to it. The stop can take two grace periods at most.
   */
  async stop(): Promise<string[]> {
    this.stopping = true;
    const problems: string[] = [];
    const live = this.slots.filter((slot) => {
      if (slot.restartTimer) clearTimeout(slot.restartTimer);
      return slot.worker !== undefined && !slot.worker.isDead();
    });
    const last = live.pop();
    await Promise.all(live.map((slot) => this.stopWorker(slot, problems)));
    if (last) await this.stopWorker(last, problems);
    return problems;
  }

  /** SIGTERM to one worker; resolves once it exited (killed after the grace period). */
  private stopWorker(slot: Slot, problems: string[]): Promise<void> {
    const worker = slot.worker;
    if (!worker || worker.isDead()) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const name = `worker ${slot.index + 1} (pid ${worker.process.pid})`;
      let killed = false;
      const killer = setTimeout(() => {
        killed = true;
        worker.process.kill('SIGKILL');
      }, this.options.stopGraceMs + 2_000);
      worker.once('exit', (code, signal) => {
        clearTimeout(killer);
        if (killed) problems.push(`${name} was still running ${this.options.stopGraceMs + 2_000} ms after SIGTERM; killed`);
        // A worker still loading has no handler yet and dies of the SIGTERM itself: that is
        // obeying too (it had no requests).
        else if (code !== 0 && signal !== 'SIGTERM') problems.push(`${name} exited ${describeExit(code, signal)}`);
        resolve();
      });
      worker.process.kill('SIGTERM');
    });
  }

  private fork(slot: Slot): Worker {
    slot.startedAt = Date.now();
    const worker = cluster.fork();
    slot.worker = worker;
    this.options.log.info({ worker: slot.index + 1, workerPid: worker.process.pid }, 'worker started');
    return worker;
  }

  private onUnexpectedExit(slot: Slot, code: number | null, signal: string | null): void {
    if (this.stopping) return;
    const uptime = Date.now() - slot.startedAt;
    slot.quickDeaths = uptime < HEALTHY_UPTIME_MS ? slot.quickDeaths + 1 : 0;
    const delay = Math.min(RESTART_MAX_DELAY_MS, RESTART_MIN_DELAY_MS * 2 ** slot.quickDeaths);
    this.options.log.error(
      { worker: slot.index + 1, workerPid: slot.worker?.process.pid, exit: describeExit(code, signal), uptimeMs: uptime, restartInMs: delay },
      'worker died; replacing it',
    );
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = undefined;
      if (this.stopping) return;
      const worker = this.fork(slot);
      worker.on('exit', (c, s) => this.onUnexpectedExit(slot, c, s));
    }, delay);
  }
}

function describeExit(code: number | null, signal: string | null): string {
  return signal ? `on signal ${signal}` : `with code ${code}`;
}
