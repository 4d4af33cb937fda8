// POST, PATCH and DELETE /v1/contacts/{id}/relationships/tags: the resulting linkage, idempotent
// adds, PATCH replacing the set, a tag_added / tag_removed outbox event per actual change (none
// when nothing changed), the has_tag_id filter seeing the result at once, every refusal with its
// status and pointer, proof that a refused request wrote nothing, tenancy and permissions.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createSite } from '../../src/domain/accounts.js';
import { builders, type Builders } from '../support/builders.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from '../support/harness.js';
import { assertResponseMatchesUpstream } from '../support/upstream.js';
import { assertError, otherAccount, rowCounts, send, type Res } from '../support/writes.js';

const UPSTREAM_PATH = '/v1/contacts/{contact_id}/relationships/tags';

for (const dialect of DIALECTS) {
  describe(`contact tag writes [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let b: Builders;
    let vip: number;
    let lead: number;
    let alumni: number;
    let foreignTag: number;
    let foreignContact: number;
    let secondSiteTag: number;
    let contactId: number;

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      b = builders(t);
      vip = await b.tag('VIP');
      lead = await b.tag('Lead');
      alumni = await b.tag('Alumni');
      const other = await otherAccount(t);
      foreignTag = await b.forSite(other.siteId).tag('Foreign');
      foreignContact = await b.forSite(other.siteId).contact({ email: 'foreign@example.com' });
      // A second site of the same account: its tags are not the contact's site's.
      const secondSite = await createSite(t.handle, { accountId: t.tenant.accountId, title: 'Second Site', subdomain: `second-${randomBytes(4).toString('hex')}` }, t.clock);
      secondSiteTag = await b.forSite(secondSite).tag('Elsewhere');
    });
    after(() => t.close());

    beforeEach(async () => {
      contactId = await b.contact();
    });

    const ids = (...tagIds: number[]) => ({ data: tagIds.map((id) => ({ type: 'contact_tags', id: String(id) })) });
    const url = (id: number | string = contactId) => `/v1/contacts/${id}/relationships/tags`;
    const add = (body: unknown, id: number | string = contactId, as = token) => send(t, 'POST', url(id), as, body);
    const replace = (body: unknown, id: number | string = contactId, as = token) => send(t, 'PATCH', url(id), as, body);
    const remove = (body: unknown, id: number | string = contactId, as = token) => send(t, 'DELETE', url(id), as, body);

    /** The linkage a response answers with, as ids in the order given. */
    function linkage(res: Res, ...tagIds: number[]): void {
      assert.equal(res.statusCode, 200, res.body);
      const doc = res.json();
      assert.deepEqual(
        [...doc.data].sort((x: { id: string }, y: { id: string }) => Number(x.id) - Number(y.id)),
        ids(...[...tagIds].sort((x, y) => x - y)).data,
        `linkage of ${tagIds.join(', ')}`,
      );
      assert.equal(doc.links.self, `${PUBLIC_URL}/v1/contacts/${contactId}/relationships/tags`);
    }

    /** The contact's events: their type and the contact and tag their payload shows. */
    async function events(): Promise<Array<ReturnType<typeof event>>> {
      const rows = await t.handle.db.selectFrom('outbox_events').selectAll().where('site_id', '=', t.tenant.siteId).where('resource_id', '=', contactId).orderBy('id').execute();
      return rows.map((r) => {
        const [contact, tag] = t.handle.traits.decodeJson(r.payload) as Array<{ type: string; id: string; attributes: { name: string } }>;
        return { type: r.event_type, contact: `${contact!.type} ${contact!.id}`, tag: `${tag!.type} ${tag!.id}`, tagName: tag!.attributes.name };
      });
    }

    const event = (type: string, tagId: number, name: string) => ({ type, contact: `contacts ${contactId}`, tag: `contact_tags ${tagId}`, tagName: name });

    async function expectEvents(expected: Array<ReturnType<typeof event>>): Promise<void> {
      assert.deepEqual(await events(), expected, 'one event per tag actually added or removed');
    }

    async function tagIdsMatching(filterTag: number): Promise<string[]> {
      const res = await t.get(`/v1/contacts?filter[site_id]=${t.tenant.siteId}&filter[has_tag_id]=${filterTag}&page[size]=100`, token);
      assert.equal(res.statusCode, 200, res.body);
      return (JSON.parse(res.body).data as Array<{ id: string }>).map((c) => c.id);
    }

    async function refused(run: () => Promise<Res>, status: number, code?: string, pointer?: string): Promise<Res> {
      const tables = ['contact_taggings', 'outbox_events'];
      const counts = await rowCounts(t, tables);
      const taggings = await t.handle.db.selectFrom('contact_taggings').selectAll().orderBy('contact_id').orderBy('contact_tag_id').execute();
      const res = await run();
      assertError(res, status, code, pointer);
      assert.deepEqual(await rowCounts(t, tables), counts, 'a refused request adds or removes no row');
      assert.deepEqual(
        await t.handle.db.selectFrom('contact_taggings').selectAll().orderBy('contact_id').orderBy('contact_tag_id').execute(),
        taggings,
        'a refused request changes no tagging',
      );
      return res;
    }

    describe('POST', () => {
      it('adds tags and answers with the whole linkage; events for each addition', async () => {
        await b.tagging(contactId, vip);
        const res = await add(ids(lead, alumni));
        linkage(res, vip, lead, alumni);
        assertResponseMatchesUpstream('post', UPSTREAM_PATH, res);
        await expectEvents([event('tag_added', lead, 'Lead'), event('tag_added', alumni, 'Alumni')]);
        assert.ok((await tagIdsMatching(lead)).includes(String(contactId)), 'filter[has_tag_id] sees the new tag at once');
        const shown = await t.get(url(), token);
        assert.deepEqual(JSON.parse(shown.body).data, res.json().data, 'GET of the relationship agrees');
      });

      it('is idempotent: an already present tag (or a repeated one) changes nothing and writes no event', async () => {
        await b.tagging(contactId, vip);
        linkage(await add(ids(vip)), vip);
        await expectEvents([]);
        linkage(await add(ids(lead, lead)), vip, lead);
        linkage(await add(ids(lead)), vip, lead);
        await expectEvents([event('tag_added', lead, 'Lead')]);
      });

      it('an empty list changes nothing', async () => {
        await b.tagging(contactId, vip);
        linkage(await add({ data: [] }), vip);
        await expectEvents([]);
      });
    });

    describe('PATCH', () => {
      it('replaces the set: removes the unlisted, adds the new, keeps the rest', async () => {
        await b.tagging(contactId, vip);
        await b.tagging(contactId, lead);
        const res = await replace(ids(lead, alumni));
        linkage(res, lead, alumni);
        assertResponseMatchesUpstream('patch', UPSTREAM_PATH, res);
        await expectEvents([event('tag_removed', vip, 'VIP'), event('tag_added', alumni, 'Alumni')]);
        assert.ok(!(await tagIdsMatching(vip)).includes(String(contactId)), 'the removed tag no longer matches');
        assert.ok((await tagIdsMatching(alumni)).includes(String(contactId)), 'the added tag matches');
      });

      it('the same set changes nothing; an empty set removes every tag', async () => {
        await b.tagging(contactId, vip);
        linkage(await replace(ids(vip)), vip);
        await expectEvents([]);
        linkage(await replace({ data: [] }));
        await expectEvents([event('tag_removed', vip, 'VIP')]);
      });
    });

    describe('DELETE', () => {
      it('removes the listed tags and ignores tags the contact does not have', async () => {
        await b.tagging(contactId, vip);
        await b.tagging(contactId, lead);
        const res = await remove(ids(vip, alumni));
        linkage(res, lead);
        assertResponseMatchesUpstream('delete', UPSTREAM_PATH, res);
        await expectEvents([event('tag_removed', vip, 'VIP')]);
        linkage(await remove(ids(vip)), lead);
        await expectEvents([event('tag_removed', vip, 'VIP')]);
      });
    });

    describe('refusals', () => {
      it('bad documents: 400 not an array, 409 wrong type, 422 non-string id; nothing written', async () => {
        for (const write of [add, replace, remove]) {
          await refused(() => write({}), 400, 'invalid_document');
          await refused(() => write({ data: { type: 'contact_tags', id: String(vip) } }), 400, 'invalid_document', '/data');
          await refused(() => write({ data: [{ type: 'tags', id: String(vip) }] }), 409, 'type_mismatch', '/data/0/type');
          await refused(() => write({ data: [{ type: 'contact_tags', id: vip }] }), 422, 'invalid_id', '/data/0/id');
        }
        const res = await refused(() => add('[]'), 400, 'invalid_document');
        assertResponseMatchesUpstream('post', UPSTREAM_PATH, res);
      });

      it('unknown tags, tags of other accounts and of other sites are 404 at their pointer; nothing written', async () => {
        await b.tagging(contactId, vip);
        for (const write of [add, replace, remove]) {
          // The first identifier is valid: the failure of the second undoes everything.
          await refused(() => write(ids(lead, 999999)), 404, 'not_found', '/data/1/id');
          await refused(() => write(ids(alumni, foreignTag)), 404, 'not_found', '/data/1/id');
          const res = await refused(() => write(ids(secondSiteTag)), 404, 'not_found', '/data/0/id');
          assertResponseMatchesUpstream(write === add ? 'post' : write === replace ? 'patch' : 'delete', UPSTREAM_PATH, res);
        }
        await expectEvents([]);
      });

      it('contacts of other accounts and unknown contacts are 404', async () => {
        for (const write of [add, replace, remove]) {
          await refused(() => write(ids(vip), foreignContact), 404, 'not_found');
          await refused(() => write(ids(vip), 999999), 404, 'not_found');
          await refused(() => write(ids(vip), 'abc'), 404, 'not_found');
        }
      });

      it('needs manage:contacts (403) and a token (401)', async () => {
        const viewer = await t.keyWith(t.tenant.ownerId, ['view:contacts']);
        for (const write of [add, replace, remove]) {
          const res = await refused(() => write(ids(vip), contactId, viewer.token), 403, 'forbidden');
          assertResponseMatchesUpstream(write === add ? 'post' : write === replace ? 'patch' : 'delete', UPSTREAM_PATH, res);
        }
        const res = await refused(
          () => t.request({ method: 'POST', url: url(), headers: { 'content-type': 'application/vnd.api+json' }, payload: JSON.stringify(ids(vip)) }),
          401,
        );
        assertResponseMatchesUpstream('post', UPSTREAM_PATH, res);
      });
    });
  });
}
