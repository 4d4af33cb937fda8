// GET /v1/contacts, GET /v1/contacts/:id and the contact relationship endpoints: order, sparse
// fields, paging, sites and tenancy, permissions, every filter of the contact filter family (with
// exact ids), rendering, relationships, and conformance of every 200 to the upstream schemas.
// The people are described in test/support/contact-fixture.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUser } from '../src/domain/accounts.js';
import { contacts } from '../src/resources/contacts.js';
import {
  badFilterValue,
  buildContactFixture,
  filterCases,
  PEOPLE,
  type ContactFixture,
  type Person,
} from './support/contact-fixture.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from './support/harness.js';
import { assertResponseMatchesUpstream, UPSTREAM_SKIP_REASON, upstreamMismatches } from './support/upstream.js';

type Res = Awaited<ReturnType<TestApp['request']>>;

const ids = (res: Res): string[] => res.json().data.map((r: { id: string }) => r.id);
const numerically = (list: readonly string[]): string[] => [...list].sort((a, b) => Number(a) - Number(b));
const encodeValue = (value: string) => encodeURIComponent(value).replace(/%2C/g, ',');

/**
 * Upstream's schemas give relationships.customer.data the resource identifier schema (an object
 * with id and type) and no null: a contact without a customer renders `{ data: null }` as JSON:API
 * requires for an empty to-one, which upstream's schema cannot express. Every other problem fails.
 */
function assertContactsConform(path: string, res: Res): void {
  assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/);
  const body = res.json();
  const problems = upstreamMismatches('get', path, res.statusCode, body, { contentType: 'application/vnd.api+json' });
  const allowed = /^ {2}\/data(?:\/\d+)?\/relationships\/customer\/data must be object$/;
  const emptyCustomers = (Array.isArray(body.data) ? body.data : [body.data]).filter(
    (c: { relationships?: { customer?: { data: unknown } } }) => c.relationships?.customer?.data === null,
  ).length;
  const unexpected = problems.filter((p) => !allowed.test(p));
  assert.deepEqual(unexpected, [], `GET ${path} does not match upstream:\n${problems.join('\n')}`);
  if (UPSTREAM_SKIP_REASON) return; // no upstream document beside this clone: nothing was compared
  assert.equal(problems.length, emptyCustomers, `only null customer linkage may differ:\n${problems.join('\n')}`);
  if (emptyCustomers === 0) assertResponseMatchesUpstream('get', path, res);
}

