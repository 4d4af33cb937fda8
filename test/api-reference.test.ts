// The reference at /docs as a newcomer meets it: sitebiz's name and logo, plain summaries
// ("List contacts", "Show a contact"), a tag per resource, and an introduction to authentication,
// paging, filters and the extensions. The page is the same on every database, so one is enough
// (test/api-reference.browser.test.ts uses it in Chromium on each).
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

  it("serves a page of every operation with sitebiz's title and logo, nothing from elsewhere and nothing inline", async () => {
    const page = await t.get('/docs/');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<title>sitebiz: Site Business Service API reference<\/title>/);
    assert.doesNotMatch(page.body, /(src|href)="https?:/, 'every script, style and icon is served by sitebiz');
    assert.doesNotMatch(page.body, /<script>|<style|\sstyle=|\son[a-z]+=/, 'no inline script or style: the policy allows none');
    const policy = String(page.headers['content-security-policy']);
    assert.match(policy, /script-src 'self';/);
    assert.match(policy, /style-src 'self';/);
    // Every operation of the document, under its tag, once; the introduction above them.
    const articles = page.body.match(/<article class="operation"/g) ?? [];
    assert.equal(articles.length, operations().length);
    assert.match(page.body, /<article class="operation" id="op-get-v1-contacts" data-method="GET" data-path="\/v1\/contacts"/);
    assert.match(page.body, /<h2>Authentication<\/h2>/, 'the introduction, as HTML');
    for (const asset of ['reference.js', 'reference.css', 'sitebiz.svg']) {
      const answer = await t.get(`/docs/assets/${asset}`);
      assert.equal(answer.statusCode, 200, asset);
    }
    assert.match((await t.get('/docs/assets/sitebiz.svg')).body, /aria-label="sitebiz"/);
    assert.equal((await t.get('/docs/assets/..%2Fapi-reference.js')).statusCode, 404);
    assert.equal((await t.get('/docs/assets/constructor')).statusCode, 404);
    // An unknown asset answers as any unknown path: a JSON:API error document.
    const missing = await t.get('/docs/assets/nope.js');
    assert.equal(missing.statusCode, 404);
    assert.equal(JSON.parse(missing.body).errors[0].status, '404');
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
