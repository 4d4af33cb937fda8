// Progress of `sitebiz import` on stderr (stdout stays for the result, or the JSON): on a
// terminal a bar per step with records, rate and ETA (cli-progress); otherwise a plain line when a
// step starts and every few seconds.
import cliProgress from 'cli-progress';
import type { ImportProgress } from './importer.js';

const PLAIN_LINE_EVERY_MS = 5_000;

const grouped = (n: number): string => Math.round(n).toLocaleString('en-US');

export interface ImportProgressReporter {
  update(progress: ImportProgress): void;
  finish(): void;
}

export function importProgressReporter(stream: NodeJS.WriteStream = process.stderr): ImportProgressReporter {
  const started = performance.now();
  const rate = (records: number) => grouped(records / Math.max(0.001, (performance.now() - started) / 1000));
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream,
        format: 'importing {step} [{bar}] {value}/{total} | {records} records in all | {rate} records/s | ETA {eta_formatted}',
        hideCursor: true,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    );
    let step: string | undefined;
    return {
      update(p) {
        const payload = { step: p.step, records: grouped(p.records), rate: rate(p.records) };
        if (p.step !== step) {
          if (step !== undefined) bar.stop();
          step = p.step;
          bar.start(p.total ?? p.done, p.done, payload);
        } else {
          if (p.total !== undefined) bar.setTotal(p.total);
          bar.update(p.done, payload);
        }
      },
      finish() {
        if (step !== undefined) bar.stop();
        step = undefined;
      },
    };
  }
  let lastLine = 0;
  let last: ImportProgress | undefined;
  let printed: ImportProgress | undefined;
  const line = (p: ImportProgress) => {
    printed = p;
    lastLine = performance.now();
    const of = p.total !== undefined ? `/${grouped(p.total)}` : '';
    stream.write(`importing ${p.step}: ${grouped(p.done)}${of} records; ${grouped(p.records)} in all, ${rate(p.records)} records/s\n`);
  };
  return {
    update(p) {
      // A list's last figures before the next list's first line, then a line every few seconds.
      if (last && p.step !== last.step && printed !== last) line(last);
      last = p;
      if (p.step !== printed?.step || performance.now() - lastLine >= PLAIN_LINE_EVERY_MS) line(p);
    },
    finish() {
      if (last && printed !== last) line(last);
      last = undefined;
    },
  };
}
