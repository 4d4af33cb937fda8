// The filters that contacts and customers share: who someone is, what they own, what they did,
// and how they engage with email. Written once against "the contact" so that the customers list
// asks the same questions of each customer's contact. docs/filters.md defines every filter.
import { sql, type Expression, type SqlBool } from 'kysely';
import { CONTACT_TEXT_INDEX } from '../db/text-search.js';
import { containsText, namedFilter, probeTrigram, trigramNarrowed, type AnyEB, type NamedFilterDef, type QueryContext } from '../jsonapi/resource.js';

/** Windows of the "... contacts with open data" engagement segments, in days. */
export const ENGAGEMENT_WINDOWS = { recentOpenDays: 30, engagedDays: 90 } as const;

interface Subject {
  /** The table the list reads: contacts or customers. */
  table: 'contacts' | 'customers';
  /** Column of `table` that holds the contact id. */
  contactId: string;
  /** Column of `table` with the record's own creation time. */
  createdAt: string;
  /** Singular noun for descriptions. */
  noun: string;
}

type Cond = Expression<SqlBool>;
const one = sql<number>`1`;

/** A contact column condition, evaluated on the subject's contact. */
function onContact(eb: AnyEB, s: Subject, build: (column: (name: string) => string) => Cond): Cond {
  if (s.table === 'contacts') return build((name) => `contacts.${name}`);
  return eb.exists(
    eb
      .selectFrom('contacts as subject_contact')
      .select(one.as('one'))
      .whereRef('subject_contact.id', '=', s.contactId)
      .where(build((name) => `subject_contact.${name}`)),
  );
}

/**
 * The subject's contact has, for every text, one of the columns containing it (ignoring ASCII
 * case). Served by the contacts' trigram index: a site of a million contacts answers from the
 * index's candidates instead of reading every contact.
 */
function contactText(eb: AnyEB, s: Subject, ctx: QueryContext, columns: readonly string[], texts: readonly string[]): Cond {
  const exact = onContact(eb, s, (c) => eb.and(texts.map((text) => eb.or(columns.map((column) => containsText(eb, ctx, c(column), text))))));
  return trigramNarrowed(eb, ctx, { index: CONTACT_TEXT_INDEX, rowId: s.contactId, columns, texts }, exact, ctx.probe);
}

/** A contact text filter: the index is asked first how many contacts it proposes (see trigramNarrowed). */
function contactTextFilter(description: string, columns: readonly string[], s: Subject, words: (text: string) => string[]): NamedFilterDef {
  return namedFilter('string', description, (eb, text, ctx) => contactText(eb, s, ctx, columns, words(text)), {
    probe: (text, scope) => probeTrigram({ index: CONTACT_TEXT_INDEX, columns, texts: words(text) }, scope),
  });
}

/** EXISTS (select 1 from <table> where <table>.contact_id = the subject's contact and ...). */
function related(eb: AnyEB, s: Subject, table: string, where: (eb: AnyEB) => Cond): Cond {
  return eb.exists(
    eb.selectFrom(table).select(one.as('one')).whereRef(`${table}.contact_id`, '=', s.contactId).where(where),
  );
}


// filter[..._in_last] takes up to 999999 days, which reaches back before year 1: PostgreSQL refuses
// such timestamps, so windows start no earlier than the first moment both databases store.
const EARLIEST = new Date('0001-01-01T00:00:00.000Z');
const at = (ctx: QueryContext, date: Date) => ctx.traits.encodeTimestamp(date < EARLIEST ? EARLIEST : date);
const daysAgo = (ctx: QueryContext, days: number) => at(ctx, new Date(ctx.now.getTime() - days * 86_400_000));

/** Email events of a kind in a window, for the engagement segments. */
function emailEvent(eb: AnyEB, s: Subject, kind: string, since?: string): Cond {
  return related(eb, s, 'email_events', (e) =>
    since === undefined
      ? e('email_events.kind', '=', kind)
      : e.and([e('email_events.kind', '=', kind), e('email_events.occurred_at', '>=', since)]),
  );
}

