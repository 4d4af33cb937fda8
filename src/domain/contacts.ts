// Contacts: creating, updating and deleting one, with the rules the platform enforces. Called by
// the engine inside the request's transaction (ctx.handle.db is the transaction).
//
// - email is required, stripped and lower-cased, and unique within the site (also under a race:
//   the unique index contacts_site_email_uq decides, and its violation becomes the same 422);
// - a blank name is generated from the email;
// - external_user_id belongs to the customer: refused on create, and on update allowed only when
//   the contact has a customer (unique within the site);
// - custom_1..custom_3 take values only when the site has a custom field with that handle;
// - subscribed keeps its history (subscribed_at, unsubscribed_at);
// - a customer's name and email follow the contact's; a new email resets bounce state.
import { ApiError, unprocessable } from '../jsonapi/errors.js';
import type { WriteContext, WriteInput, WriteTarget } from '../jsonapi/resource.js';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const CUSTOM_FIELDS = ['custom_1', 'custom_2', 'custom_3'] as const;
/** Attributes copied as given (strings or null); form submissions carry the same ones. */
export const PLAIN = [
  'address_line_1',
  'address_line_2',
  'address_city',
  'address_state',
  'address_country',
  'address_zip',
  'phone_number',
  'business_number',
] as const;

const pointer = (name: string) => `/data/attributes/${name}`;

/** Stripped and lower-cased, or a 422 naming the attribute. */
export function normalizeEmail(value: unknown): string {
  const email = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (email === '') throw unprocessable('missing_attribute', 'email is required', pointer('email'));
  if (!EMAIL.test(email) || email.length > 254) {
    throw unprocessable('invalid_email', `${JSON.stringify(value)} is not an email address`, pointer('email'));
  }
  return email;
}

/** "jane.doe+news@example.com" → "Jane Doe News": the name of someone who gave none. */
export function nameFromEmail(email: string): string {
  const local = email.split('@')[0] ?? email;
  const words = local.split(/[._+\-\s]+/).filter((w) => w !== '');
  return words.length === 0 ? local : words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');
}

const emailTaken = (email: string) => unprocessable('taken', `A contact with email ${email} already exists in this site`, pointer('email'));

/** Runs an insert or update; a unique violation on the email becomes the 422 a pre-check gives. */
async function uniqueEmail<T>(ctx: WriteContext, email: string, run: () => Promise<T>, externalUserId?: string): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!ctx.handle.traits.isUniqueViolation(error)) throw error;
    const text = String((error as Error).message);
    if (externalUserId !== undefined && /external/.test(text)) throw externalTaken(externalUserId);
    throw emailTaken(email);
  }
}

const externalTaken = (value: string) =>
  unprocessable('taken', `external_user_id ${JSON.stringify(value)} is already used by another customer of this site`, pointer('external_user_id'));

/** custom_N may hold a value only when the site defines that custom field. */
export async function checkCustomFields(ctx: WriteContext, siteId: number, attributes: Record<string, unknown>): Promise<void> {
  const given = CUSTOM_FIELDS.filter((name) => attributes[name] !== undefined && attributes[name] !== null);
  if (given.length === 0) return;
  const rows = await ctx.handle.db
    .selectFrom('custom_fields')
    .select('handle')
    .where('site_id', '=', siteId)
    .where('handle', 'in', given)
    .execute();
  const defined = new Set(rows.map((r) => r.handle));
  const missing = given.filter((name) => !defined.has(name));
  if (missing.length > 0) {
    throw new ApiError(
      422,
      missing.map((name) => ({
        code: 'unknown_custom_field',
        title: 'Unprocessable Entity',
        detail: `This site has no custom field with handle ${name}`,
        source: { pointer: pointer(name) },
      })),
    );
  }
}

function plainColumns(attributes: Record<string, unknown>): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const name of [...PLAIN, ...CUSTOM_FIELDS]) {
    if (attributes[name] !== undefined) out[name] = attributes[name] as string | null;
  }
  return out;
}

