// The audit log (docs/operations.md "Audit log"): each administrative action, done over the API
// with a key's token, in the console as a signed-in user, or by a CLI command, leaves exactly one
// row naming who did it and to what; a refused action leaves none (a failed sign-in excepted);
// no row holds a secret. GET /v1/audit_events lists them (filters, newest first, pages, 403 without
// view:audit_events, a non-owner's key sees its own user's rows), the console's Audit log page is
// the owner's, and retention removes old rows in batches.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { recordAuditEvent, SYSTEM_ACTOR } from '../../src/audit/audit-events.js';
import { pruneAuditEvents } from '../../src/audit/retention.js';
import { hashPassword } from '../../src/console/passwords.js';
import { ConsoleSessions } from '../../src/console/sessions.js';
import { createUser } from '../../src/domain/accounts.js';
import { saveSnapshot, SEED_SNAPSHOT } from '../../src/domain/snapshots.js';
import { formBody, signInToConsole, type ConsoleBrowser } from '../support/console.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { assertError, otherAccount, send } from '../support/writes.js';

interface Row {
  id: unknown;
  account_id: unknown;
  action: string;
  actor_kind: string;
  actor_api_key_id: unknown;
  actor_user_id: unknown;
  actor_label: string;
  target_type: string | null;
  target_id: string | null;
  details: unknown;
  source_address: string | null;
}

const hookBody = (attributes: Record<string, unknown>, siteId: number) => ({
  data: { type: 'hooks', attributes, relationships: { site: { data: { type: 'sites', id: String(siteId) } } } },
});