/** The engagement segments, a partition of the contacts with open data (see docs/filters.md). */
function engagement(eb: AnyEB, s: Subject, ctx: QueryContext, segment: 'healthy' | 'passive' | 'unengaged' | 'inactive'): Cond {
  const recent = daysAgo(ctx, ENGAGEMENT_WINDOWS.recentOpenDays);
  const engaged = daysAgo(ctx, ENGAGEMENT_WINDOWS.engagedDays);
  const hasOpenData = emailEvent(eb, s, 'delivered');
  const openedRecently = emailEvent(eb, s, 'opened', recent);
  const openedInWindow = emailEvent(eb, s, 'opened', engaged);
  const deliveredInWindow = emailEvent(eb, s, 'delivered', engaged);
  switch (segment) {
    case 'healthy':
      return eb.and([hasOpenData, openedRecently]);
    case 'passive':
      return eb.and([hasOpenData, eb.not(openedRecently), openedInWindow]);
    case 'unengaged':
      return eb.and([hasOpenData, eb.not(openedInWindow), deliveredInWindow]);
    case 'inactive':
      return eb.and([hasOpenData, eb.not(openedInWindow), eb.not(deliveredInWindow)]);
  }
}

/** true keeps records meeting the condition; false keeps the others. */
const flag = (eb: AnyEB, value: boolean, condition: Cond): Cond => (value ? condition : eb.not(condition));

// The last column: whether the upstream has `<kind>_email_broadcast_id` (it has every `no_` one).
const BROADCAST_EVENTS = [
  ['sent', 'sent', 'were sent', true],
  ['delivered', 'delivered', 'received', false],
  ['opened', 'opened', 'opened', true],
  ['clicked', 'clicked', 'clicked a link in', true],
  ['bounced', 'bounced', 'bounced on', true],
  ['dropped', 'dropped', 'had dropped (not sent by the mail provider)', true],
] as const;

const EMAIL_ACTIVITY = [
  ['opened', 'opened'],
  ['delivered', 'were delivered'],
  ['clicked', 'clicked a link in'],
] as const;

/** Every contact column with a `<column>_contains` filter: the columns of the contacts' text index. */
const CONTACT_TEXT_FIELDS = CONTACT_TEXT_INDEX.columns;