export async function createContact(ctx: WriteContext, input: WriteInput): Promise<number> {
  const { attributes } = input;
  const siteId = input.targets.site!.siteId;
  if (attributes.external_user_id !== undefined) {
    throw unprocessable(
      'customer_required',
      'external_user_id belongs to a customer; a new contact has none (grant an offer first, then update the contact)',
      pointer('external_user_id'),
    );
  }
  const email = normalizeEmail(attributes.email);
  const givenName = typeof attributes.name === 'string' ? attributes.name.trim() : '';
  await checkCustomFields(ctx, siteId, attributes);
  const { db, traits } = ctx.handle;
  const existing = await db.selectFrom('contacts').select('id').where('site_id', '=', siteId).where('email', '=', email).executeTakeFirst();
  if (existing) throw emailTaken(email);
  const at = traits.encodeTimestamp(ctx.now);
  const subscribed = attributes.subscribed === true;
  return uniqueEmail(ctx, email, async () => {
    const row = await db
      .insertInto('contacts')
      .values({
        site_id: siteId,
        ...plainColumns(attributes),
        name: givenName === '' ? nameFromEmail(email) : givenName,
        email,
        hidden: traits.encodeBoolean(false),
        subscribed: traits.encodeBoolean(subscribed),
        subscribed_at: subscribed ? at : null,
        created_at: at,
        updated_at: at,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  });
}

export async function updateContact(ctx: WriteContext, record: WriteTarget, input: WriteInput): Promise<void> {
  const { attributes } = input;
  const { db, traits } = ctx.handle;
  const contact = await db
    .selectFrom('contacts')
    .select(['name', 'email', 'subscribed'])
    .where('id', '=', record.id)
    .executeTakeFirstOrThrow();
  const customer = await db.selectFrom('customers').select(['id', 'external_user_id']).where('contact_id', '=', record.id).executeTakeFirst();
  if (attributes.external_user_id !== undefined && !customer) {
    throw unprocessable(
      'customer_required',
      'external_user_id can only be set on a contact that has a customer (granted an offer or made a purchase)',
      pointer('external_user_id'),
    );
  }
  await checkCustomFields(ctx, record.siteId, attributes);

  const email = attributes.email !== undefined ? normalizeEmail(attributes.email) : contact.email;
  const emailChanged = email !== contact.email;
  if (emailChanged) {
    const taken = await db
      .selectFrom('contacts')
      .select('id')
      .where('site_id', '=', record.siteId)
      .where('email', '=', email)
      .where('id', '!=', record.id)
      .executeTakeFirst();
    if (taken) throw emailTaken(email);
  }
  let name = contact.name;
  if (attributes.name !== undefined) {
    name = typeof attributes.name === 'string' ? attributes.name.trim() : '';
    if (name === '') name = nameFromEmail(email);
  }
  const externalUserId = attributes.external_user_id as string | null | undefined;
  if (customer && typeof externalUserId === 'string') {
    const taken = await db
      .selectFrom('customers')
      .select('id')
      .where('site_id', '=', record.siteId)
      .where('external_user_id', '=', externalUserId)
      .where('id', '!=', customer.id)
      .executeTakeFirst();
    if (taken) throw externalTaken(externalUserId);
  }

  const at = traits.encodeTimestamp(ctx.now);
  const wasSubscribed = traits.decodeBoolean(contact.subscribed) === true;
  const subscribed = attributes.subscribed === undefined ? wasSubscribed : attributes.subscribed === true;
  await uniqueEmail(
    ctx,
    email,
    async () => {
      await db
        .updateTable('contacts')
        .set({
          ...plainColumns(attributes),
          name,
          email,
          subscribed: traits.encodeBoolean(subscribed),
          ...(subscribed && !wasSubscribed ? { subscribed_at: at } : {}),
          ...(!subscribed && wasSubscribed ? { unsubscribed_at: at } : {}),
          // A new address has no bounce history.
          ...(emailChanged ? { bounced_at: null, bounce_type: null } : {}),
          updated_at: at,
        })
        .where('id', '=', record.id)
        .execute();
      if (customer) {
        await db
          .updateTable('customers')
          .set({
            name,
            email,
            ...(externalUserId !== undefined ? { external_user_id: externalUserId } : {}),
            ...(emailChanged ? { bounced_at: null } : {}),
            updated_at: at,
          })
          .where('id', '=', customer.id)
          .execute();
      }
    },
    typeof externalUserId === 'string' ? externalUserId : undefined,
  );
}

/**
 * Deletes a contact and everything that is only about the person: grants, memberships, tags,
 * notes, email activity and form submissions (the foreign keys cascade; submissions are deleted
 * explicitly because their contact_id would only be set null and they hold the person's name and
 * email). Money is not about the person alone and stays (docs/permissions.md, "Deleting a
 * contact"): the customer record keeps its name, email, net revenue, purchases, transactions and
 * orders, detached (contact_id set null by the foreign key), and loses the public profile the
 * person wrote (bio, location, website, socials, avatar). So manage:contacts never removes or
 * changes a financial record. Outgoing messages keep their row with contact_id null: they record
 * what was sent. A contact still paying (an active subscription, or a payment plan not yet
 * deactivated) cannot be deleted: 422, as upstream says, so that no billing continues for a
 * person who no longer exists.
 */
export async function deleteContact(ctx: WriteContext, record: WriteTarget): Promise<void> {
  const { db } = ctx.handle;
  const paying = await db
    .selectFrom('purchases')
    .innerJoin('customers', 'customers.id', 'purchases.customer_id')
    .select(['purchases.id', 'purchases.subscription_status'])
    .where('customers.contact_id', '=', record.id)
    .where((eb) =>
      eb.or([
        eb('purchases.subscription_status', '=', 'active'),
        eb.and([eb('purchases.payment_type', '=', 'multipay'), eb('purchases.deactivated_at', 'is', null)]),
      ]),
    )
    .executeTakeFirst();
  if (paying) {
    const what = paying.subscription_status === 'active' ? 'an active subscription' : 'an active payment plan';
    throw new ApiError(422, [
      {
        code: 'active_subscription',
        title: 'Unprocessable Entity',
        detail: `The contact has ${what} (purchase ${paying.id}); cancel it before deleting the contact`,
      },
    ]);
  }
  await db.deleteFrom('form_submissions').where('contact_id', '=', record.id).execute();
  await db
    .updateTable('customers')
    .set({
      avatar_url: null,
      public_bio: null,
      public_location: null,
      public_website: null,
      socials: null,
      updated_at: ctx.handle.traits.encodeTimestamp(ctx.now),
    })
    .where('contact_id', '=', record.id)
    .execute();
  await db.deleteFrom('contacts').where('id', '=', record.id).execute();
}
