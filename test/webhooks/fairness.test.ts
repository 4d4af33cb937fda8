// Fair delivery across tenants (issue 21): one account's receivers that accept and never answer
// hold slots until the attempt's deadline, and must not hold so many that another account's
// deliveries, or the same account's healthy hooks, wait for that deadline. The probe's shape:
// account B makes 6 hooks to a stalled listener and queues 20 events for each; then account A's
// deliveries and B's healthy hook's must arrive promptly. The bound asserted (2 s) is generous:
// what it proves is that nothing waited for the 6 s a stalled attempt holds its slot.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PERMISSION_NAMES } from '../../src/auth/permissions.js';
import { createAccount, createApiKey, createSite, createUser } from '../../src/domain/accounts.js';
import { builders } from '../support/builders.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { Receiver } from '../support/receiver.js';
import { addTag, createHook, queueDeliveries } from '../support/webhooks.js';

const STALLED_HOOKS = 6;
const EVENTS = 20;
const TIMEOUT_MS = 6_000;
const PROMPT_MS = 2_000;

/** A second account with a site and an all-permission key: its site id and a token. */
async function secondTenant(t: TestApp): Promise<{ siteId: number; token: string }> {
  const accountId = await createAccount(t.handle, { name: 'Account B' }, t.clock);
  const ownerId = await createUser(t.handle, { accountId, name: 'Bea Owner', email: `owner-b-${accountId}@example.com`, role: 'owner' }, t.clock);
  const siteId = await createSite(t.handle, { accountId, title: 'Site B', subdomain: `site-b-${accountId}-${Date.now().toString(36)}` }, t.clock);
  const key = await createApiKey(t.handle, { userId: ownerId, name: 'b key', permissions: PERMISSION_NAMES }, t.clock);
  return { siteId, token: await t.tokenFor(key.clientId, key.clientSecret) };
}

/** Resolves with how long `path` took to receive a request after `since`, failing after PROMPT_MS. */
async function arrival(receiver: Receiver, path: string, since: number): Promise<number> {
  const deadline = performance.now() + PROMPT_MS;
  for (;;) {
    const got = receiver.received.find((r) => r.path === path && r.at >= since);
    if (got) return got.at - since;
    if (performance.now() > deadline) assert.fail(`nothing reached ${path} within ${PROMPT_MS} ms: it waited for stalled attempts to time out`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

for (const dialect of DIALECTS) {
  describe(`fair delivery across tenants [${dialect}]`, () => {
    it("six stalled hooks of one account delay neither another account's deliveries nor its own healthy hook's", async () => {
      const receiver = await Receiver.start();
      // The default 32 slots; a long poll, so that only commits and finishing attempts wake the worker.
      const t = await createTestApp(dialect, { env: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), WEBHOOK_POLL_MS: '600000' } });
      try {
        receiver.react = (request) => (request.path.startsWith('/stalled') ? { hold: true } : { status: 204 });
        const b = await secondTenant(t);
        const now = t.clock.now();
        for (let i = 0; i < STALLED_HOOKS; i++) {
          const targetUrl = receiver.url(`/stalled/${i}`);
          const hook = await createHook(t, b.token, { event: 'tag_added', targetUrl, siteId: b.siteId });
          // Due a minute ago: first in the queue.
          await queueDeliveries(t.handle, { id: hook.id, siteId: b.siteId, targetUrl }, EVENTS, now, new Date(now.getTime() - 60_000));
        }
        const healthyUrl = receiver.url('/b-healthy');
        const healthy = await createHook(t, b.token, { event: 'tag_added', targetUrl: healthyUrl, siteId: b.siteId });
        await createHook(t, await t.token(), { event: 'tag_added', targetUrl: receiver.url('/a') });

        t.app.webhooks.start();
        // The stalled hooks take what they may; give the claims time to settle.
        await receiver.waitFor(STALLED_HOOKS, 5_000);
        await new Promise((resolve) => setTimeout(resolve, 300));

        const token = await t.token();
        const contact = await builders(t).contact();
        for (let i = 0; i < 5; i++) {
          const since = performance.now();
          await addTag(t, token, contact, await builders(t).tag(`Fair ${i}`));
          await arrival(receiver, '/a', since);
        }
        for (let i = 0; i < 5; i++) {
          const since = performance.now();
          await queueDeliveries(t.handle, { id: healthy.id, siteId: b.siteId, targetUrl: healthyUrl }, 1, t.clock.now());
          t.app.webhooks.wake();
          await arrival(receiver, '/b-healthy', since);
        }
        // Every stalled attempt is still in flight (6 s): this counts what account B's stalled hooks hold.
        const stalled = receiver.received.filter((r) => r.path.startsWith('/stalled')).length;
        assert.ok(stalled <= 2 * STALLED_HOOKS, `B's stalled hooks hold ${stalled} of ${t.config.webhookConcurrency} slots: 2 each at most before their first deadline`);
      } finally {
        receiver.release();
        await t.close();
        await receiver.close();
      }
    });
  });
}
