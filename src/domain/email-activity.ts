// Email broadcasts and what happens to them for each contact (the sandbox's email activity,
// docs/sandbox.md). The platform sends broadcasts and learns from its mail provider what became of
// each email; the sandbox records the same rows the demo history holds (src/demo/email-activity.ts),
// so the contacts' email filters read them like any other:
//
// - every kind is one email_events row of the broadcast for the contact, at the account's now;
// - bounced also keeps the latest bounce on the contact (bounced_at, bounce_type: hard unless told
//   soft) and on its customer (bounced_at): `is_hard_bouncing`, `suppressed`, `bounced_in_last`;
// - complained also sets complained_at (`complained_in_last`, `suppressed`) and, as unsubscribed
//   does, ends the contact's marketing consent: subscribed false, unsubscribed_at now (when it was
//   subscribed), and its active email sequence and newsletter subscriptions end now, as the demo's
//   people who unsubscribe or complain have them;
// - a draft broadcast (sent_at null) or one scheduled later than now was not sent: 422.
//
// Every row written belongs to counted tables (src/db/site-counters.ts), so the site's data version
// moves in the same transaction and no cached count or page boundary outlives the write.
import { badRequest, notFound, unprocessable } from '../jsonapi/errors.js';
import type { RecordAccess } from '../jsonapi/engine.js';
import type { WriteContext, WriteInput } from '../jsonapi/resource.js';
import type { ResourceWrite } from '../jsonapi/write-document.js';

export const EMAIL_ACTIVITY_KINDS = ['sent', 'delivered', 'opened', 'clicked', 'bounced', 'dropped', 'complained', 'unsubscribed'] as const;
export type EmailActivityKind = (typeof EMAIL_ACTIVITY_KINDS)[number];
export const BOUNCE_TYPES = ['hard', 'soft'] as const;

const attribute = (name: string) => `/data/attributes/${name}`;
const BROADCAST_ID = '/data/relationships/broadcast/data/id';

/** POST /v1/test_helpers/email_broadcasts: a broadcast of the site, sent now unless told otherwise. */
export async function createEmailBroadcast(ctx: WriteContext, input: WriteInput): Promise<number> {
  const siteId = input.targets.site?.siteId ?? onlySite(ctx);
  const given = input.attributes.sent_at as Date | null | undefined;
  const sentAt = given === undefined ? ctx.now : given;
  const { db, traits } = ctx.handle;
  const at = traits.encodeTimestamp(ctx.now);
  const row = await db
    .insertInto('email_broadcasts')
    .values({
      site_id: siteId,
      subject: String(input.attributes.subject).trim(),
      sent_at: sentAt === null ? null : traits.encodeTimestamp(sentAt),
      created_at: at,
      updated_at: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** The key's one site, when a write names none; with several the site must be named (400 as upstream). */
function onlySite(ctx: WriteContext): number {
  const [only, ...others] = ctx.principal.siteIds;
  if (only !== undefined && others.length === 0) return only;
  throw badRequest('missing_relationship', 'relationships.site is required: this API key reaches several sites', { pointer: '/data/relationships/site' });
}

export interface RecordedActivity {
  id: number;
  contactId: number;
  siteId: number;
}

/**
 * POST /v1/test_helpers/contacts/{id}/email_activity: `input` is the checked email_activities
 * document (kind, bounce_type, the broadcast relationship). The contact is found in the key's
 * sites (404), the broadcast in the contact's site (404 naming it otherwise).
 */
export async function recordEmailActivity(ctx: WriteContext, records: RecordAccess, contactRawId: string, input: ResourceWrite): Promise<RecordedActivity> {
  const { kind, bounceType } = checkKind(input.attributes);
  const contact = await records.find('contacts', contactRawId);
  const broadcastId = input.relationships.broadcast as number;
  const broadcast = await records.find('email_broadcasts', broadcastId, BROADCAST_ID);
  if (broadcast.siteId !== contact.siteId) {
    throw notFound(`No email_broadcasts record with id "${broadcastId}" in the contact's site`, { pointer: BROADCAST_ID });
  }
  const { db, traits } = ctx.handle;
  const sent = await db.selectFrom('email_broadcasts').select('sent_at').where('id', '=', broadcast.id).executeTakeFirstOrThrow();
  const sentAt = traits.decodeTimestamp(sent.sent_at);
  if (sentAt === null || Date.parse(sentAt) > ctx.now.getTime()) {
    throw unprocessable(
      'broadcast_not_sent',
      sentAt === null ? `Broadcast ${broadcastId} is a draft (sent_at null): nothing happened to it yet` : `Broadcast ${broadcastId} is sent at ${sentAt}, later than the account's now`,
      '/data/relationships/broadcast',
    );
  }

  const at = traits.encodeTimestamp(ctx.now);
  const row = await db
    .insertInto('email_events')
    .values({
      site_id: contact.siteId,
      contact_id: contact.id,
      email_broadcast_id: broadcast.id,
      email_sequence_id: null,
      kind,
      bounce_type: bounceType,
      occurred_at: at,
      created_at: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();

  if (kind === 'bounced') {
    await db.updateTable('contacts').set({ bounced_at: at, bounce_type: bounceType, updated_at: at }).where('id', '=', contact.id).execute();
    await db.updateTable('customers').set({ bounced_at: at, updated_at: at }).where('contact_id', '=', contact.id).execute();
  }
  if (kind === 'complained') {
    await db.updateTable('contacts').set({ complained_at: at, updated_at: at }).where('id', '=', contact.id).execute();
  }
  if (kind === 'complained' || kind === 'unsubscribed') await endMarketingConsent(ctx, contact.id, at);
  return { id: Number(row.id), contactId: contact.id, siteId: contact.siteId };
}

function checkKind(attributes: Record<string, unknown>): { kind: EmailActivityKind; bounceType: string | null } {
  const kind = attributes.kind as string;
  if (!(EMAIL_ACTIVITY_KINDS as readonly string[]).includes(kind)) {
    throw unprocessable('invalid_attribute', `kind must be one of ${EMAIL_ACTIVITY_KINDS.join(', ')}`, attribute('kind'));
  }
  const bounceType = attributes.bounce_type as string | null | undefined;
  if (bounceType !== undefined && bounceType !== null) {
    if (kind !== 'bounced') throw unprocessable('invalid_attribute', 'bounce_type applies to bounced activity only', attribute('bounce_type'));
    if (!(BOUNCE_TYPES as readonly string[]).includes(bounceType)) {
      throw unprocessable('invalid_attribute', `bounce_type must be one of ${BOUNCE_TYPES.join(', ')}`, attribute('bounce_type'));
    }
  }
  return { kind: kind as EmailActivityKind, bounceType: kind === 'bounced' ? (bounceType ?? 'hard') : null };
}

/** Unsubscribes the contact from marketing email, its sequences and newsletters (what is active now). */
async function endMarketingConsent(ctx: WriteContext, contactId: number, at: string): Promise<void> {
  const { db, traits } = ctx.handle;
  await db
    .updateTable('contacts')
    .set({ subscribed: traits.encodeBoolean(false), unsubscribed_at: at, updated_at: at })
    .where('id', '=', contactId)
    .where('subscribed', '=', traits.encodeBoolean(true))
    .execute();
  for (const table of ['email_sequence_subscriptions', 'newsletter_subscriptions'] as const) {
    await db.updateTable(table).set({ unsubscribed_at: at, updated_at: at }).where('contact_id', '=', contactId).where('unsubscribed_at', 'is', null).execute();
  }
}
