// Who the demo people are and what they did, as plans: as many generated people as the size asks
// for, among them the hand-written archetypes (archetypes.ts). A plan is plain data in "days ago";
// person-rows.ts turns it into rows. Each person draws from a random stream of its own, seeded by
// its index, so people do not depend on how they are split into batches.
import type { AssessmentKey, EventKey, FormKey, NewsletterKey, OfferKey, TagKey } from './catalogue-content.js';
import { ARCHETYPES, type Archetype } from './archetypes.js';
import { DEMO_SEED, Rng, seedOf } from './random.js';
import {
  BIOS,
  COMPANIES,
  EMAIL_DOMAINS,
  FIRST_NAMES,
  HEARD_FROM,
  LAST_NAMES,
  NOTE_BODIES,
  PLACES,
  REFERRERS,
  ROLES,
  SECOND_LINES,
  STREET_NAMES,
  type Place,
} from './vocabulary.js';
import { COUPON_DISCOUNTS, type Coupon } from '../domain/coupons.js';

/** Marketing email consent: how (and whether) it ended. */
export type Consent = 'never' | 'subscribed' | 'unsubscribed' | 'manual' | 'opted_out' | 'complained' | 'hard_bounce';
/** How someone opens email, in the windows of ENGAGEMENT_WINDOWS; none: never emailed. */
export type Engagement = 'healthy' | 'passive' | 'unengaged' | 'inactive' | 'none';
export type BroadcastOverride = 'dropped' | 'soft_bounce' | 'clicked';
// The coupon codes are the sandbox's (src/domain/coupons.ts): checkouts accept the same ones.
export { COUPON_DISCOUNTS, type Coupon };

export interface PurchasePlan {
  offer: OfferKey;
  daysAgo: number;
  /** refunded, deactivated, canceled: `endAfterDays` after the purchase. past_due: the latest payment failed. */
  outcome: 'active' | 'refunded' | 'deactivated' | 'canceled' | 'past_due';
  endAfterDays?: number;
  coupon?: Coupon;
  quantity?: number;
  /** Bought in the same checkout, paid by one transaction (a bundle). */
  bundleWith?: OfferKey;
  failedFirstAttempt?: boolean;
  source?: string;
  referrer?: string | null;
}

export interface GrantPlan {
  offer: OfferKey;
  daysAgo: number;
  revokeAfterDays?: number;
}

export interface AttemptPlan {
  assessment: AssessmentKey;
  daysAgo: number;
  outcome: 'passed' | 'failed' | 'in_progress';
}

export interface PersonPlan {
  index: number;
  name: string;
  email: string;
  createdDaysAgo: number;
  place: Place;
  address: { line1: string; line2: string | null; zip: string } | null;
  phone: string | null;
  mobile: string | null;
  business: string | null;
  company: string | null;
  role: string | null;
  heardFrom: string | null;
  hidden: boolean;
  consent: Consent;
  subscribedDaysAgo: number | null;
  /** unsubscribed, manual, opted_out: when consent ended. */
  stopDaysAgo: number | null;
  /** complained, hard_bounce: the broadcast (index, oldest first) it happened on. */
  stopBroadcast: number | null;
  engagement: Engagement;
  broadcastOverrides: Record<number, BroadcastOverride>;
  lastActivityDaysAgo: number | null;
  signups: Array<{ form: FormKey; daysAgo: number }>;
  extraTags: TagKey[];
  events: EventKey[];
  attempts: AttemptPlan[];
  newsletters: Array<{ newsletter: NewsletterKey; unsubscribeDaysAgo: number | null }>;
  notes: string[];
  purchases: PurchasePlan[];
  grants: GrantPlan[];
  profile: { externalId: boolean; avatar: boolean; socials: boolean; website: boolean; bio: string | null; signInCount: number };
}

/** What plans need to know of the catalogue. */
export interface PlanContext {
  /** Days ago each sent broadcast went out, oldest first. */
  broadcastDaysAgo: readonly number[];
  formCreatedDaysAgo: Readonly<Record<FormKey, number>>;
  offerCreatedDaysAgo: Readonly<Record<OfferKey, number>>;
  eventDaysAgo: Readonly<Record<EventKey, number>>;
}

