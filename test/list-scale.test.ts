// What keeps lists cheap on large sites must never change what they answer: counts kept by
// triggers and cached filtered counts stay exact under every kind of write, numbered pages reached
// from a cached boundary hold the same records as pages counted from the start, and cursor paging
// (page[after] / page[before]) walks every sort of a list exactly once, even while records come
// and go.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { buildContactFixture, type ContactFixture } from './support/contact-fixture.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from './support/harness.js';

interface ListBody {
  data: Array<{ id: string }>;
  links: { self: string; first: string; prev: string | null; next: string | null; last: string };
  meta: { total_count: number; total_pages?: number; current_page?: number };
}

const EXTRA_CONTACTS = 31;

for (const dialect of DIALECTS) {
  describe(`lists at scale: counts, page boundaries and cursors [${dialect}]`, () => {
    let t: TestApp;
    let f: ContactFixture;
    let site: string;
    /** Contacts this file made: deletable (no purchases or subscriptions). */
    const extraIds: string[] = [];

    before(async () => {
      t = await createTestApp(dialect);
      f = await buildContactFixture(t);
      site = `filter[site_id]=${f.siteId}`;
      // Enough contacts for several pages, some with equal names (the id tiebreak matters).
      for (let i = 0; i < EXTRA_CONTACTS; i++) {
        t.clock.advance(60);
        const res = await create(`extra${i}@example.com`, i % 3 === 0 ? 'Same Name' : `Person ${String(i).padStart(2, '0')}`);
        assert.equal(res.statusCode, 201, res.body);
        extraIds.push(res.json().data.id);
      }
    });
    after(() => t.close());

    const get = async (path: string): Promise<ListBody> => {
      const res = await t.request({ method: 'GET', url: path, token: f.token });
      assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
      return res.json();
    };
    const create = (email: string, name: string) =>
      t.request({
        method: 'POST',
        url: '/v1/contacts',
        token: f.token,
        payload: { data: { type: 'contacts', attributes: { email, name }, relationships: { site: { data: { type: 'sites', id: String(f.siteId) } } } } },
      });
    const remove = (type: string, id: string | number) => t.request({ method: 'DELETE', url: `/v1/${type}/${id}`, token: f.token });
    const relative = (link: string) => link.slice(PUBLIC_URL.length);

    /** Every id of a list, read with numbered pages of 100 from the start: the reference answer. */
    const everything = async (list: string): Promise<string[]> => {
      const out: string[] = [];
      for (let page = 1; ; page++) {
        const body = await get(`${list}&page[size]=100&page[number]=${page}`);
        out.push(...body.data.map((r) => r.id));
        if (body.data.length < 100) return out;
      }
    };

    /** Follows links.next from page[after]= to the end. */
    const walkForward = async (list: string, size: number, during?: (step: number) => Promise<void>): Promise<string[]> => {
      const seen: string[] = [];
      let link: string | null = `${list}&page[after]=&page[size]=${size}`;
      for (let step = 0; link; step++) {
        const body = await get(link);
        assert.ok(body.data.length <= size);
        seen.push(...body.data.map((r) => r.id));
        link = body.links.next === null ? null : relative(body.links.next);
        if (during) await during(step);
      }
      return seen;
    };

    const counted = async (list: string) => (await get(`${list}&page[size]=1`)).meta.total_count;

    it('keeps every unfiltered and filtered total exact through creates, deletes, tags, grants and purchase actions', async () => {
      const lists = [
        `/v1/contacts?${site}`,
        `/v1/customers?${site}`,
        `/v1/purchases?${site}`,
        `/v1/contacts?${site}&filter[has_tag_id]=${f.tag.vip}`,
        `/v1/contacts?${site}&filter[subscribed]=true`,
        `/v1/customers?${site}&filter[has_offer_id]=${f.offer.course}`,
      ];
      const check = async (after: string) => {
        for (const list of lists) {
          // Twice: the second answer may come from the caches.
          const truth = (await everything(list)).length;
          assert.equal(await counted(list), truth, `${list} after ${after}`);
          assert.equal(await counted(list), truth, `${list} after ${after} (again)`);
        }
      };
      await check('the fixture');
      const made = await create('counted@example.com', 'Counted Person');
      const madeId = made.json().data.id as string;
      await check('a create');
      const tagged = await t.request({
        method: 'POST',
        url: `/v1/contacts/${madeId}/relationships/tags`,
        token: f.token,
        payload: { data: [{ type: 'contact_tags', id: String(f.tag.vip) }] },
      });
      assert.equal(tagged.statusCode, 200, tagged.body);
      await check('a tag');
      const granted = await t.request({
        method: 'POST',
        url: `/v1/contacts/${madeId}/relationships/offers`,
        token: f.token,
        payload: { data: [{ type: 'offers', id: String(f.offer.course) }] },
      });
      assert.equal(granted.statusCode, 200, granted.body);
      await check('a grant');
      const purchases = await get(`/v1/purchases?${site}&page[size]=1`);
      const purchaseId = purchases.data[0]!.id;
      const deactivated = await t.request({ method: 'POST', url: `/v1/purchases/${purchaseId}/deactivate`, token: f.token });
      assert.equal(deactivated.statusCode, 200, deactivated.body);
      await check('a purchase deactivation');
      const unsubscribed = await t.request({
        method: 'PATCH',
        url: `/v1/contacts/${madeId}`,
        token: f.token,
        payload: { data: { type: 'contacts', id: madeId, attributes: { subscribed: false } } },
      });
      assert.equal(unsubscribed.statusCode, 200, unsubscribed.body);
      await check('an update');
      assert.equal((await remove('contacts', madeId)).statusCode, 200);
      await check('a delete');
    });

    it('keeps the totals exact under racing creates and deletes (the counters are bumped inside each transaction)', async () => {
      const list = `/v1/contacts?${site}`;
      const before = await counted(list);
      const made = await Promise.all(Array.from({ length: 30 }, (_, i) => create(`race${i}@example.com`, `Racer ${i}`)));
      for (const r of made) assert.equal(r.statusCode, 201, r.body);
      // The same email twice at once: one 201, one 422, and the count moves by one.
      const twins = await Promise.all([create('twin@example.com', 'Twin'), create('twin@example.com', 'Twin')]);
      assert.deepEqual(twins.map((r) => r.statusCode).sort(), [201, 422]);
      assert.equal(await counted(list), before + 31);
      assert.equal((await everything(list)).length, before + 31);
      const gone = await Promise.all([...made, ...twins.filter((r) => r.statusCode === 201)].map((r) => remove('contacts', r.json().data.id)));
      for (const r of gone) assert.equal(r.statusCode, 200, r.body);
      assert.equal(await counted(list), before);
      assert.equal((await everything(list)).length, before);
    });

    it('answers every numbered page the same whether it starts from a cached boundary or from the top', async () => {
      for (const sort of ['-created_at', 'name', '-name', 'email']) {
        const list = `/v1/contacts?${site}&sort=${sort}`;
        const reference = await everything(list);
        const size = 4;
        // Deep first (counted from the top), then in order (each page leaves the next one's start).
        const cold = await get(`${list}&page[size]=${size}&page[number]=7`);
        assert.deepEqual(cold.data.map((r) => r.id), reference.slice(24, 28), `${sort} page 7 cold`);
        for (let page = 1; page <= Math.ceil(reference.length / size); page++) {
          const body = await get(`${list}&page[size]=${size}&page[number]=${page}`);
          assert.deepEqual(body.data.map((r) => r.id), reference.slice((page - 1) * size, page * size), `${sort} page ${page}`);
          assert.equal(body.meta.total_count, reference.length);
        }
      }
      // A write moves the records; pages read afterwards follow it.
      const before = await everything(`/v1/contacts?${site}&sort=name`);
      const made = await create('aaa-first@example.com', 'Aaron First');
      const after = await everything(`/v1/contacts?${site}&sort=name`);
      assert.equal(after.length, before.length + 1);
      assert.deepEqual((await get(`/v1/contacts?${site}&sort=name&page[size]=4&page[number]=3`)).data.map((r) => r.id), after.slice(8, 12));
      assert.equal((await remove('contacts', made.json().data.id)).statusCode, 200);
    });

    it('walks every sort of contacts and customers with cursors, forwards and backwards, exactly once', async () => {
      const lists = [
        ...['-created_at', 'created_at', 'name', '-name', 'email', '-email'].map((s) => `/v1/contacts?${site}&sort=${s}`),
        // A nullable sort key and a declared (custom) sort.
        ...['last_request_at', '-last_request_at', 'net_revenue', '-net_revenue', 'name'].map((s) => `/v1/customers?${site}&sort=${s}`),
        `/v1/contacts?${site}&filter[subscribed]=true&sort=name`,
      ];
      for (const list of lists) {
        const reference = await everything(list);
        assert.deepEqual(await walkForward(list, 3), reference, `${list} forwards`);
        // Backwards from the end of the list with page[before]=.
        const backwards: string[] = [];
        let link: string | null = `${list}&page[before]=&page[size]=3`;
        while (link) {
          const body = await get(link);
          backwards.unshift(...body.data.map((r) => r.id));
          link = body.links.prev === null ? null : relative(body.links.prev);
        }
        assert.deepEqual(backwards, reference, `${list} backwards`);
      }
    });

    it('gives cursor pages links and a total, and no page numbers', async () => {
      const list = `/v1/contacts?${site}&sort=name`;
      const first = await get(`${list}&page[after]=&page[size]=5`);
      assert.equal(first.data.length, 5);
      assert.equal(first.links.prev, null);
      assert.ok(first.links.next?.includes('page[after]='));
      assert.ok(first.links.next?.includes(`filter[site_id]=${f.siteId}`), 'links keep the other parameters');
      assert.equal(first.links.self, `${PUBLIC_URL}${list}&page[after]=&page[size]=5`);
      assert.deepEqual(Object.keys(first.meta), ['total_count']);
      assert.equal(first.meta.total_count, (await everything(list)).length);
      const second = await get(relative(first.links.next!));
      assert.ok(second.links.prev?.includes('page[before]='));
      const back = await get(relative(second.links.prev!));
      assert.deepEqual(back.data.map((r) => r.id), first.data.map((r) => r.id));
      const lastPage = await get(`${list}&page[before]=&page[size]=5`);
      assert.equal(lastPage.links.next, null);
    });

    it('never returns a record twice nor skips one that existed for the whole walk, while records come and go', async () => {
      const list = `/v1/contacts?${site}&sort=name`;
      const stable = new Set(await everything(list));
      const doomed: string[] = [];
      let n = 0;
      const seen = await walkForward(list, 4, async () => {
        n++;
        // Around the walk's position and at both ends of the order.
        const early = await create(`during-a-${n}@example.com`, `Aa During ${n}`);
        const late = await create(`during-z-${n}@example.com`, `Zz During ${n}`);
        const mid = await create(`during-m-${n}@example.com`, `Person ${String(n).padStart(2, '0')}`);
        for (const r of [early, late, mid]) assert.equal(r.statusCode, 201, r.body);
        const victim = extraIds.find((id) => !doomed.includes(id) && Number(id) % 5 === n % 5);
        if (victim) {
          doomed.push(victim);
          assert.equal((await remove('contacts', victim)).statusCode, 200);
        }
      });
      assert.equal(new Set(seen).size, seen.length, 'no record twice');
      for (const id of stable) if (!doomed.includes(id)) assert.ok(seen.includes(id), `contact ${id} existed all along and was not seen`);
    });

    it('compiles each query shape once and predicts its parameters; later requests of the shape only bind values', async () => {
      const paths = [
        `/v1/contacts?${site}`,
        `/v1/contacts?${site}&sort=name&page[number]=2&page[size]=5`,
        `/v1/contacts?${site}&filter[has_tag_id]=${f.tag.vip}&filter[email_contains]=example`,
        `/v1/contacts?${site}&sort=-name&page[after]=&page[size]=3`,
        `/v1/customers?${site}&include=contact,offers,products`,
        `/v1/customers/${f.customer.ada}?include=contact,offers,products`,
        `/v1/purchases?${site}`,
        `/v1/transactions?${site}`,
      ];
      for (const path of paths) await get(path);
      // Read again, not answered from the answer cache: every site's data version moves, as a write
      // to it would move it (src/db/site-counters.ts).
      await sql`update site_counters set value = value + 1 where counter = 'version'`.execute(t.handle.db);
      const warmed = t.app.engine.queryShapeStats;
      // The same shapes with other values.
      const again = paths.map((p) => p.replace(`filter[has_tag_id]=${f.tag.vip}`, `filter[has_tag_id]=${f.tag.beta}`).replace('page[number]=2', 'page[number]=3'));
      for (const path of again) await get(path);
      const after = t.app.engine.queryShapeStats;
      assert.equal(after.unpredictable, 0, 'every shape predicted its parameters');
      assert.equal(after.compiled, warmed.compiled, 'no new compilation for known shapes');
      assert.ok(after.reused > warmed.reused + paths.length, `reused ${after.reused - warmed.reused} times`);
    });

    it('refuses a cursor that was changed or belongs to another list, sort or site, naming page[after]', async () => {
      const first = await get(`/v1/contacts?${site}&sort=name&page[after]=&page[size]=2`);
      const cursor = new URL(first.links.next!).searchParams.get('page[after]')!;
      const refused = async (path: string, parameter = 'page[after]') => {
        const res = await t.request({ method: 'GET', url: path, token: f.token });
        assert.equal(res.statusCode, 400, `${path}: ${res.body}`);
        assert.equal(res.json().errors[0].source.parameter, parameter, res.body);
        return res.json().errors[0].detail as string;
      };
      const tampered = `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`;
      await refused(`/v1/contacts?${site}&sort=name&page[after]=${encodeURIComponent(tampered)}`);
      await refused(`/v1/contacts?${site}&sort=name&page[after]=not-a-cursor`);
      assert.match(await refused(`/v1/contacts?${site}&sort=email&page[after]=${encodeURIComponent(cursor)}`), /sort=name/);
      await refused(`/v1/customers?${site}&sort=name&page[after]=${encodeURIComponent(cursor)}`);
      await refused(`/v1/contacts?filter[site_id]=${f.secondSite.siteId}&sort=name&page[after]=${encodeURIComponent(cursor)}`);
      await refused(`/v1/contacts?${site}&sort=name&page[before]=${encodeURIComponent(tampered)}`, 'page[before]');
      await refused(`/v1/contacts?${site}&page[after]=&page[number]=2`, 'page[number]');
      await refused(`/v1/contacts?${site}&page[after]=&page[before]=`, 'page[before]');
      await refused(`/v1/contacts/${f.contact.ada}?page[after]=`);
    });
  });
}
