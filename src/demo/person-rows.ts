// Turns one person's plan into rows: the contact with its consent and email-health history,
// form submissions, tags, sequence and newsletter subscriptions, email events, event
// registrations, assessment attempts, notes, and (commerce.ts) the customer side.
import type { Catalogue } from './catalogue.js';
import type { SequenceKey, TagKey } from './catalogue-content.js';
import { addCommerce, type CommerceContext } from './commerce.js';
import { emailHistory, type EmailAudience, type SequenceReceipt } from './email-activity.js';
import type { PersonPlan } from './people.js';
import type { Rng } from './random.js';
import type { Row, RowSet, TableName } from './rows.js';
import type { Timeline } from './timeline.js';

/** Tables of the people, each after the tables it refers to (the catalogue's come first). */
export const PEOPLE_TABLES: readonly TableName[] = [
  'contacts',
  'customers',
  'contact_taggings',
  'contact_notes',
  'form_submissions',
  'email_sequence_subscriptions',
  'newsletter_subscriptions',
  'email_events',
  'event_registrations',
  'assessment_attempts',
  'purchases',
  'offer_grants',
  'memberships',
  'transactions',
  'purchase_transactions',
  'orders',
  'order_items',
];

/** A customer with at least this net revenue gets the VIP tag. */
const VIP_REVENUE_CENTS = 50_000;

export interface PersonContext extends CommerceContext {
  set: RowSet;
  catalogue: Catalogue;
  t: Timeline;
  /** Bulk seeding: each email reaches a person only with these chances (see EmailAudience). */
  emailAudience?: EmailAudience;
}

