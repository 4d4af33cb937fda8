// The API reference at /docs: one HTML page that sitebiz renders from the document it serves at
// /v1/openapi.json, with its own small script and stylesheet. It replaced Swagger UI (issue 22):
// every reference page made of a framework bundle (Swagger UI, Scalar, Redoc) spent longer than
// the 2 s target evaluating its bundle and digesting the document on this project's 2-core
// machines, before it showed the first operation (bench/reference-page.ts measures them all,
// docs/architecture.md has the figures). Here the browser shows the operations as the HTML
// arrives; the script only adds what needs a browser: the search box, a bearer token kept in
// localStorage, the schemas (drawn when opened) and "Try it" (a form built when opened).
//
// The page obeys a policy with no inline script or style at all, so there is no nonce to manage:
// everything it loads comes from /docs/assets. Requests from "Try it" go to the page's own
// origin (connect-src 'self'), which is the server that rendered it.
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Marked } from 'marked';
import { html, raw, type Html } from '../console/html.js';
import { REFERENCE_TITLE } from './api-reference.js';

/** The parts of an OpenAPI 3.1 document the page reads. */
interface OpenApiDocument {
  info: { title: string; version: string; description?: string };
  tags?: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, unknown>>;
}
/** Parameters, request bodies and responses may be references to components. */
type MaybeRef<T> = T | { $ref: string };
interface OperationObject {
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Array<Record<string, string[]>>;
  parameters?: ParameterObject[];
  requestBody?: { required?: boolean; content?: Record<string, unknown> };
  responses?: Record<string, { description?: string; content?: Record<string, unknown> }>;
}
interface ParameterObject {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: SchemaSummary;
}
interface SchemaSummary {
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  anyOf?: SchemaSummary[];
  items?: SchemaSummary;
  $ref?: string;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'trace'] as const;

/** The page's files, read once: /docs/assets/<name>. */
const ASSETS: Record<string, { type: string; body: Buffer }> = Object.fromEntries(
  [
    ['reference.css', 'text/css; charset=utf-8'],
    ['reference.js', 'text/javascript; charset=utf-8'],
    ['sitebiz.svg', 'image/svg+xml'],
  ].map(([name, type]) => [name, { type: type!, body: readFileSync(new URL(`./assets/${name}`, import.meta.url)) }]),
);

/**
 * The page's policy: the console's kind (docs/console.md), nothing inline, nothing from
 * elsewhere. No 'upgrade-insecure-requests': a server on plain http (the sandbox on localhost)
 * must be able to call itself from "Try it".
 */
export const REFERENCE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The OpenAPI descriptions are CommonMark (ours, from the resource declarations: trusted). */
const markdown = new Marked({ gfm: true, async: false });
const block = (text: string | undefined): Html => raw(text ? (markdown.parse(text) as string) : '');

/** Markdown whose headings start at level 2, under the page's h1 (the introduction uses ###). */
function underTitle(text: string | undefined): Html {
  if (!text) return raw('');
  const tokens = markdown.lexer(text);
  const headings = tokens.filter((token) => token.type === 'heading') as Array<{ depth: number }>;
  const shift = Math.min(...headings.map((h) => h.depth)) - 2;
  for (const heading of headings) heading.depth -= shift;
  return raw(markdown.parser(tokens));
}
const inline = (text: string | undefined): Html => raw(text ? (markdown.parseInline(text) as string) : '');

