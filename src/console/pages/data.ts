// Data (/console/data?site=): the contacts, customers, purchases and transactions of a site, with
// search, the main filters, sorting and cursor paging, and one record at /console/data/<type>/<id>.
//
// Every list is the API's own list: the form becomes the JSON:API query string a client would
// send (filter[...], sort, page[size], page[after]/page[before], fields[<type>] with only the
// columns shown) and goes through engine.list with the session's principal. So the console costs
// what GET /v1/<type> costs with that query, whatever the size of the site: cursor pages (one
// index seek each, never an offset), and the total the API gives anyway (kept counters, or a count
// cached until the site changes). A filter the engine refuses is a 400 shown on the page.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ResourceIdentifier, ResourceObject } from '../../jsonapi/document.js';
import type { JsonApiEngine, ListDocument } from '../../jsonapi/engine.js';
import { ApiError } from '../../jsonapi/errors.js';
import { nounsOf } from '../../jsonapi/nouns.js';
import type { ResourceDefinition } from '../../jsonapi/resource.js';
import { formatMoney } from '../../resources/money.js';
import { html, prettyJson, type Html, type HtmlValue } from '../html.js';
import { withSite } from '../layout.js';
import { timeHtml } from '../when.js';
import { CONSOLE_ROUTE, ConsoleProblem, queryOf, sessionOf, type ConsoleDeps, type ConsolePage, type ConsoleRenderer } from '../plugin.js';

const PATH = '/console/data';
const PAGE_SIZES = ['10', '25', '50', '100'] as const;
const DEFAULT_PAGE_SIZE = '25';
/** Choices listed in a select (a site's tags or offers); the API's largest page. */
const MAX_CHOICES = 100;

type Row = ResourceObject;

interface Column {
  label: string;
  /** Attributes the column needs (asked for with fields[<type>]). */
  fields: readonly string[];
  render: (row: Row, site: number) => HtmlValue;
  num?: boolean;
}

interface Choice {
  value: string;
  label: string;
}

/** A field of the filter form and the API filter it sets. */
interface FilterField {
  /** The form's name for it (and the console URL's). */
  name: string;
  label: string;
  /** The API parameter it becomes, e.g. filter[search]. */
  parameter: string;
  hint?: string;
  /**
   * A select's choices: static, or made from the listed resource's declaration or read through
   * the engine for the site. A text input without.
   */
  choices?: readonly Choice[] | ((lookup: ChoiceLookup, resource: ResourceDefinition) => Choice[] | Promise<Choice[]>);
  /** The type whose id the filter takes: a record of that type links to this list filtered by it. */
  references?: string;
}

interface BrowsedType {
  type: 'contacts' | 'customers' | 'purchases' | 'transactions';
  title: string;
  columns: readonly Column[];
  /** The first is the default (the resource's own default sort). */
  sorts: readonly Choice[];
  filters: readonly FilterField[];
}

/** Reads a select's choices for the site through the engine. */
type ChoiceLookup = (type: string, query: string) => Promise<Row[]>;

const attr = (row: Row, name: string): unknown => row.attributes[name];
const text = (value: unknown): string => (value === null || value === undefined ? '' : String(value));
const dash = html`<span class="muted">—</span>`;
const orDash = (value: unknown): HtmlValue => (value === null || value === undefined || value === '' ? dash : text(value));
const date = (value: unknown): HtmlValue => timeHtml(value);
const yesNo = (value: unknown): string => (value === true ? 'yes' : value === false ? 'no' : '');

/** A link to a record's detail view. */
const recordLink = (type: string, id: string, site: number, label: HtmlValue): Html => html`<a href="${withSite(`${PATH}/${type}/${id}`, site)}">${label}</a>`;

/** A to-one relationship's target as a link (or a dash). */
function related(row: Row, name: string, site: number): HtmlValue {
  const data = row.relationships?.[name]?.data as ResourceIdentifier | null | undefined;
  return data ? recordLink(data.type, data.id, site, `${nounsOf({ type: data.type }).singular} ${data.id}`) : dash;
}

