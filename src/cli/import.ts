// `sitebiz import`: copy every site a key of another Site Business Service API can read into this
// database, through that API's public routes (src/import/, docs/import.md).
import { configFrom, out, UsageError, withDatabase, type Command } from './command.js';

type Values = Record<string, string | boolean | undefined>;

/** Where the secret may come from besides --client-secret (which other users can see in `ps`). */
export const SECRET_ENV = 'SITEBIZ_IMPORT_CLIENT_SECRET';
const DEFAULT_CONCURRENCY = 4;
const MAX_CONCURRENCY = 32;

async function clientSecret(values: Values): Promise<string> {
  if (values['client-secret-stdin'] === true) {
    if (process.stdin.isTTY) throw new UsageError('--client-secret-stdin reads the secret from standard input: pipe it in (e.g. printf %s "$SECRET" | ...)');
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    const secret = Buffer.concat(chunks).toString('utf8').trim();
    if (secret === '') throw new UsageError('--client-secret-stdin: standard input was empty');
    return secret;
  }
  const given = typeof values['client-secret'] === 'string' ? values['client-secret'] : process.env[SECRET_ENV];
  if (!given || given.trim() === '') throw new UsageError(`the client secret is required: --client-secret-stdin, ${SECRET_ENV} or --client-secret`);
  return given.trim();
}

function sourceUrl(values: Values): string {
  const raw = values.from;
  if (typeof raw !== 'string' || raw.trim() === '') throw new UsageError('--from <base_url> is required, e.g. --from https://api.example.com');
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new UsageError(`--from ${JSON.stringify(raw)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('--from takes an http or https URL');
  return url.href.replace(/\/+$/, '');
}

function concurrency(values: Values): number {
  const raw = values.concurrency;
  if (raw === undefined) return DEFAULT_CONCURRENCY;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_CONCURRENCY) {
    throw new UsageError(`--concurrency takes a whole number from 1 to ${MAX_CONCURRENCY}`);
  }
  return Number(raw);
}

export const importCommand: Command = {
  usage: [
    'sitebiz import --from <base_url> --client-id <id> (--client-secret-stdin | --client-secret <secret>) [--concurrency N] [--remap-ids <file>] [--dry-run] [--json] [config flags]',
    '',
    '  --from URL             the source API, e.g. https://api.example.com (its routes are under /v1)',
    '  --client-id ID         the source key (read permissions for every resource to copy)',
    `  --client-secret-stdin  read the key's secret from standard input (or set ${SECRET_ENV};`,
    '                         --client-secret <secret> also works but shows it to other users of the machine)',
    `  --concurrency N        requests in flight at most (default ${DEFAULT_CONCURRENCY})`,
    '  --remap-ids FILE       the target has data: give the records new ids and write old → new ids to FILE',
    '  --dry-run              read and count everything, write nothing',
    '  --json                 print one JSON object at the end (account_id, counts, requests, retries, seconds, ...)',
    '',
    'The target is this command\'s database (--database-url / DATABASE_URL). Interrupted, the same command continues',
    'where it stopped. Progress goes to stderr: a bar on a terminal, a line every few seconds otherwise.',
  ].join('\n'),
  options: {
    from: { type: 'string' },
    'client-id': { type: 'string' },
    'client-secret': { type: 'string' },
    'client-secret-stdin': { type: 'boolean' },
    concurrency: { type: 'string' },
    'remap-ids': { type: 'string' },
    'dry-run': { type: 'boolean' },
  },
  async run(values) {
    const baseUrl = sourceUrl(values);
    const clientId = typeof values['client-id'] === 'string' && values['client-id'].trim() !== '' ? values['client-id'].trim() : undefined;
    if (!clientId) throw new UsageError('--client-id <id> is required');
    const secret = await clientSecret(values);
    const remap = values['remap-ids'];
    if (remap !== undefined && (typeof remap !== 'string' || remap.trim() === '')) throw new UsageError('--remap-ids takes a file to write the id mapping to');
    const config = configFrom(values);
    const { runImport } = await import('../import/importer.js');
    const { importProgress } = await import('./progress.js');
    const progress = importProgress();
    // Ctrl-C: the requests stop, the page being written is committed or not at all, the derived
    // data is rebuilt, and the same command goes on later from the pages checked off.
    const controller = new AbortController();
    const stop = () => controller.abort();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    try {
      const result = await withDatabase(config, (handle) =>
        runImport(handle, {
          baseUrl,
          clientId,
          clientSecret: secret,
          concurrency: concurrency(values),
          ...(typeof remap === 'string' ? { remapIdsFile: remap } : {}),
          dryRun: values['dry-run'] === true,
          signal: controller.signal,
          clock: { now: () => new Date() },
          onProgress: (p) => progress.update(p),
        }),
      );
      progress.finish();
      if (values.json) {
        out(JSON.stringify(result));
        return;
      }
      const counts = Object.entries(result.counts).filter(([, n]) => n > 0).map(([type, n]) => `${type} ${n}`).join(', ');
      if (result.dry_run) {
        out(`Dry run: would import ${counts} (sites ${result.site_ids.join(', ')}).`);
      } else {
        out(`${result.resumed ? 'Resumed and finished' : 'Imported'} into account ${result.account_id}: sites ${result.site_ids.join(', ')}.`);
        out(`Records: ${counts}`);
        if (result.remap_ids_file) out(`New ids: the old → new mapping is in ${result.remap_ids_file}`);
        out(`client_id:     ${result.client_id}`);
        out(`client_secret: ${result.client_secret}   (a key of the new account with every permission; shown once)`);
      }
      out(`${result.requests} requests (${result.show_requests} shows of single records), ${result.retries} retries, ${result.seconds} s.`);
    } finally {
      progress.finish();
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
  },
};