/** A fragment id from words: `get /v1/contacts/{id}` becomes `get-v1-contacts-id`. */
export function anchorOf(...words: string[]): string {
  return words
    .join('-')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/** JSON Pointer escaping (RFC 6901) of one reference token. */
const pointerToken = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1');

/** A short type label for a parameter's schema: `integer`, `string (date-time)`, `one of: a, b`. */
function typeLabel(schema: SchemaSummary | undefined): string {
  if (!schema) return '';
  if (schema.$ref) return schema.$ref.split('/').pop() ?? '';
  if (schema.enum) return `one of: ${schema.enum.map((v) => String(v)).join(', ')}`;
  if (schema.anyOf) return schema.anyOf.map(typeLabel).filter(Boolean).join(' or ');
  const type = Array.isArray(schema.type) ? schema.type.join(' or ') : (schema.type ?? '');
  if (type === 'array') return `array of ${typeLabel(schema.items) || 'values'}`;
  return schema.format ? `${type} (${schema.format})` : type;
}

interface Operation {
  method: (typeof METHODS)[number];
  path: string;
  op: OperationObject;
  anchor: string;
}

/** The object a local reference (`#/components/...`) points to; anything else as it is. */
function resolve<T>(doc: unknown, value: MaybeRef<T>): T {
  let current: unknown = value;
  // A reference to a reference is followed too; a loop of them ends after a few steps.
  for (let hops = 0; hops < 8 && current && typeof current === 'object' && '$ref' in current; hops++) {
    const ref = (current as { $ref: string }).$ref;
    if (!ref.startsWith('#/')) break;
    current = ref
      .slice(2)
      .split('/')
      .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((at, token) => (at && typeof at === 'object' ? (at as Record<string, unknown>)[token] : undefined), doc);
  }
  return current as T;
}

/** An operation with its path's parameters and every reference resolved, as the page shows it. */
function resolvedOperation(doc: OpenApiDocument, item: Record<string, unknown>, raw: OperationObject): OperationObject {
  const parameters = [...((item.parameters as Array<MaybeRef<ParameterObject>>) ?? []), ...((raw.parameters as Array<MaybeRef<ParameterObject>>) ?? [])].map((p) =>
    resolve<ParameterObject>(doc, p),
  );
  const responses = Object.fromEntries(Object.entries(raw.responses ?? {}).map(([status, response]) => [status, resolve(doc, response)]));
  return { ...raw, parameters, responses, ...(raw.requestBody ? { requestBody: resolve(doc, raw.requestBody) } : {}) };
}

function operationsByTag(doc: OpenApiDocument): Map<string, Operation[]> {
  const byTag = new Map<string, Operation[]>((doc.tags ?? []).map((tag) => [tag.name, []]));
  const anchors = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const raw = item[method] as OperationObject | undefined;
      if (!raw) continue;
      const op = resolvedOperation(doc, item, raw);
      const tag = op.tags?.[0] ?? 'Other';
      if (!byTag.has(tag)) byTag.set(tag, []);
      // Paths that differ only in punctuation (`/a/{id}`, `/a/id`) would share an id: number them.
      let anchor = anchorOf('op', method, path);
      for (let n = 2; anchors.has(anchor); n++) anchor = `${anchorOf('op', method, path)}-${n}`;
      anchors.add(anchor);
      byTag.get(tag)!.push({ method, path, op, anchor });
    }
  }
  for (const [tag, ops] of byTag) if (ops.length === 0) byTag.delete(tag);
  return byTag;
}

const needsToken = (op: OperationObject) => (op.security ?? []).some((requirement) => 'Bearer' in requirement);

function renderOperation({ method, path, op, anchor }: Operation): Html {
  const pointer = `#/paths/${pointerToken(path)}/${method}`;
  const parameters = op.parameters ?? [];
  const bodyTypes = Object.keys(op.requestBody?.content ?? {});
  const search = [method, path, op.summary ?? '', ...(op.tags ?? [])].join(' ').toLowerCase();
  return html`<article class="operation" id="${anchor}" data-method="${method.toUpperCase()}" data-path="${path}" data-pointer="${pointer}" data-search="${search}">
<h3><a class="self" href="#${anchor}"><span class="method method-${method}">${method.toUpperCase()}</span> <code class="path">${path}</code></a> <span class="summary">${op.summary ?? ''}</span></h3>
${op.description ? html`<div class="description">${block(op.description)}</div>` : ''}
${needsToken(op) ? html`<p class="auth-note">Needs <code>Authorization: Bearer &lt;access_token&gt;</code>.</p>` : ''}
${
  parameters.length > 0
    ? html`<table class="parameters"><caption>Parameters</caption><thead><tr><th scope="col">Name</th><th scope="col">In</th><th scope="col">Type</th><th scope="col">Description</th></tr></thead><tbody>${parameters.map(
        (p) =>
          html`<tr><td><code>${p.name}</code>${p.required ? html` <span class="required">required</span>` : ''}</td><td>${p.in}</td><td>${typeLabel(p.schema)}</td><td>${inline(p.description)}</td></tr>`,
      )}</tbody></table>`
    : ''
}
${
  bodyTypes.length > 0
    ? html`<div class="request-body"><h4>Request body${op.requestBody?.required ? '' : ' (optional)'}</h4>${bodyTypes.map(
        (type) =>
          html`<details class="schema" data-at="requestBody/content/${pointerToken(type)}/schema"><summary><code>${type}</code></summary></details>`,
      )}</div>`
    : ''
}
<div class="responses"><h4>Responses</h4><ul>${Object.entries(op.responses ?? {}).map(([status, response]) => {
    const types = Object.keys(response.content ?? {});
    return html`<li><span class="status status-${status.slice(0, 1)}">${status}</span> ${inline(response.description)}${types.map(
      (type) =>
        html`<details class="schema" data-at="responses/${status}/content/${pointerToken(type)}/schema"><summary><code>${type}</code></summary></details>`,
    )}</li>`;
  })}</ul></div>
<details class="try"><summary>Try it</summary></details>
</article>`;
}