for (const dialect of DIALECTS) {
  describe(`GET /v1/contacts [${dialect}]`, () => {
    let t: TestApp;
    let f: ContactFixture;
    let cases: ReturnType<typeof filterCases>;

    before(async () => {
      t = await createTestApp(dialect);
      f = await buildContactFixture(t);
      cases = filterCases(f);
    });
    after(() => t.close());

    const idOf = (p: Person) => String(f.contact[p]);
    const idsOf = (people: readonly Person[]) => people.map(idOf);

    /** GET that must answer 200 with a body conforming to upstream's list or show schema. */
    const ok = async (url: string, token = f.token): Promise<Res> => {
      const res = (await t.get(url, token)) as Res;
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      assertContactsConform(/^\/v1\/contacts\/[^/?]+(\?|$)/.test(url) ? '/v1/contacts/{id}' : '/v1/contacts', res);
      return res;
    };
    /** A list request of the tenant's site (the account has two, so filter[site_id] is needed). */
    const list = (query = '', token = f.token): Promise<Res> =>
      ok(`/v1/contacts?filter[site_id]=${f.siteId}${query === '' ? '' : `&${query}`}`, token);
    const show = (id: number | string, query = '', token = f.token): Promise<Res> =>
      ok(`/v1/contacts/${id}${query === '' ? '' : `?${query}`}`, token);
    const expectError = async (url: string, status: number, parameter?: string, token = f.token) => {
      const res = await t.get(url, token);
      assert.equal(res.statusCode, status, `${url}: ${res.body}`);
      const error = res.json().errors[0];
      assert.equal(error.status, String(status));
      if (parameter !== undefined) assert.equal(error.source?.parameter, parameter, `${url}: ${res.body}`);
      return error as { code: string; detail: string; source?: { parameter?: string } };
    };

    // --- Order, fields, paging --------------------------------------------------------------------

    it('lists the site’s contacts newest first by default, with every attribute and relationship', async () => {
      const res = await list();
      assert.deepEqual(ids(res), idsOf(['barbara', 'fran', 'edsger', 'katherine', 'grace', 'ada', 'margaret', 'alan', 'hal']));
      const body = res.json();
      assert.deepEqual(body.meta, { total_pages: 1, total_count: 9, current_page: 1 });
      const ada = body.data.find((c: { id: string }) => c.id === idOf('ada'));
      assert.deepEqual(ada, {
        id: idOf('ada'),
        type: 'contacts',
        attributes: {
          name: 'Ada Lovelace',
          email: 'countess@analytical.example',
          address_line_1: "12 St James's Square",
          address_line_2: 'Flat 3',
          address_city: 'London',
          address_state: 'Greater London',
          address_country: 'United Kingdom',
          address_zip: 'SW1Y 4JH',
          phone_number: '+44 20 7946 0000',
          business_number: '020 7946 0001',
          subscribed: true,
          external_user_id: 'ext-ada',
          custom_1: 'Analytical Engine',
          custom_2: null,
          custom_3: null,
          created_at: '2026-04-17T12:00:00.000Z',
          updated_at: '2026-04-17T12:00:00.000Z',
        },
        relationships: {
          site: { data: { type: 'sites', id: String(f.siteId) } },
          customer: { data: { type: 'customers', id: String(f.customer.ada) } },
          offers: { links: { self: `${PUBLIC_URL}/v1/contacts/${idOf('ada')}/relationships/offers`, related: `${PUBLIC_URL}/v1/contacts/${idOf('ada')}/offers` } },
          tags: {
            data: [
              { type: 'contact_tags', id: String(f.tag.beta) },
              { type: 'contact_tags', id: String(f.tag.vip) },
            ],
            links: { self: `${PUBLIC_URL}/v1/contacts/${idOf('ada')}/relationships/tags`, related: `${PUBLIC_URL}/v1/contacts/${idOf('ada')}/tags` },
          },
        },
        // links.customer as upstream's contacts show has it: the URL of the contact's customer.
        links: { self: `${PUBLIC_URL}/v1/contacts/${idOf('ada')}`, customer: `${PUBLIC_URL}/v1/customers/${f.customer.ada}` },
      });
    });

    it('sorts by name, email and created_at, each both ways', async () => {
      const byName: Person[] = ['ada', 'alan', 'barbara', 'edsger', 'fran', 'grace', 'hal', 'katherine', 'margaret'];
      const byEmail: Person[] = ['grace', 'ada', 'edsger', 'fran', 'hal', 'katherine', 'barbara', 'margaret', 'alan'];
      const byCreated: Person[] = ['hal', 'alan', 'margaret', 'ada', 'grace', 'katherine', 'edsger', 'fran', 'barbara'];
      const cases: Array<[string, Person[]]> = [
        ['name', byName],
        ['-name', [...byName].reverse()],
        ['email', byEmail],
        ['-email', [...byEmail].reverse()],
        ['created_at', byCreated],
        ['-created_at', [...byCreated].reverse()],
      ];
      for (const [sort, expected] of cases) {
        const res = await list(`sort=${sort}`);
        assert.deepEqual(ids(res), idsOf(expected), sort);
        assert.equal(res.json().links.self, `${PUBLIC_URL}/v1/contacts?page[number]=1&page[size]=25&filter[site_id]=${f.siteId}&sort=${sort}`);
      }
      await expectError(`/v1/contacts?filter[site_id]=${f.siteId}&sort=phone_number`, 400, 'sort');
      await expectError(`/v1/contacts?filter[site_id]=${f.siteId}&sort=name,email`, 400, 'sort');
    });

    it('returns only the attributes of fields[contacts]; relationships still appear', async () => {
      const res = await list('fields[contacts]=name,email&sort=name');
      const body = res.json();
      assert.equal(body.data.length, 9);
      for (const c of body.data) {
        assert.deepEqual(Object.keys(c.attributes), ['name', 'email']);
        assert.deepEqual(Object.keys(c.relationships).sort(), ['customer', 'offers', 'site', 'tags']);
      }
      assert.deepEqual(body.data[0].attributes, { name: 'Ada Lovelace', email: 'countess@analytical.example' });
      assert.deepEqual(body.data[0].relationships.customer, { data: { type: 'customers', id: String(f.customer.ada) } });
      const fran = body.data.find((c: { id: string }) => c.id === idOf('fran'));
      assert.deepEqual(fran.relationships.customer, { data: null });
      assert.deepEqual(fran.relationships.tags.data, []);
      // external_user_id comes from SQL over customers; it can be asked for alone.
      const external = (await list('fields[contacts]=external_user_id&sort=name')).json();
      assert.deepEqual(
        external.data.map((c: { attributes: unknown }) => c.attributes),
        [{ external_user_id: 'ext-ada' }, ...Array.from({ length: 8 }, () => ({ external_user_id: null }))],
      );
      await expectError(`/v1/contacts?filter[site_id]=${f.siteId}&fields[contacts]=name,mobile_phone_number`, 400, 'fields[contacts]');
    });

    it('pages with links that keep the site filter and sort, and meta counts', async () => {
      const order: Person[] = ['barbara', 'fran', 'edsger', 'katherine', 'grace', 'ada', 'margaret', 'alan', 'hal'];
      const seen: string[] = [];
      const at = (n: number) => `${PUBLIC_URL}/v1/contacts?page[number]=${n}&page[size]=4&filter[site_id]=${f.siteId}`;
      for (const n of [1, 2, 3]) {
        const body = (await list(`page[size]=4&page[number]=${n}`)).json();
        assert.deepEqual(body.meta, { total_pages: 3, total_count: 9, current_page: n });
        assert.deepEqual(body.links, {
          self: at(n),
          first: at(1),
          prev: n > 1 ? at(n - 1) : null,
          next: n < 3 ? at(n + 1) : null,
          last: at(3),
        });
        seen.push(...body.data.map((c: { id: string }) => c.id));
      }
      assert.deepEqual(seen, idsOf(order));
      const past = (await list('page[size]=4&page[number]=4')).json();
      assert.deepEqual(past.data, []);
      assert.deepEqual(past.meta, { total_pages: 3, total_count: 9, current_page: 4 });
      const filtered = (await list('filter[subscribed]=true&page[size]=3')).json();
      assert.deepEqual(filtered.meta, { total_pages: 2, total_count: 4, current_page: 1 });
      assert.equal(
        filtered.links.next,
        `${PUBLIC_URL}/v1/contacts?page[number]=2&page[size]=3&filter[site_id]=${f.siteId}&filter[subscribed]=true`,
      );
      // Above the maximum is served as the maximum, as a published upstream client asks (page[size]=500).
      const clamped = (await list('page[size]=500')).json();
      assert.deepEqual(clamped.data.map((c: { id: string }) => c.id), idsOf(order));
      assert.equal(clamped.links.self, `${PUBLIC_URL}/v1/contacts?page[number]=1&page[size]=100&filter[site_id]=${f.siteId}`);
      await expectError(`/v1/contacts?filter[site_id]=${f.siteId}&page[size]=0`, 400, 'page[size]');
    });

    // --- Sites, tenancy, permissions --------------------------------------------------------------

    it('keeps each site’s contacts apart; with two sites the owner must name one', async () => {
      const second = await ok(`/v1/contacts?filter[site_id]=${f.secondSite.siteId}`);
      assert.deepEqual(ids(second), [String(f.secondSite.contactId)]);
      assert.equal(second.json().data[0].relationships.site.data.id, String(f.secondSite.siteId));
      // The second site's Ada matches these filters there, never in the first site.
      for (const query of ['filter[search]=lovelace', 'filter[subscribed]=true', 'filter[created_in_last]=1', 'filter[address_city_contains]=london']) {
        const here = ids(await list(query));
        assert.ok(!here.includes(String(f.secondSite.contactId)), query);
        const there = await ok(`/v1/contacts?filter[site_id]=${f.secondSite.siteId}&${query}`);
        assert.deepEqual(ids(there), [String(f.secondSite.contactId)], query);
      }
      const error = await expectError('/v1/contacts', 400, 'filter[site_id]');
      assert.match(error.detail, /filter\[site_id\] is required/);
      await expectError('/v1/contacts?filter[search]=ada', 400, 'filter[site_id]');
      // Contacts of the other site can still be shown by id: the owner reaches both sites.
      const shown = await show(f.secondSite.contactId);
      assert.equal(shown.json().data.relationships.site.data.id, String(f.secondSite.siteId));
    });

    it('needs no filter[site_id] for a user who reaches one site', async () => {
      const userId = await createUser(
        t.handle,
        { accountId: t.tenant.accountId, name: 'Sam Single', email: 'sam@single.example', role: 'assistant', siteIds: [f.siteId] },
        t.clock,
      );
      const { token } = await t.keyWith(userId, ['view:contacts']);
      const res = await ok('/v1/contacts?sort=name&page[size]=2', token);
      assert.deepEqual(ids(res), idsOf(['ada', 'alan']));
      assert.equal(res.json().meta.total_count, 9);
      await expectError(`/v1/contacts/${f.secondSite.contactId}`, 404, undefined, token);
      await expectError(`/v1/contacts?filter[site_id]=${f.secondSite.siteId}`, 404, 'filter[site_id]', token);
    });

    it('never shows another account’s contacts: not listed, 404 by id either way', async () => {
      await expectError(`/v1/contacts?filter[site_id]=${f.otherAccount.siteId}`, 404, 'filter[site_id]');
      await expectError(`/v1/contacts/${f.otherAccount.contactId}`, 404);
      await expectError(`/v1/contacts/${f.otherAccount.contactId}/relationships/tags`, 404);
      await expectError(`/v1/contacts/${f.otherAccount.contactId}/relationships/offers`, 404);
      await expectError('/v1/contacts/987654321', 404);
      await expectError('/v1/contacts/not-a-number', 404);

      const theirs = await ok('/v1/contacts', f.otherAccount.ownerToken);
      assert.deepEqual(ids(theirs), [String(f.otherAccount.contactId)]);
      await expectError(`/v1/contacts/${f.contact.ada}`, 404, undefined, f.otherAccount.ownerToken);
      await expectError(`/v1/contacts/${f.contact.ada}/relationships/tags`, 404, undefined, f.otherAccount.ownerToken);
      await expectError(`/v1/contacts?filter[site_id]=${f.siteId}`, 404, 'filter[site_id]', f.otherAccount.ownerToken);
    });

    it('answers 403 without view:contacts, and for included or related types the key cannot read', async () => {
      const { token: customersOnly } = await t.keyWith(t.tenant.ownerId, ['view:customers', 'view:offers']);
      for (const url of [
        `/v1/contacts?filter[site_id]=${f.siteId}`,
        `/v1/contacts/${f.contact.ada}`,
        `/v1/contacts/${f.contact.ada}/relationships/tags`,
      ]) {
        const error = await expectError(url, 403, undefined, customersOnly);
        assert.equal(error.code, 'forbidden');
        assert.match(error.detail, /view:contacts/);
      }
      const { token: contactsOnly } = await t.keyWith(t.tenant.ownerId, ['view:contacts']);
      assert.deepEqual(ids(await list('sort=name&page[size]=1', contactsOnly)), [idOf('ada')]);
      assert.match((await expectError(`/v1/contacts/${f.contact.ada}/relationships/offers`, 403, undefined, contactsOnly)).detail, /view:offers/);
      assert.match((await expectError(`/v1/contacts/${f.contact.ada}?include=customer`, 403, undefined, contactsOnly)).detail, /view:customers/);
    });

    // --- Filters -------------------------------------------------------------------------------------

    it('has a test case for every filter the contacts resource declares', () => {
      assert.deepEqual(Object.keys(cases).sort(), Object.keys(contacts.filters).sort());
    });

    describe('every filter, with exact ids', () => {
      for (const name of Object.keys(contacts.filters)) {
        it(`filter[${name}]`, async () => {
          const list_ = cases[name];
          assert.ok(list_ && list_.length > 0, `no cases for filter[${name}]`);
          let splits = false;
          for (const { value, people } of list_) {
            const res = await list(`filter[${name}]=${encodeValue(value)}`);
            assert.deepEqual(numerically(ids(res)), numerically(idsOf(people)), `filter[${name}]=${value}`);
            if (people.length > 0 && people.length < PEOPLE.length) splits = true;
          }
          assert.ok(splits, `filter[${name}] needs a case that matches some contacts and not others`);
        });
      }
    });

    it('answers 404 naming the filter when an id filter names a record outside the site', async () => {
      for (const [query, parameter] of [
        [`filter[has_tag_id]=${f.secondSite.tagId}`, 'filter[has_tag_id]'],
        [`filter[has_all_tag_id]=${f.tag.vip},${f.otherAccount.tagId}`, 'filter[has_all_tag_id]'],
        [`filter[has_offer_id]=${f.otherAccount.offerId}`, 'filter[has_offer_id]'],
        [`filter[has_no_offer_id]=${f.secondSite.offerId}`, 'filter[has_no_offer_id]'],
        ['filter[submitted_form_id]=987654321', 'filter[submitted_form_id]'],
        [`filter[has_tag_id]=${f.tag.vip}&filter[sent_email_broadcast_id]=987654321`, 'filter[sent_email_broadcast_id]'],
      ] as const) {
        const error = await expectError(`/v1/contacts?filter[site_id]=${f.siteId}&${query}`, 404, parameter);
        assert.equal(error.code, 'not_found');
      }
      // In its own site the second site's tag is fine.
      const there = await ok(`/v1/contacts?filter[site_id]=${f.secondSite.siteId}&filter[has_tag_id]=${f.secondSite.tagId}`);
      assert.deepEqual(ids(there), [String(f.secondSite.contactId)]);
    });

    it('moves days windows with the clock, at the millisecond', async () => {
      const start = t.clock.current;
      try {
        // Barbara was created exactly 7 days ago and Fran 1 ms before that.
        assert.deepEqual(ids(await list('filter[created_in_last]=7')), idsOf(['barbara']));
        t.clock.current = new Date(start.getTime() - 1);
        assert.deepEqual(numerically(ids(await list('filter[created_in_last]=7'))), numerically(idsOf(['barbara', 'fran'])));
        t.clock.current = new Date(start.getTime() + 1);
        assert.deepEqual(ids(await list('filter[created_in_last]=7')), []);
        assert.deepEqual(numerically(ids(await list('filter[not_created_in_last]=7'))), numerically(idsOf(PEOPLE)));
        // The June emails are exactly 10 days old; 1 ms later only Katherine's recent open is left.
        assert.deepEqual(ids(await list('filter[opened_email_in_last]=10')), idsOf(['katherine']));
        // Grace joined (became a customer) exactly 7 days ago.
        assert.deepEqual(numerically(ids(await list('filter[joined_in_last]=7'))), numerically(idsOf(['barbara', 'margaret'])));
      } finally {
        t.clock.current = start;
      }
    });

    it('takes the longest days window (999999 days, before year 1) on every days filter', async () => {
      for (const [name, filter] of Object.entries(contacts.filters)) {
        if (filter.kind === 'days') await list(`filter[${name}]=999999`);
      }
      assert.deepEqual(numerically(ids(await list('filter[created_in_last]=999999'))), numerically(idsOf(PEOPLE)));
      assert.deepEqual(ids(await list('filter[not_created_in_last]=999999')), []);
      assert.deepEqual(numerically(ids(await list('filter[inactive_in_last]=999999'))), numerically(idsOf(['alan', 'edsger', 'barbara', 'fran', 'hal', 'margaret'])));
    });

    it('partitions the contacts with open data into the four engagement segments', async () => {
      const segments = ['healthy', 'passive', 'unengaged', 'inactive'];
      const members = new Map<string, string[]>();
      for (const s of segments) members.set(s, ids(await list(`filter[${s}_contacts_with_open_data]=true`)));
      const all = [...members.values()].flat();
      assert.equal(new Set(all).size, all.length, 'segments overlap');
      const withOpenData = ids(await list('filter[delivered_email_in_last]=999999'));
      assert.deepEqual(numerically(all), numerically(withOpenData));
      assert.deepEqual(numerically(all), numerically(idsOf(['ada', 'grace', 'alan', 'katherine', 'hal', 'margaret'])));
    });

    it('combines filters with AND, alongside sort and paging', async () => {
      assert.deepEqual(ids(await list(`filter[subscribed]=true&filter[has_tag_id]=${f.tag.vip}&sort=name`)), idsOf(['ada', 'grace']));
      assert.deepEqual(ids(await list(`filter[subscribed]=true&filter[has_tag_id]=${f.tag.vip}&filter[active_in_last]=7`)), idsOf(['ada']));
      assert.deepEqual(
        ids(await list(`filter[has_offer_id]=${f.offer.course}&filter[suppressed]=false&filter[net_revenue_greater_than]=100`)),
        idsOf(['margaret']),
      );
      assert.deepEqual(
        ids(await list(`filter[never_subscribed]=true&filter[net_revenue_equal_to]=0&filter[is_hard_bouncing]=false&sort=-name`)),
        idsOf(['fran', 'barbara']),
      );
      const untagged = `filter[search]=ar&filter[has_no_tag_id]=${f.tag.vip},${f.tag.beta}&sort=email`;
      assert.deepEqual(ids(await list(untagged)), idsOf(['barbara', 'margaret']));
      assert.deepEqual(ids(await list(`${untagged}&page[size]=1&page[number]=2`)), idsOf(['margaret']));
      assert.deepEqual(ids(await list('filter[subscribed]=true&filter[is_hidden]=true')), []);
    });

    it('answers 400 naming the filter for a value its kind refuses, before any query', async () => {
      for (const [name, filter] of Object.entries(contacts.filters)) {
        const value = badFilterValue(filter.kind);
        const url = `/v1/contacts?filter[site_id]=${f.siteId}&filter[${name}]=${encodeValue(value)}`;
        const { statements } = await t.queries.during(() => expectError(url, 400, `filter[${name}]`));
        assert.ok(!statements.some((s) => /"contacts"/.test(s)), `filter[${name}] queried contacts before refusing`);
      }
      for (const [query, parameter] of [
        ['filter[created_in_last]=0', 'filter[created_in_last]'],
        ['filter[created_in_last]=-1', 'filter[created_in_last]'],
        ['filter[created_in_last]=1.5', 'filter[created_in_last]'],
        ['filter[has_tag_id]=', 'filter[has_tag_id]'],
        ['filter[has_tag_id]=,', 'filter[has_tag_id]'],
        ['filter[is_hidden]=yes', 'filter[is_hidden]'],
        ['filter[net_revenue_equal_to]=1e3', 'filter[net_revenue_equal_to]'],
        ['filter[net_revenue_less_than]=$5', 'filter[net_revenue_less_than]'],
        ['filter[used_coupon_code]=', 'filter[used_coupon_code]'],
        ['filter[no_such_filter]=1', 'filter[no_such_filter]'],
        ['filter[products_search]=x', 'filter[products_search]'],
      ] as const) {
        await expectError(`/v1/contacts?filter[site_id]=${f.siteId}&${query}`, 400, parameter);
      }
    });

    // --- Show and relationships ---------------------------------------------------------------------

    it('shows a contact with links self and current', async () => {
      const res = await show(f.contact.grace, 'fields[contacts]=name,email,external_user_id');
      assert.deepEqual(res.json(), {
        data: {
          id: idOf('grace'),
          type: 'contacts',
          attributes: { name: 'Grace Hopper', email: 'amazing.grace@navy.example', external_user_id: null },
          relationships: {
            site: { data: { type: 'sites', id: String(f.siteId) } },
            customer: { data: { type: 'customers', id: String(f.customer.grace) } },
            offers: { links: { self: `${PUBLIC_URL}/v1/contacts/${idOf('grace')}/relationships/offers`, related: `${PUBLIC_URL}/v1/contacts/${idOf('grace')}/offers` } },
            tags: {
              data: [{ type: 'contact_tags', id: String(f.tag.vip) }],
              links: { self: `${PUBLIC_URL}/v1/contacts/${idOf('grace')}/relationships/tags`, related: `${PUBLIC_URL}/v1/contacts/${idOf('grace')}/tags` },
            },
          },
          links: { self: `${PUBLIC_URL}/v1/contacts/${idOf('grace')}`, customer: `${PUBLIC_URL}/v1/customers/${f.customer.grace}` },
        },
        links: {
          self: `${PUBLIC_URL}/v1/contacts/${idOf('grace')}`,
          current: `${PUBLIC_URL}/v1/contacts/${idOf('grace')}?fields[contacts]=name,email,external_user_id`,
        },
      });
      const plain = (await show(f.contact.katherine)).json();
      assert.deepEqual(plain.links, { self: `${PUBLIC_URL}/v1/contacts/${idOf('katherine')}`, current: `${PUBLIC_URL}/v1/contacts/${idOf('katherine')}` });
      assert.equal(plain.data.attributes.external_user_id, null);
      assert.equal(plain.data.attributes.subscribed, true);
      assert.equal(plain.data.attributes.address_line_1, null);
      assert.deepEqual(plain.data.relationships.customer, { data: null });
      assert.equal('included' in plain, false);
      for (const query of ['sort=name', 'page[size]=1', 'filter[name_contains]=a']) {
        await expectError(`/v1/contacts/${f.contact.ada}?${query}`, 400);
      }
      // filter[site_id] on a show narrows the lookup to that site (upstream asks for it on payouts).
      assert.equal((await show(f.contact.ada, `filter[site_id]=${f.siteId}`)).statusCode, 200);
      await expectError(`/v1/contacts/${f.contact.ada}?filter[site_id]=${f.secondSite.siteId}`, 404);
    });

    it('includes the customer, tags and granted offers of a shown contact', async () => {
      const res = await show(f.contact.margaret, 'include=customer,tags,offers&fields[customers]=name,net_revenue&fields[offers]=title');
      const body = res.json();
      assert.deepEqual(body.data.relationships.customer, { data: { type: 'customers', id: String(f.customer.margaret) } });
      // Included offers bring their linkage; the duplicate course grant is listed once.
      assert.deepEqual(body.data.relationships.offers, {
        data: [
          { type: 'offers', id: String(f.offer.bundle) },
          { type: 'offers', id: String(f.offer.course) },
          { type: 'offers', id: String(f.offer.free) },
        ],
        links: { self: `${PUBLIC_URL}/v1/contacts/${idOf('margaret')}/relationships/offers`, related: `${PUBLIC_URL}/v1/contacts/${idOf('margaret')}/offers` },
      });
      const included = body.included.map((r: { type: string; id: string }) => `${r.type}:${r.id}`);
      assert.deepEqual(included, [
        `customers:${f.customer.margaret}`,
        `offers:${f.offer.bundle}`,
        `offers:${f.offer.course}`,
        `offers:${f.offer.free}`,
      ]);
      assert.deepEqual(body.included[0].attributes, { name: 'Margaret Hamilton', net_revenue: '123.45' });
      assert.deepEqual(body.included[2].attributes, { title: 'Foundations Course Offer' });
    });

    it('renders relationships: customer (data or null), tags (data and links), offers (links only)', async () => {
      const byId = new Map<string, { relationships: Record<string, { data?: unknown; links?: unknown }> }>(
        (await list()).json().data.map((c: { id: string }) => [c.id, c]),
      );
      for (const p of PEOPLE) {
        const rel = byId.get(idOf(p))!.relationships;
        const customerId = (f.customer as Record<string, number>)[p];
        assert.deepEqual(rel.customer, { data: customerId === undefined ? null : { type: 'customers', id: String(customerId) } }, p);
        assert.deepEqual(rel.offers, { links: { self: `${PUBLIC_URL}/v1/contacts/${idOf(p)}/relationships/offers`, related: `${PUBLIC_URL}/v1/contacts/${idOf(p)}/offers` } }, p);
        assert.ok(Array.isArray(rel.tags!.data), p);
      }
      assert.deepEqual(byId.get(idOf('katherine'))!.relationships.tags!.data, [{ type: 'contact_tags', id: String(f.tag.news) }]);
    });

    it('serves GET /v1/contacts/:id/relationships/tags and /offers', async () => {
      const rel = async (p: Person, name: 'tags' | 'offers') => {
        const res = await t.get(`/v1/contacts/${f.contact[p]}/relationships/${name}`, f.token);
        assert.equal(res.statusCode, 200, res.body);
        assertResponseMatchesUpstream('get', `/v1/contacts/{contact_id}/relationships/${name}`, res);
        const body = res.json();
        assert.deepEqual(Object.keys(body).sort(), ['data', 'links']);
        assert.equal(body.links.self, `${PUBLIC_URL}/v1/contacts/${f.contact[p]}/relationships/${name}`);
        return body.data.map((r: { type: string; id: string }) => `${r.type}:${r.id}`);
      };
      assert.deepEqual(await rel('ada', 'tags'), [`contact_tags:${f.tag.beta}`, `contact_tags:${f.tag.vip}`]);
      assert.deepEqual(await rel('fran', 'tags'), []);
      // Only grants that were not revoked: ada's bundle grant was.
      assert.deepEqual(await rel('ada', 'offers'), [`offers:${f.offer.course}`]);
      assert.deepEqual(await rel('alan', 'offers'), []);
      assert.deepEqual(await rel('margaret', 'offers'), [`offers:${f.offer.bundle}`, `offers:${f.offer.course}`, `offers:${f.offer.free}`]);
      await expectError(`/v1/contacts/${f.contact.ada}/relationships/tags?include=tags`, 400, 'include');
      await expectError(`/v1/contacts/${f.contact.ada}/relationships/customer`, 404);
    });
  });
}
