// What the flat-cost requests need to know about the seeded site, asked of the API itself (never
// hard-coded ids): its size, a tag that tags some contacts, a common first name, an email
// fragment that matches, a customer, and a cursor deep in the contacts list.
import { listOf, totalCount, type HttpClient } from './http-client.js';
import { CursorsNotSupported, walkWithCursor } from './cursor-walk.js';

export interface SiteFacts {
  siteId: string;
  contacts: number;
  /** page[number] 2000 at 25 a page where the list is that long; otherwise its last page. */
  deepPageNumber: number;
  tagId: string;
  commonName: string;
  emailFragment: string;
  customerId: string;
  /** undefined when the server does not support page[after] yet. */
  deepCursor: { cursor: string; depth: number } | undefined;
}

export const PAGE_SIZE = 25;
/** page[number]=2000 of 25: the deep page of the table. */
const DEEP_PAGE = 2000;

export const contactsPath = (siteId: string) => `/v1/contacts?filter[site_id]=${siteId}&page[size]=${PAGE_SIZE}`;

export async function learnSiteFacts(api: HttpClient, siteId: string): Promise<SiteFacts> {
  const base = contactsPath(siteId);
  const firstPage = await api.json(base);
  const contacts = totalCount(firstPage, `GET ${base}`);
  if (contacts === 0) throw new Error(`site ${siteId} has no contacts`);
  const people = listOf(firstPage).map((r) => ({ name: String(r.attributes?.name ?? ''), email: String(r.attributes?.email ?? '') }));

  const countOf = async (filter: string) => totalCount(await api.json(`${base}&${filter}`), `GET ${base}&${filter}`);

  // The most frequent first name of page 1: common in any realistic audience.
  const frequency = new Map<string, number>();
  for (const { name } of people) {
    const first = name.split(/\s+/)[0] ?? '';
    if (/^[A-Za-z]{3,}$/.test(first)) frequency.set(first, (frequency.get(first) ?? 0) + 1);
  }
  const commonName = [...frequency.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  if (!commonName) throw new Error(`no first name of three letters or more on page 1 of ${base}`);

  // An email fragment that matches: the name in lower case, else the start of an address.
  let emailFragment = commonName.toLowerCase();
  if ((await countOf(`filter[email_contains]=${encodeURIComponent(emailFragment)}`)) === 0) {
    emailFragment = (people[0]?.email ?? '').slice(0, 4);
    if (emailFragment.length < 3 || (await countOf(`filter[email_contains]=${encodeURIComponent(emailFragment)}`)) === 0) {
      throw new Error(`no email fragment of page 1 matches filter[email_contains] on site ${siteId}`);
    }
  }

  const tags = listOf(await api.json(`/v1/contact_tags?filter[site_id]=${siteId}&page[size]=10`));
  let tagId: string | undefined;
  for (const tag of tags) {
    if ((await countOf(`filter[has_tag_id]=${tag.id}`)) > 0) {
      tagId = tag.id;
      break;
    }
  }
  if (!tagId) throw new Error(`none of the first ${tags.length} tags of site ${siteId} tags a contact`);

  const customer = listOf(await api.json(`/v1/customers?filter[site_id]=${siteId}&page[size]=1`))[0];
  if (!customer) throw new Error(`site ${siteId} has no customers`);

  return {
    siteId,
    contacts,
    deepPageNumber: Math.min(DEEP_PAGE, Math.ceil(contacts / PAGE_SIZE)),
    tagId,
    commonName,
    emailFragment,
    customerId: customer.id,
    deepCursor: await findDeepCursor(api, siteId, contacts),
  };
}

/**
 * A cursor as deep as page 2000 of 25 (or 80 % into a shorter list), found by walking with pages
 * of 100: a cursor is only ever obtained from links.next.
 */
async function findDeepCursor(api: HttpClient, siteId: string, contacts: number): Promise<SiteFacts['deepCursor']> {
  const depth = Math.min(DEEP_PAGE * PAGE_SIZE, Math.floor(contacts * 0.8));
  try {
    const walk = await walkWithCursor(api, `/v1/contacts?filter[site_id]=${siteId}&page[size]=100&page[after]=`, {
      stop: (progress) => progress.records >= depth,
      deadline: Date.now() + 120_000,
    });
    if (walk.nextCursor === undefined) throw new Error(`the cursor walk of site ${siteId} ended after ${walk.records} contacts, before ${depth}`);
    return { cursor: walk.nextCursor, depth: walk.records };
  } catch (error) {
    if (error instanceof CursorsNotSupported) return undefined;
    throw error;
  }
}
