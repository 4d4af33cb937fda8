// Progress of `sitebiz backup` and `sitebiz restore` on stderr (stdout stays for the result or the
// JSON): a bar on a terminal (cli-progress, as `seed` draws), a plain line every few seconds
// otherwise (a cron job's mail, a log file).
import cliProgress from 'cli-progress';

export interface Progress {
  /** `done` of `total` units (pages, rows); `detail` names where it stands (a table). */
  update(done: number, total: number, detail?: string): void;
  finish(line: string): void;
}

const PLAIN_LINE_EVERY_MS = 5_000;

export function progressReporter(what: string, unit: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      { stream, format: `${what} [{bar}] {percentage}% | {value}/{total} ${unit} | {detail} | ETA {eta_formatted}`, hideCursor: true, etaBuffer: 20 },
      cliProgress.Presets.shades_classic,
    );
    let begun = false;
    return {
      update(done, total, detail = '') {
        if (!begun) {
          bar.start(Math.max(total, done), done, { detail });
          begun = true;
        } else {
          bar.setTotal(Math.max(total, done));
          bar.update(done, { detail });
        }
      },
      finish(line) {
        if (begun) bar.stop();
        stream.write(`${line}\n`);
      },
    };
  }
  let lastLine = 0;
  return {
    update(done, total, detail) {
      const now = performance.now();
      if (now - lastLine < PLAIN_LINE_EVERY_MS) return;
      lastLine = now;
      const percent = total > 0 ? ` ${Math.min(100, Math.floor((100 * done) / total))}%` : '';
      stream.write(`${what}:${percent} ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} ${unit}${detail ? `, ${detail}` : ''}\n`);
    },
    finish(line) {
      stream.write(`${line}\n`);
    },
  };
}
