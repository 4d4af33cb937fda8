// Row types of every table, as Kysely sees them. Ids come back as numbers (SQLite) or strings
// (PostgreSQL bigint); timestamps as ISO strings (SQLite) or Dates (PostgreSQL); booleans as 0/1 or
// true/false. The codecs in dialect-traits.ts and jsonapi/codecs.ts turn them into API values.
import type { ColumnType, Generated } from 'kysely';

export type DbId = number | string;
export type DbTimestamp = string | Date;
export type DbBoolean = number | boolean;
/** JSON text on SQLite; the parsed value of a jsonb column on PostgreSQL. */
export type DbJson = unknown;
/** A bigint column: a number on SQLite, a string on PostgreSQL. */
export type DbBigint = number | string;

export interface AccountsTable {
  id: Generated<DbId>;
  name: string;
  /** How far the account's sandbox clock is ahead of real time, ms (0010_sandbox); only grows. */
  clock_offset_ms: Generated<DbBigint>;
  /** Goes up whenever the account's sandbox faults are created or deleted (0012_journal_and_faults). */
  faults_version: Generated<DbBigint>;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
}

/** 0015_read_replicas: the primary's WAL position after the account's last write (src/db/replicas.ts). */
export interface AccountWritePositionsTable {
  account_id: DbId;
  /** Bytes from WAL position 0/0. */
  wal_position: DbBigint;
}

export interface UsersTable {
  id: Generated<DbId>;
  account_id: DbId;
  name: string;
  email: string;
  /** One of USER_ROLES (auth/roles.ts). Owners reach every site of the account; other roles only their user_sites. */
  role: string;
  /** scrypt hash (src/console/passwords.ts), null until one is set (0014_console). */
  password_hash: string | null;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
}

export interface SitesTable {
  id: Generated<DbId>;
  account_id: DbId;
  title: string;
  subdomain: string;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
}

/** Sites a user with a restricted role may access. */
export interface UserSitesTable {
  user_id: DbId;
  site_id: DbId;
  created_at: DbTimestamp;
}

export interface ApiKeysTable {
  id: Generated<DbId>;
  account_id: DbId;
  user_id: DbId;
  name: string;
  client_id: string;
  /** SHA-256 of the client secret, hex. The secret itself is shown once and never stored. */
  secret_hash: string;
  /** JSON array of permission names. */
  permissions: string;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
  rotated_at: DbTimestamp | null;
  /** When the key last got a token or a token of it was last used, to the minute (0014_console). */
  last_used_at: DbTimestamp | null;
}

/** One signed-in console browser (src/console/sessions.ts). */
export interface ConsoleSessionsTable {
  id: Generated<DbId>;
  user_id: DbId;
  /** SHA-256 of the cookie's token, hex. */
  token_hash: string;
  csrf_token: string;
  created_at: DbTimestamp;
  last_seen_at: DbTimestamp;
  /** The absolute expiry. */
  expires_at: DbTimestamp;
}

/** A one-time console sign-in link. */
export interface ConsoleSignInLinksTable {
  id: Generated<DbId>;
  user_id: DbId;
  token_hash: string;
  created_at: DbTimestamp;
  expires_at: DbTimestamp;
  used_at: DbTimestamp | null;
}

/** Failed console sign-ins of one address or account in the current window. */
export interface ConsoleSignInFailuresTable {
  subject: string;
  window_started_at: DbTimestamp;
  failures: number;
}

/** One OAuth grant: an access token and its refresh token, revoked together. */
export interface OauthGrantsTable {
  id: Generated<DbId>;
  api_key_id: DbId;
  access_token_hash: string;
  refresh_token_hash: string;
  access_expires_at: DbTimestamp;
  refresh_expires_at: DbTimestamp;
  revoked_at: DbTimestamp | null;
  created_at: DbTimestamp;
  /**
   * The grants made from one client_credentials grant by refreshing, one after the other, share
   * its family (0007). Presenting a refresh token already exchanged revokes the whole family.
   * Null only in a database older than 0007, which backfills it.
   */
  family_id: string;
}

// --- Platform (0002_platform.ts). Every tenant-owned table carries site_id. -------------------

/** Columns every site-owned table has. */
interface SiteOwned {
  id: Generated<DbId>;
  site_id: DbId;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
}

