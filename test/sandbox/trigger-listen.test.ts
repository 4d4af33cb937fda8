// `sitebiz trigger` and `sitebiz listen`, run as users run them: child processes on a database of
// their own (a SQLite file; on PostgreSQL a fresh database next to TEST_DATABASE_URL's), next to a
// real `serve` whose delivery worker sends what trigger queues. trigger: each event's flow makes its
// records and its event, and queues a delivery for each hook of the site listening for it. listen:
// the receiver gets the signed delivery with its headers, the listener prints its line, SIGINT
// removes its hooks, and the hooks of a listener killed without cleaning up are removed by the
// next one.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { parseDatabaseUrl } from '../../src/config.js';
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import { DIALECTS } from '../support/harness.js';
import { Receiver } from '../support/receiver.js';
import { childEnv, freePort, freshDatabase, ServeProcess, startServe, type FreshDatabase } from '../support/serve-process.js';

const BIN = join(fileURLToPath(new URL('../..', import.meta.url)), 'bin', 'sitebiz.js');

interface TriggerResult {
  event: string;
  site_id: string;
  made: Record<string, string[]>;
  events: Array<{ id: string; event: string; resource_id: string; deliveries: Array<{ id: string; hook_id: string; webhook_id: string }> }>;
}

for (const dialect of DIALECTS) {
  describe(`sitebiz trigger and listen [${dialect}]`, () => {
    let db: FreshDatabase;
    let handle: DatabaseHandle;
    let cwd: string;
    let siteId: number;

    /** A sitebiz child process on the test database (its output in .stdout, .stderr). */
    const child = (args: string[]) =>
      new ServeProcess(spawn(process.execPath, [BIN, ...args, '--database-url', db.url], { cwd, env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] }));
    const run = async (args: string[]) => {
      const c = child(args);
      const exit = await c.exited;
      return { code: exit.code, stdout: c.stdout, stderr: c.stderr };
    };
    const trigger = async (args: string[]): Promise<TriggerResult> => {
      const result = await run(['trigger', ...args, '--json']);
      assert.equal(result.code, 0, `trigger ${args.join(' ')}: ${result.stdout}${result.stderr}`);
      return JSON.parse(result.stdout) as TriggerResult;
    };
    /** A hook for every record of `event` in the site, straight in the database. */
    const hook = async (event: string, targetUrl = 'https://receiver.example.com/hooks'): Promise<number> => {
      const at = handle.traits.encodeTimestamp(new Date());
      const row = await handle.db
        .insertInto('hooks')
        .values({ site_id: siteId, event, target_url: targetUrl, resource_id: null, signing_secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', previous_signing_secret: null, previous_secret_expires_at: null, created_at: at, updated_at: at })
        .returning('id')
        .executeTakeFirstOrThrow();
      return Number(row.id);
    };
    const hookIds = async () => (await handle.db.selectFrom('hooks').select('id').where('site_id', '=', siteId).orderBy('id').execute()).map((h) => String(h.id));

    before(async () => {
      db = await freshDatabase(dialect);
      cwd = mkdtempSync(join(tmpdir(), 'sitebiz-trigger-'));
      const init = await run(['init', '--demo', '--json']);
      assert.equal(init.code, 0, init.stderr);
      siteId = Number(JSON.parse(init.stdout).site_id);
      handle = await connectDatabase(parseDatabaseUrl(db.url, 'test', [])!);
    });
    after(async () => {
      await handle?.close();
      rmSync(cwd, { recursive: true, force: true });
      await db?.cleanup();
    });

    it('trigger: an unknown event is a usage error naming the known ones; a record the account lacks is refused', async () => {
      const result = await run(['trigger', 'purchased']);
      assert.equal(result.code, 2);
      assert.match(result.stderr, /unknown event "purchased"; known: purchase, payment_succeeded, order_created, form_submission, tag_added, tag_removed/);
      const noOffer = await run(['trigger', 'purchase', '--offer', '999999', '--json']);
      assert.equal(noOffer.code, 1);
      assert.match(JSON.parse(noOffer.stdout).error.message, /No offers record with id "999999"/);
      const missing = await run(['trigger', 'form_submission', '--form', '999999', '--json']);
      assert.equal(missing.code, 1);
      assert.match(JSON.parse(missing.stdout).error.message, /No forms record with id "999999"/);
    });

    it('trigger purchase (and payment_succeeded, order_created): a checkout of a paid one-time offer emits the three events, one each, with a delivery for each hook', async () => {
      const hooks = { purchase: await hook('purchase'), payment_succeeded: await hook('payment_succeeded'), order_created: await hook('order_created') };
      for (const name of ['purchase', 'payment_succeeded', 'order_created'] as const) {
        const result = await trigger([name]);
        assert.deepEqual(
          result.events.map((e) => e.event),
          ['purchase', 'payment_succeeded', 'order_created'],
          `${name}: one event of each, in the order the records were made`,
        );
        assert.equal(result.made.purchases!.length, 1);
        assert.equal(result.made.transactions!.length, 1);
        assert.equal(result.made.orders!.length, 1);
        const purchase = await handle.db.selectFrom('purchases').select(['customer_id', 'payment_type']).where('id', '=', Number(result.made.purchases![0])).executeTakeFirstOrThrow();
        assert.equal(String(purchase.customer_id), result.made.customers![0]);
        assert.equal(purchase.payment_type, 'one_time');
        for (const e of result.events) {
          // The demo's own hooks of the event get theirs too.
          const ours = e.deliveries.filter((d) => d.hook_id === String(hooks[e.event as keyof typeof hooks]));
          assert.equal(ours.length, 1, `${e.event}: one delivery to the test's hook`);
        }
        assert.equal(result.events[0]!.resource_id, result.made.purchases![0]);
        assert.equal(result.events[1]!.resource_id, result.made.transactions![0]);
      }
      for (const id of Object.values(hooks)) await handle.db.deleteFrom('hooks').where('id', '=', id).execute();
    });

    it('trigger form_submission, tag_added and tag_removed: each makes its records and its event, and queues a delivery for each hook of it', async () => {
      const hooks = { form_submission: await hook('form_submission'), tag_added: await hook('tag_added'), tag_removed: await hook('tag_removed') };
      const deliveryOf = (result: TriggerResult, event: keyof typeof hooks) => {
        const e = result.events.find((x) => x.event === event);
        assert.ok(e, `${event} event in ${JSON.stringify(result.events)}`);
        const delivery = e.deliveries.find((d) => d.hook_id === String(hooks[event]));
        assert.ok(delivery, `a delivery for hook ${hooks[event]}`);
        return { event: e, delivery };
      };
      const rowOf = async (eventId: string) =>
        handle.db.selectFrom('outbox_events').select(['event_type', 'resource_id', 'site_id']).where('id', '=', Number(eventId)).executeTakeFirstOrThrow();

      const submitted = await trigger(['form_submission']);
      assert.equal(submitted.site_id, String(siteId));
      const submission = await handle.db.selectFrom('form_submissions').select(['contact_id', 'email']).where('id', '=', Number(submitted.made.form_submissions![0])).executeTakeFirstOrThrow();
      assert.equal(String(submission.contact_id), submitted.made.contacts![0]);
      assert.match(submission.email, /@example\.com$/);
      const s = deliveryOf(submitted, 'form_submission');
      assert.equal(s.event.resource_id, submitted.made.form_submissions![0]);
      assert.deepEqual({ ...(await rowOf(s.event.id)), site_id: Number((await rowOf(s.event.id)).site_id), resource_id: String((await rowOf(s.event.id)).resource_id) }, {
        event_type: 'form_submission',
        resource_id: submitted.made.form_submissions![0],
        site_id: siteId,
      });
      const queued = await handle.db.selectFrom('webhook_deliveries').select(['hook_id', 'webhook_id']).where('id', '=', Number(s.delivery.id)).executeTakeFirstOrThrow();
      assert.deepEqual({ hook: String(queued.hook_id), id: queued.webhook_id }, { hook: String(hooks.form_submission), id: s.delivery.webhook_id });

      const added = await trigger(['tag_added']);
      const [contact] = added.made.contacts!;
      const [tag] = added.made.contact_tags!;
      const tagging = await handle.db.selectFrom('contact_taggings').select('contact_id').where('contact_id', '=', Number(contact)).where('contact_tag_id', '=', Number(tag)).execute();
      assert.equal(tagging.length, 1);
      const a = deliveryOf(added, 'tag_added');
      assert.equal(a.event.resource_id, contact);
      assert.equal((await rowOf(a.event.id)).event_type, 'tag_added');
      assert.equal(added.events.length, 1, 'tag_added emits one event');

      // The latest tagging of the site is the one just added: tag_removed takes it off.
      const removed = await trigger(['tag_removed']);
      assert.deepEqual(removed.made, { contacts: [contact], contact_tags: [tag] });
      const gone = await handle.db.selectFrom('contact_taggings').select('contact_id').where('contact_id', '=', Number(contact)).where('contact_tag_id', '=', Number(tag)).execute();
      assert.equal(gone.length, 0);
      const r = deliveryOf(removed, 'tag_removed');
      assert.equal((await rowOf(r.event.id)).event_type, 'tag_removed');

      // Named records: a tag on a named contact.
      const again = await trigger(['tag_added', '--contact', contact!, '--tag', tag!]);
      assert.deepEqual(again.made, { contacts: [contact], contact_tags: [tag] });
      const twice = await run(['trigger', 'tag_added', '--contact', contact!, '--tag', tag!]);
      assert.equal(twice.code, 1);
      assert.match(twice.stderr, /already has tag/);
      // Text output names what was made and what was queued.
      const text = await run(['trigger', 'tag_removed', '--contact', contact!]);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, new RegExp(`Triggered tag_removed on site ${siteId}`));
      assert.match(text.stdout, new RegExp(`event \\d+ tag_removed .*1 delivery queued: hook ${hooks.tag_removed} msg_`));
      for (const id of Object.values(hooks)) await handle.db.deleteFrom('hooks').where('id', '=', id).execute();
    });

    it('listen: forwards the signed delivery with its headers, prints its line, removes its hooks on SIGINT and those of a killed listener at the next start', async () => {
      const receiver = await Receiver.start();
      receiver.react = () => ({ status: 202, body: 'noted', headers: { 'content-type': 'text/plain' } });
      let server: ServeProcess | undefined;
      const listeners: ServeProcess[] = [];
      try {
        const port = await freePort();
        server = startServe(cwd, ['--port', String(port), '--database-url', db.url, '--webhook-poll-ms', '100']);
        await server.waitFor(/sitebiz is serving .*\n/);
        const before = await hookIds();

        const listener = child(['listen', '--forward-to', receiver.url('/hooks'), '--events', 'tag_added,form_submission', '--json']);
        listeners.push(listener);
        await listener.waitFor(/"listening":true.*\n/);
        const start = JSON.parse(listener.stdout.split('\n')[0]!) as { port: number; signing_secret: string; hooks: Array<{ id: string; event: string; target_url: string }> };
        assert.deepEqual(start.hooks.map((h) => h.event), ['tag_added', 'form_submission']);
        for (const h of start.hooks) assert.match(h.target_url, new RegExp(`^http://127\\.0\\.0\\.1:${start.port}/sitebiz-listen/[0-9a-f]+/${h.event}$`));

        const added = await trigger(['tag_added']);
        const ours = added.events[0]!.deliveries.find((d) => start.hooks.some((h) => h.id === d.hook_id));
        assert.ok(ours, 'trigger queued a delivery for the listener');
        await receiver.waitFor(1, 20_000);
        const got = receiver.received[0]!;
        assert.equal(got.path, '/hooks');
        assert.equal(got.headers['webhook-id'], ours.webhook_id);
        assert.equal(got.headers['content-type'], 'application/json');
        assert.match(String(got.headers['user-agent']), /^sitebiz\//);
        // The receiver checks the signature with the session's secret, as it would in production.
        new Webhook(start.signing_secret).verify(got.body, got.headers as Record<string, string>);
        assert.equal(JSON.parse(got.body).event, 'tag_added');

        await listener.waitFor(new RegExp(`"webhook_id":"${ours.webhook_id}"`), 10_000);
        const printed = listener.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((l) => l.webhook_id === ours.webhook_id);
        assert.equal(printed.event, 'tag_added');
        assert.equal(printed.status, 202);
        assert.equal(printed.forward_status, 202);
        assert.equal(typeof printed.duration_ms, 'number');
        // The delivery log shows the receiver's own answer.
        let delivery;
        for (let i = 0; i < 100; i++) {
          delivery = await handle.db.selectFrom('webhook_deliveries').select(['status', 'last_response_status']).where('id', '=', Number(ours.id)).executeTakeFirstOrThrow();
          if (delivery.status === 'succeeded') break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        assert.deepEqual(delivery, { status: 'succeeded', last_response_status: 202 });

        const exit = await listener.stop('SIGINT');
        assert.equal(exit.code, 0, listener.stderr);
        assert.match(listener.stdout, /"stopped":true/);
        assert.deepEqual(await hookIds(), before, 'the listener\'s hooks are gone');

        // A listener killed without cleaning up leaves its hooks; the next start removes them.
        const killed = child(['listen', '--forward-to', receiver.url('/hooks'), '--events', 'tag_removed', '--json']);
        listeners.push(killed);
        await killed.waitFor(/"listening":true.*\n/);
        const left = (JSON.parse(killed.stdout.split('\n')[0]!) as typeof start).hooks.map((h) => h.id);
        await killed.stop('SIGKILL');
        assert.deepEqual(await hookIds(), [...before, ...left]);
        const next = child(['listen', '--forward-to', receiver.url('/hooks'), '--events', 'tag_removed']);
        listeners.push(next);
        await next.waitFor(/Your webhook signing secret is whsec_\S+/);
        assert.match(next.stdout, new RegExp(`Removed 1 hooks left by listeners that stopped without cleaning up \\(${left[0]}\\)`));
        assert.equal((await next.stop('SIGTERM')).code, 0);
        assert.deepEqual(await hookIds(), before);
      } finally {
        for (const l of listeners) if (l.child.exitCode === null && l.child.signalCode === null) await l.stop('SIGKILL');
        if (server) await server.stop();
        await receiver.close();
      }
    });
  });
}
