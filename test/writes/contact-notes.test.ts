// POST /v1/contact_notes, PATCH and DELETE /v1/contact_notes/{id}: success with links.self and
// links.current, every refusal with its status and source.pointer, proof that a refused request
// wrote nothing, tenancy (notes and contacts of other accounts are missing) and permissions.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { builders, type Builders } from '../support/builders.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from '../support/harness.js';
import { assertResponseMatchesUpstream } from '../support/upstream.js';
import { assertError, otherAccount, rowCounts, rowsOf, send, type Res } from '../support/writes.js';

for (const dialect of DIALECTS) {
  describe(`contact note writes [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let b: Builders;
    let contactId: number;
    let foreignContact: number;
    let foreignNote: number;

    const insertNote = async (contact: number, siteId: number, body = 'A note'): Promise<number> => {
      const at = t.handle.traits.encodeTimestamp(t.clock.now());
      const row = await t.handle.db
        .insertInto('contact_notes')
        .values({ site_id: siteId, contact_id: contact, body, created_at: at, updated_at: at })
        .returning('id')
        .executeTakeFirstOrThrow();
      return Number(row.id);
    };

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      b = builders(t);
      contactId = await b.contact({ email: 'noted@example.com' });
      const other = await otherAccount(t);
      foreignContact = await b.forSite(other.siteId).contact({ email: 'foreign@example.com' });
      foreignNote = await insertNote(foreignContact, other.siteId, 'Not yours');
    });
    after(() => t.close());

    const contact = (id: number | string = contactId) => ({ contact: { data: { type: 'contacts', id: String(id) } } });
    const createBody = (attributes: Record<string, unknown>, relationships: Record<string, unknown> = contact()) => ({
      data: { type: 'contact_notes', attributes, relationships },
    });
    const create = (body: unknown, as = token, contentType?: string) => send(t, 'POST', '/v1/contact_notes', as, body, contentType);
    const patch = (id: number | string, body: unknown, as = token) => send(t, 'PATCH', `/v1/contact_notes/${id}`, as, body);
    const remove = (id: number | string, as = token) => send(t, 'DELETE', `/v1/contact_notes/${id}`, as);

    async function refused(run: () => Promise<Res>, status: number, code?: string, pointer?: string): Promise<Res> {
      const counts = await rowCounts(t, ['contact_notes', 'contacts']);
      const notes = await rowsOf(t, 'contact_notes');
      const res = await run();
      assertError(res, status, code, pointer);
      assert.deepEqual(await rowCounts(t, ['contact_notes', 'contacts']), counts, 'a refused request adds or removes no row');
      assert.deepEqual(await rowsOf(t, 'contact_notes'), notes, 'a refused request changes no note');
      return res;
    }

    describe('POST /v1/contact_notes', () => {
      it('creates a note of the contact: 201, Location, links.self and links.current', async () => {
        const res = await create(createBody({ body: 'Called about the workshop' }));
        assert.equal(res.statusCode, 201, res.body);
        const doc = res.json();
        const self = `${PUBLIC_URL}/v1/contact_notes/${doc.data.id}`;
        assert.equal(res.headers.location, self);
        assert.deepEqual(doc.links, { self, current: self });
        assert.equal(doc.data.type, 'contact_notes');
        assert.equal(doc.data.attributes.body, 'Called about the workshop');
        assert.equal(doc.data.attributes.created_at, t.clock.now().toISOString());
        assert.deepEqual(doc.data.relationships.contact.data, { type: 'contacts', id: String(contactId) });
        assertResponseMatchesUpstream('post', '/v1/contact_notes', res);
        const row = await t.handle.db.selectFrom('contact_notes').selectAll().where('id', '=', Number(doc.data.id)).executeTakeFirstOrThrow();
        assert.equal(Number(row.site_id), t.tenant.siteId, "the note lives in its contact's site");
      });

      it('refuses bodies that are not a note document, writing nothing', async () => {
        await refused(() => create('{', token), 400, 'malformed_json');
        await refused(() => create('body=x', token, 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type');
        await refused(() => create({}), 400, 'invalid_document', '/data');
        await refused(() => create({ data: { type: 'notes', attributes: { body: 'x' }, relationships: contact() } }), 409, 'type_mismatch', '/data/type');
        await refused(() => create({ data: { type: 'contact_notes', id: '1', attributes: { body: 'x' }, relationships: contact() } }), 403, 'client_id_unsupported', '/data/id');
      });

      it('refuses missing, blank, mistyped, unknown and read-only attributes', async () => {
        const res = await refused(() => create(createBody({})), 422, 'missing_attribute', '/data/attributes/body');
        assertResponseMatchesUpstream('post', '/v1/contact_notes', res);
        await refused(() => create(createBody({ body: '   ' })), 422, 'missing_attribute', '/data/attributes/body');
        await refused(() => create(createBody({ body: 5 })), 422, 'invalid_attribute', '/data/attributes/body');
        await refused(() => create(createBody({ body: null })), 422, 'invalid_attribute', '/data/attributes/body');
        await refused(() => create(createBody({ body: 'x', title: 'y' })), 422, 'unknown_attribute', '/data/attributes/title');
        await refused(() => create(createBody({ body: 'x', created_at: '2026-01-01T00:00:00Z' })), 422, 'read_only_attribute', '/data/attributes/created_at');
      });

      it('needs a contact relationship naming a contact the token reaches', async () => {
        await refused(() => create(createBody({ body: 'x' }, {})), 400, 'missing_relationship', '/data/relationships/contact');
        await refused(() => create(createBody({ body: 'x' }, { contact: { data: null } })), 400, 'missing_relationship', '/data/relationships/contact');
        await refused(() => create(createBody({ body: 'x' }, { contact: { data: { type: 'customers', id: '1' } } })), 409, 'type_mismatch', '/data/relationships/contact/data/type');
        await refused(() => create(createBody({ body: 'x' }, contact(foreignContact))), 404, 'not_found', '/data/relationships/contact/data/id');
        await refused(() => create(createBody({ body: 'x' }, contact(999999))), 404, 'not_found', '/data/relationships/contact/data/id');
      });

      it('needs manage:contacts (403) and a token (401)', async () => {
        const viewer = await t.keyWith(t.tenant.ownerId, ['view:contacts']);
        await refused(() => create(createBody({ body: 'x' }), viewer.token), 403, 'forbidden');
        const res = await refused(
          () => t.request({ method: 'POST', url: '/v1/contact_notes', headers: { 'content-type': 'application/vnd.api+json' }, payload: JSON.stringify(createBody({ body: 'x' })) }),
          401,
        );
        assertResponseMatchesUpstream('post', '/v1/contact_notes', res);
      });
    });

    describe('PATCH /v1/contact_notes/{id}', () => {
      it('updates the body (the seed operation): 200 with links.self and links.current', async () => {
        const id = await insertNote(contactId, t.tenant.siteId, 'Before');
        t.clock.advance(30);
        const res = await patch(id, { data: { id: String(id), type: 'contact_notes', attributes: { body: 'After' } } });
        assert.equal(res.statusCode, 200, res.body);
        const doc = res.json();
        const self = `${PUBLIC_URL}/v1/contact_notes/${id}`;
        assert.deepEqual(doc.links, { self, current: self });
        assert.equal(doc.data.id, String(id));
        assert.equal(doc.data.attributes.body, 'After');
        assert.equal(doc.data.attributes.updated_at, t.clock.now().toISOString());
        assert.notEqual(doc.data.attributes.created_at, doc.data.attributes.updated_at);
        assertResponseMatchesUpstream('patch', '/v1/contact_notes/{id}', res);
        const unchanged = await patch(id, { data: { id: String(id), type: 'contact_notes', attributes: {} } });
        assert.equal(unchanged.json().data.attributes.body, 'After', 'an update without body keeps it');
      });

      it('refuses a document that does not name this note: missing id 400, other id 409, other type 409', async () => {
        const id = await insertNote(contactId, t.tenant.siteId);
        await refused(() => patch(id, { data: { type: 'contact_notes', attributes: { body: 'x' } } }), 400, 'missing_id', '/data/id');
        await refused(() => patch(id, { data: { id: String(id + 1), type: 'contact_notes', attributes: { body: 'x' } } }), 409, 'id_mismatch', '/data/id');
        await refused(() => patch(id, { data: { id: String(id), type: 'contacts', attributes: { body: 'x' } } }), 409, 'type_mismatch', '/data/type');
        await refused(() => patch(id, { data: { id: Number(id), type: 'contact_notes', attributes: { body: 'x' } } }), 400, 'invalid_id', '/data/id');
        await refused(() => patch(id, { data: { id: String(id), type: 'contact_notes', relationships: contact() } }), 422, 'unknown_relationship', '/data/relationships/contact');
      });

      it('refuses a blank, null or mistyped body and read-only attributes', async () => {
        const id = await insertNote(contactId, t.tenant.siteId);
        const doc = (attributes: Record<string, unknown>) => ({ data: { id: String(id), type: 'contact_notes', attributes } });
        const res = await refused(() => patch(id, doc({ body: '' })), 422, 'missing_attribute', '/data/attributes/body');
        assertResponseMatchesUpstream('patch', '/v1/contact_notes/{id}', res);
        await refused(() => patch(id, doc({ body: null })), 422, 'invalid_attribute', '/data/attributes/body');
        await refused(() => patch(id, doc({ body: ['x'] })), 422, 'invalid_attribute', '/data/attributes/body');
        await refused(() => patch(id, doc({ updated_at: '2026-01-01T00:00:00Z' })), 422, 'read_only_attribute', '/data/attributes/updated_at');
      });

      it('notes of other accounts and missing notes are 404; without manage:contacts 403', async () => {
        const foreign = await refused(
          () => patch(foreignNote, { data: { id: String(foreignNote), type: 'contact_notes', attributes: { body: 'Mine' } } }),
          404,
          'not_found',
        );
        assertResponseMatchesUpstream('patch', '/v1/contact_notes/{id}', foreign);
        await refused(() => patch(999999, { data: { id: '999999', type: 'contact_notes', attributes: { body: 'x' } } }), 404, 'not_found');
        const id = await insertNote(contactId, t.tenant.siteId);
        const viewer = await t.keyWith(t.tenant.ownerId, ['view:contacts']);
        await refused(() => patch(id, { data: { id: String(id), type: 'contact_notes', attributes: { body: 'x' } } }, viewer.token), 403, 'forbidden');
      });
    });

    describe('DELETE /v1/contact_notes/{id}', () => {
      it('answers 200 {"data": {}} and removes only that note', async () => {
        const id = await insertNote(contactId, t.tenant.siteId);
        const keep = await insertNote(contactId, t.tenant.siteId);
        const res = await remove(id);
        assert.equal(res.statusCode, 200, res.body);
        // Upstream documents a 200 without a body; sitebiz answers as DELETE /v1/contacts/{id} does.
        assert.deepEqual(res.json(), { data: {} });
        const left = await t.handle.db.selectFrom('contact_notes').select('id').where('id', 'in', [id, keep]).execute();
        assert.deepEqual(left.map((r) => Number(r.id)), [keep]);
        const again = await refused(() => remove(id), 404, 'not_found');
        assertResponseMatchesUpstream('delete', '/v1/contact_notes/{id}', again);
      });

      it('notes of other accounts are 404; without manage:contacts 403', async () => {
        await refused(() => remove(foreignNote), 404, 'not_found');
        const id = await insertNote(contactId, t.tenant.siteId);
        const viewer = await t.keyWith(t.tenant.ownerId, ['view:contacts']);
        await refused(() => remove(id, viewer.token), 403, 'forbidden');
      });
    });
  });
}
