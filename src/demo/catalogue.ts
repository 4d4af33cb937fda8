// What the demo business sells and publishes, as rows: products and the offers that grant them,
// courses with modules, lessons and media, podcasts, forms, pages, the blog, tags and custom
// fields, events, assessments, newsletters, email sequences and broadcasts, webhooks and payouts.
// Fixed in size (the content is in catalogue-content.ts): only the people grow with the size.
import {
  BROADCASTS,
  COURSES,
  FORMS,
  NORTHWIND_EPISODES,
  OFFERS,
  PRODUCT_KINDS,
  PRODUCTS,
  SEQUENCES,
  TAGS,
  type AssessmentKey,
  type EventKey,
  type FormKey,
  type FormSpec,
  type NewsletterKey,
  type OfferKey,
  type OfferSpec,
  type ProductKey,
  type ProductSpec,
  type SequenceKey,
  type TagKey,
} from './catalogue-content.js';
import { DEMO_SEED, Rng, seedOf } from './random.js';
import type { Draft, Row, RowSet, TableName } from './rows.js';
import type { Timeline } from './timeline.js';

/** Tables of the catalogue, each after the tables it refers to. */
export const CATALOGUE_TABLES: readonly TableName[] = [
  'products',
  'offers',
  'offer_products',
  'courses',
  'modules',
  'lessons',
  'media',
  'podcasts',
  'podcast_episodes',
  'email_sequences',
  'newsletters',
  'contact_tags',
  'custom_fields',
  'forms',
  'form_fields',
  'form_tags',
  'form_email_sequences',
  'landing_pages',
  'website_pages',
  'blogs',
  'blog_posts',
  'events',
  'assessments',
  'email_broadcasts',
  'hooks',
  'kajabi_payments_payouts',
];

export interface CatalogueOffer {
  key: OfferKey;
  row: Row<'offers'>;
  spec: OfferSpec;
  createdAt: Date;
  products: Array<Row<'products'>>;
}

export interface CatalogueForm {
  row: Row<'forms'>;
  /** What the form asks besides name and email. */
  fields: ReadonlyArray<FormSpec['fields'][number]>;
  tags: TagKey[];
  sequences: SequenceKey[];
  offer: OfferKey | null;
  createdAt: Date;
}

export interface CatalogueBroadcast {
  row: Row<'email_broadcasts'>;
  sentAt: Date;
}

export interface Catalogue {
  siteId: number;
  subdomain: string;
  products: Record<ProductKey, Row<'products'>>;
  offers: Record<OfferKey, CatalogueOffer>;
  tags: Record<TagKey, Row<'contact_tags'>>;
  forms: Record<FormKey, CatalogueForm>;
  sequences: Record<SequenceKey, { row: Row<'email_sequences'>; emailDays: readonly number[] }>;
  newsletters: Record<NewsletterKey, Row<'newsletters'>>;
  events: Record<EventKey, { row: Row<'events'>; startsAt: Date }>;
  assessments: Record<AssessmentKey, { row: Row<'assessments'>; passingScore: number; product: ProductKey }>;
  /** Broadcasts that went out, oldest first. */
  broadcasts: CatalogueBroadcast[];
}

const slugify = (text: string) =>
  text
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

