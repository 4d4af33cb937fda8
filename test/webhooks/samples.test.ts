// GET /v1/hooks/<event>_sample: each of the six samples is an array of JSON:API resources with id
// "0" in the upstream's order, valid against the upstream sample schema, behind the permissions
// of creating a hook for the event; and the payload builder renders a real record exactly as GET.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildPayload, PAYLOAD_TYPES } from '../../src/webhooks/payloads.js';
import { builders, type Builders } from '../support/builders.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from '../support/harness.js';
import { withoutDivergences } from '../support/upstream-divergences.js';
import { upstreamMismatches, UPSTREAM_SKIP_REASON } from '../support/upstream.js';
import { withSharedPartsInline } from '../support/openapi-document.js';

const JSONAPI = 'application/vnd.api+json';

for (const dialect of DIALECTS) {
  describe(`hook samples [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let b: Builders;

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      b = builders(t);
    });
    after(() => t.close());

    for (const [event, types] of Object.entries(PAYLOAD_TYPES)) {
      it(`GET /v1/hooks/${event}_sample: ${types.join(', ')} with id "0", in the upstream's shape`, async () => {
        const res = await t.get(`/v1/hooks/${event}_sample`, token);
        assert.equal(res.statusCode, 200, res.body);
        assert.match(String(res.headers['content-type']), /^application\/vnd\.api\+json/);
        const payload = res.json() as Array<{ id: string; type: string; attributes: Record<string, unknown>; relationships?: Record<string, { data: unknown }> }>;
        assert.deepEqual(
          payload.map((r) => r.type),
          types,
        );
        for (const record of payload) {
          assert.equal(record.id, '0');
          assert.ok(Object.keys(record.attributes).length > 0, `${record.type} has its attributes`);
          const site = record.relationships?.site?.data as { id: string } | undefined;
          if (site) assert.equal(site.id, String(t.tenant.siteId), 'the site is the key\'s');
        }
        if (!UPSTREAM_SKIP_REASON) {
          const problems = upstreamMismatches('GET', `/v1/hooks/${event}_sample`, 200, withoutDivergences({ data: payload }).data, { contentType: JSONAPI });
          assert.deepEqual(problems, [], `${event} sample against the upstream schema`);
        }
      });
    }

    it('the samples match the served OpenAPI document', async () => {
      const doc = withSharedPartsInline((await t.get('/v1/openapi.json')).json());
      for (const event of Object.keys(PAYLOAD_TYPES)) {
        const op = doc.paths[`/v1/hooks/${event}_sample`]?.get;
        assert.ok(op, `${event} sample is documented`);
        for (const status of ['200', '401', '403']) assert.ok(op.responses[status], `${event} documents ${status}`);
      }
    });

    it('needs manage:hooks, view:hooks and the event\'s permissions, naming what is missing', async () => {
      const noHooks = (await t.keyWith(t.tenant.ownerId, ['view:contacts', 'view:hooks'])).token;
      let res = await t.get('/v1/hooks/tag_added_sample', noHooks);
      assert.equal(res.statusCode, 403, res.body);
      assert.match(res.json().errors[0].detail, /lacks manage:hooks/);
      const hooksOnly = (await t.keyWith(t.tenant.ownerId, ['view:hooks', 'manage:hooks'])).token;
      res = await t.get('/v1/hooks/tag_added_sample', hooksOnly);
      assert.equal(res.statusCode, 403);
      assert.match(res.json().errors[0].detail, /lacks view:contacts/);
      res = await t.get('/v1/hooks/order_created_sample', (await t.keyWith(t.tenant.ownerId, ['view:hooks', 'manage:hooks', 'view:transactions'])).token);
      assert.equal(res.statusCode, 403);
      assert.match(res.json().errors[0].detail, /lacks view:orders/);
      const tags = (await t.keyWith(t.tenant.ownerId, ['view:hooks', 'manage:hooks', 'view:contacts'])).token;
      assert.equal((await t.get('/v1/hooks/tag_removed_sample', tags)).statusCode, 200);
      assert.equal((await t.get('/v1/hooks/tag_added_sample')).statusCode, 401);
      assert.equal((await t.get('/v1/hooks/tag_added_sample?include=x', token)).statusCode, 400);
    });

    it('the payload builder renders a real record exactly as GET /v1/<type>/<id> does', async () => {
      const tagId = await b.tag('Real tag');
      const contactId = await b.contact({ email: 'real@example.com' });
      const formId = await b.form();
      const submissionId = await b.submission({ formId, contactId });
      const row = (table: 'contact_tags' | 'form_submissions', id: number) => t.handle.db.selectFrom(table).selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      const [submission] = buildPayload(t.app.engine, 'form_submission', [
        { type: 'form_submissions', row: await row('form_submissions', submissionId) },
      ]);
      assert.deepEqual(submission, (await t.get(`/v1/form_submissions/${submissionId}`, token)).json().data);
      const contactShown = (await t.get(`/v1/contacts/${contactId}`, token)).json().data;
      assert.equal(contactShown.links.self, `${PUBLIC_URL}/v1/contacts/${contactId}`);
      const payload = buildPayload(t.app.engine, 'tag_added', [
        { type: 'contacts', row: { ...(await t.handle.db.selectFrom('contacts').selectAll().where('id', '=', contactId).executeTakeFirstOrThrow()), external_user_id: null } },
        { type: 'contact_tags', row: await row('contact_tags', tagId) },
      ]);
      assert.deepEqual(payload[1], (await t.get(`/v1/contact_tags/${tagId}`, token)).json().data);
      assert.deepEqual(payload[0]!.attributes, contactShown.attributes);
      assert.throws(() => buildPayload(t.app.engine, 'tag_added', [{ type: 'contact_tags', row: { id: 1 } }]), /must be contacts/);
    });
  });
}
