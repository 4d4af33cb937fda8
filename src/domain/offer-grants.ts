// Offer grants: POST, PATCH and DELETE on /v1/contacts/{id}/relationships/offers and
// /v1/customers/{id}/relationships/offers. Called by the engine inside the request's transaction,
// with every offer already found in the record's site. Grants belong to the contact (a
// customer's grants are its contact's), so both endpoints share the functions below.
//
// Granting an offer:
// - makes the contact a customer if it is not one yet (matched by email within the site; name
//   and email copied from the contact, net revenue 0). A customer left detached by the deletion
//   of its contact, with this contact's email, is the same buyer coming back: it is attached to
//   this contact, with its purchases and net revenue;
// - writes an offer_grants row and one membership per product of the offer (offer_products), so
//   the has_offer_id / has_product_id filters match at once;
// - records a 'customer_welcome' outgoing message per offer granted, unless
//   meta.send_customer_welcome_email is false;
// - changes nothing for an offer the contact already holds (an active grant).
//
// Under concurrency (see docs/architecture.md, "Concurrent writes"): the engine serialises a
// site's write requests, and the database holds the rule itself besides: an active grant by hand
// is unique per contact and offer, an active grant of a purchase unique per purchase (migration
// 0006). Grants and customers are inserted with ON CONFLICT DO NOTHING, and only the transaction
// whose row went in writes the memberships and the welcome email that go with it.
//
// Revoking an offer ends access, as upstream says, for both grants and purchases of the offer:
// the active grants get revoked_at, the active purchases of the offer by the contact's customer
// are deactivated ('access revoked'; a subscription is left as it is, as deactivation does), and
// the memberships those grants gave end (ended_at), which makes the products "previously owned".
// Only manage:purchases changes a purchase: a revoke that would deactivate one needs it besides
// manage:customers, else it answers 403 naming it and changes nothing.
//
// A customer detached from its deleted contact has no grants to change: 422 customer_detached.
import { ApiError, forbidden, unprocessable } from '../jsonapi/errors.js';
import type { WriteContext, WriteTarget } from '../jsonapi/resource.js';

/** The one permission that changes purchases. */
const PURCHASE_WRITES = 'manage:purchases';

/** Why a purchase revoked through the offers relationship is deactivated. */
export const REVOKED_REASON = 'access revoked';

/** meta.send_customer_welcome_email: true unless given as false; anything but a boolean is a 422. */
export function sendWelcomeEmail(meta: Record<string, unknown>): boolean {
  const value = meta.send_customer_welcome_email;
  if (value === undefined) return true;
  if (typeof value !== 'boolean') {
    throw unprocessable('invalid_meta', `send_customer_welcome_email must be true or false, got ${JSON.stringify(value)}`, '/meta/send_customer_welcome_email');
  }
  return value;
}

/** The contact a record's grants belong to: the contact itself, or the customer's contact. */
type ContactOf = (ctx: WriteContext, record: WriteTarget) => Promise<number>;

const ofContact: ContactOf = async (_ctx, record) => record.id;
const ofCustomer: ContactOf = async (ctx, record) => {
  const row = await ctx.handle.db.selectFrom('customers').select('contact_id').where('id', '=', record.id).executeTakeFirstOrThrow();
  if (row.contact_id === null) {
    throw new ApiError(422, [
      {
        code: 'customer_detached',
        title: 'Unprocessable Entity',
        detail: `Customer ${record.id} has no contact (it was deleted), so it holds no offers; grant offers to a contact with its email instead`,
      },
    ]);
  }
  return Number(row.contact_id);
};

/** Offer ids the contact holds now (active grants). */
async function activeOfferIds(ctx: WriteContext, contactId: number): Promise<Set<number>> {
  const rows = await ctx.handle.db
    .selectFrom('offer_grants')
    .select('offer_id')
    .where('contact_id', '=', contactId)
    .where('revoked_at', 'is', null)
    .execute();
  return new Set(rows.map((r) => Number(r.offer_id)));
}

