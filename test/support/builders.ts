// Fixture builders: typed helpers that insert platform rows straight into the test database
// (no HTTP), so a suite can set up exactly the data a behaviour needs and assert exact ids.
//
//   const b = builders(t);                       // writes into the tenant's site
//   const ada = await b.customer({ name: 'Ada Lovelace', email: 'ada@example.com' });
//   const course = await b.product({ title: 'Course' });
//   const offer = await b.offer({ title: 'Course offer', productIds: [course] });
//   await b.grant({ contactId: ada.contactId, offerId: offer });
//   await b.membership({ contactId: ada.contactId, productId: course, state: 'suspended' });
//   const other = b.forSite(secondSiteId);        // the same builders, another site
//
// Every builder returns the new row's id as a number. Values go through the dialect's codecs
// (t.handle.traits): pass Dates for timestamps, booleans for flags and plain objects for JSON,
// and the builder encodes them for SQLite or PostgreSQL. Timestamps default to the test clock's
// now (t.clock.now()); `b.daysAgo(n)` gives moments relative to it. Builders keep derived data
// consistent where the platform would (a customer's name and email follow its contact, a
// succeeded transaction moves customers.net_revenue_cents) and check nothing else: they are for
// building fixtures, not for testing the platform's rules.
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DatabaseHandle } from '../../src/db/connect.js';

/** What the builders need from a test app; a TestApp fits. */
export interface BuilderTarget {
  handle: DatabaseHandle;
  clock: { now(): Date };
  tenant: { siteId: number };
}

/** A column value before encoding: Dates, booleans and JSON objects are encoded per dialect. */
type ColumnValue = string | number | boolean | Date | null | Record<string, unknown> | unknown[];
type Row = Record<string, ColumnValue | undefined>;

// The platform tables are not in the typed schema (src/db/schema.ts covers the foundation only).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

const DAY_MS = 86_400_000;

// ---------------------------------------------------------------------------------------------
// Inputs, named after the columns they fill (see src/db/migrations/0002_platform.ts).

/** Timestamps every site table has; both default to now (updated_at to created_at). */
interface Stamped {
  created_at?: Date;
  updated_at?: Date;
}

export interface ContactInput extends Stamped {
  /** Defaults to "Contact <n>". */
  name?: string;
  /** Defaults to contact-<n>@example.com; lower-cased and trimmed as the platform stores it. */
  email?: string;
  phone_number?: string | null;
  business_number?: string | null;
  mobile_phone_number?: string | null;
  address_line_1?: string | null;
  address_line_2?: string | null;
  address_city?: string | null;
  address_state?: string | null;
  address_country?: string | null;
  address_zip?: string | null;
  custom_1?: string | null;
  custom_2?: string | null;
  custom_3?: string | null;
  /** Defaults to false. */
  hidden?: boolean;
  /** Marketing email consent now; defaults to false. */
  subscribed?: boolean;
  subscribed_at?: Date | null;
  unsubscribed_at?: Date | null;
  manually_unsubscribed_at?: Date | null;
  opted_out_at?: Date | null;
  /** The latest bounce, with its type. */
  bounced_at?: Date | null;
  bounce_type?: 'hard' | 'soft' | null;
  complained_at?: Date | null;
  /** Last time the contact did anything on the site. */
  last_activity_at?: Date | null;
}

/** The email-health and consent columns of a contact, for `contactFlags`. */
export type ContactFlags = Pick<
  ContactInput,
  | 'hidden'
  | 'subscribed'
  | 'subscribed_at'
  | 'unsubscribed_at'
  | 'manually_unsubscribed_at'
  | 'opted_out_at'
  | 'bounced_at'
  | 'bounce_type'
  | 'complained_at'
  | 'last_activity_at'
>;

