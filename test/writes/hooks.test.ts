// POST /v1/hooks, DELETE /v1/hooks/{id} and POST /v1/hooks/{id}/rotate_secret: the upstream
// body, the signing secret shown once, the per-event permissions, every refusal with its status
// and source.pointer (and proof that it wrote nothing), tenancy.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { builders, type Builders } from '../support/builders.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from '../support/harness.js';
import { assertResponseMatchesUpstream } from '../support/upstream.js';
import { withoutDivergences } from '../support/upstream-divergences.js';
import { assertError, otherAccount, rowCounts, rowsOf, send, type Res } from '../support/writes.js';

/** Standard Webhooks: `whsec_` and the base64 of at least 24 bytes. */
function assertSigningSecret(secret: unknown): asserts secret is string {
  assert.equal(typeof secret, 'string');
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret as string);
  assert.ok(match, `a whsec_ secret: ${String(secret)}`);
  assert.ok(Buffer.from(match[1]!, 'base64').length >= 24, 'at least 24 random bytes');
}

for (const dialect of DIALECTS) {
  describe(`hook writes [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let b: Builders;
    let tagId: number;
    let formId: number;
    let offerId: number;
    let foreignTag: number;
    let foreignSite: number;
    let foreignHook: number;

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      b = builders(t);
      tagId = await b.tag('VIP');
      formId = await b.form();
      offerId = await b.offer();
      const other = await otherAccount(t);
      foreignSite = other.siteId;
      foreignTag = await b.forSite(other.siteId).tag('Theirs');
      const at = t.handle.traits.encodeTimestamp(t.clock.now());
      const row = await t.handle.db
        .insertInto('hooks')
        .values({ site_id: other.siteId, event: 'purchase', target_url: 'https://theirs.example/in', resource_id: null, signing_secret: null, previous_signing_secret: null, previous_secret_expires_at: null, created_at: at, updated_at: at })
        .returning('id')
        .executeTakeFirstOrThrow();
      foreignHook = Number(row.id);
    });
    after(() => t.close());

    const site = (id: number | string = t.tenant.siteId) => ({ site: { data: { type: 'sites', id: String(id) } } });
    const body = (attributes: Record<string, unknown>, relationships: Record<string, unknown> = site()) => ({ data: { type: 'hooks', attributes, relationships } });
    const create = (doc: unknown, as = token) => send(t, 'POST', '/v1/hooks', as, doc);
    const remove = (id: number | string, as = token) => send(t, 'DELETE', `/v1/hooks/${id}`, as);
    const rotate = (id: number | string, as = token) => send(t, 'POST', `/v1/hooks/${id}/rotate_secret`, as);
    const keyWith = async (permissions: string[]) => (await t.keyWith(t.tenant.ownerId, permissions)).token;
    const hookRow = (id: number | string) => t.handle.db.selectFrom('hooks').selectAll().where('id', '=', Number(id)).executeTakeFirst();

    async function refused(run: () => Promise<Res>, status: number, code?: string, pointer?: string): Promise<Res> {
      const hooks = await rowsOf(t, 'hooks');
      const res = await run();
      assertError(res, status, code, pointer);
      assert.deepEqual(await rowsOf(t, 'hooks'), hooks, 'a refused request changes no hook');
      return res;
    }

    describe('POST /v1/hooks', () => {
      it('creates a wildcard hook: 201, Location, the upstream shape, and the signing secret once', async () => {
        const res = await create(body({ target_url: 'https://receiver.example/hooks?x=1', event: 'purchase' }));
        assert.equal(res.statusCode, 201, res.body);
        const doc = res.json();
        const self = `${PUBLIC_URL}/v1/hooks/${doc.data.id}`;
        assert.equal(res.headers.location, self);
        assert.deepEqual(doc.data.attributes, {
          event: 'purchase',
          target_url: 'https://receiver.example/hooks?x=1',
          resource_id: null,
          created_at: t.clock.now().toISOString(),
          updated_at: t.clock.now().toISOString(),
          disabled_at: null,
          failing_since: null,
        });
        assert.deepEqual(doc.data.relationships.site.data, { type: 'sites', id: String(t.tenant.siteId) });
        assertSigningSecret(doc.data.meta.signing_secret);
        // disabled_at and failing_since are sitebiz's own (docs/upstream-divergences.md).
        assertResponseMatchesUpstream('post', '/v1/hooks', { statusCode: res.statusCode, headers: res.headers, body: JSON.stringify(withoutDivergences(res.json())) });
        const row = await hookRow(doc.data.id);
        assert.equal(row?.signing_secret, doc.data.meta.signing_secret, 'stored as given, for signing deliveries');
        const shown = await t.get(`/v1/hooks/${doc.data.id}`, token);
        assert.equal(shown.statusCode, 200);
        assert.equal(shown.json().data.meta, undefined, 'never shown again');
        assert.ok(!shown.body.includes(doc.data.meta.signing_secret));
        const listed = await t.get('/v1/hooks', token);
        assert.ok(!listed.body.includes(doc.data.meta.signing_secret));
      });

      it('gives every hook its own secret', async () => {
        const one = (await create(body({ target_url: 'http://localhost:4000/a', event: 'tag_added' }))).json();
        const two = (await create(body({ target_url: 'http://localhost:4000/a', event: 'tag_added' }))).json();
        assert.notEqual(one.data.meta.signing_secret, two.data.meta.signing_secret);
      });

      it('limits a hook to a record of the kind its event is about, in its site', async () => {
        for (const [event, id] of [
          ['tag_added', tagId],
          ['tag_removed', tagId],
          ['form_submission', formId],
          ['purchase', offerId],
          ['payment_succeeded', offerId],
          ['order_created', offerId],
        ] as const) {
          const res = await create(body({ target_url: 'https://receiver.example/x', event, resource_id: id }));
          assert.equal(res.statusCode, 201, `${event}: ${res.body}`);
          assert.equal(res.json().data.attributes.resource_id, id);
        }
        await refused(() => create(body({ target_url: 'https://receiver.example/x', event: 'tag_added', resource_id: formId === tagId ? formId + 1000 : formId })), 422, 'invalid_attribute', '/data/attributes/resource_id');
        await refused(() => create(body({ target_url: 'https://receiver.example/x', event: 'form_submission', resource_id: 999_999 })), 422, 'invalid_attribute', '/data/attributes/resource_id');
        await refused(() => create(body({ target_url: 'https://receiver.example/x', event: 'tag_added', resource_id: foreignTag })), 422, 'invalid_attribute', '/data/attributes/resource_id');
        await refused(() => create(body({ target_url: 'https://receiver.example/x', event: 'purchase', resource_id: 'abc' })), 422, 'invalid_attribute', '/data/attributes/resource_id');
      });

      it('takes resource_id as a string of digits too, as upstream\'s own example sends it', async () => {
        const res = await create(body({ target_url: 'https://receiver.example/x', event: 'tag_added', resource_id: String(tagId) }));
        assert.equal(res.statusCode, 201, res.body);
        assert.equal(res.json().data.attributes.resource_id, tagId, 'rendered as the integer upstream\'s schema names');
        await refused(() => create(body({ target_url: 'https://receiver.example/x', event: 'tag_added', resource_id: `${tagId}x` })), 422, 'invalid_attribute', '/data/attributes/resource_id');
        await refused(() => create(body({ target_url: 'https://receiver.example/x', event: 'tag_added', resource_id: ` ${tagId}` })), 422, 'invalid_attribute', '/data/attributes/resource_id');
      });

      it('refuses an unknown event and a target_url that is not an absolute http(s) URL', async () => {
        await refused(() => create(body({ target_url: 'https://receiver.example/x', event: 'refund' })), 422, 'invalid_attribute', '/data/attributes/event');
        for (const url of ['/relative', 'receiver.example/x', 'ftp://receiver.example/x', 'javascript:alert(1)', 'https://user:pw@receiver.example/', '']) {
          const res = await refused(() => create(body({ target_url: url, event: 'purchase' })), 422, undefined, '/data/attributes/target_url');
          assert.ok(res.statusCode === 422, url);
        }
        await refused(() => create(body({ event: 'purchase' })), 422, 'missing_attribute', '/data/attributes/target_url');
        await refused(() => create(body({ target_url: 'https://receiver.example/x' })), 422, 'missing_attribute', '/data/attributes/event');
        await refused(() => create(body({ target_url: 'https://receiver.example/x', event: 'purchase' }, {})), 400, 'missing_relationship', '/data/relationships/site');
      });

      it('creates hooks only in sites of the account: another account\'s site is missing', async () => {
        await refused(() => create(body({ target_url: 'https://receiver.example/x', event: 'purchase' }, site(foreignSite))), 404, 'not_found', '/data/relationships/site/data/id');
      });

      it('needs manage:hooks and view:hooks, and the view permissions of the event, naming what is missing', async () => {
        const viewer = await keyWith(['view:hooks', 'view:purchases']);
        await refused(() => create(body({ target_url: 'https://receiver.example/x', event: 'purchase' }), viewer), 403, 'forbidden');
        const hooksOnly = await keyWith(['view:hooks', 'manage:hooks']);
        for (const [event, missing] of [
          ['purchase', 'view:purchases'],
          ['payment_succeeded', 'view:transactions'],
          ['form_submission', 'view:form_submissions'],
          ['tag_added', 'view:contacts'],
          ['tag_removed', 'view:contacts'],
        ] as const) {
          const res = await refused(() => create(body({ target_url: 'https://receiver.example/x', event }), hooksOnly), 403, 'forbidden');
          assert.match(res.json().errors[0].detail, new RegExp(`lacks ${missing}`), event);
        }
        const transactions = await keyWith(['view:hooks', 'manage:hooks', 'view:transactions']);
        const res = await refused(() => create(body({ target_url: 'https://receiver.example/x', event: 'order_created' }), transactions), 403, 'forbidden');
        assert.match(res.json().errors[0].detail, /lacks view:orders/);
        const orders = await keyWith(['view:hooks', 'manage:hooks', 'view:transactions', 'view:orders']);
        assert.equal((await create(body({ target_url: 'https://receiver.example/x', event: 'order_created' }), orders)).statusCode, 201);
      });
    });

    describe('POST /v1/hooks/{id}/rotate_secret', () => {
      it('answers a new secret once and keeps the previous one for 24 hours', async () => {
        const created = (await create(body({ target_url: 'https://receiver.example/r', event: 'purchase' }))).json();
        const first = created.data.meta.signing_secret as string;
        t.clock.advance(60);
        const res = await rotate(created.data.id);
        assert.equal(res.statusCode, 200, res.body);
        const doc = res.json();
        assert.equal(doc.data.id, created.data.id);
        assertSigningSecret(doc.data.meta.signing_secret);
        assert.notEqual(doc.data.meta.signing_secret, first);
        assert.equal(doc.data.attributes.updated_at, t.clock.now().toISOString());
        const row = await hookRow(created.data.id);
        assert.equal(row?.signing_secret, doc.data.meta.signing_secret);
        assert.equal(row?.previous_signing_secret, first);
        assert.equal(new Date(row!.previous_secret_expires_at as string).toISOString(), new Date(t.clock.now().getTime() + 86_400_000).toISOString());
      });

      it('gives a hook made before secrets existed its first secret, with no previous one', async () => {
        const at = t.handle.traits.encodeTimestamp(t.clock.now());
        const row = await t.handle.db
          .insertInto('hooks')
          .values({ site_id: t.tenant.siteId, event: 'purchase', target_url: 'https://old.example/', resource_id: null, signing_secret: null, previous_signing_secret: null, previous_secret_expires_at: null, created_at: at, updated_at: at })
          .returning('id')
          .executeTakeFirstOrThrow();
        const res = await rotate(Number(row.id));
        assert.equal(res.statusCode, 200, res.body);
        const stored = await hookRow(Number(row.id));
        assert.equal(stored?.signing_secret, res.json().data.meta.signing_secret);
        assert.equal(stored?.previous_signing_secret, null);
        assert.equal(stored?.previous_secret_expires_at, null);
      });

      it('is 404 for hooks of other accounts and 403 without manage:hooks', async () => {
        await refused(() => rotate(foreignHook), 404, 'not_found');
        await refused(() => rotate(999_999), 404, 'not_found');
        const created = (await create(body({ target_url: 'https://receiver.example/r', event: 'purchase' }))).json();
        await refused(async () => rotate(created.data.id, await keyWith(['view:hooks'])), 403, 'forbidden');
      });
    });

    describe('DELETE /v1/hooks/{id}', () => {
      it('deletes: 204 with no body, then the hook is missing', async () => {
        const created = (await create(body({ target_url: 'https://receiver.example/d', event: 'tag_added' }))).json();
        const res = await remove(created.data.id);
        assert.equal(res.statusCode, 204, res.body);
        assert.equal(res.body, '');
        assertResponseMatchesUpstream('delete', '/v1/hooks/{id}', res);
        assert.equal((await t.get(`/v1/hooks/${created.data.id}`, token)).statusCode, 404);
        assert.ok(!(await t.get('/v1/hooks', token)).json().data.some((h: { id: string }) => h.id === created.data.id));
        assert.equal(await hookRow(created.data.id), undefined);
        assertError(await remove(created.data.id), 404, 'not_found');
      });

      it('is 404 for hooks of other accounts and 403 without manage:hooks', async () => {
        await refused(() => remove(foreignHook), 404, 'not_found');
        const created = (await create(body({ target_url: 'https://receiver.example/d', event: 'purchase' }))).json();
        await refused(async () => remove(created.data.id, await keyWith(['view:hooks'])), 403, 'forbidden');
        assert.equal((await rowCounts(t, ['hooks'])).hooks! > 0, true);
      });
    });
  });
}
