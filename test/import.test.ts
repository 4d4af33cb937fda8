// `sitebiz import` (docs/import.md): a seeded source (2 sites) served on a port, imported into an
// empty database, and the two compared through every GET operation of the upstream description:
// every page of every list, every show, every relationship endpoint, byte for byte once the
// source's address is swapped for the target's. Also: an import interrupted mid-way continues to
// the same result; a source with faults (503s, 429 with Retry-After, latency) still gives it; 401
// and 403 stop it with the source's reason; a command killed with SIGKILL continues when run again; a target with data needs --remap-ids (and gets the
// mapping); --dry-run writes nothing; the command's --json object. One source per dialect.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.js';
import { loadConfig, parseDatabaseUrl } from '../src/config.js';
import { connectDatabase } from '../src/db/connect.js';
import { runImport, type ImportOptions, type ImportResult } from '../src/import/importer.js';
import { ImportError } from '../src/import/upstream-client.js';
import { IMPORT_STEPS } from '../src/import/import-plan.js';
import { RESOURCES } from '../src/resources/index.js';
import { MIN_SEED_CONTACTS, seedAccount, type SeedResult } from '../src/seed/seed-account.js';
import { createListeningTestApp, createTestApp, DIALECTS, type ListeningTestApp, type TestApp } from './support/harness.js';
import { childEnv, runSitebiz } from './support/serve-process.js';
import { UPSTREAM_SKIP_REASON, upstreamOperations } from './support/upstream.js';

