// The demo business, as hand-written content: its products and offers, courses and their
// lessons, podcast episodes, email sequences, tags, forms and broadcasts. catalogue.ts turns
// these into rows; every moment is given in days relative to now.

export type ProductKey =
  | 'speaking'
  | 'photo'
  | 'watercolor'
  | 'podcast'
  | 'coaching'
  | 'community'
  | 'mindful'
  | 'bookkeeping'
  | 'shutterTalk';
export type OfferKey =
  | 'speaking'
  | 'speaking3'
  | 'allAccess'
  | 'photo'
  | 'watercolor'
  | 'coaching'
  | 'communityAnnual'
  | 'podcastFree'
  | 'mindfulFree'
  | 'bookkeeping'
  | 'shutterInsiders';
export type TagKey = 'newsletter' | 'webinar' | 'vip' | 'podcastListener' | 'speakingGuide' | 'coachingProspect' | 'affiliate' | 'watercolorCohort';
export type FormKey = 'speakingGuide' | 'newsletter' | 'coaching' | 'mindful' | 'webinar';
export type SequenceKey = 'welcome' | 'speakingTips' | 'photoStarter' | 'coachingNurture';
export type NewsletterKey = 'weekly' | 'creatorNotes';
export type EventKey = 'stageFrightQa' | 'photoWalk' | 'cohortKickoff' | 'townHall';
export type AssessmentKey = 'speakingQuiz' | 'exposureCheck' | 'bookkeepingCheck';

export type PaymentType = 'one_time' | 'subscription' | 'multipay' | 'free';

export interface OfferSpec {
  title: string;
  description: string | null;
  internalTitle: string | null;
  currency: string;
  priceInCents: number;
  paymentType: PaymentType;
  paymentMethod: string;
  priceDescription: string;
  /** Bought once per customer; the others take a quantity. */
  single: boolean;
  products: readonly ProductKey[];
  /** Subscriptions: billing period in months. */
  periodMonths?: number;
  /** Payment plans: number of payments. */
  installments?: number;
  createdDaysAgo: number;
}

export const PRODUCT_KINDS = {
  course: { name: 'Course', id: 1, type: 'Courses::Course' },
  cohort: { name: 'Cohort Course', id: 5, type: 'Courses::CohortCourse' },
  podcast: { name: 'Podcast', id: 3, type: 'Podcasts::Podcast' },
  coaching: { name: 'Coaching Program', id: 2, type: 'Coaching::Program' },
  community: { name: 'Community', id: 4, type: 'Communities::Community' },
} as const;

export interface ProductSpec {
  title: string;
  kind: keyof typeof PRODUCT_KINDS;
  description: string | null;
  status: 'ready' | 'processing' | 'draft';
  publishStatus: 'published' | 'draft';
  createdDaysAgo: number;
}

export const PRODUCTS: Record<ProductKey, ProductSpec> = {
  speaking: {
    title: 'Confident Public Speaking',
    kind: 'course',
    description: 'A step-by-step course to plan, rehearse and deliver talks without the nerves.',
    status: 'ready',
    publishStatus: 'published',
    createdDaysAgo: 760,
  },
  photo: {
    title: 'Photography Foundations',
    kind: 'course',
    description: 'Learn your camera, find good light and edit photos you are proud to share.',
    status: 'ready',
    publishStatus: 'published',
    createdDaysAgo: 700,
  },
  watercolor: {
    title: 'Spring Watercolor Cohort',
    kind: 'cohort',
    description: 'Six live weeks of watercolor with a small group and weekly feedback.',
    status: 'ready',
    publishStatus: 'published',
    createdDaysAgo: 150,
  },
  podcast: {
    title: 'The Northwind Podcast',
    kind: 'podcast',
    description: 'Weekly conversations about teaching, speaking and building a creative business.',
    status: 'ready',
    publishStatus: 'published',
    createdDaysAgo: 640,
  },
  coaching: {
    title: '1:1 Career Coaching',
    kind: 'coaching',
    description: 'Private coaching sessions to plan your next career move.',
    status: 'ready',
    publishStatus: 'published',
    createdDaysAgo: 520,
  },
  community: {
    title: 'Northwind Community',
    kind: 'community',
    description: null,
    status: 'ready',
    publishStatus: 'published',
    createdDaysAgo: 600,
  },
  mindful: {
    title: 'Mindful Mornings Mini-Course',
    kind: 'course',
    description: 'Ten minutes a day to start calmer: breath, intention and a short journal.',
    status: 'draft',
    publishStatus: 'draft',
    createdDaysAgo: 400,
  },
  bookkeeping: {
    title: 'Bookkeeping Basics for Creators',
    kind: 'course',
    description: 'Simple monthly bookkeeping habits for course creators and freelancers.',
    status: 'processing',
    publishStatus: 'published',
    createdDaysAgo: 90,
  },
  shutterTalk: {
    title: 'Shutter Talk',
    kind: 'podcast',
    description: null,
    status: 'processing',
    publishStatus: 'draft',
    createdDaysAgo: 40,
  },
};