/** Site-owned tables that record an event and are never updated (no updated_at). */
interface SiteOwnedEvent {
  id: Generated<DbId>;
  site_id: DbId;
  created_at: DbTimestamp;
}

export interface ContactsTable extends SiteOwned {
  name: string;
  /** Lower-cased; unique within the site. */
  email: string;
  phone_number: string | null;
  business_number: string | null;
  mobile_phone_number: string | null;
  address_line_1: string | null;
  address_line_2: string | null;
  address_city: string | null;
  address_state: string | null;
  address_country: string | null;
  address_zip: string | null;
  /** Values of the custom fields with handles custom_1 .. custom_3. */
  custom_1: string | null;
  custom_2: string | null;
  custom_3: string | null;
  hidden: DbBoolean;
  /** Marketing email consent and its history. */
  subscribed: DbBoolean;
  subscribed_at: DbTimestamp | null;
  unsubscribed_at: DbTimestamp | null;
  manually_unsubscribed_at: DbTimestamp | null;
  opted_out_at: DbTimestamp | null;
  /** The latest bounce (bounce_type hard or soft) and complaint. */
  bounced_at: DbTimestamp | null;
  bounce_type: string | null;
  complained_at: DbTimestamp | null;
  last_activity_at: DbTimestamp | null;
}

export interface CustomersTable extends SiteOwned {
  /**
   * One customer per contact; name and email are the contact's. Null once the contact was
   * deleted: the customer (and its purchases, transactions and orders) stays, detached.
   */
  contact_id: DbId | null;
  name: string;
  email: string;
  avatar_url: string | null;
  external_user_id: string | null;
  public_bio: string | null;
  public_location: string | null;
  public_website: string | null;
  socials: DbJson | null;
  /** Successful charges minus refunds, in cents; kept by the code that writes transactions. */
  net_revenue_cents: DbBigint;
  sign_in_count: number;
  last_request_at: DbTimestamp | null;
  bounced_at: DbTimestamp | null;
}

export interface ContactTagsTable extends SiteOwned {
  name: string;
}

export interface ContactTaggingsTable {
  contact_id: DbId;
  contact_tag_id: DbId;
  created_at: DbTimestamp;
}

export interface CustomFieldsTable extends SiteOwned {
  title: string;
  /** custom_1, custom_2 or custom_3: the contact column holding the value. */
  handle: string;
  field_type: string;
  required: DbBoolean;
}

export interface ContactNotesTable extends SiteOwned {
  contact_id: DbId;
  body: string;
}

export interface ProductsTable extends SiteOwned {
  title: string;
  description: string | null;
  /** ready, processing or draft. */
  status: string;
  product_type_id: number;
  product_type_name: string;
  /** Fully qualified kind, such as Courses::Course. */
  productizable_type: string;
  publish_status: string;
  thumbnail_url: string | null;
  url: string | null;
  /** Memberships of the product that have not ended; kept by triggers (src/db/site-counters.ts). */
  active_members_count: Generated<number>;
}

export interface OffersTable extends SiteOwned {
  title: string;
  description: string | null;
  internal_title: string | null;
  currency: string;
  price_in_cents: number;
  /** one_time, subscription, multipay or free. */
  payment_type: string;
  token: string;
  payment_method: string;
  price_description: string;
  single: DbBoolean;
  image_url: string | null;
  /** Subscriptions: months between charges. */
  billing_period_months: number | null;
  /** Payment plans: how many payments in all (the first included). */
  installment_count: number | null;
}

export interface OfferProductsTable {
  offer_id: DbId;
  product_id: DbId;
}

export interface CoursesTable extends SiteOwned {
  product_id: DbId;
  title: string;
  description: string | null;
  thumbnail_url: string | null;
  publish_status: string;
}

export interface ModulesTable extends SiteOwned {
  course_id: DbId;
  title: string;
  description: string | null;
  position: number;
  poster_image_url: string | null;
  publishing_option: string;
}

export interface LessonsTable extends SiteOwned {
  course_id: DbId;
  module_id: DbId;
  title: string;
  position: number;
  status: string;
  publishing_option: string;
}

export interface MediaTable extends SiteOwned {
  lesson_id: DbId;
  /** video, audio or download. */
  kind: string;
  title: string;
  url: string;
  duration_seconds: number | null;
}

