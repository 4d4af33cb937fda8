// Every permission an API key can carry. Read permissions use the upstream names
// (`view:contacts`, `view:purchases`, ...); writes use `manage:<area>`. docs/permissions.md lists
// the same set, and a test keeps the two in step.

export interface PermissionSpec {
  name: string;
  description: string;
}

export const PERMISSIONS: readonly PermissionSpec[] = [
  { name: 'view:sites', description: 'list and show sites the key’s user may access' },
  { name: 'view:contacts', description: 'contacts, contact tags, custom fields and contact notes' },
  { name: 'manage:contacts', description: 'create, update and delete contacts, their tags and contact notes (never their money)' },
  { name: 'view:customers', description: 'customers and the offers granted to them' },
  { name: 'manage:customers', description: 'grant and revoke offers of customers and contacts (revoking a bought offer needs manage:purchases too)' },
  { name: 'view:offers', description: 'offers and the products they give access to' },
  { name: 'view:products', description: 'products, courses (modules, lessons, media) and podcasts' },
  { name: 'view:forms', description: 'forms and their fields' },
  { name: 'view:form_submissions', description: 'form submissions' },
  { name: 'manage:form_submissions', description: 'submit forms' },
  { name: 'view:pages', description: 'landing pages, website pages and blog posts' },
  { name: 'view:purchases', description: 'purchases' },
  { name: 'manage:purchases', description: 'deactivate, reactivate and cancel the subscription of purchases: the only permission that changes a purchase' },
  { name: 'view:transactions', description: 'transactions' },
  { name: 'view:orders', description: 'orders and order items' },
  { name: 'view:payouts', description: 'Kajabi Payments payouts' },
  { name: 'view:hooks', description: 'webhook subscriptions, their delivery log and its attempts' },
  {
    name: 'manage:hooks',
    description: 'create and delete webhook subscriptions, rotate their signing secrets, see sample payloads (with the permissions of the event), redeliver deliveries and re-enable disabled hooks',
  },
  {
    name: 'view:audit_events',
    description: 'the audit log (GET /v1/audit_events): every administrative action on the account for keys of its owner, the actions of the key\u2019s own user for others',
  },
  {
    name: 'manage:sandbox',
    description:
      'the sandbox test helpers under /v1/test_helpers/ (checkouts, refunds, the account clock, reset and snapshots, faults, the mailbox and the request journal); sandbox mode only',
  },
];

export const PERMISSION_NAMES: readonly string[] = PERMISSIONS.map((p) => p.name);

/**
 * Reads a comma list of permissions (or `all`) as given on the command line. Returns the sorted
 * set, or throws naming the unknown ones.
 */
export function parsePermissionList(text: string): string[] {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 1 && items[0] === 'all') return [...PERMISSION_NAMES];
  const unknown = items.filter((p) => !PERMISSION_NAMES.includes(p));
  if (unknown.length > 0) {
    throw new Error(`unknown permission(s) ${unknown.join(', ')}; known: all, ${PERMISSION_NAMES.join(', ')}`);
  }
  if (items.length === 0) throw new Error('name at least one permission, or all');
  return [...new Set(items)].sort();
}
