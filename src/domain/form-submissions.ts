// Submitting a form (POST /v1/forms/{id}/submit). Called by the engine inside the request's one
// transaction, after the body was checked against the submit rules (name and email present):
//
// - the contact is found by email within the form's site, or created (name, email, phone and
//   address fields from the submission); an existing contact only gets its blanks filled;
// - the submission is recorded with its contact;
// - the form's tags are applied (idempotent; a tag_added event for each new tagging);
// - the form's offer is granted (creating the customer, with the welcome email) when it has one;
// - the contact is subscribed to the form's email sequences (idempotent);
// - marketing consent: with double opt-in the contact is NOT subscribed yet, a confirmation email
//   is recorded in outgoing_messages instead, with the token of the link that confirms it
//   (confirmDoubleOptIn); otherwise the contact is subscribed now;
// - a form_submission event goes to the outbox with the submitted fields.
import { randomBytes } from 'node:crypto';
import { accountNow } from '../auth/principal.js';
import type { DatabaseHandle } from '../db/connect.js';
import { lockSiteWrites } from '../db/site-counters.js';
import type { WriteContext, WriteInput, WriteTarget } from '../jsonapi/resource.js';
import { checkCustomFields, CUSTOM_FIELDS, nameFromEmail, normalizeEmail, PLAIN } from './contacts.js';
import { grantOffers } from './offer-grants.js';
import { recordEvent } from './outbox.js';

/** Attributes of a submission kept on its form_submissions row besides name and email. */
const SUBMISSION_FIELDS = [...PLAIN, ...CUSTOM_FIELDS] as const;
/** Contact columns a submission fills: the submission's own, and the mobile number (contact only). */
const CONTACT_FIELDS = [...PLAIN, 'mobile_phone_number', ...CUSTOM_FIELDS] as const;
type ContactField = (typeof CONTACT_FIELDS)[number];

const filled = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