export interface PodcastsTable extends SiteOwned {
  product_id: DbId;
  title: string;
  description: string;
  language: string;
  owner_email: string;
  author: string | null;
  status: string;
  show_type: string;
  thumbnail_url: string | null;
  cover_art_url: string | null;
  categories: DbJson;
  directories: DbJson;
  migrated_to_url: string | null;
  migrated: DbBoolean;
  public: DbBoolean;
  ready: DbBoolean;
  distribution_ready: DbBoolean;
  url: string;
}

export interface PodcastEpisodesTable extends SiteOwned {
  podcast_id: DbId;
  title: string;
  description: string | null;
  episode_number: number;
  duration_seconds: number;
  audio_url: string;
  published_at: DbTimestamp | null;
}

export interface EmailSequencesTable extends SiteOwned {
  title: string;
}

export interface NewslettersTable extends SiteOwned {
  title: string;
}

export interface FormsTable extends SiteOwned {
  title: string | null;
  description: string | null;
  is_default: DbBoolean;
  webhook_url: string | null;
  url: string;
  /** The offer a submission grants, if any. */
  offer_id: DbId | null;
  double_opt_in: DbBoolean;
}

export interface FormFieldsTable extends SiteOwned {
  form_id: DbId;
  title: string | null;
  field_type: string;
  required: DbBoolean;
  handle: string;
  /** Choices of a select field, one per line. */
  select_options: string | null;
  editable: DbBoolean;
  position: number;
}

export interface FormTagsTable {
  form_id: DbId;
  contact_tag_id: DbId;
}

export interface FormEmailSequencesTable {
  form_id: DbId;
  email_sequence_id: DbId;
}

export interface FormSubmissionsTable extends SiteOwnedEvent {
  form_id: DbId;
  contact_id: DbId | null;
  name: string;
  email: string;
  phone_number: string | null;
  business_number: string | null;
  address_line_1: string | null;
  address_line_2: string | null;
  address_city: string | null;
  address_state: string | null;
  address_country: string | null;
  address_zip: string | null;
  custom_1: string | null;
  custom_2: string | null;
  custom_3: string | null;
}

export interface LandingPagesTable extends SiteOwned {
  title: string;
  url: string;
  /** Live from this moment; null: never published. */
  publish_at: DbTimestamp | null;
}

export interface WebsitePagesTable extends SiteOwned {
  title: string;
  url: string | null;
}

export interface BlogsTable extends SiteOwned {
  title: string;
}

export interface BlogPostsTable extends SiteOwned {
  blog_id: DbId;
  title: string;
  slug: string;
  url: string;
  content: string;
  page_title: string;
  page_description: string;
  published_at: DbTimestamp | null;
}

export interface PurchasesTable extends SiteOwned {
  customer_id: DbId;
  offer_id: DbId;
  amount_in_cents: number;
  payment_type: string;
  multipay_payments_made: number | null;
  opt_in: DbBoolean;
  raw_extra_contact_information: DbJson;
  currency: string;
  effective_start_at: DbTimestamp | null;
  cardholder_name: string | null;
  billing_address_zip: string | null;
  deactivated_at: DbTimestamp | null;
  deactivation_reason: string | null;
  coupon_code: string | null;
  source: string | null;
  referrer: string | null;
  quantity: number;
  /** active, canceled, or null for purchases without recurring billing. */
  subscription_status: string | null;
  subscription_canceled_at: DbTimestamp | null;
  /** When the next renewal or installment falls due; null when none will (0010_sandbox). */
  next_charge_at: DbTimestamp | null;
  /** The next renewal or installment fails (POST /v1/test_helpers/purchases/{id}/fail_next_payment). */
  fail_next_charge: Generated<DbBoolean>;
}

export interface OfferGrantsTable extends SiteOwned {
  contact_id: DbId;
  offer_id: DbId;
  /** The purchase that granted the offer; null for a grant made by hand. */
  purchase_id: DbId | null;
  granted_at: DbTimestamp;
  revoked_at: DbTimestamp | null;
}

export interface MembershipsTable extends SiteOwned {
  contact_id: DbId;
  product_id: DbId;
  offer_grant_id: DbId | null;
  started_at: DbTimestamp;
  suspended_at: DbTimestamp | null;
  ended_at: DbTimestamp | null;
}

