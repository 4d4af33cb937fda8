// Progress of the long commands (`seed`, `import`, `backup`, `restore`) on stderr, so stdout stays
// for the result or the JSON: a bar on a terminal (cli-progress), and otherwise a plain line when a
// phase starts, every few seconds, and with the last figures (a cron job's mail, a log file, CI).
// One reporter; each command says what its bar and its line show.
import cliProgress from 'cli-progress';
import type { ImportProgress } from '../import/importer.js';
import type { SeedProgress } from '../seed/seed-account.js';
import type { Progress } from '../backup/progress.js';

const PLAIN_LINE_EVERY_MS = 5_000;

const grouped = (n: number): string => Math.round(n).toLocaleString('en-US');

/** What a command shows of one progress report `P`. */
interface ProgressView<P> {
  /** cli-progress's format; its `{name}` tokens come from `payload`. */
  barFormat: string;
  /** cli-progress's ETA smoothing: how many updates it averages. */
  etaBuffer: number;
  done(p: P): number;
  /** Unknown (the total of a list not yet counted): the bar grows with `done`. */
  total(p: P): number | undefined;
  payload(p: P): Record<string, string | number>;
  /** The plain line (without its newline). */
  line(p: P): string;
  /** A new phase (an import's next list) gets a bar of its own and a line at once. */
  phase?(p: P): string;
}

interface ProgressOutput<P> {
  update(p: P): void;
  /** Ends the bar (or prints the last figures not printed yet), then writes `line` if given. */
  finish(line?: string): void;
}

function progressOutput<P>(view: ProgressView<P>, stream: NodeJS.WriteStream): ProgressOutput<P> {
  const phaseOf = (p: P) => view.phase?.(p) ?? '';
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar({ stream, format: view.barFormat, hideCursor: true, etaBuffer: view.etaBuffer }, cliProgress.Presets.shades_classic);
    let phase: string | undefined;
    return {
      update(p) {
        const done = view.done(p);
        const total = view.total(p);
        if (phaseOf(p) !== phase) {
          if (phase !== undefined) bar.stop();
          phase = phaseOf(p);
          bar.start(Math.max(total ?? done, done), done, view.payload(p));
        } else {
          if (total !== undefined) bar.setTotal(Math.max(total, done));
          bar.update(done, view.payload(p));
        }
      },
      finish(line) {
        if (phase !== undefined) bar.stop();
        phase = undefined;
        if (line !== undefined) stream.write(`${line}\n`);
      },
    };
  }
  let lastLineAt = -Infinity;
  let last: P | undefined;
  let printed: P | undefined;
  const print = (p: P) => {
    printed = p;
    lastLineAt = performance.now();
    stream.write(`${view.line(p)}\n`);
  };
  return {
    update(p) {
      // The previous phase's last figures before the next phase's first line.
      if (last !== undefined && phaseOf(p) !== phaseOf(last) && printed !== last) print(last);
      last = p;
      const newPhase = printed === undefined || phaseOf(p) !== phaseOf(printed);
      if (newPhase || performance.now() - lastLineAt >= PLAIN_LINE_EVERY_MS) print(p);
    },
    finish(line) {
      if (last !== undefined && printed !== last) print(last);
      last = undefined;
      if (line !== undefined) stream.write(`${line}\n`);
    },
  };
}

/** Rows (or records) per second since the reporter was made. */
function rateSince(started: number): (count: number) => string {
  return (count) => grouped(count / Math.max(0.001, (performance.now() - started) / 1000));
}

/** `sitebiz seed`: contacts of every site, rows written and their rate; the last line sums it up. */
export function seedProgress(stream: NodeJS.WriteStream = process.stderr): { update(p: SeedProgress): void; finish(summary: { rows: number; milliseconds: number }): void } {
  const rate = rateSince(performance.now());
  const output = progressOutput<SeedProgress>(
    {
      barFormat: 'seeding [{bar}] {percentage}% | {value}/{total} contacts | site {site}/{sites} | {rows} rows | {rate} rows/s | ETA {eta_formatted}',
      etaBuffer: 20,
      done: (p) => p.contactsDone,
      total: (p) => p.contactsTotal,
      payload: (p) => ({ site: p.site, sites: p.sites, rows: grouped(p.rows), rate: rate(p.rows) }),
      line: (p) =>
        `seeding: ${Math.floor((100 * p.contactsDone) / p.contactsTotal)}% ${grouped(p.contactsDone)}/${grouped(p.contactsTotal)} contacts, site ${p.site}/${p.sites}, ${grouped(p.rows)} rows, ${rate(p.rows)} rows/s`,
    },
    stream,
  );
  return {
    update: (p) => output.update(p),
    finish: ({ rows, milliseconds }) =>
      output.finish(`seeded ${grouped(rows)} rows in ${(milliseconds / 1000).toFixed(1)} s (${grouped(rows / Math.max(0.001, milliseconds / 1000))} rows/s)`),
  };
}

/** `sitebiz import`: a bar per list (step), with the records of every step and their rate. */
export function importProgress(stream: NodeJS.WriteStream = process.stderr): ProgressOutput<ImportProgress> {
  const rate = rateSince(performance.now());
  return progressOutput<ImportProgress>(
    {
      barFormat: 'importing {step} [{bar}] {value}/{total} | {records} records in all | {rate} records/s | ETA {eta_formatted}',
      etaBuffer: 50,
      done: (p) => p.done,
      total: (p) => p.total,
      payload: (p) => ({ step: p.step, records: grouped(p.records), rate: rate(p.records) }),
      line: (p) => `importing ${p.step}: ${grouped(p.done)}${p.total !== undefined ? `/${grouped(p.total)}` : ''} records; ${grouped(p.records)} in all, ${rate(p.records)} records/s`,
      phase: (p) => p.step,
    },
    stream,
  );
}

/** `sitebiz backup` and `restore`: `what` of `unit` (pages, rows), and where it stands (a table). */
export function backupProgress(what: string, unit: string, stream: NodeJS.WriteStream = process.stderr): Progress & { finish(line: string): void } {
  const output = progressOutput<{ done: number; total: number; detail: string }>(
    {
      barFormat: `${what} [{bar}] {percentage}% | {value}/{total} ${unit} | {detail} | ETA {eta_formatted}`,
      etaBuffer: 20,
      done: (p) => p.done,
      total: (p) => p.total,
      payload: (p) => ({ detail: p.detail }),
      line: (p) =>
        `${what}:${p.total > 0 ? ` ${Math.min(100, Math.floor((100 * p.done) / p.total))}%` : ''} ${p.done.toLocaleString('en-US')}/${p.total.toLocaleString('en-US')} ${unit}${p.detail ? `, ${p.detail}` : ''}`,
    },
    stream,
  );
  return {
    update: (done, total, detail = '') => output.update({ done, total, detail }),
    finish: (line) => output.finish(line),
  };
}
