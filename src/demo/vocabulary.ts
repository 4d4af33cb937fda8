// Words the demo people are made of: names, places, companies, notes. Emails use the reserved
// example domains (RFC 2606) and phone numbers the ranges set aside for fiction where there are
// such (555-01xx in North America, 020 7946 0xxx in London, 0161 496 0xxx in Manchester), so nothing here reaches a real person.

export const FIRST_NAMES = [
  'Olivia', 'James', 'Amelia', 'Mateo', 'Zoe', 'Ravi', 'Elena', 'Kwame', 'Isla', 'Jonah',
  'Mei', 'Samuel', 'Freya', 'Diego', 'Nadia', 'Owen', 'Leila', 'Felix', 'Anika', 'Caleb',
  'Rosa', 'Hugo', 'Yuki', 'Isaac', 'Clara', 'Tariq', 'Ingrid', 'Miles', 'Amara', 'Theo',
  'Lucia', 'Arjun', 'Hazel', 'Emeka', 'Vera', 'Gabriel', 'Sana', 'Oscar', 'Maren', 'Julian',
  'Fatima', 'Rowan', 'Beatriz', 'Elliot', 'Keiko', 'Adrian', 'Noor', 'Henrik', 'Camila', 'Declan',
  'Esther', 'Malik', 'Astrid', 'Rafael', 'Imani', 'Simon', 'Ayla', 'Victor', 'Paloma', 'Kenji',
] as const;

export const LAST_NAMES = [
  'Anderson', 'Brennan', 'Castillo', 'Dimitrov', 'Eriksen', 'Fischer', 'Gallagher', 'Haddad', 'Ibrahim', 'Jensen',
  'Kowalski', 'Lindqvist', 'Moreau', 'Nakamura', 'Osei', 'Petrov', 'Quinlan', 'Rossi', 'Sato', 'Thompson',
  'Usman', 'Varga', 'Whitaker', 'Xu', 'Yilmaz', 'Zimmermann', 'Alvarez', 'Bakker', 'Carvalho', 'Delgado',
  'Ellison', 'Fontaine', 'Grant', 'Holloway', 'Iyer', 'Jovanovic', 'Kaur', 'Lopez', 'Mensah', 'Novak',
  "O'Connor", 'Park', 'Reyes', 'Sullivan', 'Tanaka', 'Vasquez', 'Walsh', 'Young', 'Ahmed', 'Baptiste',
] as const;

export const EMAIL_DOMAINS = ['example.com', 'example.org', 'example.net', 'mail.example.com'] as const;

export interface Place {
  city: string;
  state: string;
  country: string;
  zips: readonly string[];
  /** Phone number pattern: each # is a digit. */
  phone: string;
  /** Sales tax included in prices charged here (US states that tax digital goods). */
  salesTax: number;
}

/** Weighted towards the United States, as the demo business is. */
export const PLACES: ReadonlyArray<readonly [Place, number]> = [
  [{ city: 'Portland', state: 'OR', country: 'US', zips: ['97205', '97209', '97214'], phone: '+1 503-555-01##', salesTax: 0 }, 6],
  [{ city: 'Seattle', state: 'WA', country: 'US', zips: ['98101', '98103', '98122'], phone: '+1 206-555-01##', salesTax: 0.065 }, 5],
  [{ city: 'Austin', state: 'TX', country: 'US', zips: ['78701', '78704', '78751'], phone: '+1 512-555-01##', salesTax: 0.0625 }, 5],
  [{ city: 'Brooklyn', state: 'NY', country: 'US', zips: ['11201', '11211', '11238'], phone: '+1 718-555-01##', salesTax: 0.04 }, 5],
  [{ city: 'Denver', state: 'CO', country: 'US', zips: ['80202', '80205', '80218'], phone: '+1 303-555-01##', salesTax: 0 }, 4],
  [{ city: 'Chicago', state: 'IL', country: 'US', zips: ['60607', '60614', '60622'], phone: '+1 312-555-01##', salesTax: 0 }, 4],
  [{ city: 'San Diego', state: 'CA', country: 'US', zips: ['92101', '92103', '92104'], phone: '+1 619-555-01##', salesTax: 0 }, 4],
  [{ city: 'Asheville', state: 'NC', country: 'US', zips: ['28801', '28803', '28806'], phone: '+1 828-555-01##', salesTax: 0 }, 2],
  [{ city: 'Minneapolis', state: 'MN', country: 'US', zips: ['55401', '55408', '55414'], phone: '+1 612-555-01##', salesTax: 0 }, 2],
  [{ city: 'Toronto', state: 'ON', country: 'CA', zips: ['M5V 2T6', 'M4M 1H7', 'M6J 3A4'], phone: '+1 416-555-01##', salesTax: 0 }, 3],
  [{ city: 'Vancouver', state: 'BC', country: 'CA', zips: ['V6B 1A1', 'V5T 2C3', 'V6K 1P8'], phone: '+1 604-555-01##', salesTax: 0 }, 2],
  [{ city: 'London', state: 'England', country: 'GB', zips: ['EC1V 9HX', 'N1 7GU', 'SE1 9SG'], phone: '+44 20 7946 0###', salesTax: 0 }, 3],
  [{ city: 'Manchester', state: 'England', country: 'GB', zips: ['M1 1AE', 'M4 6BF', 'M20 2RN'], phone: '+44 161 496 0###', salesTax: 0 }, 1],
  [{ city: 'Berlin', state: 'Berlin', country: 'DE', zips: ['10115', '10245', '10999'], phone: '+49 30 5550 0###', salesTax: 0 }, 2],
  [{ city: 'Melbourne', state: 'VIC', country: 'AU', zips: ['3000', '3065', '3121'], phone: '+61 3 5550 1###', salesTax: 0 }, 2],
  [{ city: 'Dublin', state: 'Leinster', country: 'IE', zips: ['D02 X285', 'D08 VF8H', 'D06 F6Y4'], phone: '+353 1 555 0###', salesTax: 0 }, 1],
  [{ city: 'Amsterdam', state: 'North Holland', country: 'NL', zips: ['1012 JS', '1017 CT', '1073 AB'], phone: '+31 20 555 0###', salesTax: 0 }, 1],
];