export function contactFilterFamily(s: Subject): Record<string, NamedFilterDef> {
  const n = s.noun;
  const filters: Record<string, NamedFilterDef> = {
    search: contactTextFilter(`${n}s whose name or email contains every word of the text, ignoring case`, ['name', 'email'], s, (text) =>
      text.split(/\s+/).filter(Boolean),
    ),

    // --- Time windows (days) ------------------------------------------------------------------
    created_in_last: namedFilter('days', `${n}s created in the last N days`, (eb, v, ctx) =>
      eb(s.createdAt, '>=', at(ctx, v.since)),
    ),
    not_created_in_last: namedFilter('days', `${n}s created more than N days ago`, (eb, v, ctx) =>
      eb(s.createdAt, '<', at(ctx, v.since)),
    ),
    joined_in_last: namedFilter('days', `${n}s who became members (a customer record) in the last N days`, (eb, v, ctx) =>
      eb.exists(
        eb
          .selectFrom('customers as joined')
          .select(one.as('one'))
          .whereRef('joined.contact_id', '=', s.contactId)
          .where('joined.created_at', '>=', at(ctx, v.since)),
      ),
    ),
    active_in_last: namedFilter('days', `${n}s with activity on the site in the last N days`, (eb, v, ctx) =>
      onContact(eb, s, (c) => eb(c('last_activity_at'), '>=', at(ctx, v.since))),
    ),
    inactive_in_last: namedFilter('days', `${n}s with no activity on the site in the last N days`, (eb, v, ctx) =>
      onContact(eb, s, (c) => eb.or([eb(c('last_activity_at'), 'is', null), eb(c('last_activity_at'), '<', at(ctx, v.since))])),
    ),
    subscribed_in_last: namedFilter('days', `${n}s who subscribed to marketing email in the last N days`, (eb, v, ctx) =>
      onContact(eb, s, (c) => eb(c('subscribed_at'), '>=', at(ctx, v.since))),
    ),
    unsubscribed_in_last: namedFilter('days', `${n}s who unsubscribed from marketing email in the last N days`, (eb, v, ctx) =>
      onContact(eb, s, (c) => eb(c('unsubscribed_at'), '>=', at(ctx, v.since))),
    ),

    // --- Flags ----------------------------------------------------------------------------------
    is_hidden: namedFilter('boolean', `true: hidden ${n}s; false: visible ones`, (eb, v, ctx) =>
      onContact(eb, s, (c) => eb(c('hidden'), '=', ctx.traits.encodeBoolean(v))),
    ),
    subscribed: namedFilter('boolean', `true: ${n}s subscribed to marketing email; false: not subscribed`, (eb, v, ctx) =>
      onContact(eb, s, (c) => eb(c('subscribed'), '=', ctx.traits.encodeBoolean(v))),
    ),
    never_subscribed: namedFilter('boolean', `true: ${n}s who have never subscribed; false: who subscribed at some time`, (eb, v) =>
      onContact(eb, s, (c) => (v ? eb(c('subscribed_at'), 'is', null) : eb(c('subscribed_at'), 'is not', null))),
    ),
    is_hard_bouncing: namedFilter('boolean', `true: ${n}s whose email hard-bounces; false: the others`, (eb, v) =>
      flag(eb, v, onContact(eb, s, (c) => eb.and([eb(c('bounced_at'), 'is not', null), eb(c('bounce_type'), '=', 'hard')]))),
    ),
    suppressed: namedFilter(
      'boolean',
      `true: ${n}s that marketing email skips (hard bounce, complaint or opt-out); false: the others`,
      (eb, v) =>
        flag(
          eb,
          v,
          onContact(eb, s, (c) =>
            eb.or([
              eb.and([eb(c('bounced_at'), 'is not', null), eb(c('bounce_type'), '=', 'hard')]),
              eb(c('complained_at'), 'is not', null),
              eb(c('opted_out_at'), 'is not', null),
            ]),
          ),
        ),
      { upstream: false },
    ),

    // --- Tags -----------------------------------------------------------------------------------
    has_tag_id: namedFilter('ids', `${n}s tagged with the tag (or any of a comma list of tags)`, (eb, ids) =>
      related(eb, s, 'contact_taggings', (t) => t('contact_taggings.contact_tag_id', 'in', ids)), { references: 'contact_tags' }),
    has_all_tag_id: namedFilter('ids', `${n}s tagged with every tag of a comma list`, (eb, ids) =>
      eb.and(ids.map((id) => related(eb, s, 'contact_taggings', (t) => t('contact_taggings.contact_tag_id', '=', id)))), { references: 'contact_tags' }),
    has_no_tag_id: namedFilter('ids', `${n}s tagged with none of the tags`, (eb, ids) =>
      eb.not(related(eb, s, 'contact_taggings', (t) => t('contact_taggings.contact_tag_id', 'in', ids))), { references: 'contact_tags' }),

    // --- Offers and products ----------------------------------------------------------------------
    has_offer_id: namedFilter('ids', `${n}s with current access to the offer (a grant not revoked)`, (eb, ids) =>
      related(eb, s, 'offer_grants', (g) => g.and([g('offer_grants.offer_id', 'in', ids), g('offer_grants.revoked_at', 'is', null)])), { references: 'offers' }),
    has_no_offer_id: namedFilter('ids', `${n}s without current access to the offer`, (eb, ids) =>
      eb.not(
        related(eb, s, 'offer_grants', (g) => g.and([g('offer_grants.offer_id', 'in', ids), g('offer_grants.revoked_at', 'is', null)])),
      ), { references: 'offers' }),
    has_product_id: namedFilter('ids', `${n}s who own the product now (a membership that has not ended)`, (eb, ids) =>
      related(eb, s, 'memberships', (m) => m.and([m('memberships.product_id', 'in', ids), m('memberships.ended_at', 'is', null)])), { references: 'products' }),
    has_active_product_id: namedFilter(
      'ids',
      `${n}s with an active membership of the product (owned, not ended and not suspended)`,
      (eb, ids) =>
        related(eb, s, 'memberships', (m) =>
          m.and([m('memberships.product_id', 'in', ids), m('memberships.ended_at', 'is', null), m('memberships.suspended_at', 'is', null)]),
        ), { references: 'products' }),
    has_no_product_id: namedFilter('ids', `${n}s who do not own the product now`, (eb, ids) =>
      eb.not(related(eb, s, 'memberships', (m) => m.and([m('memberships.product_id', 'in', ids), m('memberships.ended_at', 'is', null)]))), { references: 'products' }),
    previously_owned_product_id: namedFilter('ids', `${n}s whose membership of the product ended and who do not own it now`, (eb, ids) =>
      eb.and([
        related(eb, s, 'memberships', (m) => m.and([m('memberships.product_id', 'in', ids), m('memberships.ended_at', 'is not', null)])),
        eb.not(related(eb, s, 'memberships', (m) => m.and([m('memberships.product_id', 'in', ids), m('memberships.ended_at', 'is', null)]))),
      ]), { references: 'products' }),

    // --- Purchases, forms, events, assessments ----------------------------------------------------
    used_coupon_code: namedFilter('string', `${n}s who made a purchase with the coupon code (ignoring case)`, (eb, code) =>
      eb.exists(
        eb
          .selectFrom('purchases')
          .innerJoin('customers as buyer', 'buyer.id', 'purchases.customer_id')
          .select(one.as('one'))
          .whereRef('buyer.contact_id', '=', s.contactId)
          .where(sql`lower(purchases.coupon_code)`, '=', code.trim().toLowerCase()),
      ),
    ),
    submitted_form_id: namedFilter('ids', `${n}s who submitted the form`, (eb, ids) =>
      related(eb, s, 'form_submissions', (f) => f('form_submissions.form_id', 'in', ids)), { references: 'forms' }),
    no_submitted_form_id: namedFilter('ids', `${n}s who never submitted the form`, (eb, ids) =>
      eb.not(related(eb, s, 'form_submissions', (f) => f('form_submissions.form_id', 'in', ids))), { references: 'forms' }),
    registered_event_id: namedFilter('ids', `${n}s registered for the event`, (eb, ids) =>
      related(eb, s, 'event_registrations', (r) => r('event_registrations.event_id', 'in', ids)), { references: 'events' }),
    not_registered_event_id: namedFilter('ids', `${n}s not registered for the event`, (eb, ids) =>
      eb.not(related(eb, s, 'event_registrations', (r) => r('event_registrations.event_id', 'in', ids))), { references: 'events' }),
    completed_assessment_id: namedFilter('ids', `${n}s who completed the assessment (any score)`, (eb, ids) =>
      related(eb, s, 'assessment_attempts', (a) =>
        a.and([a('assessment_attempts.assessment_id', 'in', ids), a('assessment_attempts.completed_at', 'is not', null)]),
      ), { references: 'assessments' }),
    passed_assessment_id: namedFilter('ids', `${n}s with a completed attempt scoring at least the passing score`, (eb, ids) =>
      passedAssessment(eb, s, ids), { references: 'assessments' }),
    failed_assessment_id: namedFilter('ids', `${n}s who completed the assessment without ever reaching the passing score`, (eb, ids) =>
      eb.and([
        related(eb, s, 'assessment_attempts', (a) =>
          a.and([a('assessment_attempts.assessment_id', 'in', ids), a('assessment_attempts.completed_at', 'is not', null)]),
        ),
        eb.not(passedAssessment(eb, s, ids)),
      ]), { references: 'assessments' }),

    // --- Net revenue --------------------------------------------------------------------------------
    net_revenue_equal_to: netRevenue(s, '=', 'equals'),
    net_revenue_greater_than: netRevenue(s, '>', 'is greater than'),
    net_revenue_less_than: netRevenue(s, '<', 'is less than'),

    // --- Newsletters and email sequences --------------------------------------------------------------
    subscribed_newsletter_id: namedFilter('ids', `${n}s subscribed to the newsletter now`, (eb, ids) =>
      related(eb, s, 'newsletter_subscriptions', (x) =>
        x.and([x('newsletter_subscriptions.newsletter_id', 'in', ids), x('newsletter_subscriptions.unsubscribed_at', 'is', null)]),
      ), { references: 'newsletters' }),
    unsubscribed_newsletter_id: namedFilter('ids', `${n}s who unsubscribed from the newsletter and are not subscribed now`, (eb, ids) =>
      eb.and([
        related(eb, s, 'newsletter_subscriptions', (x) =>
          x.and([x('newsletter_subscriptions.newsletter_id', 'in', ids), x('newsletter_subscriptions.unsubscribed_at', 'is not', null)]),
        ),
        eb.not(
          related(eb, s, 'newsletter_subscriptions', (x) =>
            x.and([x('newsletter_subscriptions.newsletter_id', 'in', ids), x('newsletter_subscriptions.unsubscribed_at', 'is', null)]),
          ),
        ),
      ]), { references: 'newsletters' }),
    subscribed_email_sequence_id: namedFilter('ids', `${n}s subscribed to the email sequence now`, (eb, ids) =>
      activeSequence(eb, s, ids), { references: 'email_sequences' }),
    not_subscribed_email_sequence_id: namedFilter('ids', `${n}s not subscribed to the email sequence now`, (eb, ids) =>
      eb.not(activeSequence(eb, s, ids)), { references: 'email_sequences' }),

    // --- Email broadcasts -----------------------------------------------------------------------------
    no_sent_email_broadcast_ids: namedFilter('ids', `${n}s who were sent none of the broadcasts of a comma list`, (eb, ids) =>
      eb.not(broadcastEvent(eb, s, 'sent', ids)), { references: 'email_broadcasts' }),

    // --- Email health -----------------------------------------------------------------------------------
    bounced_in_last: namedFilter('days', `${n}s whose email bounced in the last N days`, (eb, v, ctx) =>
      onContact(eb, s, (c) => eb(c('bounced_at'), '>=', at(ctx, v.since))),
    ),
    complained_in_last: namedFilter('days', `${n}s who marked an email as spam in the last N days`, (eb, v, ctx) =>
      onContact(eb, s, (c) => eb(c('complained_at'), '>=', at(ctx, v.since))),
    ),
    manually_unsubscribed_in_last: namedFilter('days', `${n}s unsubscribed by the site's staff in the last N days`, (eb, v, ctx) =>
      onContact(eb, s, (c) => eb(c('manually_unsubscribed_at'), '>=', at(ctx, v.since))),
    ),
    opted_out_in_last: namedFilter('days', `${n}s who opted out of all email in the last N days`, (eb, v, ctx) =>
      onContact(eb, s, (c) => eb(c('opted_out_at'), '>=', at(ctx, v.since))),
    ),

    healthy_contacts_with_open_data: namedFilter(
      'boolean',
      `true: ${n}s with open data who opened an email in the last ${ENGAGEMENT_WINDOWS.recentOpenDays} days`,
      (eb, v, ctx) => flag(eb, v, engagement(eb, s, ctx, 'healthy')),
    ),
    passive_contacts_with_open_data: namedFilter(
      'boolean',
      `true: ${n}s with open data whose latest open is ${ENGAGEMENT_WINDOWS.recentOpenDays} to ${ENGAGEMENT_WINDOWS.engagedDays} days old`,
      (eb, v, ctx) => flag(eb, v, engagement(eb, s, ctx, 'passive')),
    ),
    unengaged_contacts_with_open_data: namedFilter(
      'boolean',
      `true: ${n}s with open data who received email in the last ${ENGAGEMENT_WINDOWS.engagedDays} days but opened none`,
      (eb, v, ctx) => flag(eb, v, engagement(eb, s, ctx, 'unengaged')),
    ),
    inactive_contacts_with_open_data: namedFilter(
      'boolean',
      `true: ${n}s with open data who neither received nor opened email in the last ${ENGAGEMENT_WINDOWS.engagedDays} days`,
      (eb, v, ctx) => flag(eb, v, engagement(eb, s, ctx, 'inactive')),
    ),
  };

  for (const field of CONTACT_TEXT_FIELDS) {
    filters[`${field}_contains`] = contactTextFilter(`${n}s whose ${field.replace(/_/g, ' ')} contains the text, ignoring case`, [field], s, (text) => [
      text,
    ]);
  }
  for (const [kind, , verb, upstream] of BROADCAST_EVENTS) {
    filters[`${kind}_email_broadcast_id`] = namedFilter('ids', `${n}s who ${verb} the email broadcast`, (eb, ids) =>
      broadcastEvent(eb, s, kind, ids), { references: 'email_broadcasts', ...(upstream ? {} : { upstream: false }) });
    filters[`no_${kind}_email_broadcast_id`] = namedFilter('ids', `${n}s who never ${verb} the email broadcast`, (eb, ids) =>
      eb.not(broadcastEvent(eb, s, kind, ids)), { references: 'email_broadcasts' });
  }
  for (const [kind, verb] of EMAIL_ACTIVITY) {
    filters[`${kind}_email_in_last`] = namedFilter('days', `${n}s who ${verb} an email in the last N days`, (eb, v, ctx) =>
      emailEvent(eb, s, kind, at(ctx, v.since)),
    );
    filters[`not_${kind}_email_in_last`] = namedFilter('days', `${n}s who ${verb} no email in the last N days`, (eb, v, ctx) =>
      eb.not(emailEvent(eb, s, kind, at(ctx, v.since))),
    );
  }
  return filters;
}

