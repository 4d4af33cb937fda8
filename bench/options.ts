// The bench's command line. Every figure of a run follows from these options, and the report
// prints the command that gave it.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { DatabaseKind } from './datasets.js';
import { wrkInstalled, type LoadGeneratorName } from './load.js';
import { ROOT } from './processes.js';

export const USAGE = `Usage: npm run bench -- [options]
  --sizes <n,n>             contacts of the measured site, one dataset per size (default 10000,1000000)
  --databases <list>        sqlite, postgres or both (default sqlite,postgres)
  --duration <s>            measured seconds per concurrent load: each floor target and server, and
                            POST /v1/contacts (default 10)
  --rounds <n>              alternating rounds of the floor comparison (default 2)
  --warmup <s>              unmeasured seconds before each concurrent load (default 2)
  --connections <n>         concurrent connections (default 10)
  --samples <n>             requests timed per flat-cost request, at most (default 60)
  --sample-seconds <s>      ... and seconds per flat-cost request, at most (default 4)
  --walk-seconds <s>        the cursor walk stops (and is extrapolated) after this (default 300)
  --page-walk-seconds <s>   the page[number] walk stops (and is extrapolated) after this (default 60)
  --keep <dir>              keep the seeded databases in <dir> (SQLite files; PostgreSQL databases
                            named in <dir>/manifest.json) and reuse them in later runs
  --postgres-url <url>      where to make the PostgreSQL databases
                            (default postgres://postgres@127.0.0.1:5432/postgres)
  --seed <n>                sitebiz seed --seed (default 1)
  --workers <n|auto>        sitebiz serve --workers (default: serve's own)
  --load-generator <name>   wrk or autocannon (default wrk when installed)
  --suites <list>           any of scale, webhooks, webhook-fairness, sandbox, startup, balancer and
                            compression, reference-page (default scale,webhooks,sandbox); balancer: 1,
                            2 and 3 processes behind HAProxy on PostgreSQL through PgBouncer, at the
                            smallest of --sizes; compression: a page of 100 contacts identity, gzip
                            and br (--rounds 6 takes each order once) and the OpenAPI document's
                            bytes, per database at the smallest of --sizes, printed (never written:
                            its section of the results file is kept by hand); webhooks includes
                            webhook-fairness, which alone runs only that measure; reference-page:
                            /docs against Swagger UI, Scalar and Redoc in Chromium
                            (bench/reference-page.ts), printed only; import: \`sitebiz import\` of a
                            seeded site from one local sitebiz into another, clean and with faults
                            (bench/import.ts), per database, printed only; observability: a page of
                            contacts with metrics and traces off and on (bench/observability.ts),
                            per database at the smallest of --sizes, printed only
  --startup-runs <n>        launches per start-up figure; the median is reported (default 5)
  --reference-runs <n>      loads of each page and document in the reference-page suite (default 5)
  --startup-compare <dir>   also time another checkout (with its node_modules), e.g. the commit before
                            a change, alternating launches with this one
  --webhook-events <n>      events queued for the webhook delivery measure, each to 3 hooks
                            (default 10000)
  --webhook-latency <n>     events sent one at a time for commit-to-first-attempt latency
                            (default 200)
  --webhook-fairness <n>    deliveries timed per account beside another account's stalled hooks
                            (default 100)
  --webhook-fairness-seconds <s>  ... at most this long per database (default 300)
  --import-contacts <n>     contacts of the site the import suite seeds and imports (default 100000)
  --import-concurrency <n>  sitebiz import --concurrency in the import suite (default 16)
  --sandbox-contacts <n>    contacts of the account the sandbox suite seeds, resets and snapshots
                            (default 100000; the demo account is measured as well)
  --time-limit <min>        stop everything after this many minutes (default 58)
  --quick                   a smoke run: sizes 1000,10000 and short durations
  --write                   rewrite the results file (bench/RESULTS.md) with every table; startup or
                            balancer alone replace only their own section
  --results <file>          the results file --write rewrites (default bench/RESULTS.md)
  --help`;

const SUITES = ['scale', 'webhooks', 'webhook-fairness', 'sandbox', 'startup', 'balancer', 'compression', 'reference-page', 'import', 'observability'] as const;
export type Suite = (typeof SUITES)[number];

export interface Options {
  suites: Suite[];
  startupRuns: number;
  referenceRuns: number;
  startupCompare: string | undefined;
  webhookEvents: number;
  webhookLatencySamples: number;
  webhookFairnessSamples: number;
  webhookFairnessSeconds: number;
  sandboxContacts: number;
  importContacts: number;
  importConcurrency: number;
  sizes: number[];
  databases: DatabaseKind[];
  duration: number;
  rounds: number;
  warmup: number;
  connections: number;
  samples: number;
  sampleSeconds: number;
  walkSeconds: number;
  pageWalkSeconds: number;
  keepDir: string | undefined;
  postgresUrl: string;
  seed: number;
  workers: string | undefined;
  generator: LoadGeneratorName;
  timeLimitMinutes: number;
  quick: boolean;
  write: boolean;
  resultsFile: string;
}

export class UsageError extends Error {}

/** The figures of --quick, for what the command line does not set itself. */
const QUICK = {
  sizes: '1000,10000',
  duration: '2',
  warmup: '1',
  samples: '15',
  'sample-seconds': '1',
  'walk-seconds': '30',
  'page-walk-seconds': '5',
  'webhook-events': '1000',
  'webhook-latency': '30',
  'webhook-fairness': '20',
  'webhook-fairness-seconds': '120',
  'sandbox-contacts': '10000',
  'import-contacts': '10000',
  'time-limit': '15',
} as const;

