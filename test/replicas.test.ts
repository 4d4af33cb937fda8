// Read replicas (DATABASE_REPLICA_URL, src/db/replicas.ts) against a real streaming replica that
// the test makes (test/support/replica.ts). The replica applies every commit 400 ms late
// (recovery_min_apply_delay), so a read sent to it too early would see the data as it was: every
// promise below would fail the moment the routing were wrong.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { PERMISSION_NAMES } from '../src/auth/permissions.js';
import { loadConfig } from '../src/config.js';
import { connectDatabase, migrateToLatest, type DatabaseHandle } from '../src/db/connect.js';
import { createAccount, createApiKey, createSite, createUser } from '../src/domain/accounts.js';
import { Receiver } from './support/receiver.js';
import { REPLICA_SKIP, StreamingReplica } from './support/replica.js';

const APPLY_DELAY_MS = 400;
const DATABASE = 'sitebiz_replicas';
const JSONAPI = { 'content-type': 'application/vnd.api+json' };

interface Client {
  accountId: number;
  siteId: number;
  clientId: string;
  clientSecret: string;
}

describe('read replicas (a streaming replica made by the test)', { skip: REPLICA_SKIP, timeout: 300_000 }, () => {
  let pair: StreamingReplica;
  let setup: DatabaseHandle;
  let writer: Client;
  let reader: Client;

  before(async () => {
    pair = await StreamingReplica.start({ applyDelayMs: APPLY_DELAY_MS });
    await pair.createDatabase(DATABASE);
    setup = await connectDatabase(loadConfig({ DATABASE_URL: pair.primaryUrl(DATABASE) }).database, { poolSize: 2 });
    await migrateToLatest(setup);
    const client = async (name: string): Promise<Client> => {
      const accountId = await createAccount(setup, { name });
      const userId = await createUser(setup, { accountId, name: `${name} Owner`, email: `owner@${name.toLowerCase()}.example`, role: 'owner' });
      const siteId = await createSite(setup, { accountId, title: `${name} Site`, subdomain: name.toLowerCase() });
      const key = await createApiKey(setup, { userId, name: 'key', permissions: PERMISSION_NAMES });
      return { accountId, siteId, clientId: key.clientId, clientSecret: key.clientSecret };
    };
    writer = await client('Writer');
    reader = await client('Reader');
  });

  after(async () => {
    await setup?.close();
    await pair?.close();
  });

  /** An app on the primary with the replica, and a few helpers over app.inject. */
  async function replicaApp(env: Record<string, string> = {}) {
    const config = loadConfig({
      DATABASE_URL: pair.primaryUrl(DATABASE),
      DATABASE_REPLICA_URL: pair.replicaUrl(DATABASE),
      DATABASE_POOL_SIZE: '4',
      LOG_LEVEL: 'silent',
      PUBLIC_URL: 'http://sitebiz.test',
      ...env,
    });
    const app: FastifyInstance = await buildApp({ config, webhooks: { autoStart: false } });
    await app.ready();
    const replicas = app.database.replicas!;
    assert.ok(replicas, 'DATABASE_REPLICA_URL makes a replica set');
    const token = async (c: Client) => {
      const res = await app.inject({ method: 'POST', url: '/v1/oauth/token', payload: { grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret } });
      assert.equal(res.statusCode, 200, res.body);
      return (res.json() as { access_token: string }).access_token;
    };
    const get = (url: string, bearer: string) => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${bearer}` } });
    const send = (method: 'POST' | 'PATCH', url: string, bearer: string, body: unknown) =>
      app.inject({ method, url, headers: { authorization: `Bearer ${bearer}`, ...JSONAPI }, payload: JSON.stringify(body) });
    const createContact = async (bearer: string, siteId: number, email: string) => {
      const res = await send('POST', '/v1/contacts', bearer, { data: { type: 'contacts', attributes: { email }, relationships: { site: { data: { type: 'sites', id: String(siteId) } } } } });
      assert.equal(res.statusCode, 201, res.body);
      return (res.json() as { data: { id: string } }).data.id;
    };
    /** Waits until the replica serves reads (it has caught up and a probe has seen it). */
    const replicaServing = async () => {
      for (let i = 0; i < 200 && !replicas.status()[0]!.serving; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(replicas.status()[0]!.serving, `the replica serves: ${JSON.stringify(replicas.status())}`);
    };
    return { app, replicas, token, get, send, createContact, replicaServing };
  }

  /** Transactions the replica's server has committed in the database (its own count, pg_stat_database). */
  async function replicaTransactions(): Promise<number> {
    const { rows } = await pair.sql<{ n: string }>(pair.replicaUrl('postgres'), `select xact_commit::text as n from pg_stat_database where datname = '${DATABASE}'`);
    return Number(rows[0]?.n ?? 0);
  }

  it("serves reads from the replica: the replica's own server counts them", async () => {
    const before = await replicaTransactions();
    const started = Date.now();
    const { app, replicas, token, get, replicaServing } = await replicaApp();
    const bearer = await token(reader);
    await replicaServing();
    const READS = 100;
    for (let i = 0; i < READS; i++) {
      // Each a list of its own, so that none is answered from the answer cache.
      const res = await get(`/v1/contacts?filter[site_id]=${reader.siteId}&page[size]=${i + 1}`, bearer);
      assert.equal(res.statusCode, 200, res.body);
    }
    const served = replicas.status()[0]!.reads;
    // Closing ends the replica connections, and a PostgreSQL backend reports its counts as it exits.
    await app.close();
    const elapsed = Date.now() - started;
    // The probes are one transaction each, at most one per 100 ms: what is left is the reads.
    const probes = Math.ceil(elapsed / 100) + 2;
    // The exiting backends report within moments; wait for them (up to 5 s).
    let counted = 0;
    for (let i = 0; i < 50; i++) {
      counted = (await replicaTransactions()) - before;
      if (counted - probes >= READS) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(served >= READS, `every list ran its statements on the replica: ${served} did`);
    assert.ok(counted - probes >= READS, `the replica committed ${counted} transactions in ${elapsed} ms, at most ${probes} of them probes`);
  });

  it('shows a client its own writes on its next request, through another process: 0 stale reads in 1,000 write-then-read rounds, while other accounts read from the replica', async () => {
    // Two apps, each with its own pools and probes, as two processes behind a load balancer: the
    // writes go through one and the reads through the other.
    const first = await replicaApp();
    const second = await replicaApp();
    try {
      const bearer = await first.token(writer);
      const readerBearer = await second.token(reader);
      await first.replicaServing();
      await second.replicaServing();
      const id = await first.createContact(bearer, writer.siteId, 'rounds@writer.example');
      // The replica lags: straight after a write, the replica itself still has the old name.
      const patched = await first.send('PATCH', `/v1/contacts/${id}`, bearer, { data: { type: 'contacts', id, attributes: { name: 'fresh' } } });
      assert.equal(patched.statusCode, 200, patched.body);
      const onReplica = await pair.sql<{ name: string | null }>(pair.replicaUrl(DATABASE), `select name from contacts where id = ${Number(id)}`);
      assert.notEqual(onReplica.rows[0]?.name ?? null, 'fresh', 'the replica is behind the primary right after a write');

      let stale = 0;
      const readsBefore = second.replicas.status()[0]!.reads;
      for (let round = 0; round < 1000; round++) {
        const name = `round ${round}`;
        const res = await first.send('PATCH', `/v1/contacts/${id}`, bearer, { data: { type: 'contacts', id, attributes: { name } } });
        assert.equal(res.statusCode, 200, res.body);
        const read =
          round % 2 === 0
            ? await second.get(`/v1/contacts/${id}`, bearer)
            : await second.get(`/v1/contacts?filter[site_id]=${writer.siteId}&filter[email_contains]=rounds@writer.example`, bearer);
        assert.equal(read.statusCode, 200, read.body);
        const doc = read.json() as { data: { attributes: { name: string } } | Array<{ attributes: { name: string } }> };
        const seen = Array.isArray(doc.data) ? doc.data[0]?.attributes.name : doc.data.attributes.name;
        if (seen !== name) stale++;
        // Another account, which wrote nothing, reads meanwhile: from the replica.
        if (round % 50 === 0) assert.equal((await second.get(`/v1/contacts?filter[site_id]=${reader.siteId}`, readerBearer)).statusCode, 200);
      }
      assert.equal(stale, 0, 'stale reads');
      assert.ok(second.replicas.status()[0]!.reads - readsBefore >= 20, "the other account's reads went to the replica");
    } finally {
      await first.app.close();
      await second.app.close();
    }
  });

  it("lets a webhook's receiver read the record the event names at once, even before the write's own answer has recorded its position", async () => {
    const receiver = await Receiver.start();
    const { app, token, get, send, createContact, replicaServing } = await replicaApp();
    try {
      const bearer = await token(writer);
      await replicaServing();
      const hook = await send('POST', '/v1/hooks', bearer, {
        data: { type: 'hooks', attributes: { event: 'tag_added', target_url: receiver.url(), resource_id: null }, relationships: { site: { data: { type: 'sites', id: String(writer.siteId) } } } },
      });
      assert.equal(hook.statusCode, 201, hook.body);
      const now = new Date().toISOString();
      const tag = await setup.db.insertInto('contact_tags').values({ site_id: writer.siteId, name: 'replica-webhook', created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow();
      const id = await createContact(bearer, writer.siteId, 'webhook@writer.example');
      const tagged = await send('POST', `/v1/contacts/${id}/relationships/tags`, bearer, { data: [{ type: 'contact_tags', id: String(tag.id) }] });
      assert.ok(tagged.statusCode < 300, tagged.body);
      // As if the delivery went out before the tagging request's answer recorded the account's
      // position: only the worker's own recording keeps the receiver's read off the lagging replica.
      await setup.db.deleteFrom('account_write_positions').where('account_id', '=', writer.accountId).execute();
      await app.webhooks.runDue();
      await receiver.waitFor(1);
      const read = await get(`/v1/contacts/${id}/relationships/tags`, bearer);
      assert.equal(read.statusCode, 200, read.body);
      assert.deepEqual((read.json() as { data: Array<{ id: string }> }).data.map((t) => t.id), [String(tag.id)]);
    } finally {
      await app.close();
      await receiver.close();
    }
  });

  it('keeps tokens exact: a revoked token fails and a new one works at once, on a replica 400 ms behind', async () => {
    const { app, token, get, replicaServing } = await replicaApp();
    try {
      await replicaServing();
      for (let i = 0; i < 5; i++) {
        const bearer = await token(reader);
        assert.equal((await get('/v1/sites', bearer)).statusCode, 200, 'a token made a moment ago works');
        const revoked = await app.inject({ method: 'POST', url: '/v1/oauth/revoke', payload: { token: bearer, client_id: reader.clientId, client_secret: reader.clientSecret } });
        assert.equal(revoked.statusCode, 200, revoked.body);
        assert.equal((await get('/v1/sites', bearer)).statusCode, 401, 'a token revoked a moment ago fails');
      }
    } finally {
      await app.close();
    }
  });

  it('skips a replica that lags beyond DATABASE_REPLICA_MAX_LAG_MS, with no error to anyone', async () => {
    const { app, replicas, token, get, send, createContact, replicaServing } = await replicaApp({ DATABASE_REPLICA_MAX_LAG_MS: '150' });
    try {
      const bearer = await token(writer);
      const readerBearer = await token(reader);
      await replicaServing();
      const id = await createContact(bearer, writer.siteId, 'lagging@writer.example');
      // Writes every 20 ms keep a replica that applies 400 ms late about 400 ms behind.
      let writing = true;
      const writes = (async () => {
        for (let n = 0; writing; n++) {
          const res = await send('PATCH', `/v1/contacts/${id}`, bearer, { data: { type: 'contacts', id, attributes: { name: `lag ${n}` } } });
          assert.equal(res.statusCode, 200, res.body);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      try {
        await new Promise((resolve) => setTimeout(resolve, 700));
        const status = replicas.status()[0]!;
        assert.equal(status.serving, false, `a replica 400 ms behind does not serve with a 150 ms bound: ${JSON.stringify(status)}`);
        assert.match(status.reason ?? '', /lags/);
        const readsBefore = status.reads;
        for (let i = 0; i < 20; i++) assert.equal((await get(`/v1/contacts?filter[site_id]=${reader.siteId}`, readerBearer)).statusCode, 200);
        assert.equal(replicas.status()[0]!.reads, readsBefore, 'every read went to the primary');
      } finally {
        writing = false;
        await writes;
      }
      // Once the writes stop it catches up and serves again.
      await replicaServing();
    } finally {
      await app.close();
    }
  });

  it('answers every request while the replica is stopped and started again under load', async () => {
    const { app, replicas, token, get, send, createContact, replicaServing } = await replicaApp();
    try {
      const bearer = await token(writer);
      const readerBearer = await token(reader);
      await replicaServing();
      const id = await createContact(bearer, writer.siteId, 'outage@writer.example');
      const failures: string[] = [];
      let requests = 0;
      let running = true;
      const load = async (worker: number) => {
        for (let n = 0; running; n++) {
          const res =
            worker === 0
              ? await send('PATCH', `/v1/contacts/${id}`, bearer, { data: { type: 'contacts', id, attributes: { name: `outage ${n}` } } })
              : await get(worker % 2 ? `/v1/contacts?filter[site_id]=${reader.siteId}&include=site` : `/v1/sites/${reader.siteId}`, readerBearer);
          requests++;
          if (res.statusCode !== 200) failures.push(`${res.statusCode} ${res.body.slice(0, 200)}`);
        }
      };
      const workers = [0, 1, 2, 3].map(load);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const readsBeforeStop = replicas.status()[0]!.reads;
      assert.ok(readsBeforeStop > 0, 'the load reads from the replica before it stops');
      await pair.stopReplica();
      await new Promise((resolve) => setTimeout(resolve, 800));
      assert.equal(replicas.status()[0]!.serving, false, 'a stopped replica is left out');
      await pair.startReplica();
      await replicaServing();
      const readsAfterRestart = replicas.status()[0]!.reads;
      await new Promise((resolve) => setTimeout(resolve, 500));
      running = false;
      await Promise.all(workers);
      assert.deepEqual(failures, [], `${failures.length} of ${requests} requests failed`);
      assert.ok(replicas.status()[0]!.reads > readsAfterRestart, 'the restarted replica serves reads again');
    } finally {
      await app.close();
    }
  });
});