for (const dialect of DIALECTS) {
  describe(`audit log [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let tenantKeyId: number;
    /** Every secret the suite has seen: none may be in any row. */
    const secrets: string[] = [];

    /** The rows written since `mark` (an id), oldest first. */
    const rowsSince = async (mark: number): Promise<Row[]> =>
      (await t.handle.db.selectFrom('audit_events').selectAll().where('id', '>', mark).orderBy('id').execute()) as unknown as Row[];
    const lastId = async () => Number((await t.handle.db.selectFrom('audit_events').select((eb) => eb.fn.max('id').as('m')).executeTakeFirst())?.m ?? 0);
    const detailsOf = (row: Row) => (typeof row.details === 'string' ? JSON.parse(row.details) : row.details) as Record<string, unknown>;

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      secrets.push(t.tenant.clientSecret);
      const key = await t.handle.db.selectFrom('api_keys').select('id').where('client_id', '=', t.tenant.clientId).executeTakeFirstOrThrow();
      tenantKeyId = Number(key.id);
    });
    after(() => t.close());

    it('records hooks created, secret rotated, re-enabled and deleted over the API, once each, as the key', async () => {
      const mark = await lastId();
      const created = await send(t, 'POST', '/v1/hooks', token, hookBody({ event: 'tag_added', target_url: 'https://receiver.example/in' }, t.tenant.siteId));
      assert.equal(created.statusCode, 201, created.body);
      const hookId = created.json().data.id as string;
      secrets.push(created.json().data.meta.signing_secret);
      const rotated = await send(t, 'POST', `/v1/hooks/${hookId}/rotate_secret`, token);
      assert.equal(rotated.statusCode, 200, rotated.body);
      secrets.push(rotated.json().data.meta.signing_secret);
      // Enabling an enabled hook does nothing, and records nothing.
      assert.equal((await send(t, 'POST', `/v1/hooks/${hookId}/enable`, token)).statusCode, 200);
      await t.handle.db.updateTable('hooks').set({ disabled_at: t.handle.traits.encodeTimestamp(t.clock.now()) }).where('id', '=', Number(hookId)).execute();
      assert.equal((await send(t, 'POST', `/v1/hooks/${hookId}/enable`, token)).statusCode, 200);
      assert.equal((await send(t, 'DELETE', `/v1/hooks/${hookId}`, token)).statusCode, 204);

      const rows = await rowsSince(mark);
      assert.deepEqual(
        rows.map((r) => r.action),
        ['hook.created', 'hook.secret_rotated', 'hook.enabled', 'hook.deleted'],
      );
      for (const row of rows) {
        assert.equal(Number(row.account_id), t.tenant.accountId);
        assert.equal(row.actor_kind, 'api_key');
        assert.equal(Number(row.actor_api_key_id), tenantKeyId);
        assert.equal(Number(row.actor_user_id), t.tenant.ownerId);
        assert.equal(row.actor_label, t.tenant.clientId);
        assert.equal(row.source_address, '127.0.0.1');
        assert.equal(row.target_type, 'hooks');
        assert.equal(row.target_id, hookId);
      }
      assert.deepEqual(detailsOf(rows[0]!), { site_id: t.tenant.siteId, event: 'tag_added', target_url: 'https://receiver.example/in', resource_id: null });
    });

    it('records nothing for a refused hook write', async () => {
      const mark = await lastId();
      assertError(await send(t, 'POST', '/v1/hooks', token, hookBody({ event: 'tag_added', target_url: 'not a url' }, t.tenant.siteId)), 422);
      assertError(await send(t, 'POST', '/v1/hooks', token, hookBody({ event: 'tag_added', target_url: 'https://receiver.example/x', resource_id: 999_999 }, t.tenant.siteId)), 422);
      assert.equal((await send(t, 'DELETE', '/v1/hooks/999999', token)).statusCode, 404);
      const readOnly = await t.keyWith(t.tenant.ownerId, ['view:hooks']);
      secrets.push(readOnly.clientSecret);
      const afterKey = await lastId();
      assertError(await send(t, 'POST', '/v1/hooks', readOnly.token, hookBody({ event: 'tag_added', target_url: 'https://receiver.example/x' }, t.tenant.siteId)), 403);
      const rows = await rowsSince(mark);
      // Only the key the harness made (sitebiz itself, as seeding does).
      assert.deepEqual(rows.map((r) => [r.action, r.actor_kind]), [['api_key.created', 'system']]);
      assert.equal(await lastId(), afterKey);
    });

    it('records a snapshot restore and a reset as the key, and nothing for a reset without a seed or an unknown snapshot', async () => {
      const saved = await send(t, 'POST', '/v1/test_helpers/snapshots', token, { data: { type: 'snapshots', attributes: { name: 'audit-before' } } });
      assert.equal(saved.statusCode, 201, saved.body);
      const mark = await lastId();
      assert.equal((await send(t, 'POST', '/v1/test_helpers/snapshots/audit-before/restore', token)).statusCode, 200);
      assertError(await send(t, 'POST', '/v1/test_helpers/snapshots/nonesuch/restore', token), 404);
      const reset = await send(t, 'POST', '/v1/test_helpers/reset', token);
      assert.ok(reset.statusCode >= 400 && reset.statusCode < 500, reset.body);
      const rows = await rowsSince(mark);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.action, 'sandbox.snapshot_restored');
      assert.equal(rows[0]!.target_type, 'snapshots');
      assert.equal(rows[0]!.target_id, 'audit-before');
      assert.equal(rows[0]!.actor_kind, 'api_key');
      assert.equal(typeof detailsOf(rows[0]!).restored_rows, 'number');

      // With a seed snapshot (as a seeded account has), a reset is recorded as one.
      await saveSnapshot(t.handle, t.tenant.accountId, SEED_SNAPSHOT, t.clock.now());
      const beforeReset = await lastId();
      assert.equal((await send(t, 'POST', '/v1/test_helpers/reset', token)).statusCode, 200);
      const resets = await rowsSince(beforeReset);
      assert.deepEqual(resets.map((r) => [r.action, r.target_id, r.actor_kind]), [['sandbox.reset', SEED_SNAPSHOT, 'api_key']]);
    });

    it('records snapshot saves and deletes as the key, and nothing for a refused save or delete', async () => {
      const save = (name: string) => send(t, 'POST', '/v1/test_helpers/snapshots', token, { data: { type: 'snapshots', attributes: { name } } });
      // A contact, so the snapshot has rows to count.
      assert.equal((await send(t, 'POST', '/v1/contacts', token, { data: { type: 'contacts', attributes: { email: 'audit-snapshot@example.com' }, relationships: { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } } } })).statusCode, 201);
      const mark = await lastId();
      const saved = await save('audit-saved');
      assert.equal(saved.statusCode, 201, saved.body);
      assertError(await save('audit-saved'), 409);
      assertError(await save('seed'), 422);
      assertError(await send(t, 'DELETE', `/v1/test_helpers/snapshots/${SEED_SNAPSHOT}`, token), 409);
      assert.equal((await send(t, 'DELETE', '/v1/test_helpers/snapshots/audit-saved', token)).statusCode, 204);
      assertError(await send(t, 'DELETE', '/v1/test_helpers/snapshots/audit-saved', token), 404);
      const rows = await rowsSince(mark);
      assert.deepEqual(rows.map((r) => [r.action, r.actor_kind, r.target_type, r.target_id]), [
        ['sandbox.snapshot_saved', 'api_key', 'snapshots', 'audit-saved'],
        ['sandbox.snapshot_deleted', 'api_key', 'snapshots', 'audit-saved'],
      ]);
      const totalRows = saved.json().data.attributes.total_rows as number;
      assert.ok(totalRows > 0);
      assert.deepEqual(detailsOf(rows[0]!), { saved_rows: totalRows, replaced: false });
    });

    describe('the console', () => {
      let owner: ConsoleBrowser;
      before(async () => {
        owner = await signInToConsole(t);
      });

      it('records the link sign-in, and the keys created, rotated and deleted, as the signed-in user', async () => {
        const signedIn = (await rowsSince(0)).filter((r) => r.action === 'console.signed_in');
        assert.equal(signedIn.length, 1);
        assert.equal(Number(signedIn[0]!.actor_user_id), t.tenant.ownerId);
        assert.deepEqual(detailsOf(signedIn[0]!), { method: 'link' });

        const mark = await lastId();
        const created = await owner.post('/console/keys', { name: 'CRM sync', user_id: String(t.tenant.ownerId), permissions: ['view:sites', 'view:contacts'] });
        assert.equal(created.statusCode, 200, created.body);
        const secret = /id="client-secret">([^<]*)</.exec(created.body)?.[1];
        assert.ok(secret);
        secrets.push(secret);
        const key = await t.handle.db.selectFrom('api_keys').select(['id', 'client_id']).where('name', '=', 'CRM sync').executeTakeFirstOrThrow();
        const rotated = await owner.post(`/console/keys/${key.id}/rotate`);
        assert.equal(rotated.statusCode, 200, rotated.body);
        secrets.push(/id="client-secret">([^<]*)</.exec(rotated.body)?.[1] ?? '');
        assert.equal((await owner.post(`/console/keys/${key.id}/delete`)).statusCode, 303);
        // Another account's key, or one gone: a 404, nothing recorded.
        assert.equal((await owner.post(`/console/keys/${key.id}/delete`)).statusCode, 404);

        const rows = await rowsSince(mark);
        assert.deepEqual(rows.map((r) => r.action), ['api_key.created', 'api_key.rotated', 'api_key.deleted']);
        for (const row of rows) {
          assert.equal(row.actor_kind, 'console_user');
          assert.equal(Number(row.actor_user_id), t.tenant.ownerId);
          assert.equal(row.actor_api_key_id, null);
          assert.match(row.actor_label, /@/);
          assert.equal(row.source_address, '127.0.0.1');
          assert.equal(row.target_type, 'api_keys');
          assert.equal(row.target_id, String(key.id));
        }
        assert.deepEqual(detailsOf(rows[0]!), { name: 'CRM sync', client_id: key.client_id, user_id: t.tenant.ownerId, permissions: ['view:contacts', 'view:sites'] });
      });

      it('records hooks created and deleted on the Webhooks page as the signed-in user', async () => {
        const site = t.tenant.siteId;
        const mark = await lastId();
        const made = await owner.post(`/console/webhooks?site=${site}`, { site: String(site), event: 'tag_added', target_url: 'https://receiver.example/console' });
        assert.equal(made.statusCode, 201, made.body);
        const hookId = /href="\/console\/webhooks\/(\d+)\?site=/.exec(made.body)?.[1];
        assert.ok(hookId);
        assert.equal((await owner.post(`/console/webhooks/${hookId}/delete?site=${site}`)).statusCode, 303);
        const rows = await rowsSince(mark);
        assert.deepEqual(rows.map((r) => [r.action, r.actor_kind, Number(r.actor_user_id), r.target_id, r.source_address]), [
          ['hook.created', 'console_user', t.tenant.ownerId, hookId, '127.0.0.1'],
          ['hook.deleted', 'console_user', t.tenant.ownerId, hookId, '127.0.0.1'],
        ]);
      });

      it('records a password sign-in with its session, and a failed one without a session', async () => {
        const password = 'a long enough password';
        secrets.push(password);
        const users = new ConsoleSessions(t.handle, t.clock.now);
        const mark = await lastId();
        await users.setPassword(t.tenant.ownerId, await hashPassword(password), SYSTEM_ACTOR);
        const email = (await t.handle.db.selectFrom('users').select('email').where('id', '=', t.tenant.ownerId).executeTakeFirstOrThrow()).email;
        const signIn = (pw: string, as = email) =>
          t.app.inject({ method: 'POST', url: '/console/sign-in', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: formBody({ email: as, password: pw }) });
        const sessions = async () => Number((await t.handle.db.selectFrom('console_sessions').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
        const before = await sessions();
        assert.equal((await signIn('not the password')).statusCode, 401);
        assert.equal((await signIn('not the password', 'nobody@example.com')).statusCode, 401, 'an email of no user: no account to record it in');
        assert.equal(await sessions(), before);
        assert.equal((await signIn(password)).statusCode, 303);
        assert.equal(await sessions(), before + 1);

        const rows = await rowsSince(mark);
        assert.deepEqual(rows.map((r) => r.action), ['user.password_set', 'console.sign_in_failed', 'console.signed_in']);
        assert.equal(rows[0]!.target_id, String(t.tenant.ownerId));
        for (const row of rows.slice(1)) {
          assert.equal(row.actor_kind, 'console_user');
          assert.equal(Number(row.actor_user_id), t.tenant.ownerId);
          assert.equal(row.actor_label, email);
          assert.equal(row.source_address, '127.0.0.1');
          assert.deepEqual(detailsOf(row), { method: 'password' });
        }
        owner = await signInToConsole(t);
      });

      it('shows the owner the Audit log page with its filters, and refuses it to other roles', async () => {
        const page = await owner.get('/console/audit');
        assert.equal(page.statusCode, 200, page.body);
        assert.match(page.body, /<h1[^>]*>Audit log<\/h1>/);
        assert.match(page.body, /api_key\.created/);
        assert.match(page.body, /hook\.deleted/);
        assert.match(page.body, /href="\/console\/audit/, 'in the navigation');
        const filtered = await owner.get('/console/audit?action=hook.deleted&from=2000-01-01&to=2999-12-31');
        assert.equal(filtered.statusCode, 200);
        assert.match(filtered.body, /<code>hook\.deleted<\/code>/);
        assert.doesNotMatch(filtered.body, /<code>api_key\.created<\/code>/);
        const none = await owner.get('/console/audit?to=2000-01-01');
        assert.match(none.body, /No audit event matches these filters/);

        const adminId = await createUser(t.handle, { accountId: t.tenant.accountId, name: 'Ada Admin', email: `ada-${dialect}@example.com`, role: 'administrator', siteIds: [t.tenant.siteId] }, t.clock);
        const admin = await signInToConsole(t, adminId);
        assert.equal((await admin.get('/console/audit')).statusCode, 403);
        assert.doesNotMatch((await admin.get('/console')).body, /href="\/console\/audit/);
      });

      it('records a snapshot saved and deleted on the Sandbox page, then the sign-out, as the signed-in user', async () => {
        const mark = await lastId();
        assert.equal((await owner.post('/console/sandbox/snapshots', { name: 'console-saved' })).statusCode, 303);
        assert.equal((await owner.post('/console/sandbox/snapshots/console-saved/delete')).statusCode, 303);
        assert.equal((await owner.post('/console/sign-out')).statusCode, 303);
        // The cookie's session is gone: signing out again is not a second sign-out.
        assert.notEqual((await owner.post('/console/sign-out')).statusCode, 303);
        const rows = await rowsSince(mark);
        assert.deepEqual(rows.map((r) => [r.action, r.actor_kind, Number(r.actor_user_id), r.target_type, r.target_id, r.source_address]), [
          ['sandbox.snapshot_saved', 'console_user', t.tenant.ownerId, 'snapshots', 'console-saved', '127.0.0.1'],
          ['sandbox.snapshot_deleted', 'console_user', t.tenant.ownerId, 'snapshots', 'console-saved', '127.0.0.1'],
          ['console.signed_out', 'console_user', t.tenant.ownerId, 'users', String(t.tenant.ownerId), '127.0.0.1'],
        ]);
      });
    });

    describe('GET /v1/audit_events', () => {
      const list = async (query: string, as = token) => {
        const res = await t.get(`/v1/audit_events${query}`, as);
        assert.equal(res.statusCode, 200, res.body);
        return res.json() as { data: Array<{ id: string; type: string; attributes: Record<string, any> }>; meta: Record<string, number>; links: Record<string, string | null> };
      };

      it('lists the account\'s events newest first, in pages, and shows one', async () => {
        const all = await list('?page[size]=100');
        const expected = await t.handle.db.selectFrom('audit_events').select('id').where('account_id', '=', t.tenant.accountId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
        assert.deepEqual(all.data.map((r) => r.id), expected.map((r) => String(r.id)));
        assert.equal(all.meta.total_count, expected.length);
        const times = all.data.map((r) => Date.parse(r.attributes.created_at));
        assert.deepEqual(times, [...times].sort((a, b) => b - a));
        const first = await list('?page[size]=2&page[number]=1');
        const second = await list('?page[size]=2&page[number]=2');
        assert.deepEqual([...first.data, ...second.data].map((r) => r.id), all.data.slice(0, 4).map((r) => r.id));
        assert.ok(first.links.next);

        const one = all.data.find((r) => r.attributes.action === 'hook.created' && r.attributes.actor_kind === 'api_key')!;
        const shown = await t.get(`/v1/audit_events/${one.id}`, token);
        assert.equal(shown.statusCode, 200);
        assert.deepEqual(shown.json().data.attributes, one.attributes);
        assert.equal(one.type, 'audit_events');
        assert.equal(one.attributes.actor_kind, 'api_key');
        assert.equal(one.attributes.actor_api_key_id, String(tenantKeyId));
        assert.equal(one.attributes.details.event, 'tag_added');
      });

      it('filters by action and by created_at', async () => {
        const deleted = await list('?filter[action]=hook.deleted,api_key.deleted');
        assert.deepEqual([...new Set(deleted.data.map((r) => r.attributes.action))].sort(), ['api_key.deleted', 'hook.deleted']);
        assert.equal((await list('?filter[action_eq]=hook.created')).data.length, 2, 'the API\'s and the console\'s');
        assert.equal((await list('?filter[action_in]=hook.created,hook.enabled')).data.length, 3);
        assert.ok((await list('?filter[action_start]=console.')).data.every((r) => r.attributes.action.startsWith('console.')));

        const at = t.clock.now();
        await recordAuditEvent(t.handle, { accountId: t.tenant.accountId, action: 'sandbox.reset', actor: SYSTEM_ACTOR, at: new Date(at.getTime() + 3_600_000) });
        const future = String(await lastId());
        const later = await list(`?filter[created_at_gt]=${encodeURIComponent(new Date(at.getTime() + 60_000).toISOString())}`);
        assert.deepEqual(later.data.map((r) => r.id), [future]);
        const earlier = await list(`?filter[created_at_lte]=${encodeURIComponent(at.toISOString())}&page[size]=100`);
        assert.ok(earlier.data.length > 0 && earlier.data.every((r) => r.id !== future));
        assertError(await t.get('/v1/audit_events?filter[created_at_gt]=yesterday', token), 400);
        assertError(await t.get('/v1/audit_events?filter[actor_label_eq]=x', token), 400);
      });

      it('needs view:audit_events, shows a non-owner only its own user\'s events and never another account\'s', async () => {
        const without = await t.keyWith(t.tenant.ownerId, ['view:sites']);
        secrets.push(without.clientSecret);
        const refused = await t.get('/v1/audit_events', without.token);
        assertError(refused, 403);
        assert.match(refused.json().errors[0].detail, /view:audit_events/);

        const other = await otherAccount(t);
        await recordAuditEvent(t.handle, { accountId: other.accountId, action: 'sandbox.reset', actor: SYSTEM_ACTOR, at: t.clock.now() });
        const theirs = await t.handle.db.selectFrom('audit_events').select('id').where('account_id', '=', other.accountId).executeTakeFirstOrThrow();
        assert.ok((await list('?page[size]=100')).data.every((r) => r.id !== String(theirs.id)));
        assert.equal((await t.get(`/v1/audit_events/${theirs.id}`, token)).statusCode, 404);

        const assistantId = await createUser(t.handle, { accountId: t.tenant.accountId, name: 'Sam Assist', email: `sam-${dialect}@example.com`, role: 'assistant', siteIds: [t.tenant.siteId] }, t.clock);
        const assistant = await t.keyWith(assistantId, ['view:audit_events', 'view:hooks', 'manage:hooks', 'view:contacts']);
        secrets.push(assistant.clientSecret);
        assert.equal((await list('', assistant.token)).data.length, 0, 'the system made its key: not its own action');
        const made = await send(t, 'POST', '/v1/hooks', assistant.token, hookBody({ event: 'tag_added', target_url: 'https://receiver.example/sam' }, t.tenant.siteId));
        assert.equal(made.statusCode, 201, made.body);
        secrets.push(made.json().data.meta.signing_secret);
        const own = await list('', assistant.token);
        assert.deepEqual(own.data.map((r) => [r.attributes.action, r.attributes.actor_user_id]), [['hook.created', String(assistantId)]]);
      });

      it('keeps no secret in any row', async () => {
        const rows = await t.handle.db.selectFrom('audit_events').selectAll().execute();
        const text = JSON.stringify(rows);
        assert.ok(secrets.length >= 8);
        for (const secret of secrets) assert.ok(secret && !text.includes(secret), 'a secret is in the audit log');
        assert.doesNotMatch(text, /whsec_|sbzsec_|scrypt\$/);
      });
    });

    it('removes rows past retention in batches, and keeps the rest', async () => {
      const now = t.clock.now();
      const day = 86_400_000;
      for (let i = 0; i < 5; i++) {
        await recordAuditEvent(t.handle, { accountId: t.tenant.accountId, action: 'sandbox.reset', actor: SYSTEM_ACTOR, at: new Date(now.getTime() - (400 + i) * day) });
      }
      await recordAuditEvent(t.handle, { accountId: t.tenant.accountId, action: 'sandbox.reset', actor: SYSTEM_ACTOR, at: new Date(now.getTime() - 300 * day) });
      const count = async () => Number((await t.handle.db.selectFrom('audit_events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const before = await count();
      // In batches of 2: three statements for five rows.
      assert.equal(await pruneAuditEvents(t.handle, new Date(now.getTime() - 365 * day), 2), 5);
      assert.equal(await count(), before - 5);
      // The app's own run, with AUDIT_RETENTION_DAYS=365 (the default): nothing more is that old.
      assert.equal(t.config.auditRetentionDays, 365);
      assert.equal(await t.app.auditRetention.runOnce(), 0);
      t.clock.advance(70 * 86_400);
      assert.equal(await t.app.auditRetention.runOnce(), 1, 'the 300-day-old row is past 365 days 70 days later');
    });
  });
}