export function buildCatalogue(set: RowSet, site: { id: number; subdomain: string }, t: Timeline, rng: Rng): Catalogue {
  const base = `https://${site.subdomain}.mykajabi.com`;
  const cdn = 'https://cdn.example.com/northwind';
  const site_id = site.id;
  /** created_at some days ago, updated_at a little later (never in the future). */
  const stamps = (createdDaysAgo: number, updatedAfterDays = 0) => {
    const created_at = t.ago(createdDaysAgo + rng.float() * 0.8);
    const updated_at = updatedAfterDays > 0 && updatedAfterDays < createdDaysAgo ? t.plusDays(created_at, updatedAfterDays) : created_at;
    return { site_id, created_at, updated_at };
  };

  // --- Products, offers --------------------------------------------------------------------------
  const products = {} as Record<ProductKey, Row<'products'>>;
  for (const [key, p] of Object.entries(PRODUCTS) as Array<[ProductKey, ProductSpec]>) {
    const kind = PRODUCT_KINDS[p.kind];
    const slug = slugify(p.title);
    products[key] = set.add('products', {
      title: p.title,
      description: p.description,
      status: p.status,
      product_type_id: kind.id,
      product_type_name: kind.name,
      productizable_type: kind.type,
      publish_status: p.publishStatus,
      thumbnail_url: `${cdn}/products/${slug}.jpg`,
      url: p.publishStatus === 'published' ? `${base}/products/${slug}` : null,
      ...stamps(p.createdDaysAgo, rng.int(3, 40)),
    });
  }

  // Offer tokens are unique across sites: drawn from a stream of the site's own.
  const tokens = new Rng(seedOf(DEMO_SEED, 'offer-tokens', site.id));
  const offers = {} as Record<OfferKey, CatalogueOffer>;
  for (const [key, o] of Object.entries(OFFERS) as Array<[OfferKey, OfferSpec]>) {
    const s = stamps(o.createdDaysAgo, rng.int(1, 30));
    const row = set.add('offers', {
      title: o.title,
      description: o.description,
      internal_title: o.internalTitle,
      currency: o.currency,
      price_in_cents: o.priceInCents,
      payment_type: o.paymentType,
      token: tokens.token(8),
      payment_method: o.paymentMethod,
      price_description: o.priceDescription,
      single: o.single,
      image_url: o.paymentType === 'free' ? null : `${cdn}/offers/${slugify(o.title)}.png`,
      billing_period_months: o.paymentType === 'subscription' ? (o.periodMonths ?? 1) : o.paymentType === 'multipay' ? 1 : null,
      installment_count: o.paymentType === 'multipay' ? (o.installments ?? 3) : null,
      ...s,
    });
    offers[key] = { key, row, spec: o, createdAt: s.created_at, products: o.products.map((p) => products[p]) };
  }
  for (const offer of Object.values(offers)) {
    for (const product of offer.products) set.add('offer_products', { offer_id: offer.row, product_id: product });
  }

  // --- Courses: modules, lessons, media ------------------------------------------------------------
  for (const c of COURSES) {
    const p = PRODUCTS[c.product];
    const courseSlug = slugify(p.title);
    const draft = p.publishStatus === 'draft';
    const course = set.add('courses', {
      product_id: products[c.product],
      title: p.title,
      description: p.description,
      thumbnail_url: `${cdn}/courses/${courseSlug}.jpg`,
      publish_status: p.publishStatus,
      ...stamps(p.createdDaysAgo - 1, 20),
    });
    let lessonPosition = 0;
    c.modules.forEach((m, mi) => {
      const module = set.add('modules', {
        course_id: course,
        title: m.title,
        description: m.description,
        position: mi + 1,
        poster_image_url: mi === 0 ? `${cdn}/courses/${courseSlug}/module-${mi + 1}.jpg` : null,
        publishing_option: m.publishing,
        ...stamps(p.createdDaysAgo - 2 - mi, 10),
      });
      m.lessons.forEach((title, li) => {
        lessonPosition++;
        const lessonDraft = draft || (m.publishing === 'drip' && li === m.lessons.length - 1);
        const lesson = set.add('lessons', {
          course_id: course,
          module_id: module,
          title,
          position: lessonPosition,
          // status is the lesson's processing state (ready, duplicating, failed); whether it is
          // shown is publishing_option.
          status: 'ready',
          publishing_option: lessonDraft ? 'draft' : m.publishing,
          ...stamps(p.createdDaysAgo - 2 - mi, 12),
        });
        const lessonSlug = slugify(title);
        set.add('media', {
          lesson_id: lesson,
          kind: 'video',
          title: `${title} (video)`,
          url: `https://videos.example.com/northwind/${courseSlug}/${lessonSlug}.mp4`,
          duration_seconds: rng.int(180, 1_260),
          ...stamps(p.createdDaysAgo - 2 - mi),
        });
        if (li % 2 === 1) {
          set.add('media', {
            lesson_id: lesson,
            kind: 'download',
            title: `Worksheet: ${title}`,
            url: `${cdn}/downloads/${courseSlug}/${lessonSlug}.pdf`,
            duration_seconds: null,
            ...stamps(p.createdDaysAgo - 2 - mi),
          });
        }
        if (c.product === 'speaking' && li === 0) {
          set.add('media', {
            lesson_id: lesson,
            kind: 'audio',
            title: `${title} (audio only)`,
            url: `https://audio.example.com/northwind/${courseSlug}/${lessonSlug}.mp3`,
            duration_seconds: rng.int(180, 900),
            ...stamps(p.createdDaysAgo - 2 - mi),
          });
        }
      });
    });
  }

  // --- Podcasts ---------------------------------------------------------------------------------------
  const northwind = set.add('podcasts', {
    product_id: products.podcast,
    title: PRODUCTS.podcast.title,
    description: PRODUCTS.podcast.description ?? '',
    language: 'en',
    owner_email: 'podcast@northwind.example',
    author: 'Avery Quinn',
    status: 'ready',
    show_type: 'episodic',
    thumbnail_url: `${cdn}/podcasts/the-northwind-podcast-thumb.jpg`,
    cover_art_url: `${cdn}/podcasts/the-northwind-podcast-cover.jpg`,
    categories: ['Education', 'Business', 'Arts'],
    directories: [
      { id: 'apple', url: 'https://podcasts.example.com/apple/the-northwind-podcast', config: { explicit: false } },
      { id: 'spotify', url: 'https://podcasts.example.com/spotify/the-northwind-podcast', config: {} },
    ],
    migrated_to_url: null,
    migrated: false,
    public: true,
    ready: true,
    distribution_ready: true,
    url: `${base}/podcasts/the-northwind-podcast`,
    ...stamps(PRODUCTS.podcast.createdDaysAgo - 1, 30),
  });
  NORTHWIND_EPISODES.forEach((title, i) => {
    const publishedDaysAgo = (NORTHWIND_EPISODES.length - i) * 7 - 4;
    set.add('podcast_episodes', {
      podcast_id: northwind,
      title,
      description: i % 3 === 2 ? null : `Episode ${i + 1}: ${title.toLowerCase()}, with notes and links in the show page.`,
      episode_number: i + 1,
      duration_seconds: rng.int(1_200, 3_600),
      audio_url: `https://audio.example.com/northwind/podcast/episode-${i + 1}.mp3`,
      published_at: t.ago(publishedDaysAgo),
      ...stamps(publishedDaysAgo + 3),
    });
  });
  set.add('podcast_episodes', {
    podcast_id: northwind,
    title: 'Season two preview',
    description: null,
    episode_number: NORTHWIND_EPISODES.length + 1,
    duration_seconds: 540,
    audio_url: `https://audio.example.com/northwind/podcast/episode-${NORTHWIND_EPISODES.length + 1}.mp3`,
    published_at: null,
    ...stamps(1),
  });
  const shutter = set.add('podcasts', {
    product_id: products.shutterTalk,
    title: PRODUCTS.shutterTalk.title,
    description: 'A serial about learning film photography, one roll at a time.',
    language: 'en',
    owner_email: 'podcast@northwind.example',
    author: null,
    status: 'importing',
    show_type: 'serial',
    thumbnail_url: null,
    cover_art_url: null,
    categories: ['Arts'],
    directories: [],
    migrated_to_url: null,
    migrated: false,
    public: false,
    ready: false,
    distribution_ready: false,
    url: `${base}/podcasts/shutter-talk`,
    ...stamps(PRODUCTS.shutterTalk.createdDaysAgo - 1, 5),
  });
  ['Part 1: The first roll', 'Part 2: Learning to see', 'Part 3: The darkroom'].forEach((title, i) => {
    set.add('podcast_episodes', {
      podcast_id: shutter,
      title,
      description: null,
      episode_number: i + 1,
      duration_seconds: rng.int(900, 1_800),
      audio_url: `https://audio.example.com/northwind/shutter-talk/part-${i + 1}.mp3`,
      published_at: i < 2 ? t.ago(30 - i * 10) : null,
      ...stamps(32 - i * 10),
    });
  });

  // --- Email: sequences, newsletters ---------------------------------------------------------------------
  const sequences = {} as Catalogue['sequences'];
  for (const [key, s] of Object.entries(SEQUENCES) as Array<[SequenceKey, (typeof SEQUENCES)[SequenceKey]]>) {
    sequences[key] = { row: set.add('email_sequences', { title: s.title, ...stamps(745, 100) }), emailDays: s.emailDays };
  }
  const newsletters: Catalogue['newsletters'] = {
    weekly: set.add('newsletters', { title: 'The Northwind Weekly', ...stamps(748, 200) }),
    creatorNotes: set.add('newsletters', { title: 'Creator Notes (monthly)', ...stamps(420, 60) }),
  };

  // --- Contact tags and custom fields -----------------------------------------------------------------------
  const tags = {} as Record<TagKey, Row<'contact_tags'>>;
  (Object.entries(TAGS) as Array<[TagKey, string]>).forEach(([key, name], i) => {
    tags[key] = set.add('contact_tags', { name, ...stamps(750 - i * 40) });
  });
  set.add('custom_fields', { title: 'Company', handle: 'custom_1', field_type: 'TextField', required: false, ...stamps(600) });
  set.add('custom_fields', { title: 'Role', handle: 'custom_2', field_type: 'SelectField', required: false, ...stamps(590) });
  set.add('custom_fields', { title: 'How did you hear about us?', handle: 'custom_3', field_type: 'TextArea', required: true, ...stamps(400, 30) });

  // --- Forms ---------------------------------------------------------------------------------------------------
  const forms = {} as Record<FormKey, CatalogueForm>;
  for (const [key, f] of Object.entries(FORMS) as Array<[FormKey, FormSpec]>) {
    const s = stamps(f.createdDaysAgo, 15);
    const form = set.add('forms', {
      title: f.title,
      description: f.description,
      is_default: f.isDefault,
      // forms.webhook_url renders as JSON (upstream types it as an object) over a text column;
      // the demo leaves it empty rather than store text one database reads differently.
      webhook_url: null,
      url: `${base}/forms/${slugify(f.title)}`,
      offer_id: f.offer ? offers[f.offer].row : null,
      double_opt_in: f.doubleOptIn,
      ...s,
    });
    forms[key] = { row: form, fields: f.fields, tags: f.tags, sequences: f.sequences, offer: f.offer, createdAt: s.created_at };
    const fields: Array<Omit<Draft<'form_fields'>, 'form_id' | 'position' | 'site_id' | 'created_at' | 'updated_at'>> = [
      { title: 'Name', field_type: 'name', required: true, handle: 'name', select_options: null, editable: true },
      { title: 'Email', field_type: 'email', required: true, handle: 'email', select_options: null, editable: false },
    ];
    for (const extra of f.fields) {
      if (extra === 'phone') fields.push({ title: 'Phone', field_type: 'phone_number', required: false, handle: 'phone_number', select_options: null, editable: true });
      if (extra === 'company') fields.push({ title: 'Company', field_type: 'TextField', required: false, handle: 'custom_1', select_options: null, editable: true });
      if (extra === 'role') {
        fields.push({
          title: 'Role',
          field_type: 'SelectField',
          required: true,
          handle: 'custom_2',
          select_options: 'Founder\nManager\nIndividual contributor\nStudent\nEducator',
          editable: true,
        });
      }
      if (extra === 'heardFrom') {
        fields.push({ title: 'How did you hear about us?', field_type: 'TextArea', required: false, handle: 'custom_3', select_options: null, editable: true });
      }
    }
    fields.forEach((field, i) => set.add('form_fields', { form_id: form, position: i + 1, ...field, ...s }));
    for (const tag of f.tags) set.add('form_tags', { form_id: form, contact_tag_id: tags[tag] });
    for (const seq of f.sequences) set.add('form_email_sequences', { form_id: form, email_sequence_id: sequences[seq].row });
  }

  // --- Pages and the blog ------------------------------------------------------------------------------------------
  const landing: Array<[string, number, number | null]> = [
    // title, created days ago, publish_at (days from now; negative: in the past; null: never)
    ['Confident Public Speaking: Enroll Today', 740, -735],
    ['Free Guide: 10 Speaking Tips', 735, -730],
    ['Book a Career Coaching Call', 505, -500],
    ['Anniversary Sale', 200, -190],
    ['Spring Watercolor Cohort Waitlist', 150, -140],
    ['Bookkeeping Basics Early Bird', 12, 3],
    ['Golden Hour Photo Walk', 9, 14],
    ['Podcast Season Two Launch', 5, null],
    ['Community Town Hall Replay', 2, null],
  ];
  for (const [title, createdDaysAgo, publishIn] of landing) {
    set.add('landing_pages', {
      title,
      url: `${base}/pages/${slugify(title)}`,
      publish_at: publishIn === null ? null : publishIn < 0 ? t.ago(-publishIn + rng.float() * 0.5) : t.ahead(publishIn + rng.float() * 0.5),
      ...stamps(createdDaysAgo, Math.max(1, Math.floor(createdDaysAgo / 3))),
    });
  }
  const website: Array<[string, string | null, number]> = [
    ['Home', '/', 760],
    ['About', '/about', 758],
    ['Courses', '/courses', 700],
    ['Contact', '/contact', 755],
    ['Blog', '/blog', 690],
    ['Privacy Policy', '/privacy-policy', 750],
    ['Terms of Service', '/terms', 750],
    ['Thank You', null, 300],
  ];
  for (const [title, path, createdDaysAgo] of website) {
    set.add('website_pages', { title, url: path === null ? null : `${base}${path === '/' ? '' : path}`, ...stamps(createdDaysAgo, 30) });
  }
  const blog = set.add('blogs', { title: 'The Northwind Blog', ...stamps(690, 100) });
  const posts: Array<[string, number | null, string]> = [
    ['Overcoming stage fright: what actually works', 650, 'Stage fright is not a personality trait. It is a skill gap, and skills can be practised.'],
    ['How to rehearse a talk in twenty minutes', 540, 'A short, repeatable rehearsal routine for busy people.'],
    ['The exposure triangle, explained with coffee', 470, 'Aperture, shutter speed and ISO, told with a morning cup of coffee.'],
    ['Golden hour on a budget', 380, 'You do not need a new lens to take better evening photos.'],
    ['What we learned running our first cohort', 120, 'Small groups, live feedback and why we capped the class at twenty.'],
    ['Pricing your first online course', 75, 'Three ways to set a price and the one we use.'],
    ['Bookkeeping for creators: the monthly checklist', 18, 'Fifteen minutes a month keeps tax season calm.'],
    ['Speaking without notes (draft)', null, 'Draft: memorise the structure, not the script.'],
    ['Our favourite student talks of the year', null, 'Draft: a round-up of student talks.'],
  ];
  for (const [title, publishedDaysAgo, summary] of posts) {
    const slug = slugify(title.replace(' (draft)', ''));
    const createdDaysAgo = publishedDaysAgo === null ? rng.int(3, 20) : publishedDaysAgo + rng.int(1, 5);
    set.add('blog_posts', {
      blog_id: blog,
      title,
      slug,
      url: `${base}/blog/${slug}`,
      content: `<p>${summary}</p><p>Read on for the practical steps we teach at Northwind Academy.</p>`,
      page_title: `${title} | Northwind Academy`,
      page_description: summary,
      published_at: publishedDaysAgo === null ? null : t.ago(publishedDaysAgo + rng.float() * 0.5),
      ...stamps(createdDaysAgo, 1),
    });
  }

  // --- Events, assessments -------------------------------------------------------------------------------------------
  const eventSpecs: Array<[EventKey, string, number]> = [
    ['stageFrightQa', 'Live Q&A: Overcoming Stage Fright', -45],
    ['photoWalk', 'Photo Walk: Golden Hour in Portland', -10],
    ['cohortKickoff', 'Spring Watercolor Cohort Kickoff', 7],
    ['townHall', 'Community Town Hall', 21],
  ];
  const events = {} as Catalogue['events'];
  for (const [key, title, startsIn] of eventSpecs) {
    const startsAt = startsIn < 0 ? t.ago(-startsIn) : t.ahead(startsIn);
    events[key] = { row: set.add('events', { title, starts_at: startsAt, ...stamps(Math.max(30, 30 - startsIn)) }), startsAt };
  }
  const assessmentSpecs: Array<[AssessmentKey, string, number, ProductKey]> = [
    ['speakingQuiz', 'Public Speaking Fundamentals Quiz', 70, 'speaking'],
    ['exposureCheck', 'Exposure Triangle Check', 80, 'photo'],
    ['bookkeepingCheck', 'Bookkeeping Readiness Check', 60, 'bookkeeping'],
  ];
  const assessments = {} as Catalogue['assessments'];
  for (const [key, title, passingScore, product] of assessmentSpecs) {
    assessments[key] = {
      row: set.add('assessments', { title, passing_score: passingScore, ...stamps(PRODUCTS[product].createdDaysAgo - 5) }),
      passingScore,
      product,
    };
  }

  // --- Broadcasts -----------------------------------------------------------------------------------------------------
  const broadcasts: CatalogueBroadcast[] = BROADCASTS.map(([subject, daysAgo]) => {
    const sentAt = t.ago(daysAgo - 0.4 + rng.float() * 0.1);
    return { row: set.add('email_broadcasts', { subject, sent_at: sentAt, ...stamps(daysAgo + 2, 2) }), sentAt };
  });
  set.add('email_broadcasts', { subject: 'Anniversary sale preview', sent_at: null, ...stamps(1) });

  // --- Webhooks -----------------------------------------------------------------------------------------------------------
  const hooks: Array<[string, string, Row<'forms'> | Row<'contact_tags'> | null, number]> = [
    ['purchase', 'https://hooks.example.com/northwind/purchases', null, 400],
    ['payment_succeeded', 'https://crm.example.com/webhooks/payments', null, 380],
    ['order_created', 'https://fulfilment.example.net/orders', null, 200],
    ['form_submission', 'https://hooks.example.com/northwind/coaching-applications', forms.coaching.row, 150],
    ['tag_added', 'https://crm.example.com/webhooks/vip-added', tags.vip, 90],
    ['tag_removed', 'https://crm.example.com/webhooks/vip-removed', tags.vip, 90],
  ];
  for (const [event, target_url, resource, createdDaysAgo] of hooks) {
    // Every demo hook is disabled, so sitebiz never posts the demo's people to these made-up hosts
    // (no sandbox can reach the business's CRM) and a clock advance does not fill the delivery log
    // with failures and disable them one by one (docs/sandbox.md "The demo's hooks"). The
    // fulfilment endpoint's story stays: it failed every delivery from a week ago and was disabled
    // after 5 days; the others were switched off when the demo was made.
    const health = event === 'order_created' ? { failing_since: t.ago(7), disabled_at: t.ago(2) } : { disabled_at: t.ago(0) };
    set.add('hooks', { event, target_url, resource_id: resource, ...stamps(createdDaysAgo), ...health });
  }

  // --- Payouts: every two weeks; the newest still pending, an instant payout in transit --------------------------------
  const payouts: Array<[daysAgo: number, status: string]> = [];
  for (let i = 0; i < 12; i++) payouts.push([166 - i * 14, i === 3 ? 'canceled' : i === 6 ? 'failed' : 'paid']);
  payouts.push([2.2, 'in_transit'], [0.6, 'pending']);
  payouts.forEach(([daysAgo, status], i) => {
    const initiatedAt = t.ago(daysAgo + rng.float() * 0.3);
    set.add('kajabi_payments_payouts', {
      status,
      amount_in_cents: rng.int(850, 6_200) * 100 + rng.int(0, 99),
      currency: 'USD',
      initiated_at: initiatedAt,
      estimated_arrival_at: t.plusDays(initiatedAt, 3),
      destination: i < 7 ? 'Wells Fargo - 0917' : 'Chase Bank - 4821',
      created_at: initiatedAt,
      updated_at: status === 'paid' ? t.plusDays(initiatedAt, 3) : initiatedAt,
      site_id,
    });
  });

  return {
    siteId: site.id,
    subdomain: site.subdomain,
    products,
    offers,
    tags,
    forms,
    sequences,
    newsletters,
    events,
    assessments,
    broadcasts,
  };
}