export const OFFERS: Record<OfferKey, OfferSpec> = {
  speaking: {
    title: 'Confident Public Speaking',
    description: 'Lifetime access to the full course, worksheets and the practice community.',
    internalTitle: 'CPS - pay in full',
    currency: 'USD',
    priceInCents: 29_700,
    paymentType: 'one_time',
    paymentMethod: 'kajabi_payments',
    priceDescription: '$297.00',
    single: true,
    products: ['speaking'],
    createdDaysAgo: 755,
  },
  speaking3: {
    title: 'Confident Public Speaking (3 payments)',
    description: 'The full course in three monthly payments.',
    internalTitle: 'CPS - payment plan',
    currency: 'USD',
    priceInCents: 10_900,
    paymentType: 'multipay',
    paymentMethod: 'kajabi_payments',
    priceDescription: '3 payments of $109.00',
    single: true,
    products: ['speaking'],
    installments: 3,
    createdDaysAgo: 600,
  },
  allAccess: {
    title: 'Northwind All-Access Membership',
    description: 'Every course, the podcast archive and the community, billed monthly.',
    internalTitle: 'All-access monthly',
    currency: 'USD',
    priceInCents: 4_900,
    paymentType: 'subscription',
    paymentMethod: 'kajabi_payments',
    priceDescription: '$49.00/month',
    single: true,
    products: ['speaking', 'photo', 'podcast', 'community'],
    periodMonths: 1,
    createdDaysAgo: 590,
  },
  photo: {
    title: 'Photography Foundations',
    description: 'The complete photography course with editing presets.',
    internalTitle: null,
    currency: 'USD',
    priceInCents: 14_900,
    paymentType: 'one_time',
    paymentMethod: 'stripe',
    priceDescription: '$149.00',
    single: true,
    products: ['photo'],
    createdDaysAgo: 695,
  },
  watercolor: {
    title: 'Spring Watercolor Cohort',
    description: 'A seat in the spring cohort, taught live from Berlin.',
    internalTitle: 'Watercolor spring (EUR)',
    currency: 'EUR',
    priceInCents: 24_900,
    paymentType: 'one_time',
    paymentMethod: 'kajabi_payments',
    priceDescription: '€249.00',
    single: true,
    products: ['watercolor'],
    createdDaysAgo: 145,
  },
  coaching: {
    title: 'Career Coaching Session',
    description: 'One 60-minute private coaching session; buy several to save a block of time.',
    internalTitle: null,
    currency: 'USD',
    priceInCents: 22_500,
    paymentType: 'one_time',
    paymentMethod: 'paypal',
    priceDescription: '$225.00 per session',
    single: false,
    products: ['coaching'],
    createdDaysAgo: 515,
  },
  communityAnnual: {
    title: 'Northwind Community (Annual)',
    description: null,
    internalTitle: 'Community yearly',
    currency: 'USD',
    priceInCents: 39_000,
    paymentType: 'subscription',
    paymentMethod: 'kajabi_payments',
    priceDescription: '$390.00/year',
    single: true,
    products: ['community'],
    periodMonths: 12,
    createdDaysAgo: 595,
  },
  podcastFree: {
    title: 'Free Podcast Access',
    description: 'Listen to every episode in the app, free.',
    internalTitle: null,
    currency: 'USD',
    priceInCents: 0,
    paymentType: 'free',
    paymentMethod: 'free',
    priceDescription: 'Free',
    single: true,
    products: ['podcast'],
    createdDaysAgo: 635,
  },
  mindfulFree: {
    title: 'Mindful Mornings (Free)',
    description: 'The free mini-course, unlocked by the sign-up form.',
    internalTitle: 'Lead magnet: mindful mornings',
    currency: 'USD',
    priceInCents: 0,
    paymentType: 'free',
    paymentMethod: 'free',
    priceDescription: 'Free',
    single: true,
    products: ['mindful'],
    createdDaysAgo: 395,
  },
  bookkeeping: {
    title: 'Bookkeeping Basics for Creators',
    description: null,
    internalTitle: null,
    currency: 'USD',
    priceInCents: 7_900,
    paymentType: 'one_time',
    paymentMethod: 'kajabi_payments',
    priceDescription: '$79.00',
    single: true,
    products: ['bookkeeping'],
    createdDaysAgo: 85,
  },
  shutterInsiders: {
    title: 'Shutter Talk Insiders',
    description: 'Ad-free episodes and bonus interviews.',
    internalTitle: null,
    currency: 'USD',
    priceInCents: 500,
    paymentType: 'subscription',
    paymentMethod: 'kajabi_payments',
    priceDescription: '$5.00/month',
    single: true,
    products: ['shutterTalk'],
    periodMonths: 1,
    createdDaysAgo: 35,
  },
};

