// The API reference's one script (src/docs/reference-page.ts renders the page; the policy allows
// no inline script). The page reads without it; it adds the search box, the bearer token (kept in
// localStorage, as Swagger UI's persistAuthorization did), the schemas and "Try it". The schemas
// and the forms are drawn only when opened, from the OpenAPI document fetched once at the first
// need, so the page shows its operations before any of this work is done.
// Everything is built with DOM calls and textContent: nothing from the document or from an answer
// is ever parsed as HTML.

const TOKEN_KEY = 'sitebiz.docs.bearer-token';
const documentUrl = document.body.dataset.document;

/** An element with attributes and children (strings become text nodes). */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

let loading;
/** The OpenAPI document, fetched at the first schema or form opened. */
function openApiDocument() {
  loading ??= fetch(documentUrl, { headers: { accept: 'application/json' } }).then((answer) => {
    if (!answer.ok) throw new Error(`${documentUrl} answered ${answer.status}`);
    return answer.json();
  });
  return loading;
}

/** A local reference's target ({"$ref": "#/components/..."}), followed until it is none. */
function resolved(doc, value) {
  for (let hops = 0; hops < 8 && value && typeof value.$ref === 'string' && value.$ref.startsWith('#/'); hops++) value = at(doc, value.$ref);
  return value;
}

/**
 * The value at a JSON Pointer ("#/paths/~1v1~1contacts/get"). References met on the way are
 * followed: "responses/400/content/..." reads through a response declared in components.
 */
function at(doc, pointer) {
  return pointer
    .replace(/^#\//, '')
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((value, token) => {
      const object = resolved(doc, value);
      return object == null ? undefined : object[token];
    }, doc);
}

// ---------------------------------------------------------------------------------------------
// Search: every word typed must appear in the operation's method, path, summary or tag.

const search = document.getElementById('search');
const searchCount = document.getElementById('search-count');
const operations = [...document.querySelectorAll('article.operation')];

function applySearch() {
  const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  for (const article of operations) {
    const match = words.every((word) => article.dataset.search.includes(word));
    article.hidden = !match;
    const link = document.querySelector(`nav li[data-for="${article.id}"]`);
    if (link) link.hidden = !match;
    if (match) shown++;
  }
  for (const section of document.querySelectorAll('section.tag')) {
    const any = section.querySelector('article.operation:not([hidden])') !== null;
    section.hidden = !any;
    const entry = document.querySelector(`nav li[data-tag="${CSS.escape(section.dataset.tag)}"]`);
    if (entry) entry.hidden = !any;
  }
  document.getElementById('no-match').hidden = shown > 0;
  searchCount.textContent = words.length === 0 ? `${operations.length} operations` : `${shown} of ${operations.length} operations`;
}
search.addEventListener('input', applySearch);
// "/" anywhere but in a field jumps to the search box.
document.addEventListener('keydown', (event) => {
  if (event.key !== '/' || event.target instanceof HTMLInputElement || event.target instanceof HTMLTextAreaElement) return;
  event.preventDefault();
  search.focus();
});

// ---------------------------------------------------------------------------------------------
// The bearer token, kept across visits until "Forget".

const tokenInput = document.getElementById('token');
tokenInput.value = localStorage.getItem(TOKEN_KEY) ?? '';
tokenInput.addEventListener('input', () => {
  const token = tokenInput.value.trim();
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
});
document.getElementById('forget-token').addEventListener('click', () => {
  tokenInput.value = '';
  localStorage.removeItem(TOKEN_KEY);
});

// client_id and client_secret exchanged for an access token, which fills the token field.
document.getElementById('token-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const result = document.getElementById('token-result');
  const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: form.client_id.value.trim(), client_secret: form.client_secret.value.trim() });
  result.textContent = 'Asking…';
  try {
    const answer = await fetch('/v1/oauth/token', { method: 'POST', body });
    const json = await answer.json().catch(() => ({}));
    if (!answer.ok || typeof json.access_token !== 'string') {
      result.textContent = `${answer.status}: ${json.error_description ?? json.error ?? 'no token'}`;
      return;
    }
    tokenInput.value = json.access_token;
    localStorage.setItem(TOKEN_KEY, json.access_token);
    result.textContent = `A token valid ${Math.round(json.expires_in / 60)} minutes is in the Bearer token field.`;
  } catch (error) {
    result.textContent = String(error);
  }
});