const nameColumn: Column = { label: 'Name', fields: ['name'], render: (row, site) => recordLink(row.type, row.id, site, text(attr(row, 'name')) || `#${row.id}`) };
const emailColumn: Column = { label: 'Email', fields: ['email'], render: (row) => text(attr(row, 'email')) };
const createdColumn: Column = { label: 'Created', fields: ['created_at'], render: (row) => date(attr(row, 'created_at')) };

const yesNoChoices: readonly Choice[] = [
  { value: '', label: 'Any' },
  { value: 'true', label: 'Yes' },
  { value: 'false', label: 'No' },
];

/** The site's contact tags, by name (for the tag filters). */
const tagChoices = async (lookup: ChoiceLookup): Promise<Choice[]> => [
  { value: '', label: 'Any tag' },
  ...(await lookup('contact_tags', `sort=name&fields[contact_tags]=name&page[size]=${MAX_CHOICES}`)).map((t) => ({ value: t.id, label: text(attr(t, 'name')) })),
];

/** The site's offers, by title (for the purchases' offer filter). */
const offerChoices = async (lookup: ChoiceLookup): Promise<Choice[]> => [
  { value: '', label: 'Any offer' },
  ...(await lookup('offers', `sort=title&fields[offers]=title&page[size]=${MAX_CHOICES}`)).map((o) => ({ value: o.id, label: text(attr(o, 'title')) })),
];

/** The values the listed resource declares for an attribute (its enum), in declaration order. */
const enumChoices =
  (attribute: string) =>
  (_lookup: ChoiceLookup, resource: ResourceDefinition): Choice[] => [
    { value: '', label: 'Any' },
    ...(resource.attributes[attribute]?.enumValues ?? []).map((v) => ({ value: v, label: v.replace(/_/g, ' ') })),
  ];

/** The sorts every list offers first (the first is the lists' default). */
const byCreation: readonly Choice[] = [
  { value: '-created_at', label: 'Newest first' },
  { value: 'created_at', label: 'Oldest first' },
];

const customerFilter: FilterField = { name: 'customer', label: 'Customer id', parameter: 'filter[customer_id]', references: 'customers' };

