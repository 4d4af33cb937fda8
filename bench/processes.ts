// Child processes and everything the bench must undo (temp dirs, PostgreSQL databases), undone on
// success, error, timeout and Ctrl-C. Every child is registered here the moment it is spawned, so
// no exit path can leave one running.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const HOST = '127.0.0.1';

export interface Child {
  name: string;
  process: ChildProcess;
  /** The last few kilobytes of its stdout and stderr, shown when something goes wrong. */
  output: () => string;
  /** Everything it wrote to stdout (for commands whose answer is their output). */
  stdout: () => string;
  exited: Promise<number | null>;
}

const children: Child[] = [];
/** Asynchronous undo steps (dropping a database), run last-registered first. */
const undoSteps: Array<{ name: string; run: () => Promise<void> }> = [];
const tempDirs = new Set<string>();

export function startChild(name: string, command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Child {
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env });
  let tail = '';
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    stdout += text;
    tail = (tail + text).slice(-4000);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    // A command that cannot be started (not installed) never exits: answer as a failure.
    child.once('error', (error) => {
      tail += `\n${error.message}`;
      resolve(null);
    });
  });
  const entry: Child = { name, process: child, output: () => tail, stdout: () => stdout, exited };
  children.push(entry);
  return entry;
}

/** Runs a node script of the project (bin/sitebiz.js, a bench file) in a child process. */
export function startNode(name: string, args: string[], env?: NodeJS.ProcessEnv): Child {
  return startChild(name, process.execPath, args, env);
}

export function isRunning(child: Child): boolean {
  return child.process.exitCode === null && child.process.signalCode === null && child.process.pid !== undefined;
}

export async function stopChild(child: Child): Promise<void> {
  if (!isRunning(child)) return;
  child.process.kill('SIGTERM');
  const stopped = await Promise.race([child.exited.then(() => true), sleep(5000).then(() => false)]);
  if (!stopped && isRunning(child)) {
    child.process.kill('SIGKILL');
    await Promise.race([child.exited, sleep(2000)]);
  }
}

/** Runs a command to its end within `timeoutMs`; its stdout, or an error with its output. */
export async function runToEnd(child: Child, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  const code = await Promise.race([child.exited, timedOut]);
  clearTimeout(timer);
  if (code === 'timeout') {
    await stopChild(child);
    throw new Error(`${child.name} did not finish within ${Math.round(timeoutMs / 1000)} s:\n${child.output()}`);
  }
  if (code !== 0) throw new Error(`${child.name} failed (exit ${code}):\n${child.output()}`);
  return child.stdout();
}

export function registerTempDir(dir: string): void {
  tempDirs.add(dir);
}

export function registerUndo(name: string, run: () => Promise<void>): void {
  undoSteps.push({ name, run });
}

let cleaning: Promise<void> | undefined;
/** Stops the children, then undoes the rest; every caller waits for the same one cleanup. */
export function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await Promise.all(children.map(stopChild));
    for (const step of undoSteps.reverse()) {
      try {
        await step.run();
      } catch (error) {
        console.error(`bench: could not ${step.name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    removeTempDirs();
  })();
  return cleaning;
}

function removeTempDirs(): void {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

// Last resort when the process ends some other way: nothing asynchronous runs in 'exit'.
process.on('exit', () => {
  for (const child of children) if (isRunning(child)) child.process.kill('SIGKILL');
  removeTempDirs();
});

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      server.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Resolves with the first stdout match of `pattern`; rejects if the child exits first. */
export function waitForLine(child: Child, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const match = pattern.exec(buffer);
      if (match) finish(() => resolve(match));
    };
    const onExit = () => finish(() => reject(new Error(`${child.name} exited before it was ready:\n${child.output()}`)));
    const timer = setTimeout(() => finish(() => reject(new Error(`${child.name} not ready after ${timeoutMs} ms:\n${child.output()}`))), timeoutMs);
    const finish = (then: () => void) => {
      clearTimeout(timer);
      child.process.stdout?.off('data', onData);
      child.process.off('exit', onExit);
      then();
    };
    child.process.stdout?.on('data', onData);
    child.process.once('exit', onExit);
  });
}

/** CPU time the process has used so far, user and system, in ms (Linux /proc). */
export function cpuMs(pid: number): number {
  // Fields after the command's closing parenthesis: state is the 3rd field of the line, utime the 14th, stime the 15th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / CLOCK_TICKS;
}

/** USER_HZ: 100 on every Linux this runs on (the kernel fixes it for /proc). */
const CLOCK_TICKS = 100;
