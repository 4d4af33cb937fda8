// The people of the contacts and customers suites: nine contacts of the tenant's site (six of them
// customers), each with a history chosen so that every filter of the contact filter family
// matches some of them and not the others, plus look-alikes in a second site of the same account
// and in another account that must never show up.
//
// The clock stands at 2026-06-01T12:00:00.000Z (TestClock's start) and "Nd" below means N days
// before it. `filterCases` is the table both suites run: for each filter, values and the people
// they must return, on the contacts list and (as the customers' contacts) on the customers list.
import { PERMISSION_NAMES } from '../../src/auth/permissions.js';
import { createAccount, createSite, createUser } from '../../src/domain/accounts.js';
import { builders } from './builders.js';
import type { TestApp } from './harness.js';

export const PEOPLE = ['ada', 'grace', 'alan', 'katherine', 'edsger', 'barbara', 'fran', 'hal', 'margaret'] as const;
export type Person = (typeof PEOPLE)[number];
/** The people who are customers too. */
export const CUSTOMERS = ['ada', 'grace', 'alan', 'barbara', 'hal', 'margaret'] as const satisfies readonly Person[];
export type CustomerPerson = (typeof CUSTOMERS)[number];

export const isCustomer = (p: Person): p is CustomerPerson => (CUSTOMERS as readonly Person[]).includes(p);

export interface ContactFixture {
  siteId: number;
  /** Owner's token (every permission). */
  token: string;
  contact: Record<Person, number>;
  customer: Record<CustomerPerson, number>;
  tag: { vip: number; beta: number; news: number };
  offer: { course: number; bundle: number; free: number };
  product: { course: number; community: number; podcast: number };
  form: { signup: number; webinar: number };
  event: { launch: number; qna: number };
  assessment: { quiz: number; exam: number };
  newsletter: { weekly: number };
  sequence: { onboard: number };
  broadcast: { june: number; may: number };
  /** A second site of the same account, with an "Ada" who matches most filters. */
  secondSite: { siteId: number; contactId: number; customerId: number; tagId: number; offerId: number };
  /** Another account with its own "Ada". */
  otherAccount: { siteId: number; ownerToken: string; contactId: number; customerId: number; tagId: number; offerId: number };
}

/**
 * Builds the people (see the table in the comments below) into a fresh test app. Contacts are
 * created in PEOPLE order and customers in CUSTOMERS order, so ids ascend in those orders.
 */
