// Progress of `sitebiz seed` on stderr (stdout stays for the result, or the JSON): a bar with
// rows per second on a terminal (cli-progress), plain lines every few seconds otherwise (a log
// file, CI). Either way the last line says what was written and how fast.
import cliProgress from 'cli-progress';
import type { SeedProgress } from './seed-account.js';

export interface ProgressReporter {
  update(progress: SeedProgress): void;
  finish(summary: { rows: number; milliseconds: number }): void;
}

const PLAIN_LINE_EVERY_MS = 5_000;

const grouped = (n: number): string => Math.round(n).toLocaleString('en-US');

export function progressReporter(stream: NodeJS.WriteStream = process.stderr): ProgressReporter {
  const started = performance.now();
  const rate = (rows: number) => grouped(rows / Math.max(0.001, (performance.now() - started) / 1000));
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream,
        format: 'seeding [{bar}] {percentage}% | {value}/{total} contacts | site {site}/{sites} | {rows} rows | {rate} rows/s | ETA {eta_formatted}',
        hideCursor: true,
        etaBuffer: 20,
      },
      cliProgress.Presets.shades_classic,
    );
    let begun = false;
    return {
      update(p) {
        const payload = { site: p.site, sites: p.sites, rows: grouped(p.rows), rate: rate(p.rows) };
        if (!begun) {
          bar.start(p.contactsTotal, p.contactsDone, payload);
          begun = true;
        } else bar.update(p.contactsDone, payload);
      },
      finish({ rows, milliseconds }) {
        if (begun) bar.stop();
        stream.write(`seeded ${grouped(rows)} rows in ${(milliseconds / 1000).toFixed(1)} s (${grouped(rows / Math.max(0.001, milliseconds / 1000))} rows/s)\n`);
      },
    };
  }
  let lastLine = 0;
  return {
    update(p) {
      const now = performance.now();
      if (now - lastLine < PLAIN_LINE_EVERY_MS && p.contactsDone < p.contactsTotal) return;
      lastLine = now;
      const percent = Math.floor((100 * p.contactsDone) / p.contactsTotal);
      stream.write(`seeding: ${percent}% ${grouped(p.contactsDone)}/${grouped(p.contactsTotal)} contacts, site ${p.site}/${p.sites}, ${grouped(p.rows)} rows, ${rate(p.rows)} rows/s\n`);
    },
    finish({ rows, milliseconds }) {
      stream.write(`seeded ${grouped(rows)} rows in ${(milliseconds / 1000).toFixed(1)} s (${grouped(rows / Math.max(0.001, milliseconds / 1000))} rows/s)\n`);
    },
  };
}
