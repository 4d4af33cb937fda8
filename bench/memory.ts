// Resident memory of a server under load: VmRSS of the server process and of every process under
// it (`serve --workers N` forks workers), sampled every 200 ms from /proc, the largest value kept
// per process and per phase of the run (the load that was running at the time).
import { readdirSync, readFileSync } from 'node:fs';

const SAMPLE_MS = 200;

export interface PhaseMemory {
  phase: string;
  /** Largest VmRSS seen per process, in KiB. */
  maxKiBByPid: Map<number, number>;
}

export class MemorySampler {
  private readonly phases = new Map<string, PhaseMemory>();
  private current: PhaseMemory | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly rootPid: number) {}

  /** Starts sampling (again) and files what follows under `phase`. */
  phase(name: string): void {
    let phase = this.phases.get(name);
    if (!phase) this.phases.set(name, (phase = { phase: name, maxKiBByPid: new Map() }));
    this.current = phase;
    this.sample();
    this.timer ??= setInterval(() => this.sample(), SAMPLE_MS);
    this.timer.unref();
  }

  /** Stops sampling until the next phase(). */
  pause(): void {
    this.sample();
    this.current = undefined;
  }

  stop(): void {
    this.pause();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  results(): PhaseMemory[] {
    return [...this.phases.values()];
  }

  private sample(): void {
    const phase = this.current;
    if (!phase) return;
    for (const pid of processTree(this.rootPid)) {
      const kib = vmRssKiB(pid);
      if (kib !== undefined && kib > (phase.maxKiBByPid.get(pid) ?? 0)) phase.maxKiBByPid.set(pid, kib);
    }
  }
}

export function vmRssKiB(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined; // gone, or not Linux
  }
}

/** The process and its descendants, from /proc/<pid>/task/<tid>/children. */
function processTree(rootPid: number): number[] {
  const found: number[] = [];
  const queue = [rootPid];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    found.push(pid);
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      try {
        for (const child of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ')) {
          if (child.trim() !== '') queue.push(Number(child));
        }
      } catch {
        // the task ended meanwhile
      }
    }
  }
  return found;
}

export const mib = (kib: number | undefined): string => (kib === undefined ? 'n/a' : `${(kib / 1024).toFixed(0)} MiB`);