export interface TransactionsTable extends SiteOwnedEvent {
  customer_id: DbId;
  /** Null for a transaction paying for several offers at once (a bundle). */
  offer_id: DbId | null;
  /** charge, subscription_charge, refund or dispute. */
  action: string;
  /** succeeded, failed or pending. */
  state: string;
  payment_type: string | null;
  /** Negative for refunds. */
  amount_in_cents: number;
  sales_tax_in_cents: number;
  currency: string;
  /** A refund: the charge it gives money back from (0011_refunds); null otherwise. */
  refunded_transaction_id: DbId | null;
}

export interface PurchaseTransactionsTable {
  purchase_id: DbId;
  transaction_id: DbId;
}

export interface OrdersTable extends SiteOwned {
  customer_id: DbId;
  order_number: number;
  currency_code: string;
  fulfilled_at: DbTimestamp | null;
  total_price_in_cents: number;
  subtotal_in_cents: number;
  sales_tax_amount_in_cents: number;
  discount_amount_in_cents: number;
}

export interface OrderItemsTable extends SiteOwned {
  order_id: DbId;
  quantity: number;
  currency_code: string;
  /** Offer, Product or Shipping; item_id is the id of that kind of record. */
  item_type: string;
  item_id: number;
  title: string;
  fulfilled_at: DbTimestamp | null;
  total_price_in_cents: number;
  subtotal_in_cents: number;
  sales_tax_amount_in_cents: number;
  discount_amount_in_cents: number;
}

export interface KajabiPaymentsPayoutsTable extends SiteOwned {
  /** pending, in_transit, paid, failed or canceled. */
  status: string;
  amount_in_cents: number;
  currency: string;
  initiated_at: DbTimestamp;
  estimated_arrival_at: DbTimestamp;
  destination: string;
}

export interface HooksTable extends SiteOwned {
  event: string;
  target_url: string;
  /** The form or tag the hook is limited to, if any. */
  resource_id: number | null;
  /** Standard Webhooks secret (`whsec_...`); null for hooks made before 0008_hooks. */
  signing_secret: string | null;
  /** The secret the last rotation replaced, also signed with until previous_secret_expires_at. */
  previous_signing_secret: string | null;
  previous_secret_expires_at: DbTimestamp | null;
  /** Set when every delivery failed for 5 days (0009_webhook_deliveries); nothing is delivered then. */
  disabled_at: DbTimestamp | null;
  /** The first failed attempt after the last successful one. */
  failing_since: DbTimestamp | null;
}

export interface EventsTable extends SiteOwned {
  title: string;
  starts_at: DbTimestamp;
}

export interface EventRegistrationsTable extends SiteOwnedEvent {
  event_id: DbId;
  contact_id: DbId;
}

export interface AssessmentsTable extends SiteOwned {
  title: string;
  passing_score: number;
}

export interface AssessmentAttemptsTable extends SiteOwnedEvent {
  assessment_id: DbId;
  contact_id: DbId;
  score: number | null;
  /** Null while in progress. */
  completed_at: DbTimestamp | null;
}

export interface NewsletterSubscriptionsTable extends SiteOwned {
  newsletter_id: DbId;
  contact_id: DbId;
  subscribed_at: DbTimestamp;
  unsubscribed_at: DbTimestamp | null;
}

export interface EmailSequenceSubscriptionsTable extends SiteOwned {
  email_sequence_id: DbId;
  contact_id: DbId;
  subscribed_at: DbTimestamp;
  unsubscribed_at: DbTimestamp | null;
}

export interface EmailBroadcastsTable extends SiteOwned {
  subject: string;
  /** Null while a draft. */
  sent_at: DbTimestamp | null;
}

/** One thing that happened to one email for one contact. */
export interface EmailEventsTable extends SiteOwnedEvent {
  contact_id: DbId;
  email_broadcast_id: DbId | null;
  email_sequence_id: DbId | null;
  /** sent, delivered, opened, clicked, bounced, dropped or complained; also unsubscribed (the sandbox's email activity). */
  kind: string;
  /** hard or soft, for bounces. */
  bounce_type: string | null;
  occurred_at: DbTimestamp;
}

// --- Writes (0003_writes.ts) ------------------------------------------------------------------