const DEFAULTS = {
  suites: 'scale,webhooks,sandbox',
  'webhook-events': '10000',
  'webhook-latency': '200',
  'webhook-fairness': '100',
  'webhook-fairness-seconds': '300',
  'sandbox-contacts': '100000',
  'import-contacts': '100000',
  'import-concurrency': '16',
  sizes: '10000,1000000',
  databases: 'sqlite,postgres',
  duration: '10',
  rounds: '2',
  warmup: '2',
  connections: '10',
  samples: '60',
  'sample-seconds': '4',
  'walk-seconds': '300',
  'page-walk-seconds': '60',
  'postgres-url': 'postgres://postgres@127.0.0.1:5432/postgres',
  seed: '1',
  'time-limit': '58',
  'startup-runs': '5',
  'reference-runs': '5',
} as const;

/** undefined for --help. */
export function parseOptions(argv: string[]): Options | undefined {
  const text = (name: string) => ({ [name]: { type: 'string' as const } });
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      ...Object.assign({}, ...Object.keys(DEFAULTS).map(text)),
      ...text('keep'),
      ...text('workers'),
      ...text('load-generator'),
      ...text('results'),
      ...text('startup-compare'),
      quick: { type: 'boolean', default: false },
      write: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  }) as { values: Record<string, string | boolean | undefined> };
  if (values.help) return undefined;
  const quick = values.quick === true;
  const raw = (name: keyof typeof DEFAULTS): string => {
    const given = values[name];
    if (typeof given === 'string') return given;
    return quick && name in QUICK ? QUICK[name as keyof typeof QUICK] : DEFAULTS[name];
  };
  const number = (name: keyof typeof DEFAULTS, min: number, max: number, integer = false): number => {
    const n = Number(raw(name));
    if (raw(name).trim() === '' || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
      throw new UsageError(`--${name} must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}, got ${raw(name)}`);
    }
    return n;
  };

  const sizes = raw('sizes')
    .split(',')
    .map((s) => s.trim());
  if (sizes.some((s) => !/^\d+$/.test(s) || Number(s) < 1000 || Number(s) > 2_000_000)) {
    throw new UsageError(`--sizes takes a comma list of contact counts from 1000 to 2000000, got ${raw('sizes')}`);
  }
  const databases = raw('databases')
    .split(',')
    .map((s) => s.trim());
  for (const d of databases) if (d !== 'sqlite' && d !== 'postgres') throw new UsageError(`--databases takes sqlite and/or postgres, got ${d}`);

  const suites = raw('suites')
    .split(',')
    .map((s) => s.trim());
  for (const suite of suites) {
    if (!(SUITES as readonly string[]).includes(suite)) throw new UsageError(`--suites takes any of ${SUITES.join(', ')}, got ${suite}`);
  }

  const generatorName = typeof values['load-generator'] === 'string' ? values['load-generator'] : wrkInstalled() ? 'wrk' : 'autocannon';
  if (generatorName !== 'wrk' && generatorName !== 'autocannon') throw new UsageError(`--load-generator takes wrk or autocannon, got ${generatorName}`);
  if (generatorName === 'wrk' && !wrkInstalled()) throw new UsageError('--load-generator wrk: wrk is not installed (Debian/Ubuntu: apt-get install wrk)');

  const workers = values.workers;
  if (typeof workers === 'string' && !/^(\d+|auto)$/.test(workers)) throw new UsageError(`--workers takes a number or auto, got ${workers}`);

  const options: Options = {
    suites: [...new Set(suites)] as Suite[],
    startupRuns: number('startup-runs', 1, 100, true),
    referenceRuns: number('reference-runs', 1, 100, true),
    startupCompare: typeof values['startup-compare'] === 'string' ? values['startup-compare'] : undefined,
    webhookEvents: number('webhook-events', 10, 1_000_000, true),
    webhookLatencySamples: number('webhook-latency', 3, 100_000, true),
    webhookFairnessSamples: number('webhook-fairness', 1, 100_000, true),
    webhookFairnessSeconds: number('webhook-fairness-seconds', 10, 24 * 3600),
    sandboxContacts: number('sandbox-contacts', 1000, 2_000_000, true),
    importContacts: number('import-contacts', 100, 2_000_000, true),
    importConcurrency: number('import-concurrency', 1, 32, true),
    sizes: [...new Set(sizes.map(Number))].sort((a, b) => a - b),
    databases: [...new Set(databases)] as DatabaseKind[],
    duration: number('duration', 1, 600),
    rounds: number('rounds', 1, 20, true),
    warmup: number('warmup', 0, 60),
    connections: number('connections', 1, 1000, true),
    samples: number('samples', 3, 10_000, true),
    sampleSeconds: number('sample-seconds', 0.1, 600),
    walkSeconds: number('walk-seconds', 1, 3600),
    pageWalkSeconds: number('page-walk-seconds', 1, 3600),
    keepDir: typeof values.keep === 'string' ? values.keep : undefined,
    postgresUrl: raw('postgres-url'),
    seed: number('seed', 0, 2 ** 31, true),
    workers: typeof workers === 'string' ? workers : undefined,
    generator: generatorName,
    timeLimitMinutes: number('time-limit', 1, 24 * 60),
    quick,
    write: values.write === true,
    resultsFile: typeof values.results === 'string' ? values.results : join(ROOT, 'bench', 'RESULTS.md'),
  };
  // wrk counts whole seconds.
  if (options.duration / options.rounds < 1) throw new UsageError('--duration / --rounds must be at least one second');
  return options;
}