/** Contacts of the default demo. */
export const DEFAULT_DEMO_CONTACTS = 60;
/** How far back the oldest contact goes. */
const HISTORY_DAYS = 730;

/**
 * Creation time of person `i` of `n`: ids grow with time, and sign-ups speed up towards now (a
 * growing business), so about one contact in eight is from the last 30 days.
 */
export function createdDaysAgoForSlot(i: number, n: number, r: number): number {
  return HISTORY_DAYS * Math.pow(1 - (i + r) / n, 1.5);
}

/** Hands out unique emails: the n-th person with the same address gets a number in it. */
export class EmailBook {
  private readonly used = new Map<string, number>();

  reserve(email: string): void {
    this.used.set(email, (this.used.get(email) ?? 0) + 1);
  }

  take(first: string, last: string, rng: Rng): string {
    const f = first.toLowerCase().replace(/[^a-z]/g, '');
    const l = last.toLowerCase().replace(/[^a-z]/g, '');
    const local = rng.weighted([
      [`${f}.${l}`, 5],
      [`${f.charAt(0)}${l}`, 2],
      [`${f}${l.charAt(0)}`, 1],
      [`${f}_${l}`, 1],
    ] as const);
    const base = `${local}@${rng.weighted(EMAIL_DOMAINS.map((d, i) => [d, 4 - i] as const))}`;
    const seen = this.used.get(base) ?? 0;
    this.used.set(base, seen + 1);
    if (seen === 0) return base;
    // Local parts never end in a digit, so `name7@...` can only come from `name@...`.
    const [name, domain] = base.split('@') as [string, string];
    return `${name}${seen + 1}@${domain}`;
  }
}

// --- Generated people ---------------------------------------------------------------------------

const PAID_OFFER_WEIGHTS: ReadonlyArray<readonly [OfferKey, number]> = [
  ['speaking', 20],
  ['speaking3', 8],
  ['allAccess', 16],
  ['photo', 16],
  ['watercolor', 6],
  ['coaching', 6],
  ['communityAnnual', 6],
  ['bookkeeping', 8],
  ['shutterInsiders', 3],
];

const ONE_TIME = new Set<OfferKey>(['speaking', 'photo', 'watercolor', 'coaching', 'bookkeeping']);
const SUBSCRIPTIONS = new Set<OfferKey>(['allAccess', 'communityAnnual', 'shutterInsiders']);

function randomPurchase(rng: Rng, offer: OfferKey, daysAgo: number): PurchasePlan {
  const plan: PurchasePlan = { offer, daysAgo, outcome: 'active' };
  if (ONE_TIME.has(offer)) {
    plan.outcome = rng.weighted([
      ['active', 89],
      ['refunded', 8],
      ['deactivated', 3],
    ] as const);
    if (plan.outcome !== 'active') plan.endAfterDays = rng.int(2, 28);
  } else if (SUBSCRIPTIONS.has(offer)) {
    const roll = rng.float();
    if (roll < 0.25 && daysAgo > 25) {
      plan.outcome = 'canceled';
      plan.endAfterDays = rng.int(20, Math.floor(daysAgo) - 1);
    } else if (roll < 0.37 && daysAgo > 35) {
      plan.outcome = 'past_due';
    }
  } else if (offer === 'speaking3' && daysAgo > 35 && rng.chance(0.12)) {
    plan.outcome = 'past_due';
  }
  if (rng.chance(0.2)) plan.coupon = rng.pick(['WELCOME10', 'SPRING25', 'PODCAST15', 'VIPFRIEND'] as const);
  if (offer === 'coaching') plan.quantity = rng.int(1, 4);
  if (rng.chance(0.07)) plan.failedFirstAttempt = true;
  plan.source = rng.weighted([
    ['checkout', 80],
    ['upsell', 8],
    ['affiliate', 7],
    ['api', 5],
  ] as const);
  plan.referrer = rng.chance(0.55) ? rng.pick(REFERRERS) : null;
  return plan;
}