export const STREET_NAMES = [
  'Maple Avenue', 'Oak Street', 'Hawthorne Boulevard', 'Division Street', 'Alberta Street', 'Pine Street',
  'Cedar Lane', 'Lakeview Drive', 'Willow Way', 'Harbor Road', 'Elm Court', 'Mill Street', 'Park Terrace',
  'Riverside Drive', 'Sunset Avenue', 'Chestnut Street', 'Orchard Road', 'Summit Avenue', 'Garden Row', 'Beacon Street',
] as const;

export const SECOND_LINES = ['Apt 2B', 'Suite 300', 'Unit 14', 'Apt 5C', 'Floor 3', 'Unit 7', 'Apt 11A'] as const;

export const COMPANIES = [
  'Brightline Studio', 'Cedar & Oak Consulting', 'Harbor Analytics', 'Lumen Creative Co.', 'Northfield Dental',
  'Tidewater Realty', 'Quarry Labs', 'Juniper Health', 'Fieldnote Press', 'Copperleaf Bakery', 'Summit Legal',
  'Evergreen Schools', 'Bluebird Events', 'Ironwood Fitness', 'Kestrel Software',
] as const;

/** Choices of the Role custom field (custom_2). */
export const ROLES = ['Founder', 'Manager', 'Individual contributor', 'Student', 'Educator'] as const;

/** Answers to "How did you hear about us?" (custom_3). */
export const HEARD_FROM = ['Podcast', 'A friend', 'Instagram', 'YouTube', 'Google search', 'A conference talk'] as const;

export const REFERRERS = [
  'https://www.google.com/',
  'https://www.instagram.com/',
  'https://www.youtube.com/',
  'https://northwind.example/blog/overcoming-stage-fright',
  'https://podcasts.example.com/northwind',
] as const;

export const NOTE_BODIES = [
  'Asked about group pricing for a team of six. Sent the team offer sheet.',
  'Prefers email over phone. Lives two time zones ahead, so mornings work best.',
  'Met at the Portland creators meetup; interested in the coaching program.',
  'Requested an invoice with the company VAT number for the last purchase.',
  'Gave great feedback on module 3 and offered a testimonial for the sales page.',
  'Had trouble logging in after changing email; fixed the account and resent the welcome email.',
  'Wants to know when the next watercolor cohort starts. Added to the waitlist.',
  'Refund processed as a courtesy; said the timing was not right and may come back later.',
  'Podcast guest candidate: runs a photography studio and teaches workshops.',
  'Asked whether the course works on a tablet. Confirmed the app supports it.',
  'Booked a discovery call for next Tuesday.',
  'Affiliate partner: shares the speaking course with their newsletter readers.',
] as const;

export const BIOS = [
  'Product designer learning to present with confidence.',
  'Weekend photographer, weekday accountant.',
  'I teach high-school science and speak at education conferences.',
  'Watercolor hobbyist turned small-business owner.',
  'Founder of a two-person studio; always learning.',
] as const;