export interface CustomerInput extends Stamped {
  /** Make the customer of this contact (name and email are copied from it). */
  contactId?: number;
  /** Without contactId: the contact to create (name and email from here or from the customer's). */
  contact?: ContactInput;
  name?: string;
  email?: string;
  avatar_url?: string | null;
  external_user_id?: string | null;
  public_bio?: string | null;
  public_location?: string | null;
  public_website?: string | null;
  socials?: Record<string, unknown> | null;
  /** Defaults to 0; `transaction` keeps it in step with succeeded transactions. */
  net_revenue_cents?: number;
  sign_in_count?: number;
  last_request_at?: Date | null;
  bounced_at?: Date | null;
}

export interface ProductInput extends Stamped {
  title?: string;
  description?: string | null;
  /** ready, processing or draft; defaults to ready. */
  status?: string;
  product_type_id?: number;
  product_type_name?: string;
  /** Fully qualified kind, e.g. Courses::Course (the default). */
  productizable_type?: string;
  /** published or draft; defaults to published. */
  publish_status?: string;
  thumbnail_url?: string | null;
  url?: string | null;
}

export interface OfferInput extends Stamped {
  title?: string;
  description?: string | null;
  internal_title?: string | null;
  currency?: string;
  price_in_cents?: number;
  /** one_time (default), subscription, multipay or free. */
  payment_type?: 'one_time' | 'subscription' | 'multipay' | 'free';
  /** Unique across the database; random by default. */
  token?: string;
  payment_method?: string;
  price_description?: string;
  single?: boolean;
  image_url?: string | null;
  /** Subscriptions: months between charges (null: 1). */
  billing_period_months?: number | null;
  /** Payment plans: payments in all (null: 3). */
  installment_count?: number | null;
  /** Products the offer gives access to (rows of offer_products). */
  productIds?: readonly number[];
}

export interface GrantInput extends Stamped {
  contactId: number;
  offerId: number;
  purchaseId?: number | null;
  /** Defaults to now. */
  granted_at?: Date;
  /** Set for a revoked grant (no longer counts as access). */
  revoked_at?: Date | null;
}

export interface MembershipInput extends Stamped {
  contactId: number;
  productId: number;
  offerGrantId?: number | null;
  /**
   * current (default): owned and active; suspended: owned but not active; ended: owned before,
   * not now. Sets suspended_at / ended_at to now unless they are given.
   */
  state?: 'current' | 'suspended' | 'ended';
  started_at?: Date;
  suspended_at?: Date | null;
  ended_at?: Date | null;
}

export interface PurchaseInput extends Stamped {
  customerId: number;
  offerId: number;
  amount_in_cents?: number;
  payment_type?: 'one_time' | 'subscription' | 'multipay' | 'free';
  multipay_payments_made?: number | null;
  opt_in?: boolean;
  raw_extra_contact_information?: Record<string, unknown>;
  currency?: string;
  effective_start_at?: Date | null;
  cardholder_name?: string | null;
  billing_address_zip?: string | null;
  coupon_code?: string | null;
  source?: string | null;
  referrer?: string | null;
  quantity?: number;
  /** active, canceled, or null (the default) for purchases without recurring billing. */
  subscription_status?: string | null;
  subscription_canceled_at?: Date | null;
  /** A deactivated purchase: true (at now) or the moment; deactivation_reason defaults accordingly. */
  deactivated?: boolean | Date;
  deactivation_reason?: string | null;
}

export interface TransactionInput {
  customerId: number;
  offerId?: number | null;
  /** charge (default), subscription_charge, refund or dispute. */
  action?: 'charge' | 'subscription_charge' | 'refund' | 'dispute';
  /** succeeded (default), failed or pending. Only succeeded transactions move net revenue. */
  state?: 'succeeded' | 'failed' | 'pending';
  /** The amount's size; refunds and disputes are stored negative, as upstream renders them. */
  amount_in_cents: number;
  sales_tax_in_cents?: number;
  payment_type?: string | null;
  currency?: string;
  /** Purchases the transaction pays for (rows of purchase_transactions). */
  purchaseIds?: readonly number[];
  created_at?: Date;
}