export function randomPlan(index: number, createdDaysAgo: number, emails: EmailBook, ctx: PlanContext, rng: Rng): PersonPlan {
  const c = createdDaysAgo;
  const first = rng.pick(FIRST_NAMES);
  const last = rng.pick(LAST_NAMES);
  const email = emails.take(first, last, rng);
  const place = rng.weighted(PLACES);

  // Commerce first: buyers give a billing address.
  const purchases: PurchasePlan[] = [];
  if (rng.chance(0.2)) {
    const count = rng.weighted([
      [1, 65],
      [2, 28],
      [3, 7],
    ] as const);
    const bought = new Set<OfferKey>();
    for (let k = 0; k < count; k++) {
      const available = PAID_OFFER_WEIGHTS.filter(([o]) => !bought.has(o) && ctx.offerCreatedDaysAgo[o] > 1);
      if (available.length === 0) break;
      const offer = rng.weighted(available);
      bought.add(offer);
      const latest = Math.min(c, ctx.offerCreatedDaysAgo[offer] - 1);
      // Most people buy soon after signing up; some much later.
      const daysAgo = latest - (latest - 0.1) * Math.pow(rng.float(), 0.6);
      const plan = randomPurchase(rng, offer, daysAgo);
      const partner: OfferKey | undefined = offer === 'speaking' ? 'photo' : offer === 'photo' ? 'speaking' : undefined;
      if (partner && !bought.has(partner) && plan.outcome === 'active' && !plan.coupon && rng.chance(0.15)) {
        plan.bundleWith = partner;
        bought.add(partner);
      }
      purchases.push(plan);
    }
  }
  if (rng.chance(0.07)) {
    purchases.push({ offer: 'podcastFree', daysAgo: c * rng.float(), outcome: 'active', source: 'checkout', referrer: null });
  }
  const grants: GrantPlan[] = [];
  if (rng.chance(0.025)) {
    const grant: GrantPlan = { offer: 'allAccess', daysAgo: c * rng.float() };
    if (rng.chance(0.3)) grant.revokeAfterDays = rng.int(5, Math.max(6, Math.floor(grant.daysAgo)));
    grants.push(grant);
  }
  const buyer = purchases.some((p) => p.offer !== 'podcastFree') || grants.length > 0;

  const address = rng.chance(buyer ? 0.9 : 0.35)
    ? {
        line1: `${rng.int(12, 4980)} ${rng.pick(STREET_NAMES)}`,
        line2: rng.chance(0.25) ? rng.pick(SECOND_LINES) : null,
        zip: rng.pick(place.zips),
      }
    : null;

  // Marketing consent and how it ended.
  let consent: Consent = rng.weighted([
    ['subscribed', 62],
    ['never', 12],
    ['unsubscribed', 11],
    ['manual', 3],
    ['opted_out', 4],
    ['complained', 2],
    ['hard_bounce', 4],
  ] as const);
  const subscribedDaysAgo = consent === 'never' ? null : rng.chance(0.85) ? c : c * rng.float();
  let stopDaysAgo: number | null = null;
  let stopBroadcast: number | null = null;
  if (consent === 'complained' || consent === 'hard_bounce') {
    const received = ctx.broadcastDaysAgo.map((d, i) => [i, d] as const).filter(([, d]) => subscribedDaysAgo !== null && d < subscribedDaysAgo);
    if (received.length > 0) stopBroadcast = rng.pick(received)[0];
    else consent = 'unsubscribed';
  }
  if (consent === 'unsubscribed' || consent === 'manual' || consent === 'opted_out') stopDaysAgo = (subscribedDaysAgo ?? c) * rng.float();
  const stoppedDaysAgo = stopDaysAgo ?? (stopBroadcast !== null ? (ctx.broadcastDaysAgo[stopBroadcast] ?? 0) : 0);

  let engagement: Engagement;
  if (subscribedDaysAgo === null) engagement = 'none';
  else if (stoppedDaysAgo >= 90) engagement = 'inactive';
  else {
    const choices: Array<readonly [Engagement, number]> = [['unengaged', 30]];
    if (stoppedDaysAgo < 20 || subscribedDaysAgo < 25) choices.push(['healthy', 45]);
    if (subscribedDaysAgo > 40 && stoppedDaysAgo < 80) choices.push(['passive', 25]);
    engagement = rng.weighted(choices);
  }

  // Sign-ups: most people arrive through a form.
  const signups: PersonPlan['signups'] = [];
  if (rng.chance(0.93)) {
    const open = (f: FormKey) => ctx.formCreatedDaysAgo[f] > c;
    const form = rng.weighted(
      (
        [
          ['speakingGuide', 30],
          ['newsletter', 35],
          ['webinar', 12],
          ['coaching', 8],
          ['mindful', 7],
        ] as const
      ).filter(([f]) => open(f)),
    );
    signups.push({ form, daysAgo: c });
    if (rng.chance(0.18)) {
      const later = c * rng.float();
      const second = rng.pick((['speakingGuide', 'newsletter', 'webinar', 'coaching'] as const).filter((f) => f !== form && ctx.formCreatedDaysAgo[f] > later));
      signups.push({ form: second, daysAgo: later });
    }
  }

  const extraTags: TagKey[] = [];
  if (rng.chance(0.18)) extraTags.push('podcastListener');
  if (rng.chance(0.04)) extraTags.push('affiliate');

  const events: EventKey[] = [];
  const ownsOffer = (o: OfferKey) => purchases.some((p) => p.offer === o || p.bundleWith === o);
  if (c > ctx.eventDaysAgo.stageFrightQa + 1 && rng.chance(0.25)) events.push('stageFrightQa');
  if (c > ctx.eventDaysAgo.photoWalk + 1 && rng.chance(0.12)) events.push('photoWalk');
  if (rng.chance(ownsOffer('watercolor') ? 0.8 : 0.03)) events.push('cohortKickoff');
  if (rng.chance(ownsOffer('communityAnnual') || ownsOffer('allAccess') ? 0.4 : 0.05)) events.push('townHall');

  const attempts: AttemptPlan[] = [];
  const ownsSpeaking = ownsOffer('speaking') || ownsOffer('speaking3') || ownsOffer('allAccess');
  if (rng.chance(ownsSpeaking ? 0.6 : 0.05)) {
    const start = ownsSpeaking ? Math.min(...purchases.map((p) => p.daysAgo)) : c;
    const daysAgo = start * rng.float();
    const outcome = rng.weighted([
      ['passed', 55],
      ['failed', 25],
      ['in_progress', 20],
    ] as const);
    attempts.push({ assessment: 'speakingQuiz', daysAgo, outcome });
    if (outcome === 'failed' && rng.chance(0.35)) attempts.push({ assessment: 'speakingQuiz', daysAgo: daysAgo * rng.float(), outcome: 'passed' });
  }
  if ((ownsOffer('photo') || ownsOffer('allAccess')) && rng.chance(0.5)) {
    attempts.push({ assessment: 'exposureCheck', daysAgo: Math.min(c, 300) * rng.float(), outcome: rng.chance(0.7) ? 'passed' : 'failed' });
  }

  const newsletters: PersonPlan['newsletters'] = [];
  if (subscribedDaysAgo !== null) {
    const ended = stopDaysAgo ?? (stopBroadcast !== null ? stoppedDaysAgo : null);
    if (rng.chance(0.7)) newsletters.push({ newsletter: 'weekly', unsubscribeDaysAgo: ended ?? (rng.chance(0.12) ? subscribedDaysAgo * rng.float() : null) });
    if (rng.chance(0.25)) newsletters.push({ newsletter: 'creatorNotes', unsubscribeDaysAgo: ended ?? (rng.chance(0.25) ? subscribedDaysAgo * rng.float() : null) });
  }
  if (newsletters.some((n) => n.newsletter === 'weekly') && rng.chance(0.5)) extraTags.push('newsletter');

  const customer = purchases.length > 0 || grants.length > 0 || signups.some((s) => s.form === 'mindful');
  const notes = rng.chance(customer ? 0.35 : 0.12) ? rng.sample(NOTE_BODIES, rng.int(1, 2)) : [];
  const lastActivityDaysAgo = customer
    ? rng.chance(0.85)
      ? Math.min(c, 90 * Math.pow(rng.float(), 2))
      : null
    : rng.chance(0.55)
      ? c * Math.pow(rng.float(), 1.5)
      : null;

  return {
    index,
    name: `${first} ${last}`,
    email,
    createdDaysAgo: c,
    place,
    address,
    phone: rng.chance(0.7) ? rng.digits(place.phone) : null,
    mobile: rng.chance(0.3) ? rng.digits(place.phone) : null,
    business: rng.chance(0.12) ? `${rng.digits(place.phone)} ext. ${rng.int(10, 99)}` : null,
    company: rng.chance(0.35) ? rng.pick(COMPANIES) : null,
    role: rng.chance(0.45) ? rng.pick(ROLES) : null,
    heardFrom: rng.chance(0.35) ? rng.pick(HEARD_FROM) : null,
    hidden: rng.chance(0.04),
    consent,
    subscribedDaysAgo,
    stopDaysAgo,
    stopBroadcast,
    engagement,
    broadcastOverrides: {},
    lastActivityDaysAgo,
    signups,
    extraTags,
    events,
    attempts,
    newsletters,
    notes,
    purchases,
    grants,
    profile: {
      externalId: rng.chance(0.45),
      avatar: rng.chance(0.3),
      socials: rng.chance(0.3),
      website: rng.chance(0.2),
      bio: rng.chance(0.25) ? rng.pick(BIOS) : null,
      signInCount: rng.chance(0.1) ? 0 : rng.int(1, 140),
    },
  };
}

