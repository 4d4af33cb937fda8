// Every resource of the API, by name. Adding a resource means adding its file and a line here;
// nothing scans directories.
import type { ResourceDefinition } from '../jsonapi/resource.js';
import { auditEvents } from './audit-events.js';
import { contactNotes } from './contact-notes.js';
import { contactTags } from './contact-tags.js';
import { contacts } from './contacts.js';
import { courses, lessons, media, modules } from './courses.js';
import { customFields } from './custom-fields.js';
import { customers } from './customers.js';
import { emailActivities, emailBroadcasts } from './email-activity.js';
import { faults } from '../sandbox/fault-routes.js';
import { journalEntries } from '../sandbox/journal.js';
import { messagesResource } from '../sandbox/messages.js';
import { events } from './events.js';
import { formFields, forms, formSubmissions } from './forms.js';
import { hooks } from './hooks.js';
import { offers } from './offers.js';
import { orderItems, orders } from './orders.js';
import { blogPosts, blogs, landingPages, websitePages } from './pages.js';
import { kajabiPaymentsPayouts } from './payouts.js';
import { podcastEpisodes, podcasts } from './podcasts.js';
import { products } from './products.js';
import { purchases } from './purchases.js';
import { sites } from './sites.js';
import { transactions } from './transactions.js';
import { users } from './users.js';
import { webhookAttempts, webhookDeliveries } from './webhook-deliveries.js';

export const RESOURCES: readonly ResourceDefinition[] = [
  sites,
  users,
  contacts,
  customers,
  contactTags,
  customFields,
  contactNotes,
  offers,
  products,
  courses,
  modules,
  lessons,
  media,
  podcasts,
  podcastEpisodes,
  forms,
  formFields,
  formSubmissions,
  landingPages,
  websitePages,
  blogs,
  blogPosts,
  purchases,
  transactions,
  orders,
  orderItems,
  kajabiPaymentsPayouts,
  hooks,
  webhookDeliveries,
  webhookAttempts,
  events,
  auditEvents,
];

/**
 * Resources served only in sandbox mode, under /v1/test_helpers (pathPrefix; src/sandbox/routes.ts
 * mounts them): the upstream API has no such routes. The mailbox's links are built from PUBLIC_URL.
 */
export function sandboxResources(publicUrl: string): readonly ResourceDefinition[] {
  return [emailBroadcasts, emailActivities, messagesResource(publicUrl), journalEntries, faults];
}