/** The transactional outbox: events written with the change they announce, delivered later. */
export interface OutboxEventsTable {
  id: Generated<DbId>;
  site_id: DbId;
  event_type: string;
  /** JSON text on SQLite; the parsed value on PostgreSQL. */
  payload: unknown;
  created_at: DbTimestamp;
  delivered_at: DbTimestamp | null;
  /** The record that triggered the event; null for events written before 0009_webhook_deliveries. */
  resource_id: DbId | null;
  /**
   * The W3C traceparent of the request that made the event, written while traces are on
   * (0021_trace_context): each webhook attempt's span joins that trace. Optional on insert.
   */
  trace_parent: ColumnType<string | null, string | null | undefined, string | null>;
}

/** One event to one hook (0009_webhook_deliveries.ts); kept after the hook is deleted. */
export interface WebhookDeliveriesTable {
  id: Generated<DbId>;
  site_id: DbId;
  hook_id: DbId;
  event_id: DbId;
  event: string;
  resource_id: DbId | null;
  target_url: string;
  webhook_id: string;
  status: 'pending' | 'retrying' | 'succeeded' | 'failed' | 'cancelled';
  attempt_count: number;
  failures_in_round: number;
  /** When a worker may attempt it next (the end of a claim's lease while one is in flight); null when finished. */
  next_attempt_at: DbTimestamp | null;
  last_attempt_at: DbTimestamp | null;
  last_response_status: number | null;
  last_error: string | null;
  created_at: DbTimestamp;
  updated_at: DbTimestamp;
}

/** One attempt of a delivery and what the receiver answered. */
export interface WebhookAttemptsTable {
  id: Generated<DbId>;
  site_id: DbId;
  delivery_id: DbId;
  attempt_number: number;
  started_at: DbTimestamp;
  duration_ms: number;
  response_status: number | null;
  /** JSON text on SQLite; the parsed value on PostgreSQL. */
  response_headers: unknown;
  response_body: string | null;
  error: string | null;
  created_at: DbTimestamp;
}

/** Emails sitebiz would send (welcome, double opt-in), recorded instead of dropped. */
export interface OutgoingMessagesTable {
  id: Generated<DbId>;
  site_id: DbId;
  contact_id: DbId | null;
  kind: string;
  to_email: string;
  subject: string;
  body: string;
  created_at: DbTimestamp;
  /** Double opt-in: the token of the link that confirms the subscription (sandbox). */
  confirmation_token: string | null;
  confirmed_at: DbTimestamp | null;
}

/** The request journal of the sandbox (GET /v1/test_helpers/requests). */
export interface RequestJournalTable {
  id: Generated<DbId>;
  account_id: DbId;
  client_id: string;
  request_id: string;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  request_body: string | null;
  response_body: string | null;
  created_at: DbTimestamp;
  /** The user of the key that made the request; null for entries older than this column. */
  user_id: DbId | null;
  /** The sites the request reached, ",1,2," ("" for none; src/sandbox/site-scope.ts). */
  site_ids: Generated<string>;
  site_count: Generated<number>;
  /** Whether the upstream API would accept the request (0/1 on SQLite); null for entries older than this column. */
  upstream: DbBoolean | null;
  /** Why not ("filter[email_eq] is a sitebiz extension"); null when upstream. */
  upstream_reason: string | null;
}

/** Faults injected into an account's requests (POST /v1/test_helpers/faults). */
export interface SandboxFaultsTable {
  id: Generated<DbId>;
  account_id: DbId;
  method: string | null;
  path: string;
  status: number | null;
  latency_ms: number | null;
  times: number | null;
  remaining: number | null;
  rate: number | null;
  hits: Generated<number>;
  created_at: DbTimestamp;
  /** Who created the fault; null for faults older than this column. */
  user_id: DbId | null;
  /** The sites the fault is limited to, ",1,2," ("" for the whole account; src/sandbox/site-scope.ts). */
  site_ids: Generated<string>;
  site_count: Generated<number>;
}

export interface Database {
  accounts: AccountsTable;
  users: UsersTable;
  sites: SitesTable;
  user_sites: UserSitesTable;
  api_keys: ApiKeysTable;
  oauth_grants: OauthGrantsTable;