export async function submitForm(ctx: WriteContext, form: WriteTarget, input: WriteInput | undefined): Promise<{ type: string; id: number; created: true }> {
  // The action declares a body, so the engine always hands one over.
  if (!input) throw new Error('submitForm needs the checked submission document');
  const { attributes } = input;
  const { db, traits } = ctx.handle;
  const siteId = form.siteId;
  const email = normalizeEmail(attributes.email);
  const name = String(attributes.name).trim() || nameFromEmail(email);
  await checkCustomFields(ctx, siteId, attributes);
  const at = traits.encodeTimestamp(ctx.now);

  const formRow = await db
    .selectFrom('forms')
    .select(['title', 'offer_id', 'double_opt_in'])
    .where('id', '=', form.id)
    .executeTakeFirstOrThrow();

  const contactId = await upsertContact(ctx, siteId, email, name, attributes);

  const submissionValues: Record<string, string | null> = {};
  for (const field of SUBMISSION_FIELDS) {
    if (attributes[field] !== undefined) submissionValues[field] = attributes[field] as string | null;
  }
  const submission = await db
    .insertInto('form_submissions')
    .values({ site_id: siteId, form_id: form.id, contact_id: contactId, name, email, ...submissionValues, created_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  const submissionId = Number(submission.id);

  await applyTags(ctx, siteId, form.id, contactId, email);
  // As a grant through the offers relationship does: the customer, grant, memberships and the
  // recorded welcome email; an offer the contact already holds changes nothing.
  if (formRow.offer_id !== null) await grantOffers(ctx, siteId, contactId, [Number(formRow.offer_id)], true);
  await subscribeToSequences(ctx, siteId, form.id, contactId);
  await handleConsent(ctx, siteId, contactId, email, traits.decodeBoolean(formRow.double_opt_in) === true, formRow.title);

  await recordEvent(ctx, {
    siteId,
    type: 'form_submission',
    records: [
      { type: 'form_submissions', id: submissionId },
      { type: 'forms', id: form.id },
    ],
    hookResourceIds: [form.id],
  });
  return { type: 'form_submissions', id: submissionId, created: true };
}

/**
 * The contact with this email in the site: created from the submission, or given the submitted
 * values of its blank fields (a submission never overwrites or clears what the contact has).
 * A concurrent submission creating the same contact is absorbed by ON CONFLICT DO NOTHING: the
 * loser reads the winner's row instead of failing on the unique index.
 */
async function upsertContact(ctx: WriteContext, siteId: number, email: string, name: string, attributes: Record<string, unknown>): Promise<number> {
  const { db, traits } = ctx.handle;
  const at = traits.encodeTimestamp(ctx.now);
  const given: Partial<Record<ContactField, string>> = {};
  for (const field of CONTACT_FIELDS) {
    const value = attributes[field];
    if (filled(value)) given[field] = value;
  }
  const inserted = await db
    .insertInto('contacts')
    .values({
      site_id: siteId,
      ...given,
      name,
      email,
      hidden: traits.encodeBoolean(false),
      subscribed: traits.encodeBoolean(false),
      created_at: at,
      updated_at: at,
    })
    .onConflict((oc) => oc.columns(['site_id', 'email']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted) return Number(inserted.id);

  const existing = await db
    .selectFrom('contacts')
    .select(['id', ...CONTACT_FIELDS])
    .where('site_id', '=', siteId)
    .where('email', '=', email)
    .executeTakeFirstOrThrow();
  const blanks: Partial<Record<ContactField, string>> = {};
  for (const field of CONTACT_FIELDS) {
    const value = given[field];
    if (value !== undefined && !filled(existing[field])) blanks[field] = value;
  }
  if (Object.keys(blanks).length > 0) {
    await db
      .updateTable('contacts')
      .set({ ...blanks, updated_at: at })
      .where('id', '=', existing.id)
      .execute();
  }
  return Number(existing.id);
}

/**
 * Tags the contact with the form's tags; each new tagging announces tag_added, with the payload
 * the tags relationship endpoint writes (src/domain/contact-tags.ts), so hooks see one shape.
 */
async function applyTags(ctx: WriteContext, siteId: number, formId: number, contactId: number, email: string): Promise<void> {
  const { db, traits } = ctx.handle;
  const tags = await db
    .selectFrom('form_tags')
    .innerJoin('contact_tags', 'contact_tags.id', 'form_tags.contact_tag_id')
    .select(['contact_tags.id', 'contact_tags.name'])
    .where('form_tags.form_id', '=', formId)
    .orderBy('contact_tags.id')
    .execute();
  for (const tag of tags) {
    const added = await db
      .insertInto('contact_taggings')
      .values({ contact_id: contactId, contact_tag_id: tag.id, created_at: traits.encodeTimestamp(ctx.now) })
      .onConflict((oc) => oc.columns(['contact_id', 'contact_tag_id']).doNothing())
      .returning('contact_tag_id')
      .executeTakeFirst();
    if (added) {
      await recordEvent(ctx, {
        siteId,
        type: 'tag_added',
        records: [
          { type: 'contacts', id: contactId },
          { type: 'contact_tags', id: Number(tag.id) },
        ],
        hookResourceIds: [Number(tag.id)],
      });
    }
  }
}

/** Subscribes the contact to the form's sequences it is not subscribed to now. */
async function subscribeToSequences(ctx: WriteContext, siteId: number, formId: number, contactId: number): Promise<void> {
  const { db, traits } = ctx.handle;
  const sequences = await db.selectFrom('form_email_sequences').select('email_sequence_id').where('form_id', '=', formId).execute();
  if (sequences.length === 0) return;
  const ids = sequences.map((s) => s.email_sequence_id);
  const current = await db
    .selectFrom('email_sequence_subscriptions')
    .select('email_sequence_id')
    .where('contact_id', '=', contactId)
    .where('email_sequence_id', 'in', ids)
    .where('unsubscribed_at', 'is', null)
    .execute();
  const already = new Set(current.map((s) => Number(s.email_sequence_id)));
  const at = traits.encodeTimestamp(ctx.now);
  for (const id of ids) {
    if (already.has(Number(id))) continue;
    await db
      .insertInto('email_sequence_subscriptions')
      .values({ site_id: siteId, email_sequence_id: id, contact_id: contactId, subscribed_at: at, unsubscribed_at: null, created_at: at, updated_at: at })
      .execute();
  }
}

/**
 * Marketing consent. Double opt-in: a contact not yet subscribed stays unsubscribed and is sent
 * (recorded as an outgoing message) a confirmation email. Single opt-in: subscribed now.
 */
async function handleConsent(
  ctx: WriteContext,
  siteId: number,
  contactId: number,
  email: string,
  doubleOptIn: boolean,
  formTitle: string | null,
): Promise<void> {
  const { db, traits } = ctx.handle;
  const contact = await db.selectFrom('contacts').select('subscribed').where('id', '=', contactId).executeTakeFirstOrThrow();
  if (traits.decodeBoolean(contact.subscribed) === true) return;
  const at = traits.encodeTimestamp(ctx.now);
  if (doubleOptIn) {
    const site = await db.selectFrom('sites').select('title').where('id', '=', siteId).executeTakeFirstOrThrow();
    await db
      .insertInto('outgoing_messages')
      .values({
        site_id: siteId,
        contact_id: contactId,
        kind: 'double_opt_in',
        to_email: email,
        subject: `Please confirm your subscription to ${site.title}`,
        body: `You signed up${formTitle ? ` with the form "${formTitle}"` : ''}. Confirm your subscription to receive emails from ${site.title}.`,
        created_at: at,
        // Unguessable: following the link is the person's consent (the sandbox serves it).
        confirmation_token: randomBytes(24).toString('base64url'),
      })
      .execute();
    return;
  }
  await subscribe(ctx.handle, contactId, ctx.now);
}

/** The contact subscribed now, as single opt-in does at once and a confirmed double opt-in later. */
async function subscribe(handle: DatabaseHandle, contactId: number, now: Date): Promise<void> {
  const { db, traits } = handle;
  const at = traits.encodeTimestamp(now);
  await db
    .updateTable('contacts')
    .set({ subscribed: traits.encodeBoolean(true), subscribed_at: at, updated_at: at })
    .where('id', '=', contactId)
    .where('subscribed', '=', traits.encodeBoolean(false))
    .execute();
}

/** What following a double opt-in link did. */
export type ConfirmationOutcome =
  | { outcome: 'confirmed' | 'already_confirmed'; messageId: number; contactId: number | null; email: string }
  | { outcome: 'unknown' };

/**
 * Following the link of a double opt-in message (its confirmation_token): the contact becomes
 * subscribed as a single opt-in submission would have made it (subscribed, subscribed_at at the
 * account's time); no webhook event, as upstream has none for a subscription. Works once: the
 * message is marked confirmed, and following the link again changes nothing. A contact deleted
 * since, or subscribed meanwhile, is left as it is.
 */
export async function confirmDoubleOptIn(handle: DatabaseHandle, token: string, realNow: Date): Promise<ConfirmationOutcome> {
  return handle.db.transaction().execute(async (trx) => {
    const tx: DatabaseHandle = { ...handle, db: trx };
    const message = await trx
      .selectFrom('outgoing_messages')
      .innerJoin('sites', 'sites.id', 'outgoing_messages.site_id')
      .innerJoin('accounts', 'accounts.id', 'sites.account_id')
      .select(['outgoing_messages.id', 'outgoing_messages.site_id', 'outgoing_messages.contact_id', 'outgoing_messages.to_email', 'accounts.clock_offset_ms'])
      .where('outgoing_messages.confirmation_token', '=', token)
      .where('outgoing_messages.kind', '=', 'double_opt_in')
      .executeTakeFirst();
    if (!message) return { outcome: 'unknown' };
    await lockSiteWrites(trx, handle.traits, Number(message.site_id));
    const now = accountNow(realNow, { clockOffsetMs: Number(message.clock_offset_ms) });
    const contactId = message.contact_id === null ? null : Number(message.contact_id);
    const confirmed = await trx
      .updateTable('outgoing_messages')
      .set({ confirmed_at: handle.traits.encodeTimestamp(now) })
      .where('id', '=', message.id)
      .where('confirmed_at', 'is', null)
      .executeTakeFirst();
    const answer = { messageId: Number(message.id), contactId, email: message.to_email };
    if (Number(confirmed.numUpdatedRows) !== 1) return { outcome: 'already_confirmed', ...answer };
    if (contactId !== null) await subscribe(tx, contactId, now);
    return { outcome: 'confirmed', ...answer };
  });
}