function broadcastEvent(eb: AnyEB, s: Subject, kind: string, ids: number[]): Cond {
  return related(eb, s, 'email_events', (e) =>
    e.and([e('email_events.kind', '=', kind), e('email_events.email_broadcast_id', 'in', ids)]),
  );
}

function activeSequence(eb: AnyEB, s: Subject, ids: number[]): Cond {
  return related(eb, s, 'email_sequence_subscriptions', (x) =>
    x.and([
      x('email_sequence_subscriptions.email_sequence_id', 'in', ids),
      x('email_sequence_subscriptions.unsubscribed_at', 'is', null),
    ]),
  );
}

function passedAssessment(eb: AnyEB, s: Subject, ids: number[]): Cond {
  return eb.exists(
    eb
      .selectFrom('assessment_attempts')
      .innerJoin('assessments', 'assessments.id', 'assessment_attempts.assessment_id')
      .select(one.as('one'))
      .whereRef('assessment_attempts.contact_id', '=', s.contactId)
      .where('assessment_attempts.assessment_id', 'in', ids)
      .where('assessment_attempts.completed_at', 'is not', null)
      .whereRef('assessment_attempts.score', '>=', 'assessments.passing_score'),
  );
}

/** Net revenue in cents of the subject; a contact without a customer record has none (0). */
export function netRevenueCents(eb: AnyEB, s: Subject): Expression<unknown> {
  if (s.table === 'customers') return eb.ref('customers.net_revenue_cents');
  return eb.fn.coalesce(
    eb.selectFrom('customers as revenue').select('revenue.net_revenue_cents').whereRef('revenue.contact_id', '=', s.contactId),
    sql.lit(0),
  );
}

function netRevenue(s: Subject, op: '=' | '>' | '<', words: string): NamedFilterDef {
  return namedFilter('decimal', `${s.noun}s whose net revenue ${words} the amount (such as 25 or 25.50)`, (eb, amount) =>
    eb(netRevenueCents(eb, s), op, decimalToCents(amount)),
  );
}

/** "25.5" → 2550, exactly (no floating point). */
export function decimalToCents(amount: string): number {
  const negative = amount.startsWith('-');
  const [whole = '0', fraction = ''] = amount.replace('-', '').split('.');
  const cents = Number(whole) * 100 + Number(fraction.padEnd(2, '0').slice(0, 2));
  return negative ? -cents : cents;
}

/** 1050 → "10.5", 1000 → "10.0", 12345 → "123.45": the decimal text upstream renders. */
export function centsToDecimal(cents: number): string {
  const negative = cents < 0;
  const abs = Math.abs(cents);
  const whole = Math.floor(abs / 100);
  const fraction = String(abs % 100).padStart(2, '0').replace(/0$/, '');
  return `${negative ? '-' : ''}${whole}.${fraction === '' ? '0' : fraction}`;
}