  contacts: ContactsTable;
  customers: CustomersTable;
  contact_tags: ContactTagsTable;
  contact_taggings: ContactTaggingsTable;
  custom_fields: CustomFieldsTable;
  contact_notes: ContactNotesTable;
  products: ProductsTable;
  offers: OffersTable;
  offer_products: OfferProductsTable;
  courses: CoursesTable;
  modules: ModulesTable;
  lessons: LessonsTable;
  media: MediaTable;
  podcasts: PodcastsTable;
  podcast_episodes: PodcastEpisodesTable;
  email_sequences: EmailSequencesTable;
  newsletters: NewslettersTable;
  forms: FormsTable;
  form_fields: FormFieldsTable;
  form_tags: FormTagsTable;
  form_email_sequences: FormEmailSequencesTable;
  form_submissions: FormSubmissionsTable;
  landing_pages: LandingPagesTable;
  website_pages: WebsitePagesTable;
  blogs: BlogsTable;
  blog_posts: BlogPostsTable;
  purchases: PurchasesTable;
  offer_grants: OfferGrantsTable;
  memberships: MembershipsTable;
  transactions: TransactionsTable;
  purchase_transactions: PurchaseTransactionsTable;
  orders: OrdersTable;
  order_items: OrderItemsTable;
  kajabi_payments_payouts: KajabiPaymentsPayoutsTable;
  hooks: HooksTable;
  events: EventsTable;
  event_registrations: EventRegistrationsTable;
  assessments: AssessmentsTable;
  assessment_attempts: AssessmentAttemptsTable;
  newsletter_subscriptions: NewsletterSubscriptionsTable;
  email_sequence_subscriptions: EmailSequenceSubscriptionsTable;
  email_broadcasts: EmailBroadcastsTable;
  email_events: EmailEventsTable;

  outbox_events: OutboxEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  outgoing_messages: OutgoingMessagesTable;
  request_journal: RequestJournalTable;
  sandbox_faults: SandboxFaultsTable;
  console_sessions: ConsoleSessionsTable;
  console_sign_in_links: ConsoleSignInLinksTable;
  console_sign_in_failures: ConsoleSignInFailuresTable;
  account_write_positions: AccountWritePositionsTable;

  site_counters: SiteCountersTable;
  instance_settings: InstanceSettingsTable;
  snapshots: SnapshotsTable;
  import_runs: ImportRunsTable;
  import_pages: ImportPagesTable;
  audit_events: AuditEventsTable;
}

/** The audit log (0020_audit_events, src/audit/): one administrative action each. */
export interface AuditEventsTable {
  id: Generated<DbId>;
  account_id: DbId;
  action: string;
  actor_kind: string;
  actor_api_key_id: DbId | null;
  actor_user_id: DbId | null;
  actor_label: string;
  target_type: string | null;
  target_id: string | null;
  /** JSON object text. */
  details: string;
  source_address: string | null;
  created_at: DbTimestamp;
}

/** An import (0019_import_checkpoints, src/import/): one source into one account. */
export interface ImportRunsTable {
  id: Generated<DbId>;
  /** The source's base URL and client id, as `<url> <client_id>`. */
  source: string;
  account_id: DbId;
  /** JSON text: table → what is added to the source's ids (0 everywhere: ids kept). */
  id_offsets: string;
  /** `running` until every step is written, then `done`. */
  status: string;
  started_at: DbTimestamp;
  finished_at: DbTimestamp | null;
}

/** A page of an import's step that is written (page 0: the whole step). */
export interface ImportPagesTable {
  run_id: DbId;
  step: string;
  page: number;
  records: number;
}

/** A named save point of an account's data (0013_snapshots); its rows are in snapshot_<table>. */
export interface SnapshotsTable {
  id: Generated<DbId>;
  account_id: DbId;
  name: string;
  /** The account's clock offset when it was taken; a restore sets the clock back to it. */
  clock_offset_ms: DbBigint;
  /** JSON text: rows saved per data table. */
  row_counts: string;
  /**
   * JSON text (0017): the account's hooks then, `[{id, failing_since, disabled_at}]`, their health
   * as it was; null for snapshots taken before.
   */
  hook_states: string | null;
  /** Real time. */
  created_at: DbTimestamp;
}

export interface InstanceSettingsTable {
  name: string;
  value: string;
}

/** Per-site counters kept by triggers (src/db/site-counters.ts). */
export interface SiteCountersTable {
  site_id: DbId;
  /** `version` or `rows:<table>`. */
  counter: string;
  /** bigint: pg returns it as a string. */
  value: number | string;
}
