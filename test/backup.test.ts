// `sitebiz backup` and `sitebiz restore` (docs/operations.md "Backups"), as operators run them: a
// server (an app on a database file, or a PostgreSQL database of its own) takes 50 concurrent
// writers creating contacts over HTTP; `sitebiz backup` runs mid-way in a process of its own (on
// SQLite it reads the file through its own connection, as the CLI would beside a server); every
// write acknowledged before the backup began must be in it. The backup is restored with
// `sitebiz restore` into an empty database, and a server on the restored database must answer
// every list as the original does at the backup's moment: the writers stop, and the original's
// lists minus the contacts created after the snapshot must equal the restored server's lists.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { integrityOf } from '../src/backup/sqlite-backup.js';
import { loadConfig } from '../src/config.js';
import { connectDatabase, migrateToLatest } from '../src/db/connect.js';
import { initialize } from '../src/domain/initialize.js';
import { RESOURCES } from '../src/resources/index.js';
import { DIALECTS, migratedPostgresTemplate, PUBLIC_URL, type DialectName } from './support/harness.js';
import { runSitebiz } from './support/serve-process.js';

const WRITERS = 50;
/** Writes acknowledged before the backup starts (the rest land during and after it). */
const WRITES_BEFORE_BACKUP = 100;

const scratch = mkdtempSync(join(tmpdir(), 'sitebiz-backup-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A database of the test's own: a file in the scratch folder, or a PostgreSQL database named after TEST_DATABASE_URL's (<its name>_original_<hex>). */
async function newDatabase(dialect: DialectName, label: string, options: { migrated?: boolean } = {}): Promise<{ url: string; file?: string; drop(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const file = join(scratch, `${label}-${randomBytes(4).toString('hex')}.sqlite`);
    return { url: `sqlite:${file}`, file, drop: async () => {} };
  }
  const base = new URL(process.env.TEST_DATABASE_URL!);
  const name = `${base.pathname.slice(1)}_${label}_${randomBytes(4).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: base.href });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  // A migrated original is a copy of the harness's migrated template (migrating takes seconds).
  await admin(`create database ${name}${options.migrated ? ` template ${await migratedPostgresTemplate()}` : ''}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { url: url.href, drop: () => admin(`drop database if exists ${name} with (force)`) };
}

/** An app on the database at `url`, as `serve` builds it (no webhook worker: no attempts change rows meanwhile). */
async function appOn(url: string): Promise<FastifyInstance> {
  const config = loadConfig({ DATABASE_URL: url, PUBLIC_URL, LOG_LEVEL: 'silent', MODE: 'production', RATE_LIMIT: '0' });
  const handle = await connectDatabase(config.database, { poolSize: 8 });
  const app = await buildApp({ config, database: handle, webhooks: { autoStart: false } });
  await app.ready();
  return app;
}

async function tokenFrom(app: FastifyInstance, clientId: string, clientSecret: string): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret } });
  assert.equal(res.statusCode, 200, res.body);
  return (res.json() as { access_token: string }).access_token;
}

/** Every index and constraint of a PostgreSQL database's schema, with its definition. */
async function postgresSchemaShape(url: string): Promise<{ indexes: string[]; constraints: string[] }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const indexes = await client.query<{ line: string }>(
      `select pg_get_indexdef(i.indexrelid) as line from pg_index i join pg_class t on t.oid = i.indrelid
       where t.relnamespace = current_schema()::regnamespace order by 1`,
    );
    const constraints = await client.query<{ line: string }>(
      `select conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) as line from pg_constraint
       where connamespace = current_schema()::regnamespace order by 1`,
    );
    assert.ok(indexes.rows.length > 100 && constraints.rows.some((c) => / FOREIGN KEY /.test(c.line)), 'the schema was read');
    return { indexes: indexes.rows.map((r) => r.line), constraints: constraints.rows.map((r) => r.line) };
  } finally {
    await client.end();
  }
}

interface Resource {
  id: string;
  type: string;
}

/** Every record of every list of the API, page after page, by type. */
async function everyList(app: FastifyInstance, token: string, siteId: string): Promise<Map<string, Resource[]>> {
  const lists = new Map<string, Resource[]>();
  for (const resource of RESOURCES) {
    if (resource.pathPrefix || !resource.routes.list) continue;
    const site = resource.tenancy.kind === 'site' ? `&filter[site_id]=${siteId}` : '';
    let url: string | null = `/v1/${resource.type}?page[size]=100${site}`;
    const records: Resource[] = [];
    for (let page = 0; url && page < 100; page++) {
      const res: Awaited<ReturnType<FastifyInstance['inject']>> = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      const doc = res.json() as { data: Resource[]; links?: { next?: string | null } };
      records.push(...doc.data);
      url = doc.links?.next ? doc.links.next.slice(PUBLIC_URL.length) : null;
    }
    lists.set(resource.type, records);
  }
  return lists;
}

