// `npm run docs:write`: rewrites the generated blocks of docs/filters.md from the resource
// declarations (src/docs/filters-doc.ts), keeping the hand-written text between them.
// test/filters-doc.test.ts fails until the result is committed.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { FILTERS_DOC, updateFiltersDoc } from '../src/docs/filters-doc.js';
import { Registry } from '../src/jsonapi/registry.js';
import { RESOURCES } from '../src/resources/index.js';

const path = fileURLToPath(new URL(`../${FILTERS_DOC}`, import.meta.url));
const before = readFileSync(path, 'utf8');
const { text, notes } = updateFiltersDoc(before, new Registry(RESOURCES));
for (const note of notes) console.warn(`${FILTERS_DOC}: ${note}`);
if (text === before) {
  console.log(`${FILTERS_DOC} is up to date`);
} else {
  writeFileSync(path, text);
  console.log(`wrote ${FILTERS_DOC}; review the diff and commit it`);
}
