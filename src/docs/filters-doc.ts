// The generated parts of docs/filters.md: the value kinds, the predicate suffixes, the engagement
// segments and one filter table per list endpoint, all read from the declarations, so the page
// cannot drift from what the planner accepts. The hand-written parts of the page (the rules, the
// definitions of the contact terms) sit between the generated blocks and are kept as they are.
//
// A generated block is delimited by two marker lines:
//   <!-- BEGIN GENERATED <key>: ... -->
//   <!-- END GENERATED <key> -->
// `npm run docs:write` (scripts/write-filters-doc.ts) rewrites every block; test/filters-doc.test.ts
// fails when the committed page differs from what this module renders.
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../jsonapi/planner.js';
import { PREDICATE_MEANINGS, PREDICATES_BY_TYPE, type PredicateSuffix } from '../jsonapi/predicates.js';
import type { Registry } from '../jsonapi/registry.js';
import type { AttributeDef, AttributeType, FilterValueKind, NamedFilterDef, ResourceDefinition } from '../jsonapi/resource.js';
import { ENGAGEMENT_WINDOWS } from '../resources/contact-filters.js';

export const FILTERS_DOC = 'docs/filters.md';
export const WRITE_COMMAND = 'npm run docs:write';

/** How each kind of named-filter value is written; keyed by kind so a new kind fails the typecheck until documented. */
const VALUE_KINDS: Record<FilterValueKind, { label: string; rule: string; example: string }> = {
  string: {
    label: 'text',
    rule: 'Any text that is not blank, used as given (not trimmed) unless the filter says otherwise.',
    example: '`filter[search]=ann example.com`',
  },
  strings: {
    label: 'text list',
    rule: 'A comma-separated list, or the key repeated as `filter[<name>][]=a&filter[<name>][]=b`. 1 to 100 values, each trimmed; blank values are dropped, so a value cannot contain a comma.',
    example: '`filter[exclude_product_types][]=Courses::CohortCourse`',
  },
  integer: {
    label: 'whole number',
    rule: 'Digits only (up to 15).',
    example: '`12`',
  },
  id: {
    label: 'id',
    rule: "One record id: digits only (up to 15). When the filter's row names the records the ids refer to, an id that names none of the site's answers 404, naming the parameter, as a record of another account does.",
    example: '`filter[customer_id]=42`',
  },
  ids: {
    label: 'id list',
    rule: 'One id, a comma-separated list, or the key repeated as `filter[<name>][]`. 1 to 500 ids. A record matches when it matches for **any** of the ids, unless the filter says *every* or *none*. Ids are checked as for **id**.',
    example: '`filter[has_tag_id]=3,7`',
  },
  boolean: {
    label: 'boolean',
    rule: '`true` or `1`; `false` or `0` (case ignored). `false` keeps exactly the records that `true` leaves out.',
    example: '`filter[subscribed]=false`',
  },
  days: {
    label: 'days',
    rule: 'A whole number of days N from 1 to 999999. The window is the last N × 24 hours before the request: it starts exactly N days before now, not at a midnight.',
    example: '`filter[created_in_last]=7`',
  },
  decimal: {
    label: 'amount',
    rule: 'A money amount in the currency’s units: an optional `-`, up to 12 digits, and at most 2 decimals. No currency sign, no thousands separator. Compared exactly, in cents.',
    example: '`25`, `25.5`, `25.50`',
  },
  date: {
    label: 'date',
    rule: 'ISO 8601: a date (`2026-03-01`, midnight UTC) or a date-time (`2026-03-01T09:30:00Z`, seconds and fraction optional). A date-time without a zone is UTC; an offset such as `+02:00` is honoured.',
    example: '`filter[start_date]=2026-03-01`',
  },
};

const TYPE_LABELS: Record<AttributeType, string> = {
  string: 'text',
  integer: 'whole number',
  number: 'number',
  id: 'id',
  datetime: 'timestamp',
  boolean: 'boolean',
  json: 'JSON',
};

const ENGAGEMENT_SEGMENTS: readonly { filter: string; rule: string }[] = [
  {
    filter: 'healthy_contacts_with_open_data',
    rule: `opened an email in the last ${ENGAGEMENT_WINDOWS.recentOpenDays} days`,
  },
  {
    filter: 'passive_contacts_with_open_data',
    rule: `opened no email in the last ${ENGAGEMENT_WINDOWS.recentOpenDays} days, but opened one in the last ${ENGAGEMENT_WINDOWS.engagedDays} days`,
  },
  {
    filter: 'unengaged_contacts_with_open_data',
    rule: `opened no email in the last ${ENGAGEMENT_WINDOWS.engagedDays} days, but was delivered one in the last ${ENGAGEMENT_WINDOWS.engagedDays} days`,
  },
  {
    filter: 'inactive_contacts_with_open_data',
    rule: `neither opened nor was delivered any email in the last ${ENGAGEMENT_WINDOWS.engagedDays} days`,
  },
];

// --- Rendering ------------------------------------------------------------------------------------

