// The demo's hand-written people: customers whose stories make every contact and customer filter
// match someone and not everyone (a healthy long-time buyer, a refund, a complaint, a hard bounce,
// an opt-out, a past-due subscription, a revoked grant, ...). Each story is told over a generated
// person, which supplies the details the story leaves out; PeoplePlanner places each archetype
// where its creation time falls among the generated people.
import type { PersonPlan, PlanContext } from './people.js';
import { BIOS, NOTE_BODIES, PLACES } from './vocabulary.js';

export interface Archetype {
  name: string;
  email: string;
  createdDaysAgo: number;
  /** The story, applied over a generated person (which supplies phone numbers and the like). */
  apply(p: PersonPlan, ctx: PlanContext): void;
}

const QUIET: Pick<PersonPlan, 'purchases' | 'grants' | 'attempts' | 'events' | 'newsletters' | 'extraTags' | 'signups' | 'notes'> = {
  purchases: [],
  grants: [],
  attempts: [],
  events: [],
  newsletters: [],
  extraTags: [],
  signups: [],
  notes: [],
};

/** The latest broadcast sent at least `days` ago. */
const broadcastAtLeast = (ctx: PlanContext, days: number): number => {
  let found = 0;
  ctx.broadcastDaysAgo.forEach((d, i) => {
    if (d >= days) found = i;
  });
  return found;
};

/**
 * Customers whose stories cover every filter: a healthy long-time buyer, a bundle buyer who
 * failed the quiz, a payment plan, a refund, a complaint, a hard bounce, an opt-out, a staff
 * unsubscribe, a hidden comp account, a brand-new buyer who never subscribed, a form sign-up
 * with a free offer, a past-due subscription, a revoked grant and a coupon buyer.
 */