export function addPerson(ctx: PersonContext, plan: PersonPlan, rng: Rng): void {
  const { set, catalogue: cat, t } = ctx;
  const site_id = cat.siteId;
  const createdAt = t.ago(plan.createdDaysAgo);
  const latestMoment = t.ago(1 / (24 * 60));
  /** `daysAgo`, but not before the contact existed nor after now. */
  const at = (daysAgo: number): Date => {
    const wanted = t.ago(daysAgo);
    return wanted < createdAt ? createdAt : wanted > latestMoment ? latestMoment : wanted;
  };
  /** A random moment between `from` and now. */
  const sometimeAfter = (from: Date): Date => at(t.daysAgoOf(from) * rng.float());

  // Consent.
  const subscribedAt = plan.subscribedDaysAgo === null ? null : at(plan.subscribedDaysAgo);
  const stoppedAt = plan.stopDaysAgo === null ? null : at(plan.stopDaysAgo);

  // Sign-ups: a submission per form; the form's tags and sequences; its offer, if any.
  const signups = plan.signups.map((s, i) => ({ ...s, at: i === 0 && s.daysAgo >= plan.createdDaysAgo ? createdAt : at(s.daysAgo) }));
  const tagAt = new Map<TagKey, Date>();
  const sequenceAt = new Map<SequenceKey, Date>();
  const formOffers: Array<{ offer: NonNullable<Catalogue['forms'][keyof Catalogue['forms']]['offer']>; at: Date }> = [];
  for (const s of signups) {
    const form = cat.forms[s.form];
    for (const tag of form.tags) if (!tagAt.has(tag)) tagAt.set(tag, s.at);
    if (subscribedAt) for (const seq of form.sequences) if (!sequenceAt.has(seq)) sequenceAt.set(seq, s.at);
    if (form.offer) formOffers.push({ offer: form.offer, at: s.at });
  }
  const sequences: SequenceReceipt[] = [...sequenceAt].map(([key, subscribed]) => ({
    sequence: cat.sequences[key].row,
    emailDays: cat.sequences[key].emailDays,
    subscribedAt: subscribed,
    unsubscribedAt: stoppedAt && stoppedAt > subscribed ? stoppedAt : rng.chance(0.1) ? sometimeAfter(subscribed) : null,
  }));

  const email = emailHistory(
    {
      consent: plan.consent,
      engagement: plan.engagement,
      subscribedAt,
      stoppedAt,
      stopBroadcast: plan.stopBroadcast,
      overrides: plan.broadcastOverrides,
      broadcasts: cat.broadcasts,
      sequences,
      ...(ctx.emailAudience ? { audience: ctx.emailAudience } : {}),
    },
    t,
    rng,
  );
  const unsubscribedAt = stoppedAt ?? email.complainedAt;
  const lastActivityAt = plan.lastActivityDaysAgo === null ? null : at(plan.lastActivityDaysAgo);

  const addressKnown = plan.address !== null;
  const contact = set.add('contacts', {
    site_id,
    name: plan.name,
    email: plan.email,
    phone_number: plan.phone,
    business_number: plan.business,
    mobile_phone_number: plan.mobile,
    address_line_1: plan.address?.line1 ?? null,
    address_line_2: plan.address?.line2 ?? null,
    address_city: addressKnown ? plan.place.city : null,
    address_state: addressKnown ? plan.place.state : null,
    address_country: addressKnown ? plan.place.country : null,
    address_zip: plan.address?.zip ?? null,
    custom_1: plan.company,
    custom_2: plan.role,
    custom_3: plan.heardFrom,
    hidden: plan.hidden,
    subscribed: subscribedAt !== null && unsubscribedAt === null,
    subscribed_at: subscribedAt,
    unsubscribed_at: unsubscribedAt,
    manually_unsubscribed_at: plan.consent === 'manual' ? stoppedAt : null,
    opted_out_at: plan.consent === 'opted_out' ? stoppedAt : null,
    bounced_at: email.bouncedAt,
    bounce_type: email.bounceType,
    complained_at: email.complainedAt,
    last_activity_at: lastActivityAt,
    created_at: createdAt,
    updated_at: t.latest(createdAt, unsubscribedAt, email.bouncedAt, email.complainedAt),
  });

  for (const s of signups) {
    const fields = cat.forms[s.form].fields;
    set.add('form_submissions', {
      site_id,
      form_id: cat.forms[s.form].row,
      contact_id: contact,
      name: plan.name,
      email: plan.email,
      phone_number: fields.includes('phone') ? plan.phone : null,
      custom_1: fields.includes('company') ? plan.company : null,
      custom_2: fields.includes('role') ? plan.role : null,
      custom_3: fields.includes('heardFrom') ? plan.heardFrom : null,
      created_at: s.at,
    });
  }
  for (const s of sequences) {
    set.add('email_sequence_subscriptions', {
      site_id,
      email_sequence_id: s.sequence,
      contact_id: contact,
      subscribed_at: s.subscribedAt,
      unsubscribed_at: s.unsubscribedAt,
      created_at: s.subscribedAt,
      updated_at: s.unsubscribedAt ?? s.subscribedAt,
    });
  }
  for (const n of plan.newsletters) {
    const subscribed = subscribedAt ?? createdAt;
    const unsubscribed = n.unsubscribeDaysAgo === null ? null : t.latest(subscribed, at(n.unsubscribeDaysAgo));
    set.add('newsletter_subscriptions', {
      site_id,
      newsletter_id: cat.newsletters[n.newsletter],
      contact_id: contact,
      subscribed_at: subscribed,
      unsubscribed_at: unsubscribed,
      created_at: subscribed,
      updated_at: unsubscribed ?? subscribed,
    });
  }
  for (const e of email.events) {
    set.add('email_events', {
      site_id,
      contact_id: contact,
      email_broadcast_id: e.email_broadcast_id,
      email_sequence_id: e.email_sequence_id,
      kind: e.kind,
      bounce_type: e.bounce_type,
      occurred_at: e.occurred_at,
      created_at: e.occurred_at,
    });
  }

  for (const key of plan.events) {
    const event = cat.events[key];
    const latest = event.startsAt < latestMoment ? event.startsAt : latestMoment;
    const registered = at(t.daysAgoOf(latest) + rng.float() * 20);
    if (registered > latest) continue;
    set.add('event_registrations', { site_id, event_id: event.row, contact_id: contact, created_at: registered });
  }
  for (const a of plan.attempts) {
    const assessment = cat.assessments[a.assessment];
    const started = at(a.daysAgo);
    const completed = a.outcome === 'in_progress' ? null : t.plusMinutes(started, rng.int(8, 40));
    const score =
      a.outcome === 'passed' ? rng.int(assessment.passingScore, 100) : a.outcome === 'failed' ? rng.int(35, assessment.passingScore - 1) : null;
    set.add('assessment_attempts', {
      site_id,
      assessment_id: assessment.row,
      contact_id: contact,
      score,
      completed_at: completed && t.isPast(completed) ? completed : null,
      created_at: started,
    });
  }
  for (const body of plan.notes) {
    const written = sometimeAfter(createdAt);
    set.add('contact_notes', { site_id, contact_id: contact, body, created_at: written, updated_at: written });
  }

  const commerce = addCommerce(ctx, { plan, contact, createdAt, lastActivityAt, bouncedAt: email.bouncedAt, formOffers }, rng);

  for (const tag of plan.extraTags) if (!tagAt.has(tag)) tagAt.set(tag, sometimeAfter(createdAt));
  if (commerce.offers.has('watercolor') && !tagAt.has('watercolorCohort')) tagAt.set('watercolorCohort', sometimeAfter(createdAt));
  if (commerce.netRevenueCents >= VIP_REVENUE_CENTS && !tagAt.has('vip')) tagAt.set('vip', sometimeAfter(createdAt));
  for (const [tag, tagged] of tagAt) set.add('contact_taggings', { contact_id: contact, contact_tag_id: cat.tags[tag], created_at: tagged });
}
