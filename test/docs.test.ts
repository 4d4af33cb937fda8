// The documentation states facts the code owns: the permissions, the settings and the commands
// a newcomer runs first. These tests keep the two from drifting apart. No database involved.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { PERMISSIONS } from '../src/auth/permissions.js';
import { USER_ROLES } from '../src/auth/roles.js';
import { SETTINGS } from '../src/config.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The rows of the first Markdown table whose header row starts with `firstHeader`. */
function tableRows(markdown: string, firstHeader: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => new RegExp(`^\\|\\s*${firstHeader}\\s*\\|`).test(line));
  assert.ok(start >= 0, `a table whose first column is "${firstHeader}"`);
  assert.match(lines[start + 1] ?? '', /^\|\s*-{3,}/, 'a header separator row follows');
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.split('|').slice(1, -1).map((cell) => cell.trim()));
  }
  return rows;
}

const unquote = (cell: string) => cell.replace(/^`|`$/g, '');

describe('docs/permissions.md', () => {
  const doc = read('docs/permissions.md');

  it('lists exactly the permissions of PERMISSIONS, in the same order, each with what it allows', () => {
    const rows = tableRows(doc, 'Permission');
    assert.deepEqual(
      rows.map((r) => unquote(r[0] ?? '')),
      PERMISSIONS.map((p) => p.name),
    );
    for (const row of rows) assert.ok((row[1] ?? '').length > 0, `${row[0]} says what it allows`);
  });

  it('describes the all shorthand, every role and the 403', () => {
    assert.match(doc, /--permissions all/);
    const roles = tableRows(doc, 'Role').map((r) => unquote(r[0] ?? ''));
    assert.deepEqual(roles, [...USER_ROLES]);
    assert.match(doc, /403 Forbidden/);
  });
});

describe('README.md', () => {
  const readme = read('README.md');

  it('shows the quick start and test commands', () => {
    assert.ok(readme.includes('npm ci && npm start'), 'npm ci && npm start');
    assert.ok(readme.includes('npm test'), 'npm test');
    assert.ok(readme.includes('TEST_DATABASE_URL=postgres://'), 'how to run the tests on PostgreSQL');
  });

  it('documents every setting with its flag and default, as does docs/configuration.md', () => {
    for (const path of ['README.md', 'docs/configuration.md']) {
      const rows = tableRows(read(path), 'Environment variable');
      const byEnv = new Map(rows.map((r) => [unquote(r[0] ?? ''), r]));
      for (const spec of Object.values(SETTINGS)) {
        const row = byEnv.get(spec.env);
        assert.ok(row, `${path} documents ${spec.env}`);
        assert.equal(unquote(row[1] ?? ''), `--${spec.flag}`, `${path}: flag of ${spec.env}`);
        if (spec.default !== undefined) {
          assert.ok((row[2] ?? '').startsWith(`\`${spec.default}\``), `${path}: default of ${spec.env} is ${spec.default}`);
        }
      }
      assert.equal(rows.length, Object.keys(SETTINGS).length, `${path} documents no setting that does not exist`);
    }
  });

  it('links only to files that exist', () => {
    for (const path of ['README.md', 'docs/permissions.md', 'docs/configuration.md', 'docs/authentication.md', 'docs/architecture.md']) {
      const text = read(path);
      for (const match of text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
        const target = match[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        assert.ok(existsSync(join(ROOT, dirname(path), target)), `${path} links to ${target}, which exists`);
      }
    }
  });
});