/** The contact's customer; created from the contact when it has none (a grant, a checkout). */
export async function ensureCustomer(ctx: WriteContext, siteId: number, contactId: number): Promise<{ id: number; email: string }> {
  const { db, traits } = ctx.handle;
  const contact = await db.selectFrom('contacts').select(['name', 'email']).where('id', '=', contactId).executeTakeFirstOrThrow();
  const existing = await db
    .selectFrom('customers')
    .select(['id', 'email', 'contact_id'])
    .where('site_id', '=', siteId)
    .where((eb) => eb.or([eb('contact_id', '=', contactId), eb('email', '=', contact.email)]))
    .execute();
  const own = existing.find((c) => c.contact_id !== null && Number(c.contact_id) === contactId);
  if (own) return { id: Number(own.id), email: own.email };
  const detached = existing.find((c) => c.contact_id === null);
  if (detached) {
    await db
      .updateTable('customers')
      .set({ contact_id: contactId, name: contact.name, updated_at: traits.encodeTimestamp(ctx.now) })
      .where('id', '=', detached.id)
      .where('contact_id', 'is', null)
      .execute();
    return { id: Number(detached.id), email: detached.email };
  }
  if (existing.length > 0) {
    // Contact emails are unique within a site and a customer's email follows its contact's, so
    // this is only reachable through inconsistent data: refuse rather than merge two people.
    throw new ApiError(409, [
      { code: 'customer_conflict', title: 'Conflict', detail: `Another contact's customer already uses ${contact.email} in this site` },
    ]);
  }
  const at = traits.encodeTimestamp(ctx.now);
  const row = await db
    .insertInto('customers')
    .values({
      site_id: siteId,
      contact_id: contactId,
      name: contact.name,
      email: contact.email,
      net_revenue_cents: 0,
      sign_in_count: 0,
      created_at: at,
      updated_at: at,
    })
    // Another transaction made the contact a customer first (it committed while this one read):
    // that customer is this contact's, so use it rather than fail.
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .executeTakeFirst();
  if (row) return { id: Number(row.id), email: contact.email };
  const made = await db.selectFrom('customers').select(['id', 'email']).where('contact_id', '=', contactId).executeTakeFirst();
  if (!made) {
    throw new ApiError(409, [
      { code: 'customer_conflict', title: 'Conflict', detail: `Another contact's customer already uses ${contact.email} in this site` },
    ]);
  }
  return { id: Number(made.id), email: made.email };
}

/**
 * One grant of an offer to a contact (by hand, or for a purchase) and a current membership per
 * product it gives: the only place access is created. Null when the grant exists already (an
 * active grant by hand of the offer to the contact, or an active grant of the purchase): then
 * nothing is written.
 */
export async function insertGrant(
  ctx: WriteContext,
  grant: { siteId: number; contactId: number; offerId: number; purchaseId: number | null; productIds: readonly number[] },
): Promise<number | null> {
  const { db, traits } = ctx.handle;
  const at = traits.encodeTimestamp(ctx.now);
  const row = await db
    .insertInto('offer_grants')
    .values({
      site_id: grant.siteId,
      contact_id: grant.contactId,
      offer_id: grant.offerId,
      purchase_id: grant.purchaseId,
      granted_at: at,
      revoked_at: null,
      created_at: at,
      updated_at: at,
    })
    // The partial unique indexes of migration 0006; their conditions name the index meant.
    .onConflict((oc) =>
      (grant.purchaseId === null
        ? oc.columns(['contact_id', 'offer_id']).where('purchase_id', 'is', null)
        : oc.column('purchase_id').where('purchase_id', 'is not', null)
      )
        .where('revoked_at', 'is', null)
        .doNothing(),
    )
    .returning('id')
    .executeTakeFirst();
  if (!row) return null;
  if (grant.productIds.length > 0) {
    await db
      .insertInto('memberships')
      .values(
        grant.productIds.map((productId) => ({
          site_id: grant.siteId,
          contact_id: grant.contactId,
          product_id: productId,
          offer_grant_id: row.id,
          started_at: at,
          suspended_at: null,
          ended_at: null,
          created_at: at,
          updated_at: at,
        })),
      )
      .execute();
  }
  return Number(row.id);
}

/**
 * Grants each offer the contact does not hold yet; see the file comment. Exported for other
 * writes that grant offers (a form submission).
 */
export async function grantOffers(ctx: WriteContext, siteId: number, contactId: number, offerIds: number[], welcome: boolean): Promise<void> {
  const held = await activeOfferIds(ctx, contactId);
  // In id order, once each: concurrent grants of several offers then take their rows in one order.
  const granting = [...new Set(offerIds)].filter((id) => !held.has(id)).sort((a, b) => a - b);
  if (granting.length === 0) return;
  const { db } = ctx.handle;
  const customer = await ensureCustomer(ctx, siteId, contactId);
  const products = await db.selectFrom('offer_products').select(['offer_id', 'product_id']).where('offer_id', 'in', granting).execute();
  const titles = new Map(
    (await db.selectFrom('offers').select(['id', 'title']).where('id', 'in', granting).execute()).map((o) => [Number(o.id), o.title]),
  );
  for (const offerId of granting) {
    const productIds = products.filter((p) => Number(p.offer_id) === offerId).map((p) => Number(p.product_id));
    const granted = await insertGrant(ctx, { siteId, contactId, offerId, purchaseId: null, productIds });
    if (granted !== null && welcome) await recordWelcomeEmail(ctx, { siteId, contactId, email: customer.email, title: titles.get(offerId) ?? `offer ${offerId}` });
  }
}