/** What each list shows and offers; the filter names are the API's (docs/filters.md). */
export const BROWSED_TYPES: readonly BrowsedType[] = [
  {
    type: 'contacts',
    title: 'Contacts',
    columns: [nameColumn, emailColumn, { label: 'Subscribed', fields: ['subscribed'], render: (row) => yesNo(attr(row, 'subscribed')) }, createdColumn],
    sorts: [
      ...byCreation,
      { value: 'name', label: 'Name, A to Z' },
      { value: '-name', label: 'Name, Z to A' },
      { value: 'email', label: 'Email, A to Z' },
    ],
    filters: [
      { name: 'search', label: 'Search', parameter: 'filter[search]', hint: 'Every word in the name or email' },
      { name: 'email', label: 'Email contains', parameter: 'filter[email_contains]' },
      { name: 'tag', label: 'Tag', parameter: 'filter[has_tag_id]', choices: tagChoices, references: 'contact_tags' },
      { name: 'subscribed', label: 'Subscribed', parameter: 'filter[subscribed]', choices: yesNoChoices },
    ],
  },
  {
    type: 'customers',
    title: 'Customers',
    columns: [
      nameColumn,
      emailColumn,
      { label: 'Net revenue', fields: ['net_revenue'], render: (row) => text(attr(row, 'net_revenue')), num: true },
      { label: 'Last active', fields: ['last_request_at'], render: (row) => date(attr(row, 'last_request_at')) },
      createdColumn,
    ],
    sorts: [
      ...byCreation,
      { value: 'name', label: 'Name, A to Z' },
      { value: 'email', label: 'Email, A to Z' },
      { value: '-net_revenue', label: 'Highest net revenue' },
      { value: '-last_request_at', label: 'Recently active' },
    ],
    filters: [
      { name: 'search', label: 'Search', parameter: 'filter[search]', hint: 'Every word in the name or email' },
      { name: 'tag', label: 'Tag', parameter: 'filter[has_tag_id]', choices: tagChoices, references: 'contact_tags' },
      { name: 'revenue_over', label: 'Net revenue over', parameter: 'filter[net_revenue_greater_than]', hint: 'An amount such as 25 or 25.50' },
    ],
  },
  {
    type: 'purchases',
    title: 'Purchases',
    columns: [
      { label: 'Purchase', fields: ['created_at'], render: (row, site) => recordLink('purchases', row.id, site, html`${row.id}`) },
      createdColumn,
      { label: 'Amount', fields: ['amount_in_cents', 'currency'], render: (row) => formatMoney(Number(attr(row, 'amount_in_cents')), text(attr(row, 'currency'))), num: true },
      { label: 'Payment', fields: ['payment_type'], render: (row) => text(attr(row, 'payment_type')).replace('_', ' ') },
      { label: 'State', fields: ['deactivated_at'], render: (row) => (attr(row, 'deactivated_at') ? html`<span class="status-failed">deactivated</span>` : html`<span class="status-ok">active</span>`) },
      { label: 'Coupon', fields: ['coupon_code'], render: (row) => orDash(attr(row, 'coupon_code')) },
      { label: 'Offer', fields: [], render: (row, site) => related(row, 'offer', site) },
      { label: 'Customer', fields: [], render: (row, site) => related(row, 'customer', site) },
    ],
    sorts: [
      ...byCreation,
      { value: '-updated_at', label: 'Recently changed' },
    ],
    filters: [
      { name: 'offer', label: 'Offer', parameter: 'filter[offer_id]', choices: offerChoices, references: 'offers' },
      {
        name: 'active',
        label: 'State',
        parameter: 'filter[active]',
        choices: [
          { value: '', label: 'Any' },
          { value: 'true', label: 'Active' },
          { value: 'false', label: 'Deactivated' },
        ],
      },
      {
        name: 'payment_type',
        label: 'Payment',
        parameter: 'filter[payment_type_eq]',
        choices: enumChoices('payment_type'),
      },
      { name: 'coupon', label: 'Coupon contains', parameter: 'filter[coupon_code_cont]' },
      customerFilter,
    ],
  },
  {
    type: 'transactions',
    title: 'Transactions',
    columns: [
      { label: 'Transaction', fields: ['created_at'], render: (row, site) => recordLink('transactions', row.id, site, html`${row.id}`) },
      createdColumn,
      { label: 'Action', fields: ['action'], render: (row) => text(attr(row, 'action')).replace('_', ' ') },
      {
        label: 'State',
        fields: ['state'],
        render: (row) => {
          const state = text(attr(row, 'state'));
          return html`<span class="${state === 'succeeded' ? 'status-ok' : state === 'failed' ? 'status-failed' : 'status-pending'}">${state}</span>`;
        },
      },
      { label: 'Amount', fields: ['formatted_amount'], render: (row) => text(attr(row, 'formatted_amount')), num: true },
      { label: 'Customer', fields: [], render: (row, site) => related(row, 'customer', site) },
      { label: 'Offer', fields: [], render: (row, site) => related(row, 'offer', site) },
    ],
    sorts: [
      ...byCreation,
      { value: '-amount_in_cents', label: 'Largest amount' },
      { value: 'amount_in_cents', label: 'Smallest amount' },
    ],
    filters: [
      { name: 'search', label: 'Customer name or email', parameter: 'filter[name_or_email]' },
      {
        name: 'action',
        label: 'Action',
        parameter: 'filter[action_eq]',
        choices: enumChoices('action'),
      },
      {
        name: 'state',
        label: 'State',
        parameter: 'filter[state_eq]',
        choices: enumChoices('state'),
      },
      { name: 'min_cents', label: 'Amount at least (cents)', parameter: 'filter[amount_in_cents_gte]' },
      customerFilter,
    ],
  },
];

/** The attributes a list asks for: only the ones its columns show. */
export function listFields(browsed: BrowsedType): string {
  return [...new Set(browsed.columns.flatMap((c) => c.fields))].join(',');
}

