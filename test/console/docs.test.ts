// docs/console.md shows every screenshot the browser tests take, and only those that exist.
// No database involved.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

it('docs/console.md shows each screenshot in docs/console/, and each one it shows exists', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'console.md'), 'utf8');
  const shown = [...doc.matchAll(/!\[[^\]]*\]\(console\/([a-z0-9-]+\.png)\)/g)].map((m) => m[1]!);
  const files = readdirSync(join(ROOT, 'docs', 'console')).filter((f) => f.endsWith('.png'));
  assert.deepEqual([...shown].sort(), [...files].sort());
  // And every screenshot a browser test names is among them.
  const tests = readdirSync(join(ROOT, 'test', 'console')).filter((f) => f.endsWith('.browser.test.ts'));
  for (const file of tests) {
    const source = readFileSync(join(ROOT, 'test', 'console', file), 'utf8');
    for (const [, name] of source.matchAll(/(?:screenshot|checkPage)\(page, '([a-z0-9-]+)'\)/g)) {
      assert.ok(existsSync(join(ROOT, 'docs', 'console', `${name}.png`)), `${file} takes ${name}.png; docs/console/ has none`);
    }
  }
});