export async function buildContactFixture(t: TestApp): Promise<ContactFixture> {
  const b = builders(t);
  const d = (days: number, ms = 0) => b.daysAgo(days, ms);

  // --- Catalogue ------------------------------------------------------------------------------
  const product = {
    course: await b.product({ title: 'Foundations Course', description: 'The core course' }),
    community: await b.product({ title: 'Community Circle', product_type_name: 'Community', product_type_id: 4, productizable_type: 'Communities::Community' }),
    podcast: await b.product({ title: 'Premium Podcast', product_type_name: 'Podcast', product_type_id: 3, productizable_type: 'Podcasts::Podcast' }),
  };
  const offer = {
    course: await b.offer({ title: 'Foundations Course Offer', internal_title: 'course-main', price_in_cents: 9900, productIds: [product.course] }),
    bundle: await b.offer({
      title: 'All Access Bundle',
      internal_title: 'bundle-2026',
      payment_type: 'subscription',
      price_in_cents: 2900,
      productIds: [product.course, product.community],
    }),
    free: await b.offer({ title: 'Free Podcast Preview', internal_title: 'lead-magnet', payment_type: 'free', productIds: [product.podcast] }),
  };
  const tag = { vip: await b.tag('VIP'), beta: await b.tag('Beta Tester'), news: await b.tag('News Reader') };

  // --- Contacts ---------------------------------------------------------------------------------
  //             created  customer  notes
  // ada         45d      10d       subscribed 5d, active 2d, full address (London), tags vip+beta
  // grace       20d      7d        subscribed 19d, active 15d, complained 3d, address (Virginia)
  // alan        60d      40d       subscribed 50d, unsubscribed (by staff) and opted out 3d
  // katherine   15d      -         subscribed 1d, active 5d, soft bounce 10d, address (Virginia)
  // edsger      12d      -         never subscribed, hard bounce 2d
  // barbara     7d       2d        never subscribed (created exactly 7 days ago)
  // fran        7d+1ms   -         never subscribed, nothing else (just outside 7 days)
  // hal         100d     90d       hidden, subscribed 90d, unsubscribed 10d, hard bounce 10d
  // margaret    50d      1d        subscribed 1d
  const contact = {} as Record<Person, number>;
  contact.ada = await b.contact({
    name: 'Ada Lovelace',
    email: 'countess@analytical.example',
    created_at: d(45),
    subscribed: true,
    subscribed_at: d(5),
    last_activity_at: d(2),
    phone_number: '+44 20 7946 0000',
    business_number: '020 7946 0001',
    mobile_phone_number: '+44 7700 900001',
    address_line_1: "12 St James's Square",
    address_line_2: 'Flat 3',
    address_city: 'London',
    address_state: 'Greater London',
    address_country: 'United Kingdom',
    address_zip: 'SW1Y 4JH',
    custom_1: 'Analytical Engine',
  });
  contact.grace = await b.contact({
    name: 'Grace Hopper',
    email: 'amazing.grace@navy.example',
    created_at: d(20),
    subscribed: true,
    subscribed_at: d(19),
    last_activity_at: d(15),
    complained_at: d(3),
    phone_number: '+1 212 555 0100',
    mobile_phone_number: '+1 917 555 0199',
    address_line_1: '1 Navy Yard',
    address_city: 'Arlington',
    address_state: 'Virginia',
    address_country: 'United States',
    address_zip: '22202',
  });
  contact.alan = await b.contact({
    name: 'Alan Turing',
    email: 'turing@bletchley.example',
    created_at: d(60),
    subscribed: false,
    subscribed_at: d(50),
    unsubscribed_at: d(3),
    manually_unsubscribed_at: d(3),
    opted_out_at: d(3),
  });
  contact.katherine = await b.contact({
    name: 'Katherine Johnson',
    email: 'kj@nasa.example',
    created_at: d(15),
    subscribed: true,
    subscribed_at: d(1),
    last_activity_at: d(5),
    bounced_at: d(10),
    bounce_type: 'soft',
    address_line_2: 'Suite 100',
    address_city: 'Hampton',
    address_state: 'Virginia',
    address_country: 'United States',
    address_zip: '23666',
  });
  contact.edsger = await b.contact({ name: 'Edsger Dijkstra', email: 'ewd@tue.example', created_at: d(12), bounced_at: d(2), bounce_type: 'hard' });
  contact.barbara = await b.contact({ name: 'Barbara Liskov', email: 'liskov@mit.example', created_at: d(7) });
  contact.fran = await b.contact({ name: 'Frances Allen', email: 'fran@ibm.example', created_at: d(7, 1) });
  contact.hal = await b.contact({ name: 'Hal Hidden', email: 'hal@hidden.example', created_at: d(100) });
  await b.contactFlags(contact.hal, {
    hidden: true,
    subscribed: false,
    subscribed_at: d(90),
    unsubscribed_at: d(10),
    bounced_at: d(10),
    bounce_type: 'hard',
  });
  contact.margaret = await b.contact({
    name: 'Margaret Hamilton',
    email: 'mh@apollo.example',
    created_at: d(50),
    subscribed: true,
    subscribed_at: d(1),
  });

  // --- Customers (net revenue from transactions below) --------------------------------------------
  const customer = {} as Record<CustomerPerson, number>;
  customer.ada = (
    await b.customer({
      contactId: contact.ada,
      created_at: d(10),
      external_user_id: 'ext-ada',
      avatar_url: 'https://cdn.example/ada.png',
      public_bio: 'Poet of science',
      public_location: 'London',
      public_website: 'https://ada.example/',
      socials: { twitter: 'https://twitter.com/ada', facebook: null, instagram: null },
      sign_in_count: 12,
      last_request_at: d(1),
    })
  ).id;
  customer.grace = (await b.customer({ contactId: contact.grace, created_at: d(7), sign_in_count: 3, last_request_at: d(5) })).id;
  customer.alan = (await b.customer({ contactId: contact.alan, created_at: d(40), sign_in_count: 40 })).id;
  customer.barbara = (await b.customer({ contactId: contact.barbara, created_at: d(2), last_request_at: d(2) })).id;
  customer.hal = (await b.customer({ contactId: contact.hal, created_at: d(90), last_request_at: d(80), bounced_at: d(10) })).id;
  customer.margaret = (await b.customer({ contactId: contact.margaret, created_at: d(1) })).id;

  // --- Tags ---------------------------------------------------------------------------------------
  await b.tagging(contact.ada, tag.vip);
  await b.tagging(contact.ada, tag.beta);
  await b.tagging(contact.grace, tag.vip);
  await b.tagging(contact.alan, tag.beta);
  await b.tagging(contact.katherine, tag.news);

  // --- Purchases, grants, memberships, transactions -------------------------------------------------
  // ada: bought the course with SPRING10 (99.00); her bundle grant was revoked.
  const adaPurchase = await b.purchase({ customerId: customer.ada, offerId: offer.course, amount_in_cents: 9900, coupon_code: 'SPRING10', created_at: d(10) });
  await b.transaction({ customerId: customer.ada, offerId: offer.course, amount_in_cents: 9900, purchaseIds: [adaPurchase], created_at: d(10) });
  const adaGrant = await b.grant({ contactId: contact.ada, offerId: offer.course, purchaseId: adaPurchase, created_at: d(10) });
  await b.grant({ contactId: contact.ada, offerId: offer.bundle, created_at: d(9), revoked_at: d(8) });
  await b.membership({ contactId: contact.ada, productId: product.course, offerGrantId: adaGrant, created_at: d(10) });

  // grace: subscribes to the bundle with "spring10" (29.00; a second charge failed); course suspended.
  const gracePurchase = await b.purchase({
    customerId: customer.grace,
    offerId: offer.bundle,
    payment_type: 'subscription',
    subscription_status: 'active',
    amount_in_cents: 2900,
    coupon_code: 'spring10',
    created_at: d(7),
  });
  await b.transaction({ customerId: customer.grace, offerId: offer.bundle, action: 'subscription_charge', amount_in_cents: 2900, purchaseIds: [gracePurchase], created_at: d(7) });
  await b.transaction({ customerId: customer.grace, offerId: offer.bundle, action: 'subscription_charge', state: 'failed', amount_in_cents: 2900, created_at: d(1) });
  const graceGrant = await b.grant({ contactId: contact.grace, offerId: offer.bundle, purchaseId: gracePurchase, created_at: d(7) });
  await b.membership({ contactId: contact.grace, productId: product.course, offerGrantId: graceGrant, state: 'suspended', created_at: d(7) });
  await b.membership({ contactId: contact.grace, productId: product.community, offerGrantId: graceGrant, created_at: d(7) });

  // alan: bought the course with WINTER, was refunded 88.50 (net 10.50), purchase deactivated.
  const alanPurchase = await b.purchase({
    customerId: customer.alan,
    offerId: offer.course,
    amount_in_cents: 9900,
    coupon_code: 'WINTER',
    deactivated: d(20),
    created_at: d(40),
  });
  await b.transaction({ customerId: customer.alan, offerId: offer.course, amount_in_cents: 9900, purchaseIds: [alanPurchase], created_at: d(40) });
  await b.transaction({ customerId: customer.alan, offerId: offer.course, action: 'refund', amount_in_cents: 8850, purchaseIds: [alanPurchase], created_at: d(20) });
  const alanGrant = await b.grant({ contactId: contact.alan, offerId: offer.course, purchaseId: alanPurchase, created_at: d(40), revoked_at: d(20) });
  await b.membership({ contactId: contact.alan, productId: product.course, offerGrantId: alanGrant, state: 'ended', ended_at: d(20), created_at: d(40) });

  // barbara: the free offer (net 0.0), podcast membership.
  const barbaraGrant = await b.grant({ contactId: contact.barbara, offerId: offer.free, created_at: d(2) });
  await b.membership({ contactId: contact.barbara, productId: product.podcast, offerGrantId: barbaraGrant, created_at: d(2) });

  // hal: the free offer, podcast membership ended.
  await b.grant({ contactId: contact.hal, offerId: offer.free, created_at: d(90) });
  await b.membership({ contactId: contact.hal, productId: product.podcast, state: 'ended', ended_at: d(30), created_at: d(90) });

  // margaret: bought the course with FALL (123.45), granted it a second time by hand, plus the
  // bundle and the free offer; an old course membership ended before the current one.
  const margaretPurchase = await b.purchase({ customerId: customer.margaret, offerId: offer.course, amount_in_cents: 12345, coupon_code: 'FALL', created_at: d(1) });
  await b.transaction({ customerId: customer.margaret, offerId: offer.course, amount_in_cents: 12345, purchaseIds: [margaretPurchase], created_at: d(1) });
  await b.grant({ contactId: contact.margaret, offerId: offer.course, purchaseId: margaretPurchase, created_at: d(1) });
  await b.grant({ contactId: contact.margaret, offerId: offer.course, created_at: d(1) });
  await b.grant({ contactId: contact.margaret, offerId: offer.bundle, created_at: d(1) });
  await b.grant({ contactId: contact.margaret, offerId: offer.free, created_at: d(1) });
  await b.membership({ contactId: contact.margaret, productId: product.course, state: 'ended', started_at: d(49), ended_at: d(30), created_at: d(49) });
  await b.membership({ contactId: contact.margaret, productId: product.course, created_at: d(1) });
  await b.membership({ contactId: contact.margaret, productId: product.community, created_at: d(1) });
  await b.membership({ contactId: contact.margaret, productId: product.podcast, created_at: d(1) });

  // --- Forms, events, assessments ------------------------------------------------------------------
  const form = { signup: await b.form({ title: 'Newsletter signup' }), webinar: await b.form({ title: 'Webinar registration' }) };
  await b.submission({ formId: form.signup, contactId: contact.ada, created_at: d(44) });
  await b.submission({ formId: form.signup, contactId: contact.katherine, created_at: d(15) });
  await b.submission({ formId: form.webinar, contactId: contact.edsger, created_at: d(12) });
  await b.submission({ formId: form.webinar, contactId: null, name: 'Anonymous', email: 'anon@example.com' });

  const event = { launch: await b.event({ title: 'Launch party' }), qna: await b.event({ title: 'Live Q&A' }) };
  await b.registration({ eventId: event.launch, contactId: contact.grace });
  await b.registration({ eventId: event.launch, contactId: contact.katherine });
  await b.registration({ eventId: event.qna, contactId: contact.alan });

  // quiz (pass 70): ada 90; grace 50 then 80; alan 40; katherine in progress; barbara 60 and an
  // unfinished 95. exam (pass 50): margaret 55; hal exactly 50.
  const assessment = { quiz: await b.assessment({ title: 'Quiz', passing_score: 70 }), exam: await b.assessment({ title: 'Exam', passing_score: 50 }) };
  await b.attempt({ assessmentId: assessment.quiz, contactId: contact.ada, score: 90, completed: d(9) });
  await b.attempt({ assessmentId: assessment.quiz, contactId: contact.grace, score: 50, completed: d(6) });
  await b.attempt({ assessmentId: assessment.quiz, contactId: contact.grace, score: 80, completed: d(5) });
  await b.attempt({ assessmentId: assessment.quiz, contactId: contact.alan, score: 40, completed: d(30) });
  await b.attempt({ assessmentId: assessment.quiz, contactId: contact.katherine });
  await b.attempt({ assessmentId: assessment.quiz, contactId: contact.barbara, score: 60, completed: d(1) });
  await b.attempt({ assessmentId: assessment.quiz, contactId: contact.barbara, score: 95 });
  await b.attempt({ assessmentId: assessment.exam, contactId: contact.margaret, score: 55, completed: d(1) });
  await b.attempt({ assessmentId: assessment.exam, contactId: contact.hal, score: 50, completed: d(80) });

  // --- Newsletters and sequences ---------------------------------------------------------------------
  const newsletter = { weekly: await b.newsletter({ title: 'Weekly' }) };
  await b.newsletterSubscription({ newsletterId: newsletter.weekly, contactId: contact.ada, subscribed_at: d(40) });
  await b.newsletterSubscription({ newsletterId: newsletter.weekly, contactId: contact.grace, subscribed_at: d(19), unsubscribed_at: d(4) });
  await b.newsletterSubscription({ newsletterId: newsletter.weekly, contactId: contact.alan, subscribed_at: d(50), unsubscribed_at: d(30) });
  await b.newsletterSubscription({ newsletterId: newsletter.weekly, contactId: contact.alan, subscribed_at: d(10) });
  const sequence = { onboard: await b.sequence({ title: 'Onboarding' }) };
  await b.sequenceSubscription({ sequenceId: sequence.onboard, contactId: contact.katherine, subscribed_at: d(14) });
  await b.sequenceSubscription({ sequenceId: sequence.onboard, contactId: contact.edsger, subscribed_at: d(12), unsubscribed_at: d(11) });
  await b.sequenceSubscription({ sequenceId: sequence.onboard, contactId: contact.margaret, subscribed_at: d(49) });

  // --- Email ----------------------------------------------------------------------------------------
  // June broadcast (10d) and May broadcast (40d); onboarding emails to katherine (2d) and hal (95d).
  // Engagement: healthy ada, grace, katherine; passive margaret; unengaged alan; inactive hal;
  // no open data (never delivered) edsger, barbara, fran.
  const broadcast = { june: await b.broadcast({ subject: 'June news', sent_at: d(10) }), may: await b.broadcast({ subject: 'May news', sent_at: d(40) }) };
  const june = { broadcastId: broadcast.june, occurred_at: d(10) };
  const may = { broadcastId: broadcast.may, occurred_at: d(40) };
  await b.emailEvents({ ...june, contactId: contact.ada, kinds: ['sent', 'delivered', 'opened', 'clicked'] });
  await b.emailEvents({ ...june, contactId: contact.grace, kinds: ['sent', 'delivered', 'opened'] });
  await b.emailEvents({ ...june, contactId: contact.alan, kinds: ['sent', 'delivered'] });
  await b.emailEvent({ ...june, contactId: contact.katherine, kind: 'sent' });
  await b.emailEvent({ ...june, contactId: contact.katherine, kind: 'bounced', bounce_type: 'soft' });
  await b.emailEvent({ ...june, contactId: contact.edsger, kind: 'sent' });
  await b.emailEvent({ ...june, contactId: contact.edsger, kind: 'bounced', bounce_type: 'hard' });
  await b.emailEvent({ ...june, contactId: contact.hal, kind: 'sent' });
  await b.emailEvent({ ...june, contactId: contact.hal, kind: 'bounced', bounce_type: 'hard' });
  await b.emailEvents({ ...may, contactId: contact.ada, kinds: ['sent', 'delivered', 'opened'] });
  await b.emailEvents({ ...may, contactId: contact.margaret, kinds: ['sent', 'delivered', 'opened'] });
  await b.emailEvents({ ...may, contactId: contact.alan, kinds: ['sent', 'dropped'] });
  await b.emailEvents({ sequenceId: sequence.onboard, occurred_at: d(2), contactId: contact.katherine, kinds: ['sent', 'delivered', 'opened'] });
  await b.emailEvents({ sequenceId: sequence.onboard, occurred_at: d(95), contactId: contact.hal, kinds: ['sent', 'delivered'] });

  // --- A second site of the same account: an "Ada" newer than everyone, matching most filters ------
  const secondSiteId = await createSite(t.handle, { accountId: t.tenant.accountId, title: 'Second Site', subdomain: 'second-site' }, t.clock);
  const s2 = b.forSite(secondSiteId);
  const s2Ada = await s2.customer({
    created_at: d(0),
    name: 'Ada Lovelace',
    email: 'countess@analytical.example',
    contact: { subscribed: true, subscribed_at: d(0), last_activity_at: d(0), address_city: 'London', hidden: false },
    external_user_id: 'ext-ada',
  });
  const s2Tag = await s2.tag('VIP');
  await s2.tagging(s2Ada.contactId, s2Tag);
  const s2Product = await s2.product({ title: 'Second Site Course' });
  const s2Offer = await s2.offer({ title: 'Second Site Offer', productIds: [s2Product] });
  await s2.grant({ contactId: s2Ada.contactId, offerId: s2Offer });
  await s2.membership({ contactId: s2Ada.contactId, productId: s2Product });

  // --- Another account with its own "Ada" ---------------------------------------------------------------
  const otherAccountId = await createAccount(t.handle, { name: 'Other Account' }, t.clock);
  const otherOwnerId = await createUser(t.handle, { accountId: otherAccountId, name: 'Oscar Other', email: 'oscar@other.example', role: 'owner' }, t.clock);
  const otherSiteId = await createSite(t.handle, { accountId: otherAccountId, title: 'Other Site', subdomain: 'other-site' }, t.clock);
  const other = b.forSite(otherSiteId);
  const otherAda = await other.customer({ created_at: d(0), name: 'Ada Elsewhere', email: 'countess@analytical.example', contact: { subscribed: true } });
  const otherTag = await other.tag('VIP');
  await other.tagging(otherAda.contactId, otherTag);
  const otherOffer = await other.offer({ title: 'Other Offer' });
  await other.grant({ contactId: otherAda.contactId, offerId: otherOffer });

  return {
    siteId: t.tenant.siteId,
    token: await t.token(),
    contact,
    customer,
    tag,
    offer,
    product,
    form,
    event,
    assessment,
    newsletter,
    sequence,
    broadcast,
    secondSite: { siteId: secondSiteId, contactId: s2Ada.contactId, customerId: s2Ada.id, tagId: s2Tag, offerId: s2Offer },
    otherAccount: {
      siteId: otherSiteId,
      ownerToken: (await t.keyWith(otherOwnerId, PERMISSION_NAMES)).token,
      contactId: otherAda.contactId,
      customerId: otherAda.id,
      tagId: otherTag,
      offerId: otherOffer,
    },
  };
}

