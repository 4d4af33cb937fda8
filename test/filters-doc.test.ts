// docs/filters.md documents every filter of every list endpoint. Its tables are generated from
// the declarations (src/docs/filters-doc.ts, written by `npm run docs:write`); these tests fail
// when the committed page differs from what the declarations give, when a filter is missing from
// its section, or when a link inside the page points nowhere. No database involved.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { FILTERS_DOC, generatedBlocks, updateFiltersDoc, WRITE_COMMAND } from '../src/docs/filters-doc.js';
import { filterNames } from '../src/jsonapi/planner.js';
import { Registry } from '../src/jsonapi/registry.js';
import { attr, defineResource, namedFilter } from '../src/jsonapi/resource.js';
import { RESOURCES } from '../src/resources/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const registry = new Registry(RESOURCES);
const committed = readFileSync(join(ROOT, FILTERS_DOC), 'utf8');

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? undefined : /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let unique = slug;
    for (let n = 1; anchors.has(unique); n++) unique = `${slug}-${n}`;
    anchors.add(unique);
  }
  return anchors;
}

describe(FILTERS_DOC, () => {
  it(`matches the declarations (else run \`${WRITE_COMMAND}\` and commit the result)`, () => {
    const { text, notes } = updateFiltersDoc(committed, registry);
    if (text === committed && notes.length === 0) return;
    const a = committed.split('\n');
    const b = text.split('\n');
    const line = a.findIndex((l, i) => l !== b[i]);
    assert.fail(
      [
        `${FILTERS_DOC} is out of date with the resource declarations: run \`${WRITE_COMMAND}\` and commit it.`,
        ...notes,
        line >= 0 ? `First difference at line ${line + 1}:\n  committed: ${a[line] ?? '(end of file)'}\n  generated: ${b[line] ?? '(end of file)'}` : '',
      ].join('\n'),
    );
  });

  it('names every filter of every list endpoint in that endpoint’s section', () => {
    const blocks = generatedBlocks(registry);
    for (const resource of registry.all()) {
      const block = blocks.get(`resource:${resource.type}`);
      if (!resource.routes.list) {
        assert.equal(block, undefined, `${resource.type} has no list, so no section`);
        continue;
      }
      assert.ok(block, `a section for ${resource.type}`);
      const text = block.lines.join('\n');
      assert.ok(text.includes(`### ${resource.type}\n`), `${resource.type}: the section has its heading`);
      for (const name of filterNames(resource)) {
        assert.ok(text.includes(`\`filter[${name}]\``) || text.includes(`\`${name}\``), `${resource.type}: filter[${name}] is documented`);
      }
      for (const [relationship, narrowing] of Object.entries(resource.includeNarrowing)) {
        const names = [...(narrowing.search ? ['search'] : []), 'page', 'per'].map((role) => `filter[${relationship}_${role}]`);
        for (const name of names) assert.ok(text.includes(`\`${name}\``), `${resource.type}: show-only ${name} is documented`);
      }
    }
  });

  it('has hand-written definitions of the contact terms, after the generated tables', () => {
    const definitions = committed.indexOf('## Definitions: contacts and customers');
    assert.ok(definitions > committed.indexOf('<!-- END GENERATED resource:customers -->'), 'the definitions follow the tables');
    for (const term of ['owns', 'active membership', 'previously owned', 'current access', 'joins', 'net revenue', 'open data', 'hard bouncing', 'suppressed']) {
      assert.ok(committed.slice(definitions).includes(`**${term}**`), `the definitions define **${term}**`);
    }
  });

  it('links only to headings and files that exist', () => {
    const own = anchorsOf(committed);
    for (const match of committed.matchAll(/\]\(([^)\s]*)\)/g)) {
      const [path = '', anchor] = (match[1] ?? '').split('#');
      if (/^[a-z]+:/.test(path)) continue;
      if (path === '') {
        assert.ok(own.has(anchor ?? ''), `${FILTERS_DOC} has a heading for #${anchor}`);
        continue;
      }
      const target = join(ROOT, dirname(FILTERS_DOC), path);
      assert.ok(existsSync(target), `${path} exists`);
      if (anchor) assert.ok(anchorsOf(readFileSync(target, 'utf8')).has(anchor), `${path} has a heading for #${anchor}`);
    }
  });
});

describe('updateFiltersDoc', () => {
  const things = defineResource({
    type: 'things',
    table: 'things',
    description: 'Things.',
    readPermission: null,
    tenancy: { kind: 'site', column: 'site_id' },
    attributes: { title: attr.string({ filter: ['eq', 'cont'], description: 'The title' }) },
    filters: { shiny: namedFilter('boolean', 'true: shiny things; false: the others', (eb, v) => eb('things.shiny', '=', v)) },
  });
  const small = new Registry([things]);
  const keys = [...generatedBlocks(small).keys()];
  const skeleton = (blockKeys: readonly string[]) =>
    ['# Title', '', 'Hand-written.', '', ...blockKeys.flatMap((k) => [`<!-- BEGIN GENERATED ${k}: old -->`, 'stale', `<!-- END GENERATED ${k} -->`, '', `After ${k}.`, '']), 'The end.'].join('\n');

  it('rewrites every block and keeps the hand-written text between them', () => {
    const { text, notes } = updateFiltersDoc(skeleton(keys), small);
    assert.deepEqual(notes, []);
    assert.ok(!text.includes('stale'));
    for (const k of keys) assert.ok(text.includes(`\nAfter ${k}.\n`), `the text after ${k} is kept`);
    assert.ok(text.startsWith('# Title\n\nHand-written.\n'));
    assert.ok(text.endsWith('The end.'));
    assert.match(text, /\| `filter\[shiny\]` \| \[boolean\]\(#value-kinds\) \| true: shiny things; false: the others \|/);
    assert.match(text, /\| `title` \| text \| `title_eq` `title_cont` \| The title \|/);
    assert.equal(updateFiltersDoc(text, small).text, text, 'a second run changes nothing');
  });

  it('adds a missing block after the one before it, and removes a block nothing generates', () => {
    const missing = keys.filter((k) => k !== 'resource:things');
    const { text, notes } = updateFiltersDoc(skeleton([...missing, 'resource:gone']), small);
    assert.deepEqual(notes.map((n) => n.split(':')[0]), ['removed block resource', 'added block resource']);
    assert.ok(!text.includes('GENERATED resource:gone'));
    assert.ok(text.includes('After resource:gone.'), 'hand-written text around a removed block stays');
    const order = ['value-kinds', 'predicates', 'resource:things', 'engagement-segments'].map((k) => text.indexOf(`BEGIN GENERATED ${k}:`));
    assert.deepEqual([...order].sort((x, y) => x - y), order, 'the added block sits after predicates');
    assert.ok(order.every((i) => i >= 0));
  });

  it('refuses broken markers, naming the line', () => {
    assert.throws(() => updateFiltersDoc('<!-- BEGIN GENERATED predicates: x -->\n', small), /docs\/filters\.md:1: block predicates has no END/);
    assert.throws(() => updateFiltersDoc('text\n<!-- END GENERATED predicates -->', small), /docs\/filters\.md:2: END GENERATED predicates without its BEGIN/);
  });
});
