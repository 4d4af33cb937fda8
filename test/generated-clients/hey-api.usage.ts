// A TypeScript user's code against the SDK that @hey-api/openapi-ts generates from the served
// document (its fetch client, types and one function per operation). Copied by
// test/generated-clients.test.ts next to the generated ./hey-api/, compiled there with
// `tsc --strict`, then run against a server. Written as a user would: no casts, no `any`.
import { createClient, createConfig } from './hey-api/client/index.js';
import { getV1Contacts, getV1ContactsById, postV1Contacts } from './hey-api/index.js';
// The document's named schemas, as the SDK exports them and a user's own code refers to them.
import type { ContactsAttributes, ContactsCreateRequest, ContactsResource, Errors, ResourceIdentifier } from './hey-api/index.js';
import type { Usage, UsageInput, UsageResult } from './contract.js';

const emailOf = (attributes: ContactsAttributes): string => attributes.email ?? '';

export const run: Usage = async (input: UsageInput): Promise<UsageResult> => {
  // A client of its own rather than the generated module-wide one: the test runs this usage once
  // per database, against two servers. `auth` answers the operations' declared Bearer scheme.
  const client = createClient(createConfig({ baseUrl: input.baseUrl, auth: input.token }));

  // A list with a filter, a sort and a page size.
  const list = await getV1Contacts({
    client,
    query: { 'filter[email_contains]': input.emailFragment, sort: 'email', 'page[size]': 1 },
  });
  if (!list.data) throw new Error(`list: ${list.response.status} ${JSON.stringify(list.error)}`);
  const listed: ContactsResource[] = list.data.data;

  // A show with include.
  const show = await getV1ContactsById({ client, path: { id: input.taggedContactId }, query: { include: 'tags' } });
  if (!show.data) throw new Error(`show: ${show.response.status} ${JSON.stringify(show.error)}`);
  const included = show.data.included ?? [];
  const tag = included.find((resource) => resource.type === 'contact_tags');

  // A create: a JSON:API document with the required relationship.
  const newContact = (email: string): ContactsCreateRequest => ({
    data: {
      type: 'contacts',
      attributes: { email, name: 'Katherine Johnson', subscribed: true },
      relationships: { site: { data: { type: 'sites', id: input.siteId } } },
    },
  });
  const created = await postV1Contacts({ client, body: newContact(input.newEmail) });
  if (!created.data) throw new Error(`create: ${created.response.status} ${JSON.stringify(created.error)}`);

  // A create the server refuses: the error document is typed too.
  const refused = await postV1Contacts({ client, body: newContact('not-an-email') });
  if (!refused.error) throw new Error(`invalid create: ${refused.response.status}, no error document`);
  const errors: Errors = refused.error;
  const [problem] = errors.errors;
  if (!problem) throw new Error('invalid create: an empty errors array');

  return {
    list: {
      status: list.response.status,
      emails: listed.map((contact) => emailOf(contact.attributes)),
      totalCount: list.data.meta.total_count,
      hasNext: typeof list.data.links.next === 'string',
    },
    show: {
      status: show.response.status,
      id: show.data.data.id,
      tagIds: (show.data.data.relationships?.tags?.data ?? []).map((identifier: ResourceIdentifier) => identifier.id),
      includedTypes: included.map((resource) => resource.type),
      includedTagName: tagName(tag),
    },
    create: {
      status: created.response.status,
      id: created.data.data.id,
      email: emailOf(created.data.data.attributes),
      siteId: created.data.data.relationships?.site?.data?.id,
    },
    invalid: { status: refused.response.status, code: problem.code, pointer: problem.source?.pointer, detail: problem.detail },
  };
};

/** The included items are typed loosely (any resource type); a tag's name is read with a check. */
function tagName(resource: { [key: string]: unknown } | undefined): string | undefined {
  const attributes = resource?.attributes;
  if (typeof attributes !== 'object' || attributes === null || !('name' in attributes)) return undefined;
  return typeof attributes.name === 'string' ? attributes.name : undefined;
}
