// Every table of the database is classified for reset and snapshots (src/db/account-data.ts):
// the account's data (saved and restored), kept (keys, hooks, the delivery log, ...) or the
// instance's own. A migration that adds a table without classifying it fails here, as does a data
// table without its snapshot copy, a copy missing one of the table's columns, or a data table
// listed before a data table it refers to (a restore inserts in list order).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ACCOUNT_DATA_TABLES, INSTANCE_TABLES, KEPT_TABLES, snapshotTableOf } from '../../src/db/account-data.js';
import { TRIGRAM_INDEXES } from '../../src/db/text-search.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';

for (const dialect of DIALECTS) {
  describe(`account data classification [${dialect}]`, () => {
    let t: TestApp;
    let tables: string[];
    before(async () => {
      t = await createTestApp(dialect);
      const rows =
        dialect === 'sqlite'
          ? (await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(t.handle.db)).rows
          : (await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(t.handle.db)).rows;
      tables = rows.map((r) => r.name).sort();
    });
    after(() => t.close());

    const data = new Set(ACCOUNT_DATA_TABLES.map((d) => d.table));
    const copies = new Set(ACCOUNT_DATA_TABLES.map((d) => snapshotTableOf(d.table)));
    // SQLite's FTS5 tables (the index and its shadow tables) are derived from contacts.
    const derived = (name: string) => TRIGRAM_INDEXES.some((index) => name === index.name || name.startsWith(`${index.name}_`));

    it('classifies every table exactly once', () => {
      const unclassified = tables.filter((name) => !data.has(name) && !(name in KEPT_TABLES) && !INSTANCE_TABLES.includes(name) && !copies.has(name) && !derived(name));
      assert.deepEqual(unclassified, [], 'add these tables to ACCOUNT_DATA_TABLES (restored by a reset), KEPT_TABLES or INSTANCE_TABLES in src/db/account-data.ts');
      for (const name of data) {
        assert.ok(!(name in KEPT_TABLES) && !INSTANCE_TABLES.includes(name), `${name} is in two lists`);
        assert.ok(tables.includes(name), `${name} is listed but does not exist`);
      }
      for (const name of [...Object.keys(KEPT_TABLES), ...INSTANCE_TABLES]) assert.ok(tables.includes(name), `${name} is listed but does not exist`);
    });

    it('gives every data table a snapshot copy with all of its columns', async () => {
      for (const { table } of ACCOUNT_DATA_TABLES) {
        const columns = await t.handle.traits.tableColumns(t.handle.db, table);
        const copied = await t.handle.traits.tableColumns(t.handle.db, snapshotTableOf(table));
        assert.ok(copied.length > 0, `${snapshotTableOf(table)} exists (a migration creates it with createSnapshotTable)`);
        assert.equal(copied[0], 'snapshot_id');
        assert.deepEqual(copied.slice(1).sort(), [...columns].sort(), `${snapshotTableOf(table)} has the columns of ${table}: a migration that adds a column adds it to the copy too`);
      }
    });

    it('lists every data table with a site_id or its join parent', async () => {
      for (const d of ACCOUNT_DATA_TABLES) {
        const columns = await t.handle.traits.tableColumns(t.handle.db, d.table);
        if (d.parent) {
          assert.ok(!columns.includes('site_id'), d.table);
          assert.ok(columns.includes(d.parent.key) && data.has(d.parent.table), d.table);
        } else assert.ok(columns.includes('site_id'), `${d.table} has site_id`);
        for (const c of d.order) assert.ok(columns.includes(c), `${d.table}.${c}`);
      }
    });

    if (dialect === 'sqlite') {
      it('lists parents before the data tables that refer to them', async () => {
        const position = new Map(ACCOUNT_DATA_TABLES.map((d, i) => [d.table, i]));
        for (const { table } of ACCOUNT_DATA_TABLES) {
          const keys = (await sql<{ table: string }>`select "table" from pragma_foreign_key_list(${table})`.execute(t.handle.db)).rows;
          for (const key of keys) {
            if (!data.has(key.table) || key.table === table) continue;
            assert.ok(position.get(key.table)! < position.get(table)!, `${key.table} comes before ${table}, which refers to it`);
          }
        }
      });
    }
  });
}