/**
 * One value of a filter and the people it returns. On the customers list the answer is the same
 * question asked of each customer's contact, so it is `people` restricted to customers, unless
 * `customers` says otherwise (filters on the record's own created_at).
 */
export interface FilterCase {
  value: string;
  people: readonly Person[];
  customers?: readonly CustomerPerson[];
}

const ALL: readonly Person[] = PEOPLE;
const except = (...left: Person[]): Person[] => ALL.filter((p) => !left.includes(p));

/** Every filter of the family, with values that split the people. */
export function filterCases(f: ContactFixture): Record<string, FilterCase[]> {
  const { tag, offer, product, form, event, assessment, newsletter, sequence, broadcast } = f;
  const list = (...ids: number[]) => ids.join(',');
  return {
    search: [
      { value: 'lovelace', people: ['ada'] },
      // Every word must match the name or the email: "hopper" the name, "NAVY" the email.
      { value: ' hopper  NAVY ', people: ['grace'] },
      { value: 'hopper bletchley', people: [] },
      { value: '.example', people: ALL },
    ],

    // Time windows. Barbara was created exactly 7 days ago (inside), Fran 1 ms earlier (outside).
    created_in_last: [
      { value: '7', people: ['barbara'], customers: ['grace', 'barbara', 'margaret'] },
      { value: '12', people: ['edsger', 'barbara', 'fran'], customers: ['ada', 'grace', 'barbara', 'margaret'] },
    ],
    not_created_in_last: [
      { value: '7', people: except('barbara'), customers: ['ada', 'alan', 'hal'] },
      { value: '50', people: ['alan', 'hal'], customers: ['hal'] },
    ],
    // The customer record's created_at, on both lists (grace joined exactly 7 days ago).
    joined_in_last: [
      { value: '7', people: ['grace', 'barbara', 'margaret'] },
      { value: '1', people: ['margaret'] },
    ],
    active_in_last: [
      { value: '7', people: ['ada', 'katherine'] },
      { value: '15', people: ['ada', 'grace', 'katherine'] },
    ],
    // No recorded activity counts as inactive.
    inactive_in_last: [{ value: '7', people: except('ada', 'katherine') }],
    subscribed_in_last: [{ value: '7', people: ['ada', 'katherine', 'margaret'] }],
    unsubscribed_in_last: [
      { value: '7', people: ['alan'] },
      { value: '10', people: ['alan', 'hal'] },
    ],

    // Flags.
    is_hidden: [
      { value: 'true', people: ['hal'] },
      { value: 'false', people: except('hal') },
    ],
    subscribed: [
      { value: 'true', people: ['ada', 'grace', 'katherine', 'margaret'] },
      { value: 'false', people: ['alan', 'edsger', 'barbara', 'fran', 'hal'] },
    ],
    never_subscribed: [
      { value: 'true', people: ['edsger', 'barbara', 'fran'] },
      { value: 'false', people: except('edsger', 'barbara', 'fran') },
    ],
    // Katherine's bounce was soft.
    is_hard_bouncing: [
      { value: 'true', people: ['edsger', 'hal'] },
      { value: 'false', people: except('edsger', 'hal') },
    ],
    // Hard bounce (edsger, hal), complaint (grace) or opt-out (alan).
    suppressed: [
      { value: 'true', people: ['grace', 'alan', 'edsger', 'hal'] },
      { value: 'false', people: ['ada', 'katherine', 'barbara', 'fran', 'margaret'] },
    ],

    // Tags: a comma list means any of them, except for has_all_tag_id.
    has_tag_id: [
      { value: `${tag.vip}`, people: ['ada', 'grace'] },
      { value: list(tag.vip, tag.news), people: ['ada', 'grace', 'katherine'] },
    ],
    has_all_tag_id: [
      { value: list(tag.vip, tag.beta), people: ['ada'] },
      { value: `${tag.beta}`, people: ['ada', 'alan'] },
      { value: list(tag.vip, tag.news), people: [] },
    ],
    has_no_tag_id: [
      { value: `${tag.vip}`, people: except('ada', 'grace') },
      { value: list(tag.vip, tag.beta), people: except('ada', 'grace', 'alan') },
    ],

    // Offers: only grants that were not revoked (ada's bundle and alan's course were revoked).
    has_offer_id: [
      { value: `${offer.course}`, people: ['ada', 'margaret'] },
      { value: list(offer.bundle, offer.free), people: ['grace', 'barbara', 'hal', 'margaret'] },
    ],
    has_no_offer_id: [
      { value: `${offer.course}`, people: except('ada', 'margaret') },
      { value: list(offer.course, offer.bundle), people: ['alan', 'katherine', 'edsger', 'barbara', 'fran', 'hal'] },
    ],

    // Products: owned = a membership that has not ended (suspended still owns); active = owned
    // and not suspended; previously owned = an ended membership and none current (margaret's
    // course ended once but she owns it again).
    has_product_id: [
      { value: `${product.course}`, people: ['ada', 'grace', 'margaret'] },
      { value: list(product.community, product.podcast), people: ['grace', 'barbara', 'margaret'] },
    ],
    has_active_product_id: [
      { value: `${product.course}`, people: ['ada', 'margaret'] },
      { value: `${product.community}`, people: ['grace', 'margaret'] },
    ],
    has_no_product_id: [{ value: `${product.course}`, people: except('ada', 'grace', 'margaret') }],
    previously_owned_product_id: [
      { value: `${product.course}`, people: ['alan'] },
      { value: list(product.course, product.podcast), people: ['alan', 'hal'] },
      { value: `${product.community}`, people: [] },
    ],

    // Coupons ignore case and surrounding blanks; a deactivated purchase still used its coupon.
    used_coupon_code: [
      { value: 'spring10', people: ['ada', 'grace'] },
      { value: ' SPRING10 ', people: ['ada', 'grace'] },
      { value: 'winter', people: ['alan'] },
      { value: 'SPRING', people: [] },
    ],
    submitted_form_id: [
      { value: `${form.signup}`, people: ['ada', 'katherine'] },
      { value: list(form.signup, form.webinar), people: ['ada', 'katherine', 'edsger'] },
    ],
    no_submitted_form_id: [{ value: `${form.signup}`, people: except('ada', 'katherine') }],
    registered_event_id: [
      { value: `${event.launch}`, people: ['grace', 'katherine'] },
      { value: list(event.launch, event.qna), people: ['grace', 'alan', 'katherine'] },
    ],
    not_registered_event_id: [{ value: `${event.launch}`, people: except('grace', 'katherine') }],
    // Attempts in progress do not count, even with a high score.
    completed_assessment_id: [{ value: `${assessment.quiz}`, people: ['ada', 'grace', 'alan', 'barbara'] }],
    passed_assessment_id: [
      { value: `${assessment.quiz}`, people: ['ada', 'grace'] },
      { value: list(assessment.quiz, assessment.exam), people: ['ada', 'grace', 'hal', 'margaret'] },
    ],
    failed_assessment_id: [
      { value: `${assessment.quiz}`, people: ['alan', 'barbara'] },
      { value: `${assessment.exam}`, people: [] },
    ],

    // Net revenue: ada 99.00, grace 29.00, alan 10.50, margaret 123.45, barbara and hal 0;
    // contacts without a customer record count as 0.
    net_revenue_equal_to: [
      { value: '0', people: ['katherine', 'edsger', 'barbara', 'fran', 'hal'] },
      { value: '10.5', people: ['alan'] },
      { value: '10.50', people: ['alan'] },
      { value: '123.45', people: ['margaret'] },
    ],
    net_revenue_greater_than: [
      { value: '29', people: ['ada', 'margaret'] },
      { value: '123.44', people: ['margaret'] },
      { value: '0', people: ['ada', 'grace', 'alan', 'margaret'] },
    ],
    net_revenue_less_than: [
      { value: '29', people: ['alan', 'katherine', 'edsger', 'barbara', 'fran', 'hal'] },
      { value: '0.01', people: ['katherine', 'edsger', 'barbara', 'fran', 'hal'] },
    ],

    // Newsletters: alan unsubscribed once and subscribed again, so he is subscribed.
    subscribed_newsletter_id: [{ value: `${newsletter.weekly}`, people: ['ada', 'alan'] }],
    unsubscribed_newsletter_id: [{ value: `${newsletter.weekly}`, people: ['grace'] }],
    subscribed_email_sequence_id: [{ value: `${sequence.onboard}`, people: ['katherine', 'margaret'] }],
    not_subscribed_email_sequence_id: [{ value: `${sequence.onboard}`, people: except('katherine', 'margaret') }],

    // Broadcasts.
    sent_email_broadcast_id: [
      { value: `${broadcast.june}`, people: ['ada', 'grace', 'alan', 'katherine', 'edsger', 'hal'] },
      { value: list(broadcast.june, broadcast.may), people: except('barbara', 'fran') },
    ],
    no_sent_email_broadcast_id: [{ value: `${broadcast.june}`, people: ['barbara', 'fran', 'margaret'] }],
    no_sent_email_broadcast_ids: [
      { value: list(broadcast.june, broadcast.may), people: ['barbara', 'fran'] },
      { value: `${broadcast.may}`, people: ['grace', 'katherine', 'edsger', 'barbara', 'fran', 'hal'] },
    ],
    delivered_email_broadcast_id: [{ value: `${broadcast.june}`, people: ['ada', 'grace', 'alan'] }],
    no_delivered_email_broadcast_id: [{ value: `${broadcast.june}`, people: except('ada', 'grace', 'alan') }],
    opened_email_broadcast_id: [
      { value: `${broadcast.june}`, people: ['ada', 'grace'] },
      { value: `${broadcast.may}`, people: ['ada', 'margaret'] },
    ],
    no_opened_email_broadcast_id: [{ value: `${broadcast.june}`, people: except('ada', 'grace') }],
    clicked_email_broadcast_id: [{ value: `${broadcast.june}`, people: ['ada'] }],
    no_clicked_email_broadcast_id: [{ value: `${broadcast.june}`, people: except('ada') }],
    bounced_email_broadcast_id: [{ value: `${broadcast.june}`, people: ['katherine', 'edsger', 'hal'] }],
    no_bounced_email_broadcast_id: [{ value: `${broadcast.june}`, people: except('katherine', 'edsger', 'hal') }],
    dropped_email_broadcast_id: [
      { value: `${broadcast.may}`, people: ['alan'] },
      { value: `${broadcast.june}`, people: [] },
    ],
    no_dropped_email_broadcast_id: [{ value: `${broadcast.may}`, people: except('alan') }],

    // Email activity, broadcasts and sequences alike (June events are exactly 10 days old).
    opened_email_in_last: [
      { value: '7', people: ['katherine'] },
      { value: '10', people: ['ada', 'grace', 'katherine'] },
      { value: '60', people: ['ada', 'grace', 'katherine', 'margaret'] },
    ],
    not_opened_email_in_last: [{ value: '10', people: ['alan', 'edsger', 'barbara', 'fran', 'hal', 'margaret'] }],
    delivered_email_in_last: [
      { value: '30', people: ['ada', 'grace', 'alan', 'katherine'] },
      { value: '100', people: ['ada', 'grace', 'alan', 'katherine', 'hal', 'margaret'] },
    ],
    not_delivered_email_in_last: [{ value: '30', people: ['edsger', 'barbara', 'fran', 'hal', 'margaret'] }],
    clicked_email_in_last: [
      { value: '30', people: ['ada'] },
      { value: '9', people: [] },
    ],
    not_clicked_email_in_last: [{ value: '30', people: except('ada') }],

    // Email health.
    bounced_in_last: [
      { value: '7', people: ['edsger'] },
      { value: '10', people: ['katherine', 'edsger', 'hal'] },
    ],
    complained_in_last: [
      { value: '7', people: ['grace'] },
      { value: '2', people: [] },
    ],
    manually_unsubscribed_in_last: [
      { value: '3', people: ['alan'] },
      { value: '2', people: [] },
    ],
    opted_out_in_last: [
      { value: '7', people: ['alan'] },
      { value: '2', people: [] },
    ],

    // Engagement segments, a partition of the people with open data (a delivered email).
    healthy_contacts_with_open_data: [
      { value: 'true', people: ['ada', 'grace', 'katherine'] },
      { value: 'false', people: except('ada', 'grace', 'katherine') },
    ],
    passive_contacts_with_open_data: [
      { value: 'true', people: ['margaret'] },
      { value: 'false', people: except('margaret') },
    ],
    unengaged_contacts_with_open_data: [
      { value: 'true', people: ['alan'] },
      { value: 'false', people: except('alan') },
    ],
    inactive_contacts_with_open_data: [
      { value: 'true', people: ['hal'] },
      { value: 'false', people: except('hal') },
    ],

    // Text, ignoring case.
    name_contains: [
      { value: 'LOVE', people: ['ada'] },
      { value: 'an', people: ['alan', 'fran'] },
    ],
    email_contains: [
      { value: 'navy', people: ['grace'] },
      { value: '@m', people: ['barbara'] },
    ],
    phone_number_contains: [
      { value: '555', people: ['grace'] },
      // Only ada's mobile number holds 7700.
      { value: '7700', people: [] },
    ],
    mobile_phone_number_contains: [{ value: '7700', people: ['ada'] }],
    address_line_1_contains: [{ value: 'SQUARE', people: ['ada'] }],
    address_line_2_contains: [
      { value: 'flat', people: ['ada'] },
      { value: 'suite', people: ['katherine'] },
    ],
    address_city_contains: [{ value: 'lon', people: ['ada'] }],
    address_state_contains: [{ value: 'virginia', people: ['grace', 'katherine'] }],
    address_country_contains: [{ value: 'united', people: ['ada', 'grace', 'katherine'] }],
    address_zip_contains: [{ value: '222', people: ['grace'] }],
  };
}

/** A value that the filter's kind refuses, for the 400 tests. */
export function badFilterValue(kind: string): string {
  switch (kind) {
    case 'days':
      return 'soon';
    case 'ids':
      return '1,two';
    case 'boolean':
      return 'maybe';
    case 'decimal':
      return '12.345';
    case 'string':
      return '   ';
    default:
      throw new Error(`no bad value for filter kind ${kind}`);
  }
}
