// Writes under concurrency: many identical (or conflicting) requests fired at once must leave the
// database as the same requests one after another would, and answer as they would: grants (one
// active grant, one membership per product, one welcome email, one customer), tags (one tagging,
// one event per actual change), form submissions of one email, purchase transitions, contact
// creates and updates, notes, and a contact deleted while others write to it. Never a 500 and
// never a 409 asking to retry.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { builders, type Builders } from '../support/builders.js';
import { createTestApp, DIALECTS, type TestApp } from '../support/harness.js';
import { race, RACERS, statuses, unexpected } from '../support/races.js';
import { send } from '../support/writes.js';

for (const dialect of DIALECTS) {
  describe(`racing writes [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    let b: Builders;
    let course: number;
    let workbook: number;
    let community: number;
    /** course + workbook */
    let bundle: number;
    /** community */
    let club: number;
    let vip: number;
    let lead: number;
    let serial = 0;

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      b = builders(t);
      course = await b.product({ title: 'Course' });
      workbook = await b.product({ title: 'Workbook' });
      community = await b.product({ title: 'Community' });
      bundle = await b.offer({ title: 'Bundle', productIds: [course, workbook] });
      club = await b.offer({ title: 'Club', productIds: [community] });
      vip = await b.tag('VIP');
      lead = await b.tag('Lead');
    });
    after(() => t.close());

    const db = () => t.handle.db;
    const email = (what: string) => `${what}-${++serial}@example.com`;
    const newContact = async (name = 'Grace Hopper') => b.contact({ name, email: email('racer') });
    const offers = (...ids: number[]) => ({ data: ids.map((id) => ({ type: 'offers', id: String(id) })) });
    const tags = (...ids: number[]) => ({ data: ids.map((id) => ({ type: 'contact_tags', id: String(id) })) });

    const activeGrants = (contactId: number) =>
      db().selectFrom('offer_grants').select(['id', 'offer_id']).where('contact_id', '=', contactId).where('revoked_at', 'is', null).orderBy('id').execute();
    const currentMemberships = (contactId: number) =>
      db().selectFrom('memberships').select(['product_id', 'offer_grant_id']).where('contact_id', '=', contactId).where('ended_at', 'is', null).execute();
    const welcomes = (contactId: number) =>
      db().selectFrom('outgoing_messages').select('subject').where('contact_id', '=', contactId).where('kind', '=', 'customer_welcome').execute();
    const customersOf = (contactId: number) => db().selectFrom('customers').select(['id', 'email']).where('contact_id', '=', contactId).execute();
    /** The outbox events of these types about a contact, in the order they committed. */
    const eventsAbout = async (contactId: number, ...types: string[]) =>
      (await db().selectFrom('outbox_events').select(['event_type', 'payload']).where('event_type', 'in', types).where('resource_id', '=', contactId).orderBy('id').execute())
        .map((e) => {
          const [, tag] = t.handle.traits.decodeJson(e.payload) as Array<{ id: string }>;
          return { type: e.event_type, payload: { tag_id: tag!.id } };
        });

    /** Every answer has one of these statuses; the message shows the first others. */
    function allAnswered(responses: Awaited<ReturnType<typeof race>>, allowed: readonly number[]): void {
      assert.ok(
        responses.every((res) => allowed.includes(res.statusCode)),
        `every racer answers ${allowed.join(' or ')}; got ${JSON.stringify(statuses(responses))}\n${unexpected(responses, allowed)}`,
      );
    }

    /** One active grant of each offer, one current membership per product, one welcome email per offer. */
    async function grantedOnce(contactId: number, grants: Array<{ offer: number; products: number[]; title: string }>): Promise<void> {
      const active = await activeGrants(contactId);
      assert.deepEqual(active.map((g) => Number(g.offer_id)).sort(), grants.map((g) => g.offer).sort(), 'one active grant per offer');
      const memberships = await currentMemberships(contactId);
      const expected = grants.flatMap((g) => g.products).sort();
      assert.deepEqual(memberships.map((m) => Number(m.product_id)).sort(), expected, 'one current membership per product');
      const grantIds = new Set(active.map((g) => Number(g.id)));
      assert.ok(memberships.every((m) => grantIds.has(Number(m.offer_grant_id))), 'memberships belong to the active grants');
      assert.deepEqual((await welcomes(contactId)).map((m) => m.subject).sort(), grants.map((g) => `Welcome to ${g.title}`).sort(), 'one welcome email per offer');
    }

    describe('offer grants', () => {
      it(`${RACERS} grants of one offer to a contact that is not a customer yet: all 200, one customer, grant, membership per product and welcome email`, async () => {
        const contactId = await newContact();
        const responses = await race(() => send(t, 'POST', `/v1/contacts/${contactId}/relationships/offers`, token, offers(bundle)));
        allAnswered(responses, [200]);
        for (const res of responses) assert.deepEqual(res.json().data, offers(bundle).data);
        assert.equal((await customersOf(contactId)).length, 1, 'one customer');
        await grantedOnce(contactId, [{ offer: bundle, products: [course, workbook], title: 'Bundle' }]);
      });

      it(`${RACERS} grants on a customer, listing two offers in either order: all 200, each offer granted once`, async () => {
        const { id, contactId } = await b.customer({ email: email('customer') });
        const responses = await race((i) => send(t, 'POST', `/v1/customers/${id}/relationships/offers`, token, i % 2 ? offers(bundle, club) : offers(club, bundle)));
        allAnswered(responses, [200]);
        await grantedOnce(contactId, [
          { offer: bundle, products: [course, workbook], title: 'Bundle' },
          { offer: club, products: [community], title: 'Club' },
        ]);
      });

      it(`${RACERS} replacements (PATCH) and grants mixed: all 200, never two active grants of one offer`, async () => {
        const contactId = await newContact();
        const responses = await race((i) =>
          send(t, i % 2 ? 'PATCH' : 'POST', `/v1/contacts/${contactId}/relationships/offers`, token, i % 4 < 2 ? offers(bundle) : offers(club)),
        );
        allAnswered(responses, [200]);
        const active = await activeGrants(contactId);
        const held = active.map((g) => Number(g.offer_id));
        assert.equal(new Set(held).size, held.length, `no offer held twice: ${held}`);
        assert.equal((await customersOf(contactId)).length, 1, 'one customer');
      });
    });

    describe('contact tags', () => {
      it(`${RACERS} adds of one tag: all 200, one tagging and one tag_added event`, async () => {
        const contactId = await newContact();
        const responses = await race(() => send(t, 'POST', `/v1/contacts/${contactId}/relationships/tags`, token, tags(vip)));
        allAnswered(responses, [200]);
        const taggings = await db().selectFrom('contact_taggings').select('contact_tag_id').where('contact_id', '=', contactId).execute();
        assert.deepEqual(taggings.map((r) => Number(r.contact_tag_id)), [vip]);
        assert.equal((await eventsAbout(contactId, 'tag_added')).length, 1, 'one tag_added event');
      });

      it(`${RACERS} adds, removes and replacements mixed: all 200, and the events are exactly the changes`, async () => {
        const contactId = await newContact();
        const responses = await race((i) => {
          const url = `/v1/contacts/${contactId}/relationships/tags`;
          if (i % 3 === 0) return send(t, 'POST', url, token, tags(vip, lead));
          if (i % 3 === 1) return send(t, 'DELETE', url, token, tags(lead, vip));
          return send(t, 'PATCH', url, token, tags(i % 2 ? lead : vip));
        });
        allAnswered(responses, [200]);
        const has = new Set((await db().selectFrom('contact_taggings').select('contact_tag_id').where('contact_id', '=', contactId).execute()).map((r) => Number(r.contact_tag_id)));
        const events = await eventsAbout(contactId, 'tag_added', 'tag_removed');
        assert.ok(events.length > 0, 'some requests changed the tags');
        for (const tag of [vip, lead]) {
          // Each tag's events, in commit order, must alternate added/removed from "not tagged" and
          // end in the tag's final state: an event for every change and only for a change.
          const own = events.filter((e) => e.payload.tag_id === String(tag)).map((e) => e.type);
          own.forEach((type, k) => assert.equal(type, k % 2 === 0 ? 'tag_added' : 'tag_removed', `tag ${tag}: events alternate: ${own.join(', ')}`));
          assert.equal(own.length % 2 === 1, has.has(tag), `tag ${tag}: the last event matches the final state`);
        }
      });
    });

    describe('form submissions', () => {
      it(`${RACERS} submissions with one new email: all 201, one contact, customer, grant, welcome email, tagging and subscription each`, async () => {
        const sequence = await b.sequence({ title: 'Welcome series' });
        const form = await b.form({ title: 'Sign-up', offer_id: bundle, double_opt_in: false });
        await db().insertInto('form_tags').values([{ form_id: form, contact_tag_id: vip }, { form_id: form, contact_tag_id: lead }]).execute();
        await db().insertInto('form_email_sequences').values({ form_id: form, email_sequence_id: sequence }).execute();
        const address = email('signup');
        const responses = await race(() =>
          send(t, 'POST', `/v1/forms/${form}/submit`, token, { data: { type: 'form_submissions', attributes: { name: 'Ada Lovelace', email: address } } }),
        );
        allAnswered(responses, [201]);
        const contacts = await db().selectFrom('contacts').select('id').where('site_id', '=', t.tenant.siteId).where('email', '=', address).execute();
        assert.equal(contacts.length, 1, 'one contact');
        const contactId = Number(contacts[0]!.id);
        assert.equal((await customersOf(contactId)).length, 1, 'one customer');
        await grantedOnce(contactId, [{ offer: bundle, products: [course, workbook], title: 'Bundle' }]);
        const taggings = await db().selectFrom('contact_taggings').select('contact_tag_id').where('contact_id', '=', contactId).execute();
        assert.deepEqual(taggings.map((r) => Number(r.contact_tag_id)).sort(), [vip, lead].sort(), 'one tagging per form tag');
        assert.equal((await eventsAbout(contactId, 'tag_added')).length, 2, 'one tag_added event per form tag');
        const subscriptions = await db().selectFrom('email_sequence_subscriptions').select('id').where('contact_id', '=', contactId).execute();
        assert.equal(subscriptions.length, 1, 'one sequence subscription');
        const submissions = await db().selectFrom('form_submissions').select('id').where('contact_id', '=', contactId).execute();
        assert.equal(submissions.length, RACERS, 'every submission is recorded');
        const submissionEvents = await db().selectFrom('outbox_events').select('resource_id').where('event_type', '=', 'form_submission').where('resource_id', 'in', submissions.map((s) => s.id)).execute();
        assert.equal(submissionEvents.length, RACERS, 'a form_submission event per submission');
      });
    });

    describe('purchase actions', () => {
      /** A customer's purchase of the bundle with its grant and memberships; deactivated when asked. */
      async function purchase(input: { free?: boolean; deactivated?: boolean; subscription?: boolean } = {}) {
        const customer = await b.customer({ email: email('buyer') });
        const id = await b.purchase({
          customerId: customer.id,
          offerId: bundle,
          amount_in_cents: input.free ? 0 : 4900,
          payment_type: input.free ? 'free' : input.subscription ? 'subscription' : 'one_time',
          subscription_status: input.subscription ? 'active' : null,
          ...(input.deactivated ? { deactivated: t.clock.now() } : {}),
        });
        const grant = await b.grant({ contactId: customer.contactId, offerId: bundle, purchaseId: id, revoked_at: input.deactivated ? t.clock.now() : null });
        for (const productId of [course, workbook]) {
          await b.membership({ contactId: customer.contactId, productId, offerGrantId: grant, state: input.deactivated ? 'ended' : 'current' });
        }
        return { id, contactId: customer.contactId };
      }
      const act = (action: string, id: number) => send(t, 'POST', `/v1/purchases/${id}/${action}`, token);

      it(`${RACERS} reactivations of a free purchase: one 200, the rest 422, one new grant`, async () => {
        const p = await purchase({ free: true, deactivated: true });
        const responses = await race(() => act('reactivate', p.id));
        assert.deepEqual(statuses(responses), { 200: 1, 422: RACERS - 1 }, unexpected(responses, [200, 422]));
        assert.equal((await activeGrants(p.contactId)).length, 1, 'one active grant');
        assert.equal((await currentMemberships(p.contactId)).length, 2, 'one current membership per product');
      });

      it(`${RACERS} deactivations and cancellations: one of each kind succeeds, the rest 422`, async () => {
        const p = await purchase({ subscription: true });
        const responses = await race((i) => act(i % 2 ? 'deactivate' : 'cancel_subscription', p.id));
        allAnswered(responses, [200, 422]);
        const ok = responses.filter((res) => res.statusCode === 200).length;
        assert.ok(ok >= 1 && ok <= 2, `one deactivation and/or one cancellation: ${JSON.stringify(statuses(responses))}`);
        assert.equal((await activeGrants(p.contactId)).length, 0, 'access ended');
        assert.equal((await currentMemberships(p.contactId)).length, 0, 'memberships ended');
      });

      it(`${RACERS} deactivations and reactivations mixed: access matches the final state`, async () => {
        const p = await purchase({ free: true });
        const responses = await race((i) => act(i % 2 ? 'reactivate' : 'deactivate', p.id));
        allAnswered(responses, [200, 422]);
        const row = await db().selectFrom('purchases').select('deactivated_at').where('id', '=', p.id).executeTakeFirstOrThrow();
        const active = row.deactivated_at === null;
        assert.equal((await activeGrants(p.contactId)).length, active ? 1 : 0, 'one active grant exactly while active');
        assert.equal((await currentMemberships(p.contactId)).length, active ? 2 : 0, 'memberships follow');
      });
    });

    describe('contacts', () => {
      it(`${RACERS} creates with one email: one 201, the rest 422 taken`, async () => {
        const address = email('twin');
        const responses = await race(() => send(t, 'POST', '/v1/contacts', token, {
          data: { type: 'contacts', attributes: { email: address }, relationships: { site: { data: { type: 'sites', id: String(t.tenant.siteId) } } } },
        }));
        assert.deepEqual(statuses(responses), { 201: 1, 422: RACERS - 1 }, unexpected(responses, [201, 422]));
        for (const res of responses.filter((r) => r.statusCode === 422)) assert.equal(res.json().errors[0].code, 'taken');
      });

      it(`${RACERS} contacts renamed to one email at once: one 200, the rest 422 taken`, async () => {
        const address = email('wanted');
        const ids = await Promise.all(Array.from({ length: RACERS }, () => newContact()));
        const responses = await race((i) => send(t, 'PATCH', `/v1/contacts/${ids[i]}`, token, { data: { type: 'contacts', id: String(ids[i]), attributes: { email: address } } }));
        assert.deepEqual(statuses(responses), { 200: 1, 422: RACERS - 1 }, unexpected(responses, [200, 422]));
      });

      it('a contact whose email changes while it is granted an offer: its customer has its email', async () => {
        const contactIds = await Promise.all(Array.from({ length: RACERS / 2 }, () => newContact()));
        const responses = await race((i) => {
          const id = contactIds[Math.floor(i / 2)]!;
          return i % 2
            ? send(t, 'POST', `/v1/contacts/${id}/relationships/offers`, token, offers(club))
            : send(t, 'PATCH', `/v1/contacts/${id}`, token, { data: { type: 'contacts', id: String(id), attributes: { email: `renamed-${id}@example.com` } } });
        });
        allAnswered(responses, [200]);
        for (const id of contactIds) {
          const contact = await db().selectFrom('contacts').select('email').where('id', '=', id).executeTakeFirstOrThrow();
          assert.deepEqual((await customersOf(id)).map((c) => c.email), [contact.email], `contact ${id}: the customer follows the contact's email`);
        }
      });

      it('a contact deleted while others grant, tag and note it: 200, 201 or 404, never a 500', async () => {
        const contactId = await newContact();
        const responses = await race((i) => {
          if (i === RACERS / 2) return send(t, 'DELETE', `/v1/contacts/${contactId}`, token);
          if (i % 3 === 0) return send(t, 'POST', `/v1/contacts/${contactId}/relationships/offers`, token, offers(club));
          if (i % 3 === 1) return send(t, 'POST', `/v1/contacts/${contactId}/relationships/tags`, token, tags(lead));
          return send(t, 'POST', '/v1/contact_notes', token, {
            data: { type: 'contact_notes', attributes: { body: `note ${i}` }, relationships: { contact: { data: { type: 'contacts', id: String(contactId) } } } },
          });
        });
        allAnswered(responses, [200, 201, 404]);
        assert.equal(await db().selectFrom('contacts').select('id').where('id', '=', contactId).executeTakeFirst(), undefined, 'the contact is gone');
      });
    });

    describe('contact notes', () => {
      const noteOf = async (contactId: number) =>
        send(t, 'POST', '/v1/contact_notes', token, {
          data: { type: 'contact_notes', attributes: { body: 'first' }, relationships: { contact: { data: { type: 'contacts', id: String(contactId) } } } },
        });

      it(`${RACERS} notes on one contact: all 201, ${RACERS} notes`, async () => {
        const contactId = await newContact();
        const responses = await race(() => noteOf(contactId));
        allAnswered(responses, [201]);
        const notes = await db().selectFrom('contact_notes').select('id').where('contact_id', '=', contactId).execute();
        assert.equal(notes.length, RACERS);
      });

      it(`${RACERS} deletes of one note: one 200, the rest 404 as one after another would answer`, async () => {
        const note = (await noteOf(await newContact())).json().data.id as string;
        const responses = await race(() => send(t, 'DELETE', `/v1/contact_notes/${note}`, token));
        assert.deepEqual(statuses(responses), { 200: 1, 404: RACERS - 1 }, unexpected(responses, [200, 404]));
      });

      it(`${RACERS} updates of one note with a delete among them: 200 or 404, never a 500`, async () => {
        const note = (await noteOf(await newContact())).json().data.id as string;
        const responses = await race((i) =>
          i === RACERS / 2
            ? send(t, 'DELETE', `/v1/contact_notes/${note}`, token)
            : send(t, 'PATCH', `/v1/contact_notes/${note}`, token, { data: { type: 'contact_notes', id: note, attributes: { body: `edit ${i}` } } }),
        );
        allAnswered(responses, [200, 404]);
      });
    });
  });
}