/** A table cell: pipes escaped, line breaks flattened. */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
const code = (text: string) => `\`${text}\``;
const kindLink = (kind: FilterValueKind) => `[${VALUE_KINDS[kind].label}](#value-kinds)`;

function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)];
}

function renderValueKinds(): string[] {
  return table(
    ['Kind', 'How to write it', 'Example'],
    Object.values(VALUE_KINDS).map((k) => [`**${k.label}**`, k.rule, k.example]),
  );
}

function renderPredicates(): string[] {
  const types = Object.keys(PREDICATES_BY_TYPE) as AttributeType[];
  const rows = (Object.keys(PREDICATE_MEANINGS) as PredicateSuffix[]).map((suffix) => [
    code(`_${suffix}`),
    PREDICATE_MEANINGS[suffix],
    types.filter((t) => PREDICATES_BY_TYPE[t].includes(suffix)).map((t) => TYPE_LABELS[t]).join(', '),
  ]);
  return table(['Suffix', 'Matches records whose value', 'Attribute types'], rows);
}

function renderEngagement(): string[] {
  return table(
    ['Filter (`=true`)', 'A contact with open data is in the segment when it'],
    ENGAGEMENT_SEGMENTS.map((s) => [code(`filter[${s.filter}]`), s.rule]),
  );
}

function attributeNotes(a: AttributeDef): string {
  const notes: string[] = [];
  if (a.description) notes.push(a.description.replace(/(?<!\.)\.$/, ''));
  if (a.enumValues) notes.push(`one of ${a.enumValues.map(code).join(', ')}`);
  if (a.nullable && !/\bnull\b/.test(a.description ?? '')) notes.push('can be null');
  return notes.join('; ');
}

/** The declared description, plus the 404 of a filter whose ids must name records of the site. */
function namedMeaning(f: NamedFilterDef): string {
  if (f.references === undefined) return f.description;
  const ids = f.kind === 'ids' ? 'every id names' : 'the id names';
  return `${f.description.replace(/(?<!\.)\.$/, '')}. 404 unless ${ids} one of the site's ${code(f.references)}.`;
}

function siteFilterMeaning(resource: ResourceDefinition): string {
  const siteFilter = resource.tenancy.kind === 'site' ? resource.tenancy.siteFilter : undefined;
  const required =
    siteFilter === 'required'
      ? 'Required on every request'
      : siteFilter === 'optional'
        ? 'Optional (the upstream list takes none): without it, the records of every site the token reaches, each naming its site'
        : 'Required when the token reaches more than one site';
  return `Records of this one site. ${required}; a site the token cannot see is a 404 (see [filter[site_id]](#filtersite_id)).`;
}

