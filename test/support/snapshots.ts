// Shared by the reset and snapshot suites (test/sandbox): a demo account to save and restore, the
// sample of API answers that must come back byte for byte, and a round of writes through the API
// that changes every one of them.
import assert from 'node:assert/strict';
import { seedDemoData } from '../../src/demo/seed.js';
import type { TestApp } from './harness.js';
import { send } from './writes.js';

/** Fills the test tenant's site with the demo data set; the seed snapshot is saved with it. */
export async function seedDemo(t: TestApp): Promise<void> {
  await seedDemoData(t.handle, { accountId: t.tenant.accountId, siteId: t.tenant.siteId }, t.clock);
}

/** GET lists (with includes and total counts) and shows of the records a round of writes changes. */
export async function sampleRoutes(t: TestApp, token: string): Promise<string[]> {
  const first = async (url: string) => {
    const res = await t.get(url, token);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json().data as Array<{ id: string }>)[0]!.id;
  };
  const contact = await first('/v1/contacts?sort=id&page[size]=1');
  const customer = await first('/v1/customers?sort=id&page[size]=1');
  const purchase = await first('/v1/purchases?sort=id&page[size]=1');
  return [
    '/v1/contacts?include=tags,offers,customer&page[size]=100',
    '/v1/contacts?sort=-created_at&page[size]=10&page[number]=2',
    '/v1/contacts?filter[search]=an&page[size]=100',
    `/v1/contacts/${contact}?include=tags,offers,customer`,
    '/v1/customers?include=contact,offers,products&page[size]=100',
    `/v1/customers/${customer}?include=contact,offers`,
    '/v1/purchases?include=offer,customer,transactions,products&page[size]=100',
    `/v1/purchases/${purchase}?include=transactions`,
    '/v1/transactions?include=purchases,offer,customer&page[size]=100',
    '/v1/offers?include=products&page[size]=100',
    '/v1/products?page[size]=100',
    '/v1/forms?include=fields,contact_tags,offer&page[size]=100',
    '/v1/form_submissions?include=form&page[size]=100',
    '/v1/contact_tags?page[size]=100',
  ];
}

/** Every sample route's answer, status and body text. */
export async function answers(t: TestApp, token: string, routes: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const url of routes) {
    const res = await t.get(url, token);
    out.push(`${res.statusCode} ${url}\n${res.body}`);
  }
  return out;
}

/** What a round of writes made, to check it is gone after a restore. */
export interface Writes {
  createdContacts: string[];
  deletedContact: string;
}

/**
 * Writes through the API: creates contacts, tags one, submits a form, deletes a contact and
 * grants an offer.
 */
export async function writeThings(t: TestApp, token: string, label: string): Promise<Writes> {
  const site = { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } };
  const ok = async (res: Awaited<ReturnType<typeof send>>, status: number) => {
    assert.equal(res.statusCode, status, res.body);
    return res.statusCode === 204 ? undefined : res.json();
  };
  const createdContacts: string[] = [];
  for (const n of [1, 2]) {
    const doc = await ok(await send(t, 'POST', '/v1/contacts', token, { data: { type: 'contacts', attributes: { email: `${label}-${n}@example.com` }, relationships: site } }), 201);
    createdContacts.push(doc.data.id);
  }
  const tag = ((await t.get('/v1/contact_tags?sort=id&page[size]=1', token)).json().data as Array<{ id: string }>)[0]!.id;
  await ok(await send(t, 'POST', `/v1/contacts/${createdContacts[0]}/relationships/tags`, token, { data: [{ type: 'contact_tags', id: tag }] }), 200);
  const forms = (await t.get('/v1/forms?sort=id&page[size]=1', token)).json().data as Array<{ id: string }>;
  await ok(await send(t, 'POST', `/v1/forms/${forms[0]!.id}/submit`, token, { data: { type: 'form_submissions', attributes: { name: 'Sam Submit', email: `${label}-form@example.com` } } }), 201);
  const contacts = (await t.get('/v1/contacts?sort=id&page[size]=3', token)).json().data as Array<{ id: string }>;
  const deletedContact = contacts[0]!.id;
  await ok(await send(t, 'DELETE', `/v1/contacts/${deletedContact}`, token), 200);
  const offers = (await t.get('/v1/offers?sort=id&page[size]=1', token)).json().data as Array<{ id: string }>;
  await ok(await send(t, 'POST', `/v1/contacts/${contacts[1]!.id}/relationships/offers`, token, { data: [{ type: 'offers', id: offers[0]!.id }] }), 200);
  return { createdContacts, deletedContact };
}

/** Row counts and data version of one site, from its counters. */
export async function countersOf(t: TestApp, siteId: number): Promise<Record<string, number>> {
  const rows = await t.handle.db.selectFrom('site_counters').select(['counter', 'value']).where('site_id', '=', siteId).execute();
  return Object.fromEntries(rows.map((r) => [r.counter, Number(r.value)]));
}