/** What the console's list URL asks for, read from its query string. */
interface ListRequest {
  browsed: BrowsedType;
  filters: Map<string, string>;
  sort: string;
  size: string;
  /** Cursor paging: page[after] (empty: the first page) or page[before] (empty: the last page). */
  cursor: { direction: 'after' | 'before'; value: string };
}

function listRequestOf(query: URLSearchParams): ListRequest {
  const typeName = query.get('type') ?? 'contacts';
  const browsed = BROWSED_TYPES.find((b) => b.type === typeName);
  if (!browsed) throw new ConsoleProblem(404, `There is no data list of ${JSON.stringify(typeName)}; the lists are ${BROWSED_TYPES.map((b) => b.type).join(', ')}.`);
  const filters = new Map<string, string>();
  for (const field of browsed.filters) {
    const value = (query.get(field.name) ?? '').trim();
    if (value !== '') filters.set(field.name, value);
  }
  const size = query.get('size') ?? DEFAULT_PAGE_SIZE;
  const before = query.get('before');
  return {
    browsed,
    filters,
    sort: query.get('sort') || browsed.sorts[0]!.value,
    size,
    cursor: before !== null ? { direction: 'before', value: before } : { direction: 'after', value: query.get('after') ?? '' },
  };
}

/** The JSON:API query string of a console list: what a client of GET /v1/<type> would send. */
export function apiQueryOf(list: ListRequest, siteId: number): string {
  const params = new URLSearchParams();
  params.set('filter[site_id]', String(siteId));
  for (const field of list.browsed.filters) {
    const value = list.filters.get(field.name);
    if (value !== undefined) params.set(field.parameter, value);
  }
  params.set('sort', list.sort);
  params.set(`fields[${list.browsed.type}]`, listFields(list.browsed));
  params.set('page[size]', list.size);
  params.set(`page[${list.cursor.direction}]`, list.cursor.value);
  return params.toString();
}

/** The console URL of a list (the form's fields, the site, and a cursor when given). */
function listUrl(list: ListRequest, siteId: number, cursor?: { direction: 'after' | 'before'; value: string }): string {
  const params = new URLSearchParams({ type: list.browsed.type });
  for (const [name, value] of list.filters) params.set(name, value);
  if (list.sort !== list.browsed.sorts[0]!.value) params.set('sort', list.sort);
  if (list.size !== DEFAULT_PAGE_SIZE) params.set('size', list.size);
  if (cursor) params.set(cursor.direction, cursor.value);
  params.set('site', String(siteId));
  return `${PATH}?${params}`;
}

/** The cursor a links.prev / links.next of a cursor page carries. */
function cursorOf(link: string | null | undefined, direction: 'after' | 'before'): string | null {
  if (!link) return null;
  return new URL(link).searchParams.get(`page[${direction}]`);
}

/** An engine 400 as lines naming the form's fields rather than API parameters. */
function problemLines(error: ApiError, browsed: BrowsedType): string[] {
  const labels = new Map<string, string>([
    ['sort', 'Sort'],
    ['page[size]', 'Per page'],
    ['page[after]', 'Page'],
    ['page[before]', 'Page'],
    ...browsed.filters.map((f): [string, string] => [f.parameter, f.label]),
  ]);
  return error.errors.map((e) => {
    const label = e.source?.parameter ? labels.get(e.source.parameter) : undefined;
    return label ? `${label}: ${e.detail}` : e.detail;
  });
}

/**
 * The site a data page shows: ?site= when the session reaches it. A site it does not reach is a
 * 404, as the API answers for records of another site (never another site's data instead).
 */
async function siteOfPage(request: FastifyRequest, renderer: ConsoleRenderer): Promise<number | null> {
  const asked = queryOf(request).get('site');
  if (asked !== null && asked !== '') {
    const reachable = sessionOf(request).principal.siteIds;
    if (!/^\d{1,15}$/.test(asked) || !reachable.includes(Number(asked))) throw new ConsoleProblem(404, `No site ${asked} among the sites you can reach.`);
    return Number(asked);
  }
  return renderer.siteOf(request);
}