/**
 * The plans of `size` people: generated people, with the archetypes placed where their creation
 * time falls. Call `plan(i)` for i in 0..size-1, in order (emails are handed out in that order).
 */
export class PeoplePlanner {
  private readonly archetypeAt = new Map<number, Archetype>();
  private readonly emails = new EmailBook();

  constructor(
    readonly size: number,
    private readonly ctx: PlanContext,
    /** The base seed of every person's random stream (`sitebiz seed --seed`). */
    private readonly seed: number = DEMO_SEED,
  ) {
    if (size < ARCHETYPES.length) throw new Error(`the demo needs at least ${ARCHETYPES.length} contacts`);
    for (const a of ARCHETYPES) {
      this.emails.reserve(a.email);
      // The free slot whose creation time is nearest the archetype's.
      let best = -1;
      for (let i = 0; i < size; i++) {
        if (this.archetypeAt.has(i)) continue;
        if (best < 0 || Math.abs(createdDaysAgoForSlot(i, size, 0.5) - a.createdDaysAgo) < Math.abs(createdDaysAgoForSlot(best, size, 0.5) - a.createdDaysAgo)) best = i;
      }
      this.archetypeAt.set(best, a);
    }
  }

  plan(index: number): PersonPlan {
    const rng = new Rng(seedOf(this.seed, 'person', index));
    const createdDaysAgo = createdDaysAgoForSlot(index, this.size, rng.float());
    const archetype = this.archetypeAt.get(index);
    if (!archetype) return randomPlan(index, createdDaysAgo, this.emails, this.ctx, rng);
    // A throw-away email book: the archetype's name replaces the generated one.
    const plan = randomPlan(index, createdDaysAgo, new EmailBook(), this.ctx, rng);
    plan.name = archetype.name;
    plan.email = archetype.email;
    plan.subscribedDaysAgo = createdDaysAgo;
    plan.stopDaysAgo = null;
    plan.stopBroadcast = null;
    plan.hidden = false;
    plan.broadcastOverrides = {};
    const generatedPlace = plan.place;
    archetype.apply(plan, this.ctx);
    // Stories are told in whole days; real moments are not on the hour.
    const jitter = (days: number) => days + rng.float() * 0.6;
    for (const p of plan.purchases) p.daysAgo = jitter(p.daysAgo);
    for (const g of plan.grants) g.daysAgo = jitter(g.daysAgo);
    for (const a of plan.attempts) a.daysAgo = jitter(a.daysAgo);
    if (plan.stopDaysAgo !== null) plan.stopDaysAgo = jitter(plan.stopDaysAgo);
    if (plan.lastActivityDaysAgo !== null) plan.lastActivityDaysAgo = jitter(plan.lastActivityDaysAgo);
    // Customers give a billing address, in the place the story puts them.
    const place = plan.place;
    if (place !== generatedPlace || !plan.address) {
      plan.address = { line1: `${rng.int(12, 4980)} ${rng.pick(STREET_NAMES)}`, line2: plan.address?.line2 ?? null, zip: rng.pick(place.zips) };
      plan.phone = rng.digits(place.phone);
      if (plan.mobile) plan.mobile = rng.digits(place.phone);
      if (plan.business) plan.business = `${rng.digits(place.phone)} ext. ${rng.int(10, 99)}`;
    }
    return plan;
  }
}
