import { roleLevel } from '../auth/roles.js';
import { attr, defineResource } from '../jsonapi/resource.js';

/** Initials of a name: "Avery Quinn" → "AQ"; one word gives its first letter. */
export function initialsOf(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const picked = words.length > 1 ? [words[0], words[words.length - 1]] : words;
  return picked.map((w) => (w ?? '').charAt(0).toUpperCase()).join('');
}

/** Users of the account. Read through `GET /v1/me`, which shows the API key's own user. */
export const users = defineResource({
  type: 'users',
  table: 'users',
  description: 'The API key’s user: name, email, initials and role level.',
  readPermission: null,
  tenancy: { kind: 'account', column: 'account_id' },
  defaultSort: 'name',
  routes: { list: false, show: false },
  attributes: {
    initials: attr.computed('string', ['name'], (row) => initialsOf(String(row.name ?? '')), {
      description: 'Initials derived from the name, such as JD for John Doe',
    }),
    name: attr.string({ sort: true }),
    email: attr.string(),
    role_level: attr.computed('string', ['role'], (row) => roleLevel(String(row.role ?? '')), {
      description: 'OWNER, ADMINISTRATOR or ASSISTANT',
    }),
  },
});