/** Whether the detail view serves a type: the API's own records with a show route. */
function detailResource(engine: JsonApiEngine, type: string): ResourceDefinition | undefined {
  const resource = engine.registry.find(type);
  return resource && resource.routes.show && !resource.pathPrefix ? resource : undefined;
}

export function dataPage(renderer: ConsoleRenderer): ConsolePage {
  return {
    path: PATH,
    title: 'Data',
    register(app: FastifyInstance, deps: ConsoleDeps) {
      const { engine } = deps;

      app.get('/data', CONSOLE_ROUTE, async (request, reply) => {
        const session = sessionOf(request);
        const siteId = await siteOfPage(request, renderer);
        const list = listRequestOf(queryOf(request));
        if (siteId === null) {
          return renderer.page(request, reply, { title: 'Data', active: PATH, body: html`<p>You reach no site of this account, so there is no data to show. An owner or admin can give you access to a site.</p>` });
        }
        const lookup: ChoiceLookup = async (type, query) => (await engine.list(engine.registry.get(type), `filter[site_id]=${siteId}&${query}`, session.principal)).data;
        const resource = engine.registry.get(list.browsed.type);
        const form = await filterForm(list, siteId, lookup, resource);
        let doc: ListDocument;
        try {
          doc = await engine.list(resource, apiQueryOf(list, siteId), session.principal);
        } catch (error) {
          if (!(error instanceof ApiError) || error.status !== 400) throw error;
          return listPage(request, reply, list, html`${typeTabs(list.browsed, siteId)}${form}`, problemLines(error, list.browsed), 400);
        }
        return listPage(request, reply, list, html`${typeTabs(list.browsed, siteId)}${form}${resultTable(list, siteId, doc)}`);
      });

      app.get<{ Params: { type: string; id: string } }>('/data/:type/:id', CONSOLE_ROUTE, async (request, reply) => {
        const session = sessionOf(request);
        const siteId = await siteOfPage(request, renderer);
        const resource = detailResource(engine, request.params.type);
        if (!resource) throw new ConsoleProblem(404, `There are no records of type ${JSON.stringify(request.params.type)} to show.`);
        // As GET /v1/<type>/<id>: a record of a site the user does not reach is a 404 like a missing one.
        const doc = await engine.show(resource, request.params.id, '', session.principal);
        const body = recordView(doc.data, siteId ?? 0, (type) => nounsOf(engine.registry.get(type)).singular);
        const noun = nounsOf(resource).singular;
        return renderer.page(request, reply, { title: `${noun.charAt(0).toUpperCase()}${noun.slice(1)} ${doc.data.id}`, active: PATH, body });
      });

      function listPage(request: FastifyRequest, reply: FastifyReply, list: ListRequest, body: Html, problems?: string[], status?: number) {
        return renderer.page(request, reply, { title: `Data: ${list.browsed.title.toLowerCase()}`, active: PATH, body, ...(problems ? { problems } : {}), ...(status ? { status } : {}) });
      }
    },
  };
}

function typeTabs(current: BrowsedType, siteId: number): Html {
  return html`<nav aria-label="Record types" class="data-types"><ul>${BROWSED_TYPES.map(
    (b) => html`<li><a href="${withSite(`${PATH}?type=${b.type}`, siteId)}"${b === current ? html` aria-current="page"` : ''}>${b.title}</a></li>`,
  )}</ul></nav>`;
}

