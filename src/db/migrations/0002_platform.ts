// The platform behind the API: contacts and customers, what they own and did (tags, offer grants,
// product memberships, purchases, transactions, orders, form submissions, events, assessments,
// newsletters, email sequences and email activity), and the catalogue (offers, products,
// courses, podcasts, forms, pages, blogs, payouts, hooks).
//
// Every tenant-owned table carries site_id, so tenancy is one indexed condition everywhere.
import type { ColumnDefinitionBuilder, CreateTableBuilder, Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import type { AppMigration } from './index.js';

export const platform: AppMigration = {
  name: '0002_platform',
  summary: "Creates the platform's tables: contacts, customers, their activity, and the catalogue.",
  rewritesLargeTable: false,
  async up(db: Kysely<unknown>, t: DialectTraits) {
    /** id, site_id (cascade), the given columns, created_at, updated_at; plus a site index. */
    const siteTable = async (
      name: string,
      columns: (table: CreateTableBuilder<string, string>) => CreateTableBuilder<string, string>,
      options: { updatedAt?: boolean } = {},
    ) => {
      let table = t
        .addIdColumn(db.schema.createTable(name))
        .addColumn('site_id', t.foreignKeyType, (c) => c.notNull().references('sites.id').onDelete('cascade'));
      table = columns(table).addColumn('created_at', t.timestampType, (c) => c.notNull());
      if (options.updatedAt !== false) table = table.addColumn('updated_at', t.timestampType, (c) => c.notNull());
      await table.execute();
      await db.schema.createIndex(`${name}_site_created_idx`).on(name).columns(['site_id', 'created_at', 'id']).execute();
    };
    const ref = (table: string) => (c: ColumnDefinitionBuilder) =>
      c.notNull().references(`${table}.id`).onDelete('cascade');
    const optionalRef = (table: string) => (c: ColumnDefinitionBuilder) =>
      c.references(`${table}.id`).onDelete('set null');
    const index = (name: string, table: string, columns: string[]) =>
      db.schema.createIndex(name).on(table).columns(columns).execute();
    const unique = (name: string, table: string, columns: string[]) =>
      db.schema.createIndex(name).on(table).columns(columns).unique().execute();

    // --- Contacts and customers -------------------------------------------------------------
    await siteTable('contacts', (tb) =>
      tb
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('phone_number', 'text')
        .addColumn('business_number', 'text')
        .addColumn('mobile_phone_number', 'text')
        .addColumn('address_line_1', 'text')
        .addColumn('address_line_2', 'text')
        .addColumn('address_city', 'text')
        .addColumn('address_state', 'text')
        .addColumn('address_country', 'text')
        .addColumn('address_zip', 'text')
        .addColumn('custom_1', 'text')
        .addColumn('custom_2', 'text')
        .addColumn('custom_3', 'text')
        .addColumn('hidden', t.booleanType, (c) => c.notNull())
        // Marketing email consent and its history.
        .addColumn('subscribed', t.booleanType, (c) => c.notNull())
        .addColumn('subscribed_at', t.timestampType)
        .addColumn('unsubscribed_at', t.timestampType)
        .addColumn('manually_unsubscribed_at', t.timestampType)
        .addColumn('opted_out_at', t.timestampType)
        // Email health: the latest bounce and complaint.
        .addColumn('bounced_at', t.timestampType)
        .addColumn('bounce_type', 'text')
        .addColumn('complained_at', t.timestampType)
        // Activity: last time the contact did anything on the site (sign-in, page, purchase).
        .addColumn('last_activity_at', t.timestampType),
    );
    await unique('contacts_site_email_uq', 'contacts', ['site_id', 'email']);
    await index('contacts_site_name_idx', 'contacts', ['site_id', 'name']);

    await siteTable('customers', (tb) =>
      tb
        .addColumn('contact_id', t.foreignKeyType, ref('contacts'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('avatar_url', 'text')
        .addColumn('external_user_id', 'text')
        .addColumn('public_bio', 'text')
        .addColumn('public_location', 'text')
        .addColumn('public_website', 'text')
        .addColumn('socials', t.jsonType)
        // Sum of successful payment transactions minus refunds, kept by the code that writes them.
        .addColumn('net_revenue_cents', 'bigint', (c) => c.notNull())
        .addColumn('sign_in_count', 'integer', (c) => c.notNull())
        .addColumn('last_request_at', t.timestampType)
        .addColumn('bounced_at', t.timestampType),
    );
    await unique('customers_contact_uq', 'customers', ['contact_id']);
    await unique('customers_site_email_uq', 'customers', ['site_id', 'email']);
    await unique('customers_site_external_uq', 'customers', ['site_id', 'external_user_id']);
    await index('customers_site_net_revenue_idx', 'customers', ['site_id', 'net_revenue_cents']);

    await siteTable('contact_tags', (tb) => tb.addColumn('name', 'text', (c) => c.notNull()));
    await unique('contact_tags_site_name_uq', 'contact_tags', ['site_id', 'name']);
    await db.schema
      .createTable('contact_taggings')
      .addColumn('contact_id', t.foreignKeyType, ref('contacts'))
      .addColumn('contact_tag_id', t.foreignKeyType, ref('contact_tags'))
      .addColumn('created_at', t.timestampType, (c) => c.notNull())
      .addPrimaryKeyConstraint('contact_taggings_pk', ['contact_id', 'contact_tag_id'])
      .execute();
    await index('contact_taggings_tag_idx', 'contact_taggings', ['contact_tag_id', 'contact_id']);

    await siteTable('custom_fields', (tb) =>
      tb
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('handle', 'text', (c) => c.notNull())
        .addColumn('field_type', 'text', (c) => c.notNull())
        .addColumn('required', t.booleanType, (c) => c.notNull()),
    );
    await unique('custom_fields_site_handle_uq', 'custom_fields', ['site_id', 'handle']);

    await siteTable('contact_notes', (tb) =>
      tb.addColumn('contact_id', t.foreignKeyType, ref('contacts')).addColumn('body', 'text', (c) => c.notNull()),
    );
    await index('contact_notes_contact_idx', 'contact_notes', ['contact_id']);

    // --- Catalogue ----------------------------------------------------------------------------
    await siteTable('products', (tb) =>
      tb
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('product_type_id', 'integer', (c) => c.notNull())
        .addColumn('product_type_name', 'text', (c) => c.notNull())
        // Fully qualified kind, as upstream's filter[exclude_product_types][] names it.
        .addColumn('productizable_type', 'text', (c) => c.notNull())
        .addColumn('publish_status', 'text', (c) => c.notNull())
        .addColumn('thumbnail_url', 'text')
        .addColumn('url', 'text'),
    );

    await siteTable('offers', (tb) =>
      tb
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('internal_title', 'text')
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('price_in_cents', 'integer', (c) => c.notNull())
        // one_time, subscription, multipay or free.
        .addColumn('payment_type', 'text', (c) => c.notNull())
        .addColumn('token', 'text', (c) => c.notNull().unique())
        .addColumn('payment_method', 'text', (c) => c.notNull())
        .addColumn('price_description', 'text', (c) => c.notNull())
        .addColumn('single', t.booleanType, (c) => c.notNull())
        .addColumn('image_url', 'text'),
    );
    await db.schema
      .createTable('offer_products')
      .addColumn('offer_id', t.foreignKeyType, ref('offers'))
      .addColumn('product_id', t.foreignKeyType, ref('products'))
      .addPrimaryKeyConstraint('offer_products_pk', ['offer_id', 'product_id'])
      .execute();
    await index('offer_products_product_idx', 'offer_products', ['product_id', 'offer_id']);

    await siteTable('courses', (tb) =>
      tb
        .addColumn('product_id', t.foreignKeyType, ref('products'))
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('thumbnail_url', 'text')
        .addColumn('publish_status', 'text', (c) => c.notNull()),
    );
    await unique('courses_product_uq', 'courses', ['product_id']);
    await siteTable('modules', (tb) =>
      tb
        .addColumn('course_id', t.foreignKeyType, ref('courses'))
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('poster_image_url', 'text')
        .addColumn('publishing_option', 'text', (c) => c.notNull()),
    );
    await index('modules_course_idx', 'modules', ['course_id', 'position']);
    await siteTable('lessons', (tb) =>
      tb
        .addColumn('course_id', t.foreignKeyType, ref('courses'))
        .addColumn('module_id', t.foreignKeyType, ref('modules'))
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('publishing_option', 'text', (c) => c.notNull()),
    );
    await index('lessons_course_idx', 'lessons', ['course_id', 'position']);
    await index('lessons_module_idx', 'lessons', ['module_id', 'position']);
    await siteTable('media', (tb) =>
      tb
        .addColumn('lesson_id', t.foreignKeyType, ref('lessons'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('duration_seconds', 'integer'),
    );
    await index('media_lesson_idx', 'media', ['lesson_id']);

    await siteTable('podcasts', (tb) =>
      tb
        .addColumn('product_id', t.foreignKeyType, ref('products'))
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('language', 'text', (c) => c.notNull())
        .addColumn('owner_email', 'text', (c) => c.notNull())
        .addColumn('author', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('show_type', 'text', (c) => c.notNull())
        .addColumn('thumbnail_url', 'text')
        .addColumn('cover_art_url', 'text')
        .addColumn('categories', t.jsonType, (c) => c.notNull())
        .addColumn('directories', t.jsonType, (c) => c.notNull())
        .addColumn('migrated_to_url', 'text')
        .addColumn('migrated', t.booleanType, (c) => c.notNull())
        .addColumn('public', t.booleanType, (c) => c.notNull())
        .addColumn('ready', t.booleanType, (c) => c.notNull())
        .addColumn('distribution_ready', t.booleanType, (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull()),
    );
    await siteTable('podcast_episodes', (tb) =>
      tb
        .addColumn('podcast_id', t.foreignKeyType, ref('podcasts'))
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('episode_number', 'integer', (c) => c.notNull())
        .addColumn('duration_seconds', 'integer', (c) => c.notNull())
        .addColumn('audio_url', 'text', (c) => c.notNull())
        .addColumn('published_at', t.timestampType),
    );
    await index('podcast_episodes_podcast_idx', 'podcast_episodes', ['podcast_id', 'episode_number']);

    await siteTable('email_sequences', (tb) => tb.addColumn('title', 'text', (c) => c.notNull()));
    await siteTable('newsletters', (tb) => tb.addColumn('title', 'text', (c) => c.notNull()));

    await siteTable('forms', (tb) =>
      tb
        .addColumn('title', 'text')
        .addColumn('description', 'text')
        .addColumn('is_default', t.booleanType, (c) => c.notNull())
        // Upstream types it as an object (a URL with its request settings).
        .addColumn('webhook_url', t.jsonType)
        .addColumn('url', 'text', (c) => c.notNull())
        // What a submission does: grant this offer, apply tags, subscribe to sequences.
        .addColumn('offer_id', t.foreignKeyType, optionalRef('offers'))
        .addColumn('double_opt_in', t.booleanType, (c) => c.notNull()),
    );
    await siteTable('form_fields', (tb) =>
      tb
        .addColumn('form_id', t.foreignKeyType, ref('forms'))
        .addColumn('title', 'text')
        .addColumn('field_type', 'text', (c) => c.notNull())
        .addColumn('required', t.booleanType, (c) => c.notNull())
        .addColumn('handle', 'text', (c) => c.notNull())
        .addColumn('select_options', 'text')
        .addColumn('editable', t.booleanType, (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull()),
    );
    await index('form_fields_form_idx', 'form_fields', ['form_id', 'position']);
    await db.schema
      .createTable('form_tags')
      .addColumn('form_id', t.foreignKeyType, ref('forms'))
      .addColumn('contact_tag_id', t.foreignKeyType, ref('contact_tags'))
      .addPrimaryKeyConstraint('form_tags_pk', ['form_id', 'contact_tag_id'])
      .execute();
    await db.schema
      .createTable('form_email_sequences')
      .addColumn('form_id', t.foreignKeyType, ref('forms'))
      .addColumn('email_sequence_id', t.foreignKeyType, ref('email_sequences'))
      .addPrimaryKeyConstraint('form_email_sequences_pk', ['form_id', 'email_sequence_id'])
      .execute();

    await siteTable('form_submissions', (tb) =>
      tb
        .addColumn('form_id', t.foreignKeyType, ref('forms'))
        .addColumn('contact_id', t.foreignKeyType, optionalRef('contacts'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('phone_number', 'text')
        .addColumn('business_number', 'text')
        .addColumn('address_line_1', 'text')
        .addColumn('address_line_2', 'text')
        .addColumn('address_city', 'text')
        .addColumn('address_state', 'text')
        .addColumn('address_country', 'text')
        .addColumn('address_zip', 'text')
        .addColumn('custom_1', 'text')
        .addColumn('custom_2', 'text')
        .addColumn('custom_3', 'text'),
      { updatedAt: false },
    );
    await index('form_submissions_form_idx', 'form_submissions', ['form_id']);
    await index('form_submissions_contact_idx', 'form_submissions', ['contact_id', 'form_id']);

    await siteTable('landing_pages', (tb) =>
      tb
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('publish_at', t.timestampType),
    );
    await siteTable('website_pages', (tb) =>
      tb.addColumn('title', 'text', (c) => c.notNull()).addColumn('url', 'text'),
    );
    await siteTable('blogs', (tb) => tb.addColumn('title', 'text', (c) => c.notNull()));
    await siteTable('blog_posts', (tb) =>
      tb
        .addColumn('blog_id', t.foreignKeyType, ref('blogs'))
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('page_title', 'text', (c) => c.notNull())
        .addColumn('page_description', 'text', (c) => c.notNull())
        .addColumn('published_at', t.timestampType),
    );

    // --- Access and commerce --------------------------------------------------------------------
    await siteTable('purchases', (tb) =>
      tb
        .addColumn('customer_id', t.foreignKeyType, ref('customers'))
        .addColumn('offer_id', t.foreignKeyType, ref('offers'))
        .addColumn('amount_in_cents', 'integer', (c) => c.notNull())
        .addColumn('payment_type', 'text', (c) => c.notNull())
        .addColumn('multipay_payments_made', 'integer')
        .addColumn('opt_in', t.booleanType, (c) => c.notNull())
        .addColumn('raw_extra_contact_information', t.jsonType, (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('effective_start_at', t.timestampType)
        .addColumn('cardholder_name', 'text')
        .addColumn('billing_address_zip', 'text')
        .addColumn('deactivated_at', t.timestampType)
        .addColumn('deactivation_reason', 'text')
        .addColumn('coupon_code', 'text')
        .addColumn('source', 'text')
        .addColumn('referrer', 'text')
        .addColumn('quantity', 'integer', (c) => c.notNull())
        // Recurring billing: active, canceled, or null for purchases without one.
        .addColumn('subscription_status', 'text')
        .addColumn('subscription_canceled_at', t.timestampType),
    );
    await index('purchases_customer_idx', 'purchases', ['customer_id']);
    await index('purchases_offer_idx', 'purchases', ['offer_id']);
    await index('purchases_site_coupon_idx', 'purchases', ['site_id', 'coupon_code']);

    // Access to an offer: granted by hand or by a purchase, ended by a revoke or deactivation.
    await siteTable('offer_grants', (tb) =>
      tb
        .addColumn('contact_id', t.foreignKeyType, ref('contacts'))
        .addColumn('offer_id', t.foreignKeyType, ref('offers'))
        .addColumn('purchase_id', t.foreignKeyType, optionalRef('purchases'))
        .addColumn('granted_at', t.timestampType, (c) => c.notNull())
        .addColumn('revoked_at', t.timestampType),
    );
    await index('offer_grants_contact_idx', 'offer_grants', ['contact_id', 'offer_id']);
    await index('offer_grants_offer_idx', 'offer_grants', ['offer_id', 'contact_id']);

    // Access to a product, through an offer grant. Ended memberships are history
    // ("previously owned"); suspended ones are owned but not active.
    await siteTable('memberships', (tb) =>
      tb
        .addColumn('contact_id', t.foreignKeyType, ref('contacts'))
        .addColumn('product_id', t.foreignKeyType, ref('products'))
        .addColumn('offer_grant_id', t.foreignKeyType, optionalRef('offer_grants'))
        .addColumn('started_at', t.timestampType, (c) => c.notNull())
        .addColumn('suspended_at', t.timestampType)
        .addColumn('ended_at', t.timestampType),
    );
    await index('memberships_contact_idx', 'memberships', ['contact_id', 'product_id']);
    await index('memberships_product_idx', 'memberships', ['product_id', 'contact_id']);

    await siteTable('transactions', (tb) =>
      tb
        .addColumn('customer_id', t.foreignKeyType, ref('customers'))
        // Null for a transaction that pays for several offers at once (a bundle).
        .addColumn('offer_id', t.foreignKeyType, optionalRef('offers'))
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('payment_type', 'text')
        .addColumn('amount_in_cents', 'integer', (c) => c.notNull())
        .addColumn('sales_tax_in_cents', 'integer', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull()),
      { updatedAt: false },
    );
    await index('transactions_customer_idx', 'transactions', ['customer_id']);
    await db.schema
      .createTable('purchase_transactions')
      .addColumn('purchase_id', t.foreignKeyType, ref('purchases'))
      .addColumn('transaction_id', t.foreignKeyType, ref('transactions'))
      .addPrimaryKeyConstraint('purchase_transactions_pk', ['purchase_id', 'transaction_id'])
      .execute();
    await index('purchase_transactions_transaction_idx', 'purchase_transactions', ['transaction_id', 'purchase_id']);

    await siteTable('orders', (tb) =>
      tb
        .addColumn('customer_id', t.foreignKeyType, ref('customers'))
        .addColumn('order_number', 'integer', (c) => c.notNull())
        .addColumn('currency_code', 'text', (c) => c.notNull())
        .addColumn('fulfilled_at', t.timestampType)
        .addColumn('total_price_in_cents', 'integer', (c) => c.notNull())
        .addColumn('subtotal_in_cents', 'integer', (c) => c.notNull())
        .addColumn('sales_tax_amount_in_cents', 'integer', (c) => c.notNull())
        .addColumn('discount_amount_in_cents', 'integer', (c) => c.notNull()),
    );
    await unique('orders_site_number_uq', 'orders', ['site_id', 'order_number']);
    await siteTable('order_items', (tb) =>
      tb
        .addColumn('order_id', t.foreignKeyType, ref('orders'))
        .addColumn('quantity', 'integer', (c) => c.notNull())
        .addColumn('currency_code', 'text', (c) => c.notNull())
        .addColumn('item_type', 'text', (c) => c.notNull())
        .addColumn('item_id', 'integer', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('fulfilled_at', t.timestampType)
        .addColumn('total_price_in_cents', 'integer', (c) => c.notNull())
        .addColumn('subtotal_in_cents', 'integer', (c) => c.notNull())
        .addColumn('sales_tax_amount_in_cents', 'integer', (c) => c.notNull())
        .addColumn('discount_amount_in_cents', 'integer', (c) => c.notNull()),
    );
    await index('order_items_order_idx', 'order_items', ['order_id']);

    await siteTable('kajabi_payments_payouts', (tb) =>
      tb
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('amount_in_cents', 'integer', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('initiated_at', t.timestampType, (c) => c.notNull())
        .addColumn('estimated_arrival_at', t.timestampType, (c) => c.notNull())
        .addColumn('destination', 'text', (c) => c.notNull()),
    );

    await siteTable('hooks', (tb) =>
      tb
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('target_url', 'text', (c) => c.notNull())
        .addColumn('resource_id', 'integer'),
    );

    // --- Engagement -----------------------------------------------------------------------------
    await siteTable('events', (tb) =>
      tb.addColumn('title', 'text', (c) => c.notNull()).addColumn('starts_at', t.timestampType, (c) => c.notNull()),
    );
    await siteTable('event_registrations', (tb) =>
      tb.addColumn('event_id', t.foreignKeyType, ref('events')).addColumn('contact_id', t.foreignKeyType, ref('contacts')),
      { updatedAt: false },
    );
    await index('event_registrations_contact_idx', 'event_registrations', ['contact_id', 'event_id']);

    await siteTable('assessments', (tb) =>
      tb.addColumn('title', 'text', (c) => c.notNull()).addColumn('passing_score', 'integer', (c) => c.notNull()),
    );
    await siteTable('assessment_attempts', (tb) =>
      tb
        .addColumn('assessment_id', t.foreignKeyType, ref('assessments'))
        .addColumn('contact_id', t.foreignKeyType, ref('contacts'))
        .addColumn('score', 'integer')
        // Null while in progress.
        .addColumn('completed_at', t.timestampType),
      { updatedAt: false },
    );
    await index('assessment_attempts_contact_idx', 'assessment_attempts', ['contact_id', 'assessment_id']);

    await siteTable('newsletter_subscriptions', (tb) =>
      tb
        .addColumn('newsletter_id', t.foreignKeyType, ref('newsletters'))
        .addColumn('contact_id', t.foreignKeyType, ref('contacts'))
        .addColumn('subscribed_at', t.timestampType, (c) => c.notNull())
        .addColumn('unsubscribed_at', t.timestampType),
    );
    await index('newsletter_subscriptions_contact_idx', 'newsletter_subscriptions', ['contact_id', 'newsletter_id']);

    await siteTable('email_sequence_subscriptions', (tb) =>
      tb
        .addColumn('email_sequence_id', t.foreignKeyType, ref('email_sequences'))
        .addColumn('contact_id', t.foreignKeyType, ref('contacts'))
        .addColumn('subscribed_at', t.timestampType, (c) => c.notNull())
        .addColumn('unsubscribed_at', t.timestampType),
    );
    await index('email_sequence_subscriptions_contact_idx', 'email_sequence_subscriptions', ['contact_id', 'email_sequence_id']);

    await siteTable('email_broadcasts', (tb) =>
      tb.addColumn('subject', 'text', (c) => c.notNull()).addColumn('sent_at', t.timestampType),
    );
    // One row per thing that happened to one email for one contact: sent, delivered, opened,
    // clicked, bounced (hard or soft), dropped, complained. Broadcast emails name their broadcast;
    // sequence emails name their sequence.
    await siteTable(
      'email_events',
      (tb) =>
        tb
          .addColumn('contact_id', t.foreignKeyType, ref('contacts'))
          .addColumn('email_broadcast_id', t.foreignKeyType, optionalRef('email_broadcasts'))
          .addColumn('email_sequence_id', t.foreignKeyType, optionalRef('email_sequences'))
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('bounce_type', 'text')
          .addColumn('occurred_at', t.timestampType, (c) => c.notNull()),
      { updatedAt: false },
    );
    await index('email_events_contact_kind_idx', 'email_events', ['contact_id', 'kind', 'occurred_at']);
    await index('email_events_broadcast_idx', 'email_events', ['email_broadcast_id', 'kind', 'contact_id']);
  },
};