export interface FormInput extends Stamped {
  title?: string | null;
  description?: string | null;
  is_default?: boolean;
  webhook_url?: string | null;
  url?: string;
  /** Offer a submission grants. */
  offer_id?: number | null;
  double_opt_in?: boolean;
}

export interface SubmissionInput {
  formId: number;
  /** The submitting contact; name and email are copied from it unless given. Null: anonymous. */
  contactId: number | null;
  name?: string;
  email?: string;
  created_at?: Date;
  /** Any other submitted value (phone_number, address_city, custom_1 ...). */
  values?: Partial<Record<'phone_number' | 'business_number' | 'address_line_1' | 'address_line_2' | 'address_city' | 'address_state' | 'address_country' | 'address_zip' | 'custom_1' | 'custom_2' | 'custom_3', string | null>>;
}

export interface AttemptInput {
  assessmentId: number;
  contactId: number;
  score?: number | null;
  /** true: completed now; a Date: completed then; false or absent: still in progress. */
  completed?: boolean | Date;
  created_at?: Date;
}

export interface SubscriptionInput extends Stamped {
  contactId: number;
  /** Defaults to now. */
  subscribed_at?: Date;
  /** Set for a subscription that has ended. */
  unsubscribed_at?: Date | null;
}

export type EmailEventKind = 'sent' | 'delivered' | 'opened' | 'clicked' | 'bounced' | 'dropped' | 'complained';

export interface EmailEventInput {
  contactId: number;
  /** The broadcast the email belongs to (or give sequenceId for a sequence email). */
  broadcastId?: number | null;
  sequenceId?: number | null;
  kind: EmailEventKind;
  /** hard or soft, for bounced events. */
  bounce_type?: 'hard' | 'soft' | null;
  /** Defaults to now. */
  occurred_at?: Date;
}

// ---------------------------------------------------------------------------------------------

/** Numbers generated names, emails and URLs; process-wide, so they never collide. */
let generated = 0;

/** Builders writing into the target's tenant site (or `siteId`). */
export function builders(t: BuilderTarget, siteId?: number): Builders {
  return new Builders(t, siteId ?? t.tenant.siteId);
}

export class Builders {
  constructor(
    private readonly t: BuilderTarget,
    /** The site every row is written into. */
    readonly siteId: number,
  ) {}

  /** The same builders writing into another site (of any account). */
  forSite(siteId: number): Builders {
    return new Builders(this.t, siteId);
  }

  /** The test clock's now. */
  now(): Date {
    return this.t.clock.now();
  }

  /** `days` days (plus `extraMs` milliseconds) before the test clock's now. */
  daysAgo(days: number, extraMs = 0): Date {
    return new Date(this.t.clock.now().getTime() - days * DAY_MS - extraMs);
  }

  // --- Contacts and customers ---------------------------------------------------------------

  /** A contact; see ContactInput for the defaults. */
  async contact(input: ContactInput = {}): Promise<number> {
    const n = this.next();
    const { created_at, updated_at, ...rest } = input;
    const at = created_at ?? this.now();
    return this.insert('contacts', {
      hidden: false,
      subscribed: false,
      ...rest,
      name: input.name ?? `Contact ${n}`,
      email: normalizeEmail(input.email ?? `contact-${n}@example.com`),
      created_at: at,
      updated_at: updated_at ?? at,
    });
  }

  /** Sets consent, email-health and activity columns of a contact. */
  async contactFlags(contactId: number, flags: ContactFlags): Promise<void> {
    await this.db.updateTable('contacts').set(this.encode(flags)).where('id', '=', contactId).execute();
  }