async function filterForm(list: ListRequest, siteId: number, lookup: ChoiceLookup, resource: ResourceDefinition): Promise<Html> {
  const { browsed } = list;
  const id = (name: string) => `data-${name.replace(/_/g, '-')}`;
  const fields = await Promise.all(
    browsed.filters.map(async (field) => {
      const value = list.filters.get(field.name) ?? '';
      const hintId = `${id(field.name)}-hint`;
      const hint = field.hint ? html`<span id="${hintId}" class="hint">${field.hint}</span>` : '';
      const describedBy = field.hint ? html` aria-describedby="${hintId}"` : '';
      if (!field.choices) {
        return html`<div class="field"><label for="${id(field.name)}">${field.label}</label> <input id="${id(field.name)}" name="${field.name}" value="${value}"${describedBy}>${hint}</div>`;
      }
      const choices = typeof field.choices === 'function' ? await field.choices(lookup, resource) : field.choices;
      // A value from the URL that is not among the choices (a tag beyond the first 100) stays chosen.
      const known = choices.some((c) => c.value === value);
      return html`<div class="field"><label for="${id(field.name)}">${field.label}</label> <select id="${id(field.name)}" name="${field.name}"${describedBy}>${choices.map(
        (c) => html`<option value="${c.value}"${c.value === value ? html` selected` : ''}>${c.label}</option>`,
      )}${known ? '' : html`<option value="${value}" selected>${value}</option>`}</select>${hint}</div>`;
    }),
  );
  return html`<section aria-labelledby="data-filter-heading">
  <h2 id="data-filter-heading">Find ${browsed.title.toLowerCase()}</h2>
  <form method="get" action="${PATH}" class="row">
    <input type="hidden" name="site" value="${siteId}">
    <input type="hidden" name="type" value="${browsed.type}">
    ${fields}
    <div class="field"><label for="data-sort">Sort</label> <select id="data-sort" name="sort">${browsed.sorts.map(
      (s) => html`<option value="${s.value}"${s.value === list.sort ? html` selected` : ''}>${s.label}</option>`,
    )}${browsed.sorts.some((s) => s.value === list.sort) ? '' : html`<option value="${list.sort}" selected>${list.sort}</option>`}</select></div>
    <div class="field"><label for="data-size">Per page</label> <select id="data-size" name="size">${PAGE_SIZES.map(
      (s) => html`<option value="${s}"${s === list.size ? html` selected` : ''}>${s}</option>`,
    )}${(PAGE_SIZES as readonly string[]).includes(list.size) ? '' : html`<option value="${list.size}" selected>${list.size}</option>`}</select></div>
    <button type="submit">Show</button>
    <a href="${withSite(`${PATH}?type=${browsed.type}`, siteId)}">Clear</a>
  </form>
</section>`;
}

function resultTable(list: ListRequest, siteId: number, doc: ListDocument): Html {
  const { browsed } = list;
  const total = doc.meta.total_count;
  const prev = cursorOf(doc.links.prev, 'before');
  const next = cursorOf(doc.links.next, 'after');
  const plural = browsed.title.toLowerCase();
  const atStart = list.cursor.direction === 'after' && list.cursor.value === '';
  const atEnd = list.cursor.direction === 'before' && list.cursor.value === '';
  // Cursor links only (a page number would cost an offset scan on a large site).
  const pager = [
    atStart ? null : html`<a href="${listUrl(list, siteId)}">First</a>`,
    prev === null ? null : html`<a href="${listUrl(list, siteId, { direction: 'before', value: prev })}" rel="prev">Previous ${list.size}</a>`,
    next === null ? null : html`<a href="${listUrl(list, siteId, { direction: 'after', value: next })}" rel="next">Next ${list.size}</a>`,
    atEnd || next === null ? null : html`<a href="${listUrl(list, siteId, { direction: 'before', value: '' })}">Last</a>`,
  ].filter((link): link is Html => link !== null);
  return html`<section aria-labelledby="data-list-heading">
  <h2 id="data-list-heading">${browsed.title}</h2>
  <p class="muted" role="status">${total.toLocaleString('en-US')} ${total === 1 ? nounsOf({ type: browsed.type }).singular : plural} ${list.filters.size > 0 ? 'match' : 'in this site'}.</p>
  ${
    doc.data.length === 0
      ? html`<p>No ${plural} ${list.filters.size > 0 ? 'match these filters' : 'on this page'}.</p>`
      : html`<div class="table-scroll"><table>
    <caption>${browsed.title}, ${sortLabel(browsed, list.sort)}</caption>
    <thead><tr>${browsed.columns.map((c) => html`<th scope="col"${c.num ? html` class="num"` : ''}>${c.label}</th>`)}</tr></thead>
    <tbody>${doc.data.map(
      (row) => html`<tr>${browsed.columns.map((c, i) =>
        i === 0 ? html`<th scope="row">${c.render(row, siteId)}</th>` : html`<td${c.num ? html` class="num"` : ''}>${c.render(row, siteId)}</td>`,
      )}</tr>`,
    )}</tbody>
  </table></div>`
  }
  ${pager.length > 0 ? html`<nav class="pager" aria-label="Pages of ${plural}">${pager}</nav>` : ''}
</section>`;
}

