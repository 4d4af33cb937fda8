// A reporter for node's test runner that writes where a run's time went: per test file, the sum
// of its top-level tests' durations (a file's own start-up, its imports, is not in it; node reports
// files in order, so the times its events arrive say nothing). run-tests.js adds it when
// TEST_TIMINGS names a file: `TEST_TIMINGS=timings.md npm test`.
import { relative } from 'node:path';

const root = process.cwd();

export default async function* timings(source) {
  const files = new Map();
  const started = Date.now();
  for await (const event of source) {
    const file = event.data?.file;
    if (!file) continue;
    let entry = files.get(file);
    if (!entry) files.set(file, (entry = { tests: 0, topLevelMs: 0, failed: 0 }));
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0) {
      entry.topLevelMs += event.data.details?.duration_ms ?? 0;
      if (event.type === 'test:fail') entry.failed++;
    }
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.details?.type !== 'suite') entry.tests++;
  }
  const rows = [...files.entries()]
    .map(([file, e]) => ({ file: relative(root, file), ...e }))
    .sort((a, b) => b.topLevelMs - a.topLevelMs);
  const seconds = (ms) => (ms / 1000).toFixed(1);
  const total = rows.reduce((sum, r) => sum + r.topLevelMs, 0);
  yield `Test time by file: ${rows.length} files, ${seconds(total)} s of tests in a run of ${seconds(Date.now() - started)} s\n\n`;
  yield '| File | Tests s | Share | Tests |\n|---|--:|--:|--:|\n';
  for (const r of rows) {
    yield `| ${r.file}${r.failed ? ' (failed)' : ''} | ${seconds(r.topLevelMs)} | ${((100 * r.topLevelMs) / total).toFixed(1)} % | ${r.tests} |\n`;
  }
}