// ---------------------------------------------------------------------------------------------
// Schemas, drawn when their <details> first opens.

function typeOf(schema) {
  if (!schema || typeof schema !== 'object') return '';
  if (schema.$ref) return schema.$ref.split('/').pop();
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return `one of: ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  for (const key of ['anyOf', 'oneOf']) if (schema[key]) return schema[key].map(typeOf).filter(Boolean).join(' or ');
  const type = Array.isArray(schema.type) ? schema.type.join(' or ') : (schema.type ?? (schema.properties ? 'object' : ''));
  if (type === 'array') return `array of ${typeOf(schema.items) || 'values'}`;
  return schema.format ? `${type} (${schema.format})` : type;
}

/** The object schemas a schema's properties live in (itself, its $ref, its anyOf/oneOf/allOf members). */
function objectParts(doc, schema, seen) {
  if (!schema || typeof schema !== 'object') return [];
  if (schema.$ref) {
    if (seen.has(schema.$ref)) return [];
    return objectParts(doc, at(doc, schema.$ref), new Set([...seen, schema.$ref]));
  }
  const parts = schema.properties ? [schema] : [];
  for (const key of ['allOf', 'anyOf', 'oneOf']) for (const member of schema[key] ?? []) parts.push(...objectParts(doc, member, seen));
  if (schema.items) parts.push(...objectParts(doc, schema.items, seen));
  return parts;
}

/** A list of a schema's properties; nested objects in <details> drawn when opened. */
function schemaList(doc, schema, seen = new Set()) {
  const parts = objectParts(doc, schema, seen);
  if (parts.length === 0) return el('p', { class: 'schema-type' }, typeOf(schema) || 'any value');
  const list = el('ul', { class: 'properties' });
  for (const part of parts) {
    const required = new Set(part.required ?? []);
    for (const [name, property] of Object.entries(part.properties)) {
      const description = property.description ?? (property.$ref ? at(doc, property.$ref)?.description : undefined);
      const item = el(
        'li',
        {},
        el('code', {}, name),
        ' ',
        el('span', { class: 'schema-type' }, typeOf(property)),
        required.has(name) ? el('span', { class: 'required' }, ' required') : '',
        description ? el('span', { class: 'property-description' }, ` ${description}`) : '',
      );
      if (objectParts(doc, property, seen).length > 0) {
        const nested = el('details', {}, el('summary', {}, `${name}'s members`));
        nested.addEventListener('toggle', () => {
          if (nested.open && nested.childElementCount === 1) nested.append(schemaList(doc, property, seen));
        }, { once: false });
        item.append(nested);
      }
      list.append(item);
    }
  }
  return list;
}

document.addEventListener(
  'toggle',
  async (event) => {
    const details = event.target;
    if (!(details instanceof HTMLDetailsElement) || !details.open || details.dataset.drawn) return;
    if (details.classList.contains('schema')) {
      details.dataset.drawn = 'yes';
      try {
        const doc = await openApiDocument();
        details.append(schemaList(doc, at(doc, `${details.closest('article.operation').dataset.pointer}/${details.dataset.at}`)));
      } catch (error) {
        details.append(el('p', { class: 'error' }, String(error)));
      }
    } else if (details.classList.contains('try')) {
      details.dataset.drawn = 'yes';
      try {
        const doc = await openApiDocument();
        details.append(tryItForm(doc, details.closest('article.operation')));
      } catch (error) {
        details.append(el('p', { class: 'error' }, String(error)));
      }
    }
  },
  // toggle does not bubble: listen in the capture phase.
  true,
);

// ---------------------------------------------------------------------------------------------
// Try it: a form of the operation's parameters and body, sent from this page with the token.