/**
 * The whole page (nothing in it depends on the request). Its assets are under `${prefix}/assets`;
 * the script fetches the document from `documentUrl` when a schema or a form is opened.
 */
export function renderReferencePage(doc: OpenApiDocument, prefix: string, documentUrl = `${prefix}/json`): string {
  const byTag = operationsByTag(doc);
  const described = new Map((doc.tags ?? []).map((tag) => [tag.name, tag.description]));
  const count = [...byTag.values()].reduce((n, ops) => n + ops.length, 0);
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${REFERENCE_TITLE}</title>
<link rel="icon" href="${prefix}/assets/sitebiz.svg" type="image/svg+xml">
<link rel="stylesheet" href="${prefix}/assets/reference.css">
<script src="${prefix}/assets/reference.js" defer></script>
</head>
<body data-document="${documentUrl}">
<a class="skip" href="#content">Skip to the operations</a>
<header class="top">
<a class="brand" href="${prefix}"><img src="${prefix}/assets/sitebiz.svg" alt="sitebiz" width="168" height="40"></a>
<span class="api-name">${doc.info.title} <span class="version">${doc.info.version}</span></span>
<div class="search" role="search"><label class="visually-hidden" for="search">Search operations</label><input id="search" type="search" placeholder="Search operations: contacts, POST, /v1/offers" autocomplete="off"><span id="search-count" class="count" aria-live="polite">${count} operations</span></div>
<div class="auth"><label for="token">Bearer token</label><input id="token" type="password" autocomplete="off" spellcheck="false" placeholder="access_token for Try it"><button type="button" id="forget-token">Forget</button></div>
</header>
<div class="layout">
<nav aria-label="Operations"><ul>${[...byTag].map(
    ([tag, ops]) =>
      html`<li data-tag="${tag}"><a class="tag-link" href="#${anchorOf('tag', tag)}">${tag}</a><ul>${ops.map(
        (o) => html`<li data-for="${o.anchor}"><a href="#${o.anchor}"><span class="method method-${o.method}">${o.method.toUpperCase()}</span> ${o.op.summary ?? o.path}</a></li>`,
      )}</ul></li>`,
  )}</ul></nav>
<main id="content">
<section class="intro">
<h1>${doc.info.title}</h1>
<p class="muted">Version ${doc.info.version}. The OpenAPI document: <a href="/v1/openapi.json">/v1/openapi.json</a>.</p>
${underTitle(doc.info.description)}
<details class="get-token"><summary>Get a token from an API key</summary>
<form id="token-form" class="try-form"><label for="client-id">client_id</label><input id="client-id" name="client_id" autocomplete="off" spellcheck="false"><label for="client-secret">client_secret</label><input id="client-secret" name="client_secret" type="password" autocomplete="off"><button type="submit">Get a token</button><output id="token-result" aria-live="polite"></output></form>
</details>
</section>
${[...byTag].map(
    ([tag, ops]) =>
      html`<section class="tag" id="${anchorOf('tag', tag)}" data-tag="${tag}"><h2>${tag}</h2>${described.get(tag) ? block(described.get(tag)) : ''}${ops.map(renderOperation)}</section>`,
  )}
<p id="no-match" class="muted" hidden>No operation matches.</p>
</main>
</div>
</body>
</html>
`;
  return page.text;
}

/**
 * /docs (and /docs/): the page; /docs/json: the document it describes (the same as
 * /v1/openapi.json); /docs/assets/*: its script, stylesheet and logo.
 */
export function referencePageRoutes(prefix: string, document: () => unknown) {
  return async (app: FastifyInstance) => {
    // Rendered once, at the first request: the document is fixed for the life of the app.
    let page: string | undefined;
    const withPolicy = (reply: FastifyReply) =>
      reply.header('content-security-policy', REFERENCE_CSP).header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');
    const sendPage = async (_request: unknown, reply: FastifyReply) => {
      page ??= renderReferencePage(document() as OpenApiDocument, prefix);
      return withPolicy(reply).type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(page);
    };
    const hide = { schema: { hide: true } };
    // The app ignores trailing slashes: this is /docs/ too.
    app.get(prefix, hide, sendPage);
    app.get(`${prefix}/json`, hide, async (_request, reply) => reply.type('application/json').send(document()));
    app.get<{ Params: { name: string } }>(`${prefix}/assets/:name`, hide, async (request, reply) => {
      const asset = Object.hasOwn(ASSETS, request.params.name) ? ASSETS[request.params.name] : undefined;
      // Unknown names answer as any unknown path does (the app's not-found handler).
      if (!asset) return reply.callNotFound();
      return withPolicy(reply).type(asset.type).header('cache-control', 'no-cache').send(asset.body);
    });
  };
}
