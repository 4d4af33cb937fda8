import { createHash } from 'node:crypto';
import { customerOfferGrants } from '../domain/offer-grants.js';
import { attr, containsText, defineResource, rel } from '../jsonapi/resource.js';
import { centsToDecimal, contactFilterFamily, decimalToCents } from './contact-filters.js';

const GRAVATAR = 'https://www.gravatar.com/avatar/';

/** The custom avatar, else a Gravatar URL that shows a blank image when the email has none. */
export function avatarFor(avatarUrl: unknown, email: unknown): string | null {
  if (typeof avatarUrl === 'string' && avatarUrl !== '') return avatarUrl;
  if (typeof email !== 'string' || email === '') return null;
  const hash = createHash('md5').update(email.trim().toLowerCase()).digest('hex');
  return `${GRAVATAR}${hash}?d=blank`;
}

export const customers = defineResource({
  type: 'customers',
  table: 'customers',
  description:
    'Members of a site: contacts who were granted an offer or made a purchase. Name and email are kept in sync with the contact. A customer outlives its contact: when the contact is deleted the customer stays with its name, email, net revenue, purchases, transactions and orders, detached (relationships.contact is {"data": null}), until a contact with its email is granted an offer again.',
  readPermission: 'view:customers',
  tenancy: { kind: 'site', column: 'site_id' },
  defaultSort: '-created_at',
  attributes: {
    name: attr.string({ sort: true, upstream: { sort: true }, description: 'Full name; generated from the email when left blank' }),
    email: attr.string({ sort: true, upstream: { sort: true }, description: 'Email, unique within the site, lower-cased and stripped' }),
    avatar: attr.computed('string', ['avatar_url', 'email'], (row) => avatarFor(row.avatar_url, row.email), {
      nullable: true,
      description: 'Custom avatar, else a Gravatar URL that falls back to a blank image',
      // The Gravatar URL is what an empty avatar_url renders as: stored as null again.
      store: (value) => ({ avatar_url: typeof value === 'string' && !value.startsWith(GRAVATAR) ? value : null }),
    }),
    external_user_id: attr.string({ nullable: true, description: 'Reference in an external system, unique within the site' }),
    public_bio: attr.string({ nullable: true }),
    public_location: attr.string({ nullable: true }),
    public_website: attr.string({ nullable: true, description: 'A normalized URL' }),
    socials: attr.json({ nullable: true, description: 'Social media links by network' }),
    net_revenue: attr.computed('string', ['net_revenue_cents'], (row) => centsToDecimal(Number(row.net_revenue_cents ?? 0)), {
      description: 'Successful payments less refunds, as a decimal string such as "123.45"',
      store: (value) => ({ net_revenue_cents: decimalToCents(String(value ?? '0')) }),
    }),
    sign_in_count: attr.integer(),
    last_request_at: attr.datetime({ sort: true, upstream: { sort: true }, nullable: true, description: 'Most recent activity' }),
    bounced_at: attr.datetime({ nullable: true, description: 'When the email started bouncing; reset when the email changes' }),
    created_at: attr.datetime({ sort: true, upstream: { sort: true } }),
    updated_at: attr.datetime(),
  },
  sorts: {
    net_revenue: (eb) => eb.ref('customers.net_revenue_cents'),
  },
  upstream: { sorts: ['net_revenue'] },
  relationships: {
    site: rel.toOne('sites', 'site_id'),
    contact: rel.toOne('contacts', 'contact_id', { resourceLink: true }),
    offers: rel.toManyThrough(
      'offers',
      { table: 'offer_grants', sourceKey: 'contact_id', targetKey: 'offer_id', sourceColumn: 'contact_id' },
      {
        links: true,
        where: (eb) => eb('offer_grants.revoked_at', 'is', null),
        write: { permission: 'manage:customers', ...customerOfferGrants },
      },
    ),
    products: rel.toManyThrough(
      'products',
      { table: 'memberships', sourceKey: 'contact_id', targetKey: 'product_id', sourceColumn: 'contact_id' },
      { where: (eb) => eb('memberships.ended_at', 'is', null) },
    ),
  },
  includeNarrowing: {
    offers: {
      search: (eb, text, ctx) =>
        eb.or([
          containsText(eb, ctx, 'offers.title', text),
          containsText(eb, ctx, 'offers.internal_title', text),
        ]),
    },
    products: {
      search: (eb, text, ctx) => containsText(eb, ctx, 'products.title', text),
    },
  },
  filters: contactFilterFamily({ table: 'customers', contactId: 'customers.contact_id', createdAt: 'customers.created_at', noun: 'customer' }),
});