export const ARCHETYPES: readonly Archetype[] = [
  {
    name: 'Maya Patel',
    email: 'maya.patel@example.com',
    createdDaysAgo: 600,
    apply(p) {
      Object.assign(p, QUIET, {
        consent: 'subscribed',
        engagement: 'healthy',
        broadcastOverrides: { 0: 'clicked' },
        signups: [{ form: 'speakingGuide', daysAgo: p.createdDaysAgo }],
        extraTags: ['newsletter', 'webinar', 'vip'],
        events: ['stageFrightQa'],
        purchases: [
          { offer: 'speaking', daysAgo: 560, outcome: 'active', coupon: 'WELCOME10', source: 'checkout', referrer: 'https://www.google.com/' },
          { offer: 'allAccess', daysAgo: 200, outcome: 'active', source: 'upsell', referrer: null },
        ],
        attempts: [{ assessment: 'speakingQuiz', daysAgo: 540, outcome: 'passed' }],
        newsletters: [{ newsletter: 'weekly', unsubscribeDaysAgo: null }],
        notes: [NOTE_BODIES[4]],
        lastActivityDaysAgo: 1,
        profile: { externalId: true, avatar: true, socials: true, website: true, bio: BIOS[0], signInCount: 212 },
      } satisfies Partial<PersonPlan>);
    },
  },
  {
    name: 'Daniel Okafor',
    email: 'daniel.okafor@example.org',
    createdDaysAgo: 420,
    apply(p) {
      Object.assign(p, QUIET, {
        consent: 'subscribed',
        engagement: 'passive',
        broadcastOverrides: { 0: 'soft_bounce' },
        signups: [{ form: 'newsletter', daysAgo: p.createdDaysAgo }],
        extraTags: ['newsletter'],
        purchases: [{ offer: 'photo', daysAgo: 400, outcome: 'active', bundleWith: 'speaking', source: 'checkout', referrer: 'https://www.youtube.com/' }],
        attempts: [{ assessment: 'speakingQuiz', daysAgo: 380, outcome: 'failed' }],
        newsletters: [{ newsletter: 'weekly', unsubscribeDaysAgo: null }],
        lastActivityDaysAgo: 45,
      } satisfies Partial<PersonPlan>);
    },
  },
  {
    name: 'Sofia Marquez',
    email: 'sofia.marquez@example.net',
    createdDaysAgo: 330,
    apply(p) {
      Object.assign(p, QUIET, {
        consent: 'subscribed',
        engagement: 'unengaged',
        broadcastOverrides: { 0: 'dropped' },
        place: PLACES.find(([pl]) => pl.city === 'Austin')![0],
        signups: [{ form: 'webinar', daysAgo: p.createdDaysAgo }],
        events: ['stageFrightQa'],
        purchases: [{ offer: 'speaking3', daysAgo: 100, outcome: 'active', source: 'checkout', referrer: null }],
        lastActivityDaysAgo: 70,
      } satisfies Partial<PersonPlan>);
    },
  },
  {
    name: 'Liam Chen',
    email: 'liam.chen@example.com',
    createdDaysAgo: 500,
    apply(p) {
      Object.assign(p, QUIET, {
        consent: 'unsubscribed',
        stopDaysAgo: 150,
        engagement: 'inactive',
        signups: [{ form: 'speakingGuide', daysAgo: p.createdDaysAgo }],
        extraTags: ['webinar'],
        purchases: [{ offer: 'speaking', daysAgo: 480, outcome: 'refunded', endAfterDays: 12, source: 'checkout', referrer: null }],
        newsletters: [{ newsletter: 'weekly', unsubscribeDaysAgo: 150 }],
        notes: [NOTE_BODIES[7]],
        lastActivityDaysAgo: 140,
      } satisfies Partial<PersonPlan>);
    },
  },
  {
    name: 'Hannah Schmidt',
    email: 'hannah.schmidt@example.org',
    createdDaysAgo: 380,
    apply(p, ctx) {
      Object.assign(p, QUIET, {
        consent: 'complained',
        stopBroadcast: broadcastAtLeast(ctx, 15),
        engagement: 'unengaged',
        place: PLACES.find(([pl]) => pl.city === 'Berlin')![0],
        signups: [{ form: 'newsletter', daysAgo: p.createdDaysAgo }],
        extraTags: ['watercolorCohort'],
        events: ['cohortKickoff'],
        purchases: [
          { offer: 'allAccess', daysAgo: 300, outcome: 'canceled', endAfterDays: 245, source: 'checkout', referrer: null },
          { offer: 'watercolor', daysAgo: 140, outcome: 'active', source: 'checkout', referrer: 'https://www.instagram.com/' },
        ],
        newsletters: [{ newsletter: 'weekly', unsubscribeDaysAgo: 15 }],
        lastActivityDaysAgo: 9,
      } satisfies Partial<PersonPlan>);
    },
  },
  {
    name: 'Marcus Johnson',
    email: 'marcus.johnson@example.com',
    createdDaysAgo: 260,
    apply(p, ctx) {
      Object.assign(p, QUIET, {
        consent: 'hard_bounce',
        stopBroadcast: ctx.broadcastDaysAgo.length - 1,
        engagement: 'healthy',
        place: PLACES.find(([pl]) => pl.city === 'Chicago')![0],
        signups: [{ form: 'coaching', daysAgo: p.createdDaysAgo }],
        extraTags: ['coachingProspect'],
        purchases: [
          { offer: 'coaching', daysAgo: 200, outcome: 'active', quantity: 2, source: 'checkout', referrer: null },
          { offer: 'coaching', daysAgo: 2, outcome: 'active', quantity: 3, source: 'checkout', referrer: null },
        ],
        lastActivityDaysAgo: 2,
      } satisfies Partial<PersonPlan>);
    },
  },
  {
    name: 'Aisha Rahman',
    email: 'aisha.rahman@example.net',
    createdDaysAgo: 230,
    apply(p) {
      Object.assign(p, QUIET, {
        consent: 'opted_out',
        stopDaysAgo: 8,
        engagement: 'passive',
        place: PLACES.find(([pl]) => pl.city === 'London')![0],
        signups: [{ form: 'speakingGuide', daysAgo: p.createdDaysAgo }],
        extraTags: ['podcastListener'],
        purchases: [{ offer: 'podcastFree', daysAgo: 200, outcome: 'active', source: 'checkout', referrer: 'https://podcasts.example.com/northwind' }],
        attempts: [{ assessment: 'speakingQuiz', daysAgo: 20, outcome: 'in_progress' }],
        newsletters: [{ newsletter: 'weekly', unsubscribeDaysAgo: 8 }],
        lastActivityDaysAgo: 20,
      } satisfies Partial<PersonPlan>);
    },
  },
  {
    name: 'Tom Becker',
    email: 'tom.becker@example.com',
    createdDaysAgo: 150,
    apply(p) {
      Object.assign(p, QUIET, {
        consent: 'manual',
        stopDaysAgo: 15,
        engagement: 'healthy',
        signups: [{ form: 'newsletter', daysAgo: p.createdDaysAgo }],
        purchases: [{ offer: 'bookkeeping', daysAgo: 60, outcome: 'active', source: 'checkout', referrer: null }],
        attempts: [{ assessment: 'bookkeepingCheck', daysAgo: 40, outcome: 'passed' }],
        newsletters: [{ newsletter: 'weekly', unsubscribeDaysAgo: 15 }],
        notes: [NOTE_BODIES[3]],
        lastActivityDaysAgo: 33,
      } satisfies Partial<PersonPlan>);
    },
  },
  {
    name: 'Grace Kim',
    email: 'grace.kim@example.org',
    createdDaysAgo: 310,
    apply(p) {
      Object.assign(p, QUIET, {
        hidden: true,
        consent: 'subscribed',
        engagement: 'healthy',
        signups: [{ form: 'newsletter', daysAgo: p.createdDaysAgo }],
        extraTags: ['affiliate'],
        grants: [{ offer: 'allAccess', daysAgo: 300 }],
        notes: [NOTE_BODIES[11]],
        lastActivityDaysAgo: 12,
      } satisfies Partial<PersonPlan>);
    },
  },
  {
    name: 'Noah Williams',
    email: 'noah.williams@example.net',
    createdDaysAgo: 6,
    apply(p) {
      Object.assign(p, QUIET, {
        consent: 'never',
        subscribedDaysAgo: null,
        engagement: 'none',
        purchases: [{ offer: 'communityAnnual', daysAgo: 5, outcome: 'active', source: 'checkout', referrer: 'https://www.instagram.com/' }],
        events: ['townHall'],
        lastActivityDaysAgo: 0.5,
      } satisfies Partial<PersonPlan>);
    },
  },
  {
    name: 'Chloé Dubois',
    email: 'chloe.dubois@example.com',
    createdDaysAgo: 10,
    apply(p, ctx) {
      Object.assign(p, QUIET, {
        consent: 'subscribed',
        engagement: 'healthy',
        broadcastOverrides: { [ctx.broadcastDaysAgo.length - 1]: 'soft_bounce' },
        place: PLACES.find(([pl]) => pl.city === 'Toronto')![0],
        signups: [{ form: 'mindful', daysAgo: p.createdDaysAgo }],
        lastActivityDaysAgo: 3,
      } satisfies Partial<PersonPlan>);
    },
  },
  {
    name: 'Ethan Brooks',
    email: 'ethan.brooks@example.org',
    createdDaysAgo: 450,
    apply(p) {
      Object.assign(p, QUIET, {
        consent: 'subscribed',
        engagement: 'passive',
        signups: [{ form: 'speakingGuide', daysAgo: p.createdDaysAgo }],
        purchases: [{ offer: 'allAccess', daysAgo: 150, outcome: 'past_due', source: 'checkout', referrer: null }],
        newsletters: [{ newsletter: 'weekly', unsubscribeDaysAgo: null }],
        lastActivityDaysAgo: 25,
      } satisfies Partial<PersonPlan>);
    },
  },
  {
    name: 'Priya Nair',
    email: 'priya.nair@example.com',
    createdDaysAgo: 350,
    apply(p) {
      Object.assign(p, QUIET, {
        consent: 'subscribed',
        engagement: 'unengaged',
        signups: [{ form: 'newsletter', daysAgo: p.createdDaysAgo }],
        grants: [{ offer: 'speaking', daysAgo: 300, revokeAfterDays: 260 }],
        newsletters: [
          { newsletter: 'weekly', unsubscribeDaysAgo: 60 },
          { newsletter: 'creatorNotes', unsubscribeDaysAgo: null },
        ],
        notes: [NOTE_BODIES[8]],
        lastActivityDaysAgo: 41,
      } satisfies Partial<PersonPlan>);
    },
  },
  {
    name: 'Lucas Silva',
    email: 'lucas.silva@example.net',
    createdDaysAgo: 270,
    apply(p) {
      Object.assign(p, QUIET, {
        consent: 'unsubscribed',
        stopDaysAgo: 20,
        engagement: 'passive',
        place: PLACES.find(([pl]) => pl.city === 'Melbourne')![0],
        signups: [{ form: 'webinar', daysAgo: p.createdDaysAgo }],
        extraTags: ['webinar'],
        events: ['stageFrightQa', 'photoWalk'],
        purchases: [{ offer: 'photo', daysAgo: 250, outcome: 'active', coupon: 'SPRING25', source: 'affiliate', referrer: 'https://northwind.example/blog/overcoming-stage-fright' }],
        attempts: [{ assessment: 'exposureCheck', daysAgo: 230, outcome: 'passed' }],
        newsletters: [{ newsletter: 'weekly', unsubscribeDaysAgo: 20 }],
        lastActivityDaysAgo: 18,
      } satisfies Partial<PersonPlan>);
    },
  },
];