function renderResource(resource: ResourceDefinition): string[] {
  const lines: string[] = [`### ${resource.type}`, ''];
  const permission = resource.readPermission ? `, permission ${code(resource.readPermission)}` : '';
  lines.push(`${code(`GET /v1/${resource.type}`)}${permission}. ${resource.description}`, '');

  const namedRows: string[][] = [];
  if (resource.tenancy.kind === 'site') namedRows.push([code('filter[site_id]'), kindLink('id'), siteFilterMeaning(resource)]);
  for (const [name, f] of Object.entries(resource.filters)) namedRows.push([code(`filter[${name}]`), kindLink(f.kind), namedMeaning(f)]);
  if (namedRows.length > 0) lines.push(...table(['Filter', 'Value', 'Matches'], namedRows), '');

  const attributeRows = Object.entries(resource.attributes)
    .filter(([, a]) => a.predicates.length > 0)
    .map(([name, a]) => [code(name), TYPE_LABELS[a.type], a.predicates.map((s) => code(`${name}_${s}`)).join(' '), attributeNotes(a)]);
  if (attributeRows.length > 0) {
    lines.push(
      'Attribute filters, `filter[<attribute>_<suffix>]` (suffixes: [the grammar](#attribute-filters-the-suffix-grammar)):',
      '',
      ...table(['Attribute', 'Type', 'Filters', 'About the value'], attributeRows),
      '',
    );
  }

  const narrowing = Object.entries(resource.includeNarrowing);
  if (narrowing.length > 0) {
    const rows: string[][] = [];
    for (const [rel, n] of narrowing) {
      const included = `With ${code(`include=${rel}`)}`;
      if (n.search) rows.push([code(`filter[${rel}_search]`), kindLink('string'), `${included}: only the included ${rel} that match the text (see below)`]);
      rows.push([code(`filter[${rel}_page]`), 'whole number from 1', `${included}: the page of included ${rel} to return (default 1)`]);
      rows.push([code(`filter[${rel}_per]`), `whole number, 1 to ${MAX_PAGE_SIZE}`, `${included}: included ${rel} per page (default ${DEFAULT_PAGE_SIZE} once a page is asked for)`]);
    }
    lines.push(
      `Show-only parameters of ${code(`GET /v1/${resource.type}/{id}`)}, which narrow an included relationship. They are ignored when the relationship is not included, but their values are still checked (400 when malformed):`,
      '',
      ...table(['Parameter', 'Value', 'Effect'], rows),
      '',
    );
  }
  while (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The key and content of every generated block, in page order. */
export function generatedBlocks(registry: Registry): Map<string, { source: string; lines: string[] }> {
  const blocks = new Map<string, { source: string; lines: string[] }>();
  blocks.set('value-kinds', { source: 'src/docs/filters-doc.ts (VALUE_KINDS)', lines: renderValueKinds() });
  blocks.set('predicates', { source: 'src/jsonapi/predicates.ts', lines: renderPredicates() });
  for (const resource of registry.all()) {
    if (!resource.routes.list) continue;
    blocks.set(`resource:${resource.type}`, { source: 'its declaration in src/resources', lines: renderResource(resource) });
  }
  blocks.set('engagement-segments', { source: 'ENGAGEMENT_WINDOWS in src/resources/contact-filters.ts', lines: renderEngagement() });
  return blocks;
}

// --- Splicing into the page -----------------------------------------------------------------------

const BEGIN = /^<!-- BEGIN GENERATED ([a-z0-9_:-]+):.*-->$/;
const END = /^<!-- END GENERATED ([a-z0-9_:-]+) -->$/;

const beginMarker = (key: string, source: string) =>
  `<!-- BEGIN GENERATED ${key}: written by ${WRITE_COMMAND} from ${source}; edit that, not this block -->`;
const endMarker = (key: string) => `<!-- END GENERATED ${key} -->`;

type Segment = { kind: 'text'; lines: string[] } | { kind: 'block'; key: string; lines: string[] };

function parse(page: string): Segment[] {
  const segments: Segment[] = [];
  let text: string[] = [];
  let open: { key: string; line: number } | undefined;
  page.split('\n').forEach((line, index) => {
    const begin = BEGIN.exec(line)?.[1];
    const end = END.exec(line)?.[1];
    if (begin !== undefined) {
      if (open) throw new Error(`${FILTERS_DOC}:${index + 1}: block ${begin} begins inside block ${open.key} (line ${open.line})`);
      segments.push({ kind: 'text', lines: text });
      text = [];
      open = { key: begin, line: index + 1 };
    } else if (end !== undefined) {
      if (!open || open.key !== end) throw new Error(`${FILTERS_DOC}:${index + 1}: END GENERATED ${end} without its BEGIN`);
      segments.push({ kind: 'block', key: end, lines: [] });
      open = undefined;
    } else if (!open) {
      text.push(line);
    }
  });
  if (open) throw new Error(`${FILTERS_DOC}:${open.line}: block ${open.key} has no END GENERATED line`);
  segments.push({ kind: 'text', lines: text });
  const keys = segments.flatMap((s) => (s.kind === 'block' ? [s.key] : []));
  const twice = keys.find((k, i) => keys.indexOf(k) !== i);
  if (twice) throw new Error(`${FILTERS_DOC}: block ${twice} appears twice`);
  return segments;
}

export interface DocUpdate {
  text: string;
  /** Blocks added or removed, which may need hand-written text around them. */
  notes: string[];
}

/**
 * Rewrites every generated block of the page, keeping the text between blocks. A block the
 * registry no longer produces is removed; a missing one is added after the block before it in
 * page order (or at the end).
 */
export function updateFiltersDoc(page: string, registry: Registry): DocUpdate {
  const blocks = generatedBlocks(registry);
  const segments = parse(page);
  const notes: string[] = [];
  const kept: Segment[] = [];
  for (const s of segments) {
    if (s.kind === 'block' && !blocks.has(s.key)) {
      notes.push(`removed block ${s.key}: nothing generates it any more; check the text around where it was`);
      const next = segments[segments.indexOf(s) + 1];
      // Drop the blank line that separated the block from what follows.
      if (next?.kind === 'text' && next.lines[0] === '') next.lines.shift();
      continue;
    }
    kept.push(s);
  }
  const present = new Set(kept.flatMap((s) => (s.kind === 'block' ? [s.key] : [])));
  let previous: string | undefined;
  for (const key of blocks.keys()) {
    if (!present.has(key)) {
      const at = previous === undefined ? -1 : kept.findIndex((s) => s.kind === 'block' && s.key === previous);
      const added: Segment[] = [{ kind: 'text', lines: [''] }, { kind: 'block', key, lines: [] }];
      if (at >= 0) kept.splice(at + 1, 0, ...added);
      else kept.push(...added, { kind: 'text', lines: [''] });
      notes.push(`added block ${key}: add hand-written text around it if it needs some`);
    }
    previous = key;
  }
  const out: string[] = [];
  for (const s of kept) {
    if (s.kind === 'text') {
      out.push(...s.lines);
      continue;
    }
    const block = blocks.get(s.key)!;
    out.push(beginMarker(s.key, block.source), ...block.lines, endMarker(s.key));
  }
  return { text: out.join('\n'), notes };
}
