// One person's email history: which broadcasts and sequence emails reached them, and what
// happened to each (sent, delivered, opened, clicked, bounced, dropped, complained). Opens follow
// the person's engagement so that the engagement segments of contact-filters.ts (healthy,
// passive, unengaged, inactive) all have members.
import { ENGAGEMENT_WINDOWS } from '../resources/contact-filters.js';
import type { CatalogueBroadcast } from './catalogue.js';
import type { BroadcastOverride, Consent, Engagement } from './people.js';
import type { Rng } from './random.js';
import type { Draft, Row } from './rows.js';
import type { Timeline } from './timeline.js';

export interface SequenceReceipt {
  sequence: Row<'email_sequences'>;
  emailDays: readonly number[];
  subscribedAt: Date;
  unsubscribedAt: Date | null;
}

export interface EmailHistoryInput {
  consent: Consent;
  engagement: Engagement;
  subscribedAt: Date | null;
  /** When marketing consent ended (unsubscribed, manual, opted out); null if it did not. */
  stoppedAt: Date | null;
  /** Complaint or hard bounce: the broadcast (index into `broadcasts`) it happened on. */
  stopBroadcast: number | null;
  overrides: Record<number, BroadcastOverride>;
  broadcasts: readonly CatalogueBroadcast[];
  sequences: readonly SequenceReceipt[];
  /** Absent: every email reaches the person (the demo). Else each one only with this chance. */
  audience?: EmailAudience;
}

/**
 * Real businesses send most broadcasts to a segment, not to everyone. Bulk seeding draws each
 * person's emails with these chances, which keeps every email filter meaningful while writing a
 * few email events per contact instead of dozens. The broadcast a story stops on (a complaint,
 * a hard bounce) and broadcasts with an override always reach the person.
 */
export interface EmailAudience {
  broadcastShare: number;
  sequenceShare: number;
}

export type EmailEventDraft = Omit<Draft<'email_events'>, 'site_id' | 'contact_id' | 'created_at'>;

export interface EmailHistory {
  events: EmailEventDraft[];
  /** The latest bounce, as the contact keeps it. */
  bouncedAt: Date | null;
  bounceType: 'hard' | 'soft' | null;
  complainedAt: Date | null;
}

interface Email {
  at: Date;
  broadcast: number | null;
  row: Row<'email_broadcasts'> | Row<'email_sequences'>;
  outcome: 'delivered' | 'dropped' | 'soft_bounce' | 'hard_bounce';
  openAt: Date | null;
  clickAt: Date | null;
  complainAt: Date | null;
}

const { recentOpenDays, engagedDays } = ENGAGEMENT_WINDOWS;

/** Chance of opening an email, by engagement and by how many days ago the open would be. */
function openChance(engagement: Engagement, daysAgo: number): number {
  const recent = daysAgo < recentOpenDays;
  const engaged = daysAgo < engagedDays;
  switch (engagement) {
    case 'healthy':
      return recent ? 0.7 : engaged ? 0.55 : 0.45;
    case 'passive':
      return recent ? 0 : engaged ? 0.5 : 0.45;
    case 'unengaged':
      return engaged ? 0 : 0.25;
    case 'inactive':
      return engaged ? 0 : 0.4;
    case 'none':
      return 0;
  }
}