/** A starting body: the required members of the schema, with empty values of their types. */
function skeleton(doc, schema, depth = 0) {
  if (!schema || depth > 6) return null;
  if (schema.$ref) return skeleton(doc, at(doc, schema.$ref), depth + 1);
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  const members = schema.anyOf ?? schema.oneOf;
  if (members) return skeleton(doc, members.find((m) => m.type !== 'null') ?? members[0], depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type === 'object' || schema.properties) {
    const value = {};
    for (const name of schema.required ?? []) value[name] = skeleton(doc, schema.properties?.[name], depth + 1);
    return value;
  }
  if (type === 'array') return [];
  if (type === 'integer' || type === 'number') return 0;
  if (type === 'boolean') return false;
  return '';
}

let formCount = 0;
function tryItForm(doc, article) {
  const op = at(doc, article.dataset.pointer);
  const pathItem = at(doc, article.dataset.pointer.replace(/\/[a-z]+$/, ''));
  const parameters = [...(pathItem.parameters ?? []), ...(op.parameters ?? [])].map((p) => resolved(doc, p));
  const requestBody = resolved(doc, op.requestBody);
  const id = `try-${++formCount}`;
  const form = el('form', { class: 'try-form', 'aria-label': `Try ${article.dataset.method} ${article.dataset.path}` });
  for (const [index, parameter] of parameters.entries()) {
    if (parameter.in !== 'path' && parameter.in !== 'query') continue;
    const inputId = `${id}-p${index}`;
    form.append(
      el('label', { for: inputId }, `${parameter.name}${parameter.required ? ' (required)' : ''}`, el('span', { class: 'muted' }, ` ${parameter.in}`)),
      el('input', { id: inputId, 'data-in': parameter.in, 'data-name': parameter.name, required: parameter.in === 'path' || parameter.required === true, autocomplete: 'off', spellcheck: 'false' }),
    );
  }
  const bodyType = Object.keys(requestBody?.content ?? {})[0];
  if (bodyType) {
    const schema = requestBody.content[bodyType].schema;
    const start = bodyType === 'application/x-www-form-urlencoded'
      ? new URLSearchParams(Object.fromEntries(Object.keys(skeleton(doc, schema) ?? {}).map((k) => [k, '']))).toString()
      : JSON.stringify(skeleton(doc, schema), null, 2);
    form.append(el('label', { for: `${id}-body` }, `Body (${bodyType})`), el('textarea', { id: `${id}-body`, 'data-type': bodyType, rows: 8, spellcheck: 'false' }, start));
  }
  const sends = (op.security ?? []).some((requirement) => 'Bearer' in requirement);
  form.append(
    el('p', { class: 'muted' }, sends ? 'Sent with the bearer token above.' : 'Sent without a bearer token.'),
    el('button', { type: 'submit' }, 'Send'),
    el('output', { class: 'result', 'aria-live': 'polite' }),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const output = form.querySelector('output');
    let path = article.dataset.path;
    const query = new URLSearchParams();
    for (const input of form.querySelectorAll('input[data-in]')) {
      const value = input.value.trim();
      if (input.dataset.in === 'path') path = path.replace(`{${input.dataset.name}}`, encodeURIComponent(value));
      else if (value !== '') query.append(input.dataset.name, value);
    }
    const url = query.size > 0 ? `${path}?${query}` : path;
    const headers = { accept: 'application/vnd.api+json, application/json;q=0.9' };
    const token = tokenInput.value.trim();
    if (sends && token) headers.authorization = `Bearer ${token}`;
    const textarea = form.querySelector('textarea');
    const init = { method: article.dataset.method, headers };
    if (textarea && textarea.value.trim() !== '') {
      headers['content-type'] = textarea.dataset.type;
      init.body = textarea.value;
    }
    output.replaceChildren(el('p', {}, `${init.method} ${url}…`));
    try {
      const answer = await fetch(url, init);
      const text = await answer.text();
      let shown = text;
      try {
        shown = JSON.stringify(JSON.parse(text), null, 2);
      } catch {
        // not JSON: shown as it came
      }
      output.replaceChildren(
        el('p', { class: 'answer-status' }, el('span', { class: `status status-${String(answer.status)[0]}` }, String(answer.status)), ` ${answer.statusText} ${init.method} ${url}`),
        el('pre', { class: 'answer-body' }, shown || '(no body)'),
      );
    } catch (error) {
      output.replaceChildren(el('p', { class: 'error' }, String(error)));
    }
  });
  return form;
}