export interface CourseSpec {
  product: ProductKey;
  modules: Array<{ title: string; description: string | null; lessons: string[]; publishing: 'published' | 'draft' | 'drip' }>;
}

export const COURSES: CourseSpec[] = [
  {
    product: 'speaking',
    modules: [
      {
        title: 'Getting Started',
        description: 'How the course works and what you will be able to do at the end.',
        publishing: 'published',
        lessons: ['Welcome and how this course works', 'Why we fear public speaking', 'Setting your speaking goal'],
      },
      {
        title: 'Finding Your Voice',
        description: 'Breath, pace and pitch: the instrument you speak with.',
        publishing: 'published',
        lessons: ['Breathing for a steady voice', 'Pace, pause and pitch', 'Warm-ups you can do anywhere'],
      },
      {
        title: 'Structuring a Talk',
        description: null,
        publishing: 'published',
        lessons: ['The one-sentence message', 'Openings that earn attention', 'Stories that stick', 'Closing with a clear ask'],
      },
      {
        title: 'Owning the Stage',
        description: 'Movement, questions and your first full talk.',
        publishing: 'drip',
        lessons: ['Body language and movement', 'Handling questions', 'Your first five-minute talk'],
      },
    ],
  },
  {
    product: 'photo',
    modules: [
      {
        title: 'Camera Basics',
        description: 'Know your camera before you need it.',
        publishing: 'published',
        lessons: ['Choosing your first camera', 'The exposure triangle', 'Shooting in manual mode'],
      },
      {
        title: 'Light and Composition',
        description: null,
        publishing: 'published',
        lessons: ['Finding good light', 'Rule of thirds and beyond', 'Portraits in natural light'],
      },
      {
        title: 'Editing',
        description: 'From raw file to finished photo.',
        publishing: 'published',
        lessons: ['Lightroom essentials', 'Building a consistent style'],
      },
    ],
  },
  {
    product: 'watercolor',
    modules: [
      { title: 'Week 1: Materials and Washes', description: null, publishing: 'published', lessons: ['Paper, paint and brushes', 'Flat and graded washes'] },
      { title: 'Week 2: Color Mixing', description: null, publishing: 'drip', lessons: ['Mixing greens that look natural', 'Glazing and layering'] },
      { title: 'Week 3: Landscapes', description: null, publishing: 'drip', lessons: ['Skies in one pass', 'Painting along: a spring meadow'] },
    ],
  },
  {
    product: 'mindful',
    modules: [
      {
        title: 'The Ten-Minute Morning',
        description: 'A short routine, one lesson a day.',
        publishing: 'draft',
        lessons: ['Arrive: a two-minute breath practice', 'Set one intention', 'Journaling prompts'],
      },
    ],
  },
  {
    product: 'bookkeeping',
    modules: [
      { title: 'Setting Up', description: null, publishing: 'published', lessons: ['Separating business and personal money', 'Choosing a bookkeeping tool'] },
      { title: 'Every Month', description: null, publishing: 'published', lessons: ['Categorizing income and expenses', 'Reconciling your accounts'] },
    ],
  },
];