const BIN = fileURLToPath(new URL('../bin/sitebiz.js', import.meta.url));
const SITES = 2;
const CONTACTS = Math.max(MIN_SEED_CONTACTS, 40);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** A target as an import finds it: migrated, no account (the harness's tenant removed). */
async function emptyTarget(dialect: (typeof DIALECTS)[number]): Promise<TestApp> {
  const t = await createTestApp(dialect);
  const db = t.handle.db;
  await db.deleteFrom('api_keys').execute();
  await db.deleteFrom('sites').execute();
  await db.deleteFrom('users').execute();
  await db.deleteFrom('accounts').execute();
  return t;
}

const TABLE_OF_TYPE = new Map(RESOURCES.map((r) => [r.type, r.table]));

/** The GET operations compared: every upstream one but /v1/me (its user is the target's own). */
function getOperations(): string[] {
  return upstreamOperations()
    .filter((op) => op.method === 'GET' && op.path !== '/v1/me')
    .map((op) => op.path);
}

interface Side {
  app: Pick<TestApp, 'get'>;
  token: string;
  /** Text replaced in every answer, so both sides' links read alike. */
  base: string;
}

/**
 * Both sides' answers to every upstream GET, compared. Lists: every page (page[size]=100; per site
 * where the list takes filter[site_id]); shows and relationship endpoints: every record the lists
 * named; shows that take include: also with the import's includes. `mapId` turns a source id into
 * the target's (identity when ids are kept); then ids, links and self links are compared mapped.
 */
async function compareEverything(source: Side, target: Side, siteIds: string[], mapId: (table: string, id: string) => string = (_t, id) => id): Promise<number> {
  let compared = 0;
  const fetch = async (side: Side, url: string): Promise<{ status: number; body: Json }> => {
    const res = await side.app.get(url, side.token);
    return { status: res.statusCode, body: JSON.parse(res.body.split(side.base).join('BASE')) };
  };
  /** Without links (they hold ids); with `map`, every resource identifier's id mapped. */
  const normalized = (value: Json, map: boolean): Json => {
    if (Array.isArray(value)) return value.map((v) => normalized(v, map));
    if (value === null || typeof value !== 'object') return value;
    const out: Json = {};
    for (const [k, v] of Object.entries(value)) out[k] = k === 'links' ? undefined : normalized(v, map);
    if (map && typeof value.type === 'string' && typeof value.id === 'string' && TABLE_OF_TYPE.has(value.type)) out.id = mapId(TABLE_OF_TYPE.get(value.type)!, value.id);
    return out;
  };
  const same = async (sourceUrl: string, targetUrl = sourceUrl): Promise<Json> => {
    const [a, b] = await Promise.all([fetch(source, sourceUrl), fetch(target, targetUrl)]);
    assert.equal(b.status, a.status, `${targetUrl}: status ${b.status}, source ${a.status}: ${JSON.stringify(b.body).slice(0, 300)}`);
    const [got, want] = [normalized(b.body, false), normalized(a.body, true)];
    const firstDifference = (x: Json, y: Json): string => {
      const xs = Array.isArray(x?.data) ? x.data : [x?.data];
      const ys = Array.isArray(y?.data) ? y.data : [y?.data];
      const i = xs.findIndex((r: Json, k: number) => JSON.stringify(r) !== JSON.stringify(ys[k]));
      return i < 0 ? JSON.stringify(x).slice(0, 400) : `record ${i}: ${JSON.stringify(xs[i])} vs source ${JSON.stringify(ys[i])}`;
    };
    if (JSON.stringify(got) !== JSON.stringify(want)) assert.fail(`${targetUrl} differs from the source's ${sourceUrl}: ${firstDifference(got, want)}`);
    assert.deepStrictEqual(got, want);
    compared++;
    return a.body;
  };
  const targetSite = (id: string) => mapId('sites', id);
  const ids = new Map<string, Set<string>>();
  const operations = getOperations();
  for (const path of operations.filter((p) => !p.includes('{'))) {
    const type = path.split('/')[2]!;
    const resource = RESOURCES.find((r) => r.type === type && r.routes.list);
    if (!resource) {
      await same(path);
      continue;
    }
    const step = IMPORT_STEPS.find((s) => s.resource.type === type);
    const scopes = step?.perSite ? siteIds : [undefined];
    for (const site of scopes) {
      for (let page = 1; ; page++) {
        const query = (s: string | undefined) =>
          `${site ? `filter[site_id]=${s}&` : ''}page[number]=${page}${step?.pageSize === false ? '' : '&page[size]=100'}`;
        const body = await same(`${path}?${query(site)}`, `${path}?${query(site && targetSite(site))}`);
        for (const record of body.data ?? []) {
          let set = ids.get(type);
          if (!set) ids.set(type, (set = new Set()));
          set.add(record.id);
        }
        if (!body.links?.next || (body.data ?? []).length === 0) break;
      }
    }
  }
  for (const path of operations.filter((p) => p.includes('{'))) {
    const type = path.split('/')[2]!;
    const table = TABLE_OF_TYPE.get(type)!;
    const include = IMPORT_STEPS.find((s) => s.resource.type === type)?.show?.include;
    for (const id of ids.get(type) ?? []) {
      const url = (i: string) => path.replace(/\{[a-z_]*id\}/, i);
      await same(url(id), url(mapId(table, id)));
      if (include && path.endsWith('{id}')) await same(`${url(id)}?include=${include}`, `${url(mapId(table, id))}?include=${include}`);
    }
  }
  return compared;
}

for (const dialect of DIALECTS) {
  describe(`sitebiz import [${dialect}]`, { skip: UPSTREAM_SKIP_REASON ?? false }, () => {
    let source: ListeningTestApp;
    let seeded: SeedResult;
    let sourceSide: Side;
    const targets: TestApp[] = [];

    before(async () => {
      source = await createListeningTestApp(dialect);
      seeded = await seedAccount(source.handle, source.config.database, { contactsPerSite: CONTACTS, sites: SITES, seed: 5, clock: source.clock });
      sourceSide = { app: source, token: await source.tokenFor(seeded.client_id, seeded.client_secret), base: source.baseUrl };
    });
    after(async () => {
      for (const t of targets) await t.close();
      await source.close();
    });

    const options = (extra: Partial<ImportOptions> = {}): ImportOptions => ({
      baseUrl: source.baseUrl,
      clientId: seeded.client_id,
      clientSecret: seeded.client_secret,
      concurrency: 4,
      clock: source.clock,
      maxDelayMs: 200,
      ...extra,
    });
    const target = async (): Promise<TestApp> => {
      const t = await emptyTarget(dialect);
      targets.push(t);
      return t;
    };
    const sideOf = async (t: TestApp, result: ImportResult): Promise<Side> => ({
      app: t,
      token: await t.tokenFor(result.client_id!, result.client_secret!),
      base: 'http://sitebiz.test',
    });

    it('copies every site into an empty database with the same ids: every upstream GET answers the same', async () => {
      const t = await target();
      const result = await runImport(t.handle, options());
      assert.deepEqual(result.site_ids, seeded.site_ids);
      for (const [table, n] of Object.entries(seeded.rows)) {
        if (table in result.counts) assert.equal(result.counts[table], n, `${table}: ${result.counts[table]} imported, ${n} seeded`);
      }
      const compared = await compareEverything(sourceSide, await sideOf(t, result), seeded.site_ids);
      assert.ok(compared > 500, `only ${compared} answers compared`);
      // The counters, the text search and the seed snapshot were built: a reset keeps it all.
      const token = (await sideOf(t, result)).token;
      const before = (await t.get(`/v1/contacts?filter[site_id]=${seeded.site_ids[0]}&filter[search]=a&page[size]=5`, token)).body;
      const reset = await t.request({ method: 'POST', url: '/v1/test_helpers/reset', token });
      assert.equal(reset.statusCode, 200, reset.body);
      assert.equal((await t.get(`/v1/contacts?filter[site_id]=${seeded.site_ids[0]}&filter[search]=a&page[size]=5`, token)).body, before);
      // PostgreSQL's sequences are past the kept ids: a new record gets a new id.
      const note = await t.request({
        method: 'POST',
        url: '/v1/contact_notes',
        token,
        payload: { data: { type: 'contact_notes', attributes: { body: 'after the import' }, relationships: { contact: { data: { type: 'contacts', id: '1' } } } } },
      });
      assert.equal(note.statusCode, 201, note.body);
    });

    it('an interrupted import continues where it stopped, to the same result', async () => {
      const t = await target();
      const controller = new AbortController();
      await assert.rejects(
        runImport(t.handle, options({ signal: controller.signal, onProgress: (p) => p.records > 150 && controller.abort() })),
        (error: unknown) => error instanceof ImportError && error.code === 'interrupted',
      );
      const pages = await t.handle.db.selectFrom('import_pages').select('step').execute();
      assert.ok(pages.length > 0, 'some pages were checked off before the interruption');
      const result = await runImport(t.handle, options());
      assert.equal(result.resumed, true);
      await compareEverything(sourceSide, await sideOf(t, result), seeded.site_ids);
    });

    it('through faults (20 % 503, 429 with Retry-After, latency) the result is the same', async () => {
      const faults = [
        { path: '/v1/*', method: 'GET', status: 503, rate: 0.2, latency_ms: 20 },
        { path: '/v1/*', method: 'GET', status: 429, rate: 0.05, latency_ms: 20 },
        { path: '/v1/*', method: 'GET', latency_ms: 20 },
      ];
      for (const attributes of faults) {
        const res = await source.request({ method: 'POST', url: '/v1/test_helpers/faults', token: sourceSide.token, payload: { data: { type: 'faults', attributes } } });
        assert.equal(res.statusCode, 201, res.body);
      }
      const t = await target();
      let result: ImportResult;
      try {
        result = await runImport(t.handle, options());
      } finally {
        const list = (await source.get('/v1/test_helpers/faults', sourceSide.token)).json().data as Array<{ id: string }>;
        for (const fault of list) await source.request({ method: 'DELETE', url: `/v1/test_helpers/faults/${fault.id}`, token: sourceSide.token });
      }
      assert.ok(result.retries > 0, 'the faults were retried');
      await compareEverything(sourceSide, await sideOf(t, result), seeded.site_ids);
    });

    it('stops on 401 and 403 with the source\'s reason, before writing anything', async () => {
      const t = await target();
      await assert.rejects(runImport(t.handle, options({ clientSecret: 'wrong' })), (error: unknown) => error instanceof ImportError && error.code === 'unauthorized' && /client credentials/.test(error.message));
      const owner = Number(seeded.user_id);
      const limited = await source.keyWith(owner, ['view:sites', 'view:contacts']);
      await assert.rejects(runImport(t.handle, options({ clientId: limited.clientId, clientSecret: limited.clientSecret })), (error: unknown) => {
        assert.ok(error instanceof ImportError && error.code === 'forbidden', String(error));
        assert.match(error.message, /view:contacts|view:customers|view:products|view:offers/);
        return true;
      });
      assert.equal((await t.handle.db.selectFrom('sites').select('id').execute()).length, 0, 'the refused import wrote no site');
    });

    it('into a database with data: refused without --remap-ids; with it, new ids and their mapping', async () => {
      const t = await createTestApp(dialect);
      targets.push(t);
      await assert.rejects(runImport(t.handle, options()), (error: unknown) => error instanceof ImportError && error.code === 'conflict' && /--remap-ids/.test(error.message));
      assert.equal((await t.handle.db.selectFrom('accounts').select('id').execute()).length, 1, 'nothing was written');
      const dir = mkdtempSync(join(tmpdir(), 'sitebiz-import-'));
      try {
        const file = join(dir, 'ids.json');
        const result = await runImport(t.handle, options({ remapIdsFile: file }));
        const mapping = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, number>>;
        assert.deepEqual(seeded.site_ids.map((id) => String(mapping.sites![id])), result.site_ids);
        assert.notDeepEqual(result.site_ids, seeded.site_ids);
        const mapId = (table: string, id: string) => String(mapping[table]?.[id] ?? `unmapped ${table} ${id}`);
        await compareEverything(sourceSide, await sideOf(t, result), seeded.site_ids, mapId);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('killed (SIGKILL) mid-way, the same command continues to the same result', { skip: dialect === 'sqlite' ? false : 'the command runs on a SQLite file' }, async () => {
      // A little latency on every answer, so that the kill lands between pages.
      const fault = await source.request({
        method: 'POST',
        url: '/v1/test_helpers/faults',
        token: sourceSide.token,
        payload: { data: { type: 'faults', attributes: { path: '/v1/*', method: 'GET', latency_ms: 30 } } },
      });
      assert.equal(fault.statusCode, 201, fault.body);
      const dir = mkdtempSync(join(tmpdir(), 'sitebiz-import-'));
      const url = `sqlite:${join(dir, 'target.db')}`;
      const args = ['import', '--from', source.baseUrl, '--client-id', seeded.client_id, '--concurrency', '2', '--json', '--database-url', url];
      const env = { SITEBIZ_IMPORT_CLIENT_SECRET: seeded.client_secret };
      try {
        const child = spawn(process.execPath, [BIN, ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
        const exited = new Promise((resolve) => child.on('close', resolve));
        const deadline = Date.now() + 60_000;
        while (!/importing customers/.test(stderr) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        child.kill('SIGKILL');
        await exited;
        assert.match(stderr, /importing customers/, 'the import got as far as customers before the kill');
        await source.request({ method: 'DELETE', url: `/v1/test_helpers/faults/${fault.json().data.id}`, token: sourceSide.token });
        const again = await runSitebiz(args, { env });
        assert.equal(again.code, 0, again.stderr);
        const result = JSON.parse(again.stdout) as ImportResult;
        assert.equal(result.resumed, true);
        const handle = await connectDatabase(parseDatabaseUrl(url, 'target', [])!);
        const app = await buildApp({ config: loadConfig({ DATABASE_URL: url, PUBLIC_URL: 'http://sitebiz.test', LOG_LEVEL: 'silent' }), database: handle, webhooks: { autoStart: false } });
        try {
          const get: TestApp['get'] = (path, token) => app.inject({ method: 'GET', url: path, headers: token ? { authorization: `Bearer ${token}` } : {} });
          const granted = await app.inject({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials', client_id: result.client_id, client_secret: result.client_secret } });
          await compareEverything(sourceSide, { app: { get }, token: granted.json().access_token, base: 'http://sitebiz.test' }, seeded.site_ids);
        } finally {
          await app.close();
          await handle.close();
        }
      } finally {
        await source.request({ method: 'DELETE', url: `/v1/test_helpers/faults/${fault.json().data.id}`, token: sourceSide.token });
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('--dry-run counts without writing; the command prints one JSON object', async () => {
      const t = await target();
      const counted = await runImport(t.handle, options({ dryRun: true }));
      assert.equal(counted.dry_run, true);
      assert.equal(counted.account_id, null);
      assert.equal(counted.counts.contacts, CONTACTS * SITES);
      assert.equal(counted.counts.lessons, seeded.rows.lessons);
      assert.equal((await t.handle.db.selectFrom('accounts').select('id').execute()).length, 0);
      if (dialect !== 'sqlite') return;
      const dir = mkdtempSync(join(tmpdir(), 'sitebiz-import-'));
      try {
        const run = await runSitebiz(
          ['import', '--from', source.baseUrl, '--client-id', seeded.client_id, '--json', '--database-url', `sqlite:${join(dir, 'target.db')}`],
          { env: { SITEBIZ_IMPORT_CLIENT_SECRET: seeded.client_secret } },
        );
        assert.equal(run.code, 0, run.stderr);
        const printed = JSON.parse(run.stdout) as Record<string, unknown>;
        assert.deepEqual(Object.keys(printed).sort(), ['account_id', 'client_id', 'client_secret', 'counts', 'dry_run', 'requests', 'resumed', 'retries', 'seconds', 'show_requests', 'site_ids'].sort());
        assert.equal((printed.counts as Record<string, number>).contacts, CONTACTS * SITES);
        assert.ok(!run.stdout.includes(seeded.client_secret) && !run.stderr.includes(seeded.client_secret), 'the source secret is never printed');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