for (const dialect of DIALECTS) {
  describe(`sitebiz backup and restore [${dialect}]`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    });

    it('a backup under 50 writers holds every write acknowledged before it began, restores into an empty database only, and the restored server answers every list as the original', async () => {
      let last = performance.now();
      const mark = (what: string) => {
        if (process.env.BACKUP_TEST_TIMES) console.log(dialect, what, Math.round(performance.now() - last), 'ms');
        last = performance.now();
      };
      const original = await newDatabase(dialect, 'original', { migrated: true });
      cleanups.push(original.drop);
      const setUp = await connectDatabase(loadConfig({ DATABASE_URL: original.url }).database);
      await migrateToLatest(setUp);
      // The demo account: every list has records to compare, not just the writers' contacts.
      const demo = await initialize(setUp, { demo: true, baseUrl: PUBLIC_URL });
      await setUp.close();
      mark('original made');
      const app = await appOn(original.url);
      cleanups.push(() => app.close());
      const token = await tokenFrom(app, demo.client_id, demo.client_secret);

      // 50 writers, each creating contacts one after another until told to stop.
      const acknowledged: Array<{ id: string; at: number }> = [];
      let stop = false;
      let failures = 0;
      let reachedStart!: () => void;
      const enoughBeforeBackup = new Promise<void>((resolve) => (reachedStart = resolve));
      const writer = async (w: number) => {
        for (let i = 0; !stop; i++) {
          const res = await app.inject({
            method: 'POST',
            url: '/v1/contacts',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.api+json' },
            payload: { data: { type: 'contacts', attributes: { email: `writer${w}-${i}@example.com` }, relationships: { site: { data: { type: 'sites', id: demo.site_id } } } } },
          });
          if (res.statusCode !== 201) failures++;
          else acknowledged.push({ id: (res.json() as { data: Resource }).data.id, at: performance.now() });
          if (acknowledged.length >= WRITES_BEFORE_BACKUP) reachedStart();
        }
      };
      const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));

      await enoughBeforeBackup;
      mark('writes before the backup');
      const backupFile = join(scratch, `backup-${dialect}.${dialect === 'sqlite' ? 'sqlite' : 'dump'}`);
      const backupBegan = performance.now();
      const backup = await runSitebiz(['backup', backupFile, '--json', '--database-url', original.url]);
      const ackedDuringBackup = acknowledged.filter((a) => a.at > backupBegan).length;
      stop = true;
      await Promise.all(writers);
      assert.equal(failures, 0, 'every write was answered 201');
      assert.equal(backup.code, 0, backup.stderr + backup.stdout);
      const backupResult = JSON.parse(backup.stdout) as { dialect: string; bytes: number; integrity?: string };
      assert.equal(backupResult.dialect, dialect);
      if (dialect === 'sqlite') {
        assert.equal(backupResult.integrity, 'ok');
        assert.equal(integrityOf(backupFile), 'ok', 'PRAGMA integrity_check of the backup file');
      }
      assert.ok(ackedDuringBackup > 0, 'writers kept being answered while the backup ran');

      mark('backup');
      const target = await newDatabase(dialect, 'restored');
      cleanups.push(target.drop);
      const restore = await runSitebiz(['restore', backupFile, '--json', '--database-url', target.url]);
      assert.equal(restore.code, 0, restore.stderr + restore.stdout);
      if (dialect === 'sqlite') {
        assert.equal(integrityOf(target.file!), 'ok', 'PRAGMA integrity_check of the restored file');
        // The backup is one file: no -wal, -shm or .partial left beside it by the backup, its
        // check or the restore that read it.
        assert.deepEqual(readdirSync(scratch).filter((name) => name.startsWith(basename(backupFile))), [basename(backupFile)]);
      }
      // The restore drops the foreign keys and secondary indexes while it loads, then makes them
      // again: the restored schema has every one, as the original has it.
      if (dialect === 'postgres') assert.deepEqual(await postgresSchemaShape(target.url), await postgresSchemaShape(original.url));

      const restored = await appOn(target.url);
      cleanups.push(() => restored.close());
      // The keys came back with the data: the same credentials get a token from the restored server.
      const restoredToken = await tokenFrom(restored, demo.client_id, demo.client_secret);
      mark('restored');
      const [before, after_] = [await everyList(app, token, demo.site_id), await everyList(restored, restoredToken, demo.site_id)];

      const restoredContactIds = new Set(after_.get('contacts')!.map((c) => c.id));
      const missing = acknowledged.filter((a) => a.at < backupBegan && !restoredContactIds.has(a.id));
      assert.deepEqual(missing, [], 'every write acknowledged before the backup began is restored');
      // The contacts the snapshot missed were all written after the backup began.
      const afterSnapshot = new Set(before.get('contacts')!.filter((c) => !restoredContactIds.has(c.id)).map((c) => c.id));
      const beganAt = new Map(acknowledged.map((a) => [a.id, a.at]));
      for (const id of afterSnapshot) assert.ok((beganAt.get(id) ?? 0) > backupBegan, `contact ${id}, missing from the backup, was written after it began`);

      // The original at the backup's moment: its lists without the contacts created after it.
      for (const [type, records] of before) {
        const expected = type === 'contacts' ? records.filter((r) => !afterSnapshot.has(r.id)) : records;
        assert.deepEqual(after_.get(type), expected, `GET /v1/${type}: the restored server answers as the original at the backup`);
      }
      assert.ok(after_.get('contacts')!.length >= 60 + WRITES_BEFORE_BACKUP, 'the demo contacts and the writes before the backup');

      // A second restore into the now non-empty database is refused, and writes nothing.
      const again = await runSitebiz(['restore', backupFile, '--json', '--database-url', target.url]);
      assert.equal(again.code, 1);
      const refusal = JSON.parse(again.stdout) as { error: { code: string; message: string } };
      assert.equal(refusal.error.code, 'rejected');
      assert.match(refusal.error.message, /is not empty .*wrote nothing/);
      assert.deepEqual((await everyList(restored, restoredToken, demo.site_id)).get('contacts'), after_.get('contacts'));
    });
  });
}
