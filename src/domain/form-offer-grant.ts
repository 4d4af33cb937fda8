// The offer grant a form submission makes, written minimally until the offer-grant domain
// (src/domain/offer-grants.ts) lands; the lead merges the two. Granting: the contact gets a
// customer (created from the contact when it has none), an active grant of the offer (kept when
// it already has one) and a current membership of each of the offer's products.
import { ApiError } from '../jsonapi/errors.js';
import type { WriteContext } from '../jsonapi/resource.js';

export async function grantOfferOnSubmit(ctx: WriteContext, siteId: number, contactId: number, offerId: number): Promise<void> {
  const { db, traits } = ctx.handle;
  const at = traits.encodeTimestamp(ctx.now);
  const customer = await db.selectFrom('customers').select('id').where('contact_id', '=', contactId).executeTakeFirst();
  if (!customer) {
    const contact = await db.selectFrom('contacts').select(['name', 'email']).where('id', '=', contactId).executeTakeFirstOrThrow();
    // Customers are matched by email within the site; one that belongs to another contact cannot
    // become this contact's (customers.email is unique per site), so the whole submission fails.
    const holder = await db.selectFrom('customers').select('id').where('site_id', '=', siteId).where('email', '=', contact.email).executeTakeFirst();
    if (holder) {
      throw new ApiError(409, [
        {
          code: 'customer_conflict',
          title: 'Conflict',
          detail: `Customer ${holder.id} of another contact already has the email ${contact.email}; the form's offer cannot be granted`,
          source: { pointer: '/data/attributes/email' },
        },
      ]);
    }
    await db
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
      .execute();
  }
  const active = await db
    .selectFrom('offer_grants')
    .select('id')
    .where('contact_id', '=', contactId)
    .where('offer_id', '=', offerId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (active) return;
  const grant = await db
    .insertInto('offer_grants')
    .values({ site_id: siteId, contact_id: contactId, offer_id: offerId, purchase_id: null, granted_at: at, revoked_at: null, created_at: at, updated_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  const products = await db.selectFrom('offer_products').select('product_id').where('offer_id', '=', offerId).execute();
  for (const { product_id } of products) {
    await db
      .insertInto('memberships')
      .values({
        site_id: siteId,
        contact_id: contactId,
        product_id,
        offer_grant_id: grant.id,
        started_at: at,
        suspended_at: null,
        ended_at: null,
        created_at: at,
        updated_at: at,
      })
      .execute();
  }
}
