// The reference at /docs as a newcomer meets it: sitebiz's name and logo rather than the
// framework's, plain summaries ("List contacts", "Show a contact"), a tag per resource, and an
// introduction to authentication, paging, filters and the extensions. The page is the same on
// every database, so one is enough.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { nounsOf, oneOf, tagOf } from '../src/jsonapi/nouns.js';
import { RESOURCES } from '../src/resources/index.js';
import { createTestApp, type TestApp } from './support/harness.js';
import { withSharedPartsInline } from './support/openapi-document.js';

interface Operation {
  summary?: string;
  tags?: string[];
}
interface Document {
  info: { description: string };
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, Record<string, Operation>>;
}

describe('the API reference at /docs', () => {
  let t: TestApp;
  let doc: Document;
  before(async () => {
    t = await createTestApp('sqlite');
    doc = withSharedPartsInline((await t.get('/v1/openapi.json')).json() as Document);
  });
  after(() => t.close());

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })));

  it('has plain summaries made from the resource nouns, none of the generic "record" ones', () => {
    const summaries = new Map(operations().map(({ key, op }) => [key, op.summary]));
    const expected: Record<string, string> = {
      'GET /v1/contacts': 'List contacts',
      'GET /v1/contacts/{id}': 'Show a contact',
      'POST /v1/contacts': 'Create a contact',
      'PATCH /v1/contacts/{id}': 'Update a contact',
      'DELETE /v1/contacts/{id}': 'Delete a contact',
      'GET /v1/contacts/{id}/tags': "List a contact's tags",
      'GET /v1/contacts/{id}/relationships/tags': "Show a contact's tags (identifiers)",
      'POST /v1/contacts/{id}/relationships/offers': 'Add offers to a contact',
      'DELETE /v1/contacts/{id}/relationships/offers': 'Remove offers from a contact',
      'GET /v1/offers/{id}': 'Show an offer',
      'GET /v1/contact_notes': 'List contact notes',
      'POST /v1/purchases/{id}/deactivate': 'Deactivate a purchase',
      'POST /v1/purchases/{id}/cancel_subscription': 'Cancel subscription of a purchase',
      'GET /v1/hooks/{id}': 'Show a webhook',
      'GET /v1/kajabi_payments_payouts': 'List Kajabi Payments payouts',
    };
    for (const [key, summary] of Object.entries(expected)) assert.equal(summaries.get(key), summary, key);
    for (const [key, summary] of summaries) {
      assert.ok(summary && summary.length > 0, `${key} has a summary`);
      assert.doesNotMatch(summary, /\brecord\b|_/, `${key}: "${summary}" reads as generated`);
    }
  });

  it('tags every operation, with one described tag per resource', () => {
    const declared = new Map(doc.tags.map((tag) => [tag.name, tag.description]));
    for (const { key, op } of operations()) {
      assert.equal(op.tags?.length, 1, `${key} has one tag`);
      assert.ok(declared.has(op.tags![0]!), `${key}'s tag ${op.tags![0]} is described`);
    }
    for (const r of RESOURCES.filter((r) => r.routes.list)) {
      assert.equal(declared.get(tagOf(r)), r.description, `the ${r.type} tag`);
      assert.ok(doc.paths[`/v1/${r.type}`]?.get?.tags?.includes(tagOf(r)));
    }
    assert.equal(tagOf(RESOURCES.find((r) => r.type === 'contact_notes')!), 'Contact Notes');
  });

  it('introduces authentication, paging, filters and the sitebiz extensions', () => {
    const intro = doc.info.description;
    for (const heading of ['### Authentication', '### Paging', '### Filters', '### sitebiz extensions']) assert.ok(intro.includes(heading), heading);
    for (const fact of ['POST /v1/oauth/token', 'Authorization: Bearer', 'page[size]', 'page[after]', 'filter[site_id]', 'IGNORE_UNKNOWN_FILTERS']) {
      assert.ok(intro.includes(fact), fact);
    }
    for (const file of intro.match(/docs\/[a-z-]+\.md/g) ?? []) assert.ok(readFileSync(new URL(`../${file}`, import.meta.url)), `${file} exists`);
  });

  it("serves a page with sitebiz's title and logo, and nothing from elsewhere", async () => {
    const page = await t.get('/docs/');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<title>sitebiz: Site Business Service API reference<\/title>/);
    assert.doesNotMatch(page.body, /(src|href)="https?:/, 'every script, style and icon is served by sitebiz');
    const icon = await t.get('/docs/static/theme/sitebiz.svg');
    assert.equal(icon.statusCode, 200);
    assert.match(icon.body, /aria-label="sitebiz"/);
    const initializer = (await t.get('/docs/static/swagger-initializer.js')).body;
    const logo = /img\.src = 'data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)'/.exec(initializer);
    assert.ok(logo, 'the top bar shows our logo, inline');
    assert.match(Buffer.from(logo[1]!, 'base64').toString('utf8'), /<text[^>]*>sitebiz<\/text>/);
    assert.match(initializer, /validatorUrl: null/, 'no badge from validator.swagger.io');
  });
});

describe('resource nouns', () => {
  it('come from the type, or from the declaration for irregular ones', () => {
    assert.deepEqual(nounsOf({ type: 'contact_notes' }), { singular: 'contact note', plural: 'contact notes', article: 'a' });
    assert.equal(oneOf({ type: 'order_items' }), 'an order item');
    assert.equal(oneOf({ type: 'categories' }), 'a category');
    assert.equal(oneOf({ type: 'media', nouns: { singular: 'media item', plural: 'media' } }), 'a media item');
  });
});
