// The rules racing writes rely on, held by the database itself and not only by the engine's
// per-site write lock (src/db/site-counters.ts, "Locking"): another writer (the CLI, a worker, a
// future path that forgets the lock) still cannot make an offer held twice or a tag added twice.
//
// - migration 0006: one active grant by hand per contact and offer, one active grant per purchase;
//   grants of one offer from different sources may coexist; duplicates already in a database are
//   revoked (the newer ones), with their memberships ended;
// - the domain functions themselves, raced in transactions of their own without the engine's lock,
//   converge on one customer, one grant, one membership per product, one welcome email, one
//   tagging and one tag_added event.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Principal } from '../../src/auth/principal.js';
import type { DatabaseHandle } from '../../src/db/connect.js';
import { writeRaces } from '../../src/db/migrations/0006_write_races.js';
import { addContactTags } from '../../src/domain/contact-tags.js';
import { grantOffers } from '../../src/domain/offer-grants.js';
import type { WriteContext } from '../../src/jsonapi/resource.js';
import { builders, type Builders } from '../support/builders.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { RACERS } from '../support/races.js';

for (const dialect of DIALECTS) {
  describe(`write races held by the database [${dialect}]`, () => {
    let t: TestApp;
    let b: Builders;
    let course: number;
    let workbook: number;
    let bundle: number;

    before(async () => {
      t = await createTestApp(dialect);
      b = builders(t);
      course = await b.product({ title: 'Course' });
      workbook = await b.product({ title: 'Workbook' });
      bundle = await b.offer({ title: 'Bundle', productIds: [course, workbook] });
    });
    after(() => t.close());

    const db = () => t.handle.db;
    const activeGrants = (contactId: number) =>
      db().selectFrom('offer_grants').select(['id', 'purchase_id']).where('contact_id', '=', contactId).where('revoked_at', 'is', null).orderBy('id').execute();
    const currentMemberships = (contactId: number) =>
      db().selectFrom('memberships').select(['id', 'offer_grant_id']).where('contact_id', '=', contactId).where('ended_at', 'is', null).orderBy('id').execute();

    /** Runs `fn` in a transaction of its own, as a write would, but without the engine (and its lock). */
    function inOwnTransaction(fn: (ctx: WriteContext) => Promise<void>): Promise<void> {
      return t.handle.db.transaction().execute((trx) => {
        const handle: DatabaseHandle = { ...t.handle, db: trx };
        // Events these writes record show bare identifiers: the races are about rows, not payloads.
        const render = async (type: string, id: number) => ({ type, id: String(id), attributes: {}, links: { self: '' } });
        return fn({ handle, principal: {} as Principal, now: t.clock.now(), render, afterCommit: () => {} });
      });
    }

    describe('the indexes of migration 0006', () => {
      it('refuse a second active grant by hand of an offer to a contact, and of a purchase', async () => {
        const { id: customerId, contactId } = await b.customer();
        await b.grant({ contactId, offerId: bundle });
        await assert.rejects(b.grant({ contactId, offerId: bundle }), (error) => t.handle.traits.isUniqueViolation(error));
        const purchase = await b.purchase({ customerId, offerId: bundle });
        await b.grant({ contactId, offerId: bundle, purchaseId: purchase });
        await assert.rejects(b.grant({ contactId, offerId: bundle, purchaseId: purchase }), (error) => t.handle.traits.isUniqueViolation(error));
        assert.equal((await activeGrants(contactId)).length, 2, 'bought and granted by hand: one active grant of each source');
      });

      it('allow any number of revoked grants beside the active one', async () => {
        const contactId = await b.contact();
        await b.grant({ contactId, offerId: bundle, revoked_at: t.clock.now() });
        await b.grant({ contactId, offerId: bundle, revoked_at: t.clock.now() });
        await b.grant({ contactId, offerId: bundle });
        assert.equal((await activeGrants(contactId)).length, 1);
      });

      it('are made after revoking the newer duplicates a database already holds, ending their memberships', async () => {
        // A database from before 0006: the indexes are not there yet, and races left duplicates.
        await db().schema.dropIndex('offer_grants_active_hand_uq').execute();
        await db().schema.dropIndex('offer_grants_active_purchase_uq').execute();
        const { id: customerId, contactId } = await b.customer();
        const byHand: number[] = [];
        for (let i = 0; i < 3; i++) {
          const grant = await b.grant({ contactId, offerId: bundle });
          byHand.push(grant);
          for (const productId of [course, workbook]) await b.membership({ contactId, productId, offerGrantId: grant });
        }
        const purchase = await b.purchase({ customerId, offerId: bundle });
        const bought = [await b.grant({ contactId, offerId: bundle, purchaseId: purchase }), await b.grant({ contactId, offerId: bundle, purchaseId: purchase })];
        await b.membership({ contactId, productId: course, offerGrantId: bought[1]! });
        const revokedBefore = await b.grant({ contactId, offerId: bundle, revoked_at: t.clock.now() });

        await writeRaces.up(db() as never, t.handle.traits);

        assert.deepEqual(
          (await activeGrants(contactId)).map((g) => Number(g.id)),
          [byHand[0], bought[0]],
          'the oldest grant of each source stays active',
        );
        const kept = new Set([byHand[0], bought[0]]);
        const memberships = await currentMemberships(contactId);
        assert.ok(memberships.every((m) => kept.has(Number(m.offer_grant_id))), 'the memberships of revoked duplicates ended');
        assert.equal(memberships.length, 2, 'the kept grant by hand keeps its two memberships');
        const revoked = await db().selectFrom('offer_grants').select('id').where('id', '=', revokedBefore).where('revoked_at', 'is not', null).execute();
        assert.equal(revoked.length, 1, 'a grant revoked before stays revoked');
        await assert.rejects(b.grant({ contactId, offerId: bundle }), (error) => t.handle.traits.isUniqueViolation(error), 'the index is in place');
      });
    });

    describe('domain functions raced without the engine', () => {
      it(`${RACERS} grants of one offer to a contact that is not a customer: one customer, grant, membership per product, welcome email`, async () => {
        const contactId = await b.contact({ name: 'Ada Lovelace' });
        const results = await Promise.allSettled(
          Array.from({ length: RACERS }, () => inOwnTransaction((ctx) => grantOffers(ctx, t.tenant.siteId, contactId, [bundle], true))),
        );
        assert.deepEqual(results.filter((r) => r.status === 'rejected'), [], 'no grant failed');
        assert.equal((await db().selectFrom('customers').select('id').where('contact_id', '=', contactId).execute()).length, 1, 'one customer');
        const grants = await activeGrants(contactId);
        assert.equal(grants.length, 1, 'one active grant');
        const memberships = await currentMemberships(contactId);
        assert.equal(memberships.length, 2, 'one membership per product');
        assert.ok(memberships.every((m) => Number(m.offer_grant_id) === Number(grants[0]!.id)));
        const welcomes = await db().selectFrom('outgoing_messages').select('id').where('contact_id', '=', contactId).where('kind', '=', 'customer_welcome').execute();
        assert.equal(welcomes.length, 1, 'one welcome email');
      });

      it(`${RACERS} adds of one tag: one tagging, one tag_added event`, async () => {
        const contactId = await b.contact();
        const tag = await b.tag();
        const results = await Promise.allSettled(
          Array.from({ length: RACERS }, () =>
            inOwnTransaction((ctx) => addContactTags(ctx, { id: contactId, siteId: t.tenant.siteId }, [{ id: tag, siteId: t.tenant.siteId }])),
          ),
        );
        assert.deepEqual(results.filter((r) => r.status === 'rejected'), [], 'no add failed');
        const taggings = await db().selectFrom('contact_taggings').select('contact_tag_id').where('contact_id', '=', contactId).execute();
        assert.equal(taggings.length, 1, 'one tagging');
        const events = await db().selectFrom('outbox_events').select('id').where('event_type', '=', 'tag_added').where('resource_id', '=', contactId).execute();
        assert.equal(events.length, 1, 'one tag_added event');
      });
    });
  });
}