function sortLabel(browsed: BrowsedType, sort: string): string {
  return (browsed.sorts.find((s) => s.value === sort)?.label ?? `sort ${sort}`).toLowerCase();
}

/** One record: its attributes as a definition list, its relationships as links, and the lists that name it. */
function recordView(record: ResourceObject, siteId: number, singular: (type: string) => string): Html {
  const attributes = Object.entries(record.attributes);
  const relationships = Object.entries(record.relationships ?? {});
  // The data lists whose filters take this record's id: a customer's purchases, an offer's purchases.
  const lists = BROWSED_TYPES.flatMap((b) =>
    b.filters
      .filter((f) => f.references === record.type)
      .map((f) => html`<li><a href="${withSite(`${PATH}?type=${b.type}&${f.name}=${encodeURIComponent(record.id)}`, siteId)}">${b.title} with ${f.label.toLowerCase().replace(/ id$/, '')} ${record.id}</a></li>`),
  );
  return html`<p><a href="${withSite(`${PATH}?type=${BROWSED_TYPES.some((b) => b.type === record.type) ? record.type : 'contacts'}`, siteId)}">Back to the list</a> · API: <code>GET /v1/${record.type}/${record.id}</code></p>
<section aria-labelledby="record-attributes-heading">
  <h2 id="record-attributes-heading">Attributes</h2>
  <dl class="facts">${attributes.map(([name, value]) => html`<dt>${name}</dt><dd>${attributeValue(value)}</dd>`)}</dl>
</section>
${
  relationships.length > 0
    ? html`<section aria-labelledby="record-relationships-heading">
  <h2 id="record-relationships-heading">Relationships</h2>
  <dl class="facts">${relationships.map(([name, member]) => html`<dt>${name}</dt><dd>${relationshipValue(member, siteId, singular)}</dd>`)}</dl>
</section>`
    : ''
}
${lists.length > 0 ? html`<section aria-labelledby="record-lists-heading"><h2 id="record-lists-heading">Related lists</h2><ul>${lists}</ul></section>` : ''}`;
}

function attributeValue(value: unknown): HtmlValue {
  if (value === null || value === undefined || value === '') return dash;
  if (typeof value === 'boolean') return yesNo(value);
  if (typeof value === 'object') return html`<pre>${prettyJson(value)}</pre>`;
  return String(value);
}

/** How many related records the detail view lists by name before it says how many more there are. */
const SHOWN_RELATED = 25;

function relationshipValue(member: NonNullable<ResourceObject['relationships']>[string], siteId: number, singular: (type: string) => string): HtmlValue {
  const data = member.data;
  if (data === undefined) {
    const related = member.links?.related;
    return related ? html`<span class="muted">listed by the API at <code>${new URL(related).pathname}</code></span>` : dash;
  }
  if (data === null) return dash;
  const identifiers = Array.isArray(data) ? data : [data];
  if (identifiers.length === 0) return html`<span class="muted">none</span>`;
  const shown = identifiers.slice(0, SHOWN_RELATED);
  const more = identifiers.length - shown.length;
  return html`${shown.map((r, i) => html`${i > 0 ? ', ' : ''}${recordLink(r.type, r.id, siteId, `${singular(r.type)} ${r.id}`)}`)}${more > 0 ? html` <span class="muted">and ${more} more</span>` : ''}`;
}