export function emailHistory(input: EmailHistoryInput, t: Timeline, rng: Rng): EmailHistory {
  const emails: Email[] = [];
  const blank = { openAt: null, clickAt: null, complainAt: null };
  const subscribedAt = input.subscribedAt;
  if (subscribedAt) {
    input.broadcasts.forEach((b, i) => {
      if (b.sentAt < subscribedAt) return;
      if (input.stoppedAt && b.sentAt >= input.stoppedAt) return;
      if (input.stopBroadcast !== null && i > input.stopBroadcast) return;
      if (input.audience && i !== input.stopBroadcast && !(i in input.overrides) && !rng.chance(input.audience.broadcastShare)) return;
      emails.push({ at: t.plusMinutes(b.sentAt, rng.int(0, 20)), broadcast: i, row: b.row, outcome: 'delivered', ...blank });
    });
    const stopAt = input.stoppedAt ?? (input.stopBroadcast !== null ? (input.broadcasts[input.stopBroadcast]?.sentAt ?? null) : null);
    for (const s of input.sequences) {
      for (const day of s.emailDays) {
        const at = t.plusMinutes(t.plusDays(s.subscribedAt, day), 30 + rng.int(0, 90));
        if (!t.isPast(at) || (s.unsubscribedAt && at >= s.unsubscribedAt) || (stopAt && at >= stopAt)) continue;
        if (input.audience && !rng.chance(input.audience.sequenceShare)) continue;
        emails.push({ at, broadcast: null, row: s.sequence, outcome: 'delivered', ...blank });
      }
    }
  }
  emails.sort((a, b) => a.at.getTime() - b.at.getTime());

  // What happened to each email.
  for (const email of emails) {
    const override = email.broadcast === null ? undefined : input.overrides[email.broadcast];
    const isStop = email.broadcast !== null && email.broadcast === input.stopBroadcast;
    if (isStop && input.consent === 'hard_bounce') email.outcome = 'hard_bounce';
    else if (override === 'dropped' || (!override && !isStop && rng.chance(0.01))) email.outcome = 'dropped';
    else if (override === 'soft_bounce' || (!override && !isStop && rng.chance(0.015))) email.outcome = 'soft_bounce';
    if (email.outcome !== 'delivered') continue;
    const openAt = t.plusMinutes(email.at, rng.int(10, 36 * 60));
    if (t.isPast(openAt) && (override === 'clicked' || rng.float() < openChance(input.engagement, t.daysAgoOf(openAt)))) {
      email.openAt = openAt;
      if (override === 'clicked' || rng.chance(0.35)) email.clickAt = t.plusMinutes(openAt, rng.int(1, 6));
    }
    if (isStop && input.consent === 'complained') email.complainAt = t.plusMinutes(email.at, rng.int(60, 600));
  }
  ensureOpenIn(emails, input.engagement, t);

  const events: EmailEventDraft[] = [];
  let bouncedAt: Date | null = null;
  let bounceType: 'hard' | 'soft' | null = null;
  let complainedAt: Date | null = null;
  for (const email of emails) {
    const broadcast = email.broadcast === null ? null : (email.row as Row<'email_broadcasts'>);
    const sequence = email.broadcast === null ? (email.row as Row<'email_sequences'>) : null;
    events.push(emailEvent(broadcast, sequence, 'sent', email.at, null));
    const next = t.plusMinutes(email.at, 1);
    if (email.outcome === 'dropped') {
      events.push(emailEvent(broadcast, sequence, 'dropped', next, null));
    } else if (email.outcome === 'soft_bounce' || email.outcome === 'hard_bounce') {
      bounceType = email.outcome === 'hard_bounce' ? 'hard' : 'soft';
      bouncedAt = next;
      events.push(emailEvent(broadcast, sequence, 'bounced', next, bounceType));
    } else {
      events.push(emailEvent(broadcast, sequence, 'delivered', next, null));
      if (email.openAt) events.push(emailEvent(broadcast, sequence, 'opened', email.openAt, null));
      if (email.clickAt) events.push(emailEvent(broadcast, sequence, 'clicked', email.clickAt, null));
      if (email.complainAt && t.isPast(email.complainAt)) {
        events.push(emailEvent(broadcast, sequence, 'complained', email.complainAt, null));
        complainedAt = email.complainAt;
      }
    }
  }
  return { events, bouncedAt, bounceType, complainedAt };
}

function emailEvent(
  broadcast: Row<'email_broadcasts'> | null,
  sequence: Row<'email_sequences'> | null,
  kind: string,
  occurred_at: Date,
  bounce_type: string | null,
): EmailEventDraft {
  return { email_broadcast_id: broadcast, email_sequence_id: sequence, kind, bounce_type, occurred_at };
}

/**
 * Healthy people opened something in the recent window and passive people in the engaged window
 * (but not the recent one): if chance gave them no such open, their latest email in the window
 * is opened, when there is one.
 */
function ensureOpenIn(emails: Email[], engagement: Engagement, t: Timeline): void {
  const window =
    engagement === 'healthy' ? ([0, recentOpenDays] as const) : engagement === 'passive' ? ([recentOpenDays, engagedDays] as const) : undefined;
  if (!window) return;
  const inWindow = (d: Date) => {
    const days = t.daysAgoOf(d);
    return days >= window[0] && days < window[1];
  };
  if (emails.some((e) => e.openAt && inWindow(e.openAt))) return;
  for (let i = emails.length - 1; i >= 0; i--) {
    const email = emails[i]!;
    const openAt = t.plusMinutes(email.at, 45);
    if (email.outcome === 'delivered' && t.isPast(openAt) && inWindow(openAt)) {
      email.openAt = openAt;
      return;
    }
  }
}