export const NORTHWIND_EPISODES = [
  'Why we started Northwind',
  'Stage fright is a skill problem',
  'Pricing your first online course',
  'Golden hour on a phone camera',
  'Building a community that talks back',
  'Speaking without notes',
  'From hobby to side income',
  'What a thousand student talks taught us',
  'Coaching: when to hire help',
  'Email that people open',
  "The creator's bookkeeping checklist",
  'Season wrap-up and listener questions',
];

export const SEQUENCES: Record<SequenceKey, { title: string; emailDays: number[] }> = {
  welcome: { title: 'Welcome Series', emailDays: [0, 2, 5] },
  speakingTips: { title: 'Speaking Tips: 5-Day Challenge', emailDays: [0, 1, 2, 3, 4] },
  photoStarter: { title: 'Photography Starter Drip', emailDays: [0, 3, 7] },
  coachingNurture: { title: 'Coaching Nurture', emailDays: [0, 4, 10] },
};

export const TAGS: Record<TagKey, string> = {
  newsletter: 'Newsletter',
  webinar: 'Webinar Attendee',
  vip: 'VIP',
  podcastListener: 'Podcast Listener',
  speakingGuide: 'Speaking Tips Guide',
  coachingProspect: 'Coaching Prospect',
  affiliate: 'Affiliate',
  watercolorCohort: 'Watercolor Cohort',
};

export interface FormSpec {
  title: string;
  description: string | null;
  isDefault: boolean;
  doubleOptIn: boolean;
  offer: OfferKey | null;
  tags: TagKey[];
  sequences: SequenceKey[];
  /** Extra fields after name and email. */
  fields: Array<'phone' | 'company' | 'role' | 'heardFrom'>;
  createdDaysAgo: number;
}

export const FORMS: Record<FormKey, FormSpec> = {
  speakingGuide: {
    title: 'Free Guide: 10 Speaking Tips',
    description: 'Get the guide our students use before every talk.',
    isDefault: false,
    doubleOptIn: false,
    offer: null,
    tags: ['speakingGuide'],
    sequences: ['speakingTips'],
    fields: ['heardFrom'],
    createdDaysAgo: 740,
  },
  newsletter: {
    title: 'Newsletter Sign-up',
    description: 'One useful email a week. Unsubscribe any time.',
    isDefault: true,
    doubleOptIn: true,
    offer: null,
    tags: ['newsletter'],
    sequences: ['welcome'],
    fields: [],
    createdDaysAgo: 750,
  },
  coaching: {
    title: 'Coaching Application',
    description: 'Tell us where you are and where you want to go.',
    isDefault: false,
    doubleOptIn: false,
    offer: null,
    tags: ['coachingProspect'],
    sequences: ['coachingNurture'],
    fields: ['phone', 'company', 'role'],
    createdDaysAgo: 510,
  },
  mindful: {
    title: 'Free Mini-Course: Mindful Mornings',
    description: 'Unlock the mini-course instantly.',
    isDefault: false,
    doubleOptIn: true,
    offer: 'mindfulFree',
    tags: [],
    sequences: ['welcome'],
    fields: [],
    createdDaysAgo: 390,
  },
  webinar: {
    title: 'Webinar: Speak Without Notes',
    description: null,
    isDefault: false,
    doubleOptIn: false,
    offer: null,
    tags: ['webinar'],
    sequences: [],
    fields: ['company'],
    createdDaysAgo: 300,
  },
};

/** Subjects and send days (days ago) of the broadcasts, oldest first; about every 16 days. */
export const BROADCASTS: Array<[string, number]> = [
  ['Welcome to the new Northwind Academy', 196],
  ['5 warm-up exercises before you speak', 180],
  ['Golden hour: a one-week photo challenge', 164],
  ['Our spring watercolor cohort is open', 148],
  ['How Maya got over stage fright', 132],
  ['New episode: pricing your first course', 116],
  ['Last call for the spring cohort', 100],
  ['Three editing mistakes to avoid', 84],
  ['Live Q&A next week: bring your questions', 68],
  ['Flash sale: 25% off Photography Foundations', 52],
  ['What we learned from a thousand student talks', 36],
  ['New course: Bookkeeping Basics for Creators', 20],
  ['This week on the podcast: speaking without notes', 6],
];