/** The 'customer_welcome' outgoing message of an offer granted (by hand, a form or a checkout). */
export async function recordWelcomeEmail(ctx: WriteContext, m: { siteId: number; contactId: number; email: string; title: string }): Promise<void> {
  await ctx.handle.db
    .insertInto('outgoing_messages')
    .values({
      site_id: m.siteId,
      contact_id: m.contactId,
      kind: 'customer_welcome',
      to_email: m.email,
      subject: `Welcome to ${m.title}`,
      body: `You now have access to ${m.title}. Sign in with ${m.email} to get started.`,
      created_at: ctx.handle.traits.encodeTimestamp(ctx.now),
    })
    .execute();
}

/** Ends the contact's access to each offer: grants, purchases and their memberships. */
export async function revokeOffers(ctx: WriteContext, contactId: number, offerIds: number[]): Promise<void> {
  if (offerIds.length === 0) return;
  const { db, traits } = ctx.handle;
  const at = traits.encodeTimestamp(ctx.now);
  const purchases = await db
    .selectFrom('purchases')
    .innerJoin('customers', 'customers.id', 'purchases.customer_id')
    .select('purchases.id')
    .where('customers.contact_id', '=', contactId)
    .where('purchases.offer_id', 'in', offerIds)
    .where('purchases.deactivated_at', 'is', null)
    .execute();
  const purchaseIds = purchases.map((p) => Number(p.id));
  if (purchaseIds.length > 0 && !ctx.principal.permissions.has(PURCHASE_WRITES)) {
    throw forbidden(
      `Revoking an offer the contact bought deactivates the purchase, which needs the ${PURCHASE_WRITES} permission; this API key lacks it`,
    );
  }
  if (purchaseIds.length > 0) {
    await db
      .updateTable('purchases')
      .set({ deactivated_at: at, deactivation_reason: REVOKED_REASON, updated_at: at })
      .where('id', 'in', purchaseIds)
      .execute();
  }
  const grants = await db
    .selectFrom('offer_grants')
    .select('id')
    .where('revoked_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb.and([eb('contact_id', '=', contactId), eb('offer_id', 'in', offerIds)]),
        ...(purchaseIds.length > 0 ? [eb('purchase_id', 'in', purchaseIds)] : []),
      ]),
    )
    .execute();
  await endGrants(ctx, grants.map((g) => Number(g.id)));
}

/** Revokes these grants and ends the memberships they gave: the only place access ends. */
export async function endGrants(ctx: WriteContext, grantIds: readonly number[]): Promise<void> {
  if (grantIds.length === 0) return;
  const { db, traits } = ctx.handle;
  const at = traits.encodeTimestamp(ctx.now);
  await db.updateTable('offer_grants').set({ revoked_at: at, updated_at: at }).where('id', 'in', [...grantIds]).execute();
  await db
    .updateTable('memberships')
    .set({ ended_at: at, updated_at: at })
    .where('offer_grant_id', 'in', [...grantIds])
    .where('ended_at', 'is', null)
    .execute();
}

/** The add, replace and remove functions of an offers relationship whose grants belong to `contactOf`. */
function offerGrantWrites(contactOf: ContactOf) {
  return {
    description:
      `Granting makes the contact a customer if it is not one yet. Revoking (DELETE, or PATCH leaving an offer out) ends access to the offer: its grants, their memberships, and the contact's active purchases of it, which are deactivated ("${REVOKED_REASON}"). Deactivating a purchase needs manage:purchases as well: without it such a revoke answers 403 and changes nothing. A customer whose contact was deleted holds no offers: 422 customer_detached.`,
    /** POST: grants each offer. */
    add: async (ctx: WriteContext, record: WriteTarget, offers: WriteTarget[], meta: Record<string, unknown>) => {
      const welcome = sendWelcomeEmail(meta);
      await grantOffers(ctx, record.siteId, await contactOf(ctx, record), offers.map((o) => o.id), welcome);
    },
    /** PATCH: revokes the offers not listed, grants the listed ones not held. */
    replace: async (ctx: WriteContext, record: WriteTarget, offers: WriteTarget[], meta: Record<string, unknown>) => {
      const welcome = sendWelcomeEmail(meta);
      const contactId = await contactOf(ctx, record);
      const wanted = new Set(offers.map((o) => o.id));
      const held = await activeOfferIds(ctx, contactId);
      await revokeOffers(ctx, contactId, [...held].filter((id) => !wanted.has(id)));
      await grantOffers(ctx, record.siteId, contactId, [...wanted], welcome);
    },
    /** DELETE: revokes each offer; offers not held are ignored. */
    remove: async (ctx: WriteContext, record: WriteTarget, offers: WriteTarget[]) => {
      await revokeOffers(ctx, await contactOf(ctx, record), offers.map((o) => o.id));
    },
  };
}

export const contactOfferGrants = offerGrantWrites(ofContact);
export const customerOfferGrants = offerGrantWrites(ofCustomer);