  /**
   * A customer and its contact: of `contactId` (name and email copied from the contact), or of a
   * new contact made from `contact` (name and email shared with the customer). The new contact is
   * created at the customer's created_at unless `contact.created_at` says otherwise.
   */
  async customer(input: CustomerInput = {}): Promise<{ id: number; contactId: number }> {
    const { contactId: givenContactId, contact, created_at, updated_at, ...columns } = input;
    const at = created_at ?? this.now();
    let contactId = givenContactId;
    if (contactId === undefined) {
      contactId = await this.contact({
        created_at: at,
        ...contact,
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.email !== undefined ? { email: input.email } : {}),
      });
    }
    const row = await this.db.selectFrom('contacts').select(['name', 'email']).where('id', '=', contactId).executeTakeFirstOrThrow();
    const id = await this.insert('customers', {
      net_revenue_cents: 0,
      sign_in_count: 0,
      ...columns,
      contact_id: contactId,
      name: String(row.name),
      email: String(row.email),
      created_at: at,
      updated_at: updated_at ?? at,
    });
    return { id, contactId };
  }

  // --- Tags -----------------------------------------------------------------------------------

  /** A contact tag (names are unique within a site). */
  async tag(name?: string, created_at?: Date): Promise<number> {
    const at = created_at ?? this.now();
    return this.insert('contact_tags', { name: name ?? `Tag ${this.next()}`, created_at: at, updated_at: at });
  }

  /** Tags a contact (once per tag). */
  async tagging(contactId: number, tagId: number, created_at?: Date): Promise<void> {
    await this.insertRow('contact_taggings', { contact_id: contactId, contact_tag_id: tagId, created_at: created_at ?? this.now() });
  }

  // --- Catalogue --------------------------------------------------------------------------------

  /** A product; see ProductInput for the defaults. */
  async product(input: ProductInput = {}): Promise<number> {
    const n = this.next();
    const { created_at, updated_at, ...rest } = input;
    const at = created_at ?? this.now();
    return this.insert('products', {
      status: 'ready',
      product_type_id: 1,
      product_type_name: 'Course',
      productizable_type: 'Courses::Course',
      publish_status: 'published',
      ...rest,
      title: input.title ?? `Product ${n}`,
      created_at: at,
      updated_at: updated_at ?? at,
    });
  }

  /** An offer, and its offer_products rows for `productIds`. */
  async offer(input: OfferInput = {}): Promise<number> {
    const n = this.next();
    const { productIds = [], created_at, updated_at, ...rest } = input;
    const at = created_at ?? this.now();
    const paymentType = input.payment_type ?? 'one_time';
    const price = input.price_in_cents ?? (paymentType === 'free' ? 0 : 4900);
    const id = await this.insert('offers', {
      currency: 'USD',
      payment_method: paymentType === 'free' ? 'free' : 'kajabi_payments',
      price_description: paymentType === 'free' ? 'Free' : `$${(price / 100).toFixed(2)}${paymentType === 'subscription' ? '/month' : ''}`,
      single: false,
      ...rest,
      title: input.title ?? `Offer ${n}`,
      payment_type: paymentType,
      price_in_cents: price,
      token: input.token ?? `offer_${randomBytes(6).toString('hex')}`,
      created_at: at,
      updated_at: updated_at ?? at,
    });
    for (const productId of productIds) await this.insertRow('offer_products', { offer_id: id, product_id: productId });
    return id;
  }

  // --- Access -------------------------------------------------------------------------------------

  /** Access to an offer (an offer_grants row); revoked when revoked_at is set. */
  async grant(input: GrantInput): Promise<number> {
    const at = input.created_at ?? this.now();
    return this.insert('offer_grants', {
      contact_id: input.contactId,
      offer_id: input.offerId,
      purchase_id: input.purchaseId ?? null,
      granted_at: input.granted_at ?? at,
      revoked_at: input.revoked_at ?? null,
      created_at: at,
      updated_at: input.updated_at ?? at,
    });
  }

  /** A product membership: current, suspended or ended (see MembershipInput.state). */
  async membership(input: MembershipInput): Promise<number> {
    const at = input.created_at ?? this.now();
    const state = input.state ?? 'current';
    return this.insert('memberships', {
      contact_id: input.contactId,
      product_id: input.productId,
      offer_grant_id: input.offerGrantId ?? null,
      started_at: input.started_at ?? at,
      suspended_at: input.suspended_at !== undefined ? input.suspended_at : state === 'suspended' ? this.now() : null,
      ended_at: input.ended_at !== undefined ? input.ended_at : state === 'ended' ? this.now() : null,
      created_at: at,
      updated_at: input.updated_at ?? at,
    });
  }

  // --- Commerce -------------------------------------------------------------------------------------

  /** A purchase of an offer by a customer; `deactivated` makes it a deactivated one. */
  async purchase(input: PurchaseInput): Promise<number> {
    const { customerId, offerId, deactivated, deactivation_reason, created_at, updated_at, ...rest } = input;
    const at = created_at ?? this.now();
    const deactivatedAt = deactivated === true ? this.now() : deactivated instanceof Date ? deactivated : null;
    return this.insert('purchases', {
      amount_in_cents: 0,
      payment_type: 'one_time',
      opt_in: false,
      raw_extra_contact_information: {},
      currency: 'USD',
      quantity: 1,
      ...rest,
      customer_id: customerId,
      offer_id: offerId,
      deactivated_at: deactivatedAt,
      deactivation_reason: deactivation_reason !== undefined ? deactivation_reason : deactivatedAt ? 'Deactivated by the site owner' : null,
      created_at: at,
      updated_at: updated_at ?? at,
    });
  }

  /**
   * A payment transaction (and its purchase_transactions rows). A succeeded one adds its signed
   * amount to the customer's net_revenue_cents, as the platform does: charges add, refunds and
   * disputes subtract.
   */
  async transaction(input: TransactionInput): Promise<number> {
    const action = input.action ?? 'charge';
    const state = input.state ?? 'succeeded';
    const size = Math.abs(input.amount_in_cents);
    const amount = action === 'refund' || action === 'dispute' ? -size : size;
    const id = await this.insert('transactions', {
      customer_id: input.customerId,
      offer_id: input.offerId ?? null,
      action,
      state,
      payment_type: input.payment_type ?? null,
      amount_in_cents: amount,
      sales_tax_in_cents: input.sales_tax_in_cents ?? 0,
      currency: input.currency ?? 'USD',
      created_at: input.created_at ?? this.now(),
    });
    for (const purchaseId of input.purchaseIds ?? []) {
      await this.insertRow('purchase_transactions', { purchase_id: purchaseId, transaction_id: id });
    }
    if (state === 'succeeded') {
      await this.db
        .updateTable('customers')
        .set({ net_revenue_cents: sql`net_revenue_cents + ${amount}` })
        .where('id', '=', input.customerId)
        .execute();
    }
    return id;
  }

  // --- Forms, events, assessments ----------------------------------------------------------------

  /** A form; see FormInput. */
  async form(input: FormInput = {}): Promise<number> {
    const n = this.next();
    const { created_at, updated_at, ...rest } = input;
    const at = created_at ?? this.now();
    return this.insert('forms', {
      title: `Form ${n}`,
      is_default: false,
      double_opt_in: false,
      url: `https://forms.example/${n}`,
      ...rest,
      created_at: at,
      updated_at: updated_at ?? at,
    });
  }

  /** A form submission, by a contact (its name and email copied) or anonymous. */
  async submission(input: SubmissionInput): Promise<number> {
    let name = input.name;
    let email = input.email;
    if (input.contactId !== null && (name === undefined || email === undefined)) {
      const c = await this.db.selectFrom('contacts').select(['name', 'email']).where('id', '=', input.contactId).executeTakeFirstOrThrow();
      name ??= String(c.name);
      email ??= String(c.email);
    }
    const n = this.next();
    return this.insert('form_submissions', {
      ...input.values,
      form_id: input.formId,
      contact_id: input.contactId,
      name: name ?? `Visitor ${n}`,
      email: normalizeEmail(email ?? `visitor-${n}@example.com`),
      created_at: input.created_at ?? this.now(),
    });
  }

  /** An event (a webinar, a live session), starting in a week unless starts_at is given. */
  async event(input: Stamped & { title?: string; starts_at?: Date } = {}): Promise<number> {
    const at = input.created_at ?? this.now();
    return this.insert('events', {
      title: input.title ?? `Event ${this.next()}`,
      starts_at: input.starts_at ?? new Date(this.now().getTime() + 7 * DAY_MS),
      created_at: at,
      updated_at: input.updated_at ?? at,
    });
  }

  /** A contact's registration for an event. */
  async registration(input: { eventId: number; contactId: number; created_at?: Date }): Promise<number> {
    return this.insert('event_registrations', {
      event_id: input.eventId,
      contact_id: input.contactId,
      created_at: input.created_at ?? this.now(),
    });
  }

  /** An assessment (a quiz) with its passing score (default 70). */
  async assessment(input: Stamped & { title?: string; passing_score?: number } = {}): Promise<number> {
    const at = input.created_at ?? this.now();
    return this.insert('assessments', {
      title: input.title ?? `Assessment ${this.next()}`,
      passing_score: input.passing_score ?? 70,
      created_at: at,
      updated_at: input.updated_at ?? at,
    });
  }

  /** An attempt at an assessment: completed (with a score) or in progress. */
  async attempt(input: AttemptInput): Promise<number> {
    const completed = input.completed === true ? this.now() : input.completed instanceof Date ? input.completed : null;
    return this.insert('assessment_attempts', {
      assessment_id: input.assessmentId,
      contact_id: input.contactId,
      score: input.score ?? null,
      completed_at: completed,
      created_at: input.created_at ?? this.now(),
    });
  }

  // --- Newsletters, sequences and email ---------------------------------------------------------------

  /** A newsletter. */
  async newsletter(input: Stamped & { title?: string } = {}): Promise<number> {
    const at = input.created_at ?? this.now();
    return this.insert('newsletters', { title: input.title ?? `Newsletter ${this.next()}`, created_at: at, updated_at: input.updated_at ?? at });
  }

  /** A contact's subscription to a newsletter; ended when unsubscribed_at is set. */
  async newsletterSubscription(input: SubscriptionInput & { newsletterId: number }): Promise<number> {
    return this.insert('newsletter_subscriptions', { newsletter_id: input.newsletterId, ...this.subscription(input) });
  }

  /** An email sequence (an automated series). */
  async sequence(input: Stamped & { title?: string } = {}): Promise<number> {
    const at = input.created_at ?? this.now();
    return this.insert('email_sequences', { title: input.title ?? `Sequence ${this.next()}`, created_at: at, updated_at: input.updated_at ?? at });
  }

  /** A contact's subscription to an email sequence; ended when unsubscribed_at is set. */
  async sequenceSubscription(input: SubscriptionInput & { sequenceId: number }): Promise<number> {
    return this.insert('email_sequence_subscriptions', { email_sequence_id: input.sequenceId, ...this.subscription(input) });
  }

  /** A landing page (published now unless publish_at is given; null: never). */
  async landingPage(input: Stamped & { title?: string; publish_at?: Date | null } = {}): Promise<number> {
    const at = input.created_at ?? this.now();
    const n = this.next();
    return this.insert('landing_pages', {
      title: input.title ?? `Landing page ${n}`,
      url: `https://example.test/lp/${n}`,
      publish_at: input.publish_at !== undefined ? input.publish_at : at,
      created_at: at,
      updated_at: input.updated_at ?? at,
    });
  }

  /** A page of the site's website. */
  async websitePage(input: Stamped & { title?: string } = {}): Promise<number> {
    const at = input.created_at ?? this.now();
    const n = this.next();
    return this.insert('website_pages', { title: input.title ?? `Page ${n}`, url: `https://example.test/p/${n}`, created_at: at, updated_at: input.updated_at ?? at });
  }

  /** A blog of the site. */
  async blog(input: Stamped & { title?: string } = {}): Promise<number> {
    const at = input.created_at ?? this.now();
    return this.insert('blogs', { title: input.title ?? `Blog ${this.next()}`, created_at: at, updated_at: input.updated_at ?? at });
  }

  /** A post of a blog, published now unless published_at is given (null: a draft). */
  async blogPost(input: Stamped & { blogId: number; title?: string; published_at?: Date | null }): Promise<number> {
    const at = input.created_at ?? this.now();
    const n = this.next();
    return this.insert('blog_posts', {
      blog_id: input.blogId,
      title: input.title ?? `Post ${n}`,
      slug: `post-${n}`,
      url: `https://example.test/blog/post-${n}`,
      content: `<p>Post ${n}</p>`,
      page_title: `Post ${n}`,
      page_description: `About post ${n}`,
      published_at: input.published_at !== undefined ? input.published_at : at,
      created_at: at,
      updated_at: input.updated_at ?? at,
    });
  }

  /** An email broadcast, sent now unless sent_at is given (null: a draft). */
  async broadcast(input: Stamped & { subject?: string; sent_at?: Date | null } = {}): Promise<number> {
    const at = input.created_at ?? this.now();
    return this.insert('email_broadcasts', {
      subject: input.subject ?? `Broadcast ${this.next()}`,
      sent_at: input.sent_at !== undefined ? input.sent_at : at,
      created_at: at,
      updated_at: input.updated_at ?? at,
    });
  }

  /** One thing that happened to one email for one contact (sent, delivered, opened ...). */
  async emailEvent(input: EmailEventInput): Promise<number> {
    const at = input.occurred_at ?? this.now();
    return this.insert('email_events', {
      contact_id: input.contactId,
      email_broadcast_id: input.broadcastId ?? null,
      email_sequence_id: input.sequenceId ?? null,
      kind: input.kind,
      bounce_type: input.bounce_type ?? null,
      occurred_at: at,
      created_at: at,
    });
  }

  /** Several events of one email at the same moment, e.g. ['sent', 'delivered', 'opened']. */
  async emailEvents(
    input: Omit<EmailEventInput, 'kind'> & { kinds: readonly EmailEventKind[] },
  ): Promise<number[]> {
    const ids: number[] = [];
    for (const kind of input.kinds) ids.push(await this.emailEvent({ ...input, kind }));
    return ids;
  }

  // --- Plumbing ---------------------------------------------------------------------------------

  /** Kysely over the platform tables (not part of the typed schema). */
  get db(): AnyDb {
    return this.t.handle.db as unknown as AnyDb;
  }

  private next(): number {
    return ++generated;
  }

  private subscription(input: SubscriptionInput): Row {
    const at = input.created_at ?? input.subscribed_at ?? this.now();
    return {
      contact_id: input.contactId,
      subscribed_at: input.subscribed_at ?? at,
      unsubscribed_at: input.unsubscribed_at ?? null,
      created_at: at,
      updated_at: input.updated_at ?? at,
    };
  }

  /** Inserts a site row (site_id added) and returns its id. */
  private async insert(table: string, row: Row): Promise<number> {
    const inserted = await this.db
      .insertInto(table)
      .values(this.encode({ site_id: this.siteId, ...row }))
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(inserted.id);
  }

  /** Inserts a join-table row (no id, no site_id). */
  private async insertRow(table: string, row: Row): Promise<void> {
    await this.db.insertInto(table).values(this.encode(row)).execute();
  }

  /** Dates, booleans and JSON values as the dialect's driver takes them; undefined dropped. */
  private encode(row: Row): Record<string, unknown> {
    const { traits } = this.t.handle;
    const out: Record<string, unknown> = {};
    for (const [column, value] of Object.entries(row)) {
      if (value === undefined) continue;
      if (value instanceof Date) out[column] = traits.encodeTimestamp(value);
      else if (typeof value === 'boolean') out[column] = traits.encodeBoolean(value);
      else if (value !== null && typeof value === 'object') out[column] = traits.encodeJson(value);
      else out[column] = value;
    }
    return out;
  }
}

function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
