// GET /v1/audit_events (a sitebiz extension; docs/operations.md "Audit log"): the account's
// administrative actions as src/audit/ records them (keys, hooks, passwords, console sign-ins,
// snapshot restores and resets), newest first, read-only.
//
// Who reads what: view:audit_events is needed; a key of the account's owner reads every row, a
// key of another role only the rows its own user acted in (its keys' and its console sign-ins'):
// the log names other users' keys and addresses, which are the owner's to see.
import { AUDIT_ACTIONS, AUDIT_ACTOR_KINDS } from '../audit/audit-events.js';
import { reachesEverySite } from '../auth/roles.js';
import { attr, defineResource, namedFilter } from '../jsonapi/resource.js';

export const AUDIT_PERMISSION = 'view:audit_events';

export const auditEvents = defineResource({
  type: 'audit_events',
  upstream: false, // a sitebiz extension (docs/upstream-strict.md)
  table: 'audit_events',
  nouns: { singular: 'audit event', plural: 'audit events' },
  description:
    'The audit log (a sitebiz extension): administrative actions on the account, newest first: API keys created, rotated and deleted; hooks created, deleted, re-enabled and their secrets rotated; ' +
    'console passwords set; console sign-ins and failed sign-ins; sandbox snapshots restored and resets. Each names who acted (an API key, a console user, the CLI or sitebiz itself), ' +
    'the record acted on, and the client address where there is one. Never a secret. Rows older than AUDIT_RETENTION_DAYS (365 by default) are removed. ' +
    'Keys of the account\'s owner read every event; keys of other users only the events their own user acted in.',
  readPermission: AUDIT_PERMISSION,
  tenancy: {
    kind: 'account',
    column: 'account_id',
    visibleTo: (eb, viewer) => (reachesEverySite(viewer.role) ? undefined : eb('audit_events.actor_user_id', '=', viewer.userId)),
  },
  defaultSort: '-created_at',
  attributes: {
    action: attr.string({ filter: ['eq', 'in', 'start'], enum: AUDIT_ACTIONS, description: 'What was done, such as api_key.created' }),
    actor_kind: attr.string({ filter: ['eq', 'in'], enum: AUDIT_ACTOR_KINDS, description: 'Who acted: api_key, console_user, cli (a sitebiz command on the server) or system (sitebiz itself: seeding, init, imports)' }),
    actor_api_key_id: attr.id({ nullable: true, filter: ['eq'], description: 'The API key that acted (api_key); it may since have been deleted' }),
    actor_user_id: attr.id({ nullable: true, filter: ['eq'], description: 'The user that acted: the key\'s user or the console user; null for the CLI and sitebiz' }),
    actor_label: attr.string({ description: 'The actor as a person recognises it: a key\'s client id, a user\'s email, user@host for the CLI' }),
    target_type: attr.string({ nullable: true, filter: ['eq', 'in'], description: 'The kind of record acted on: api_keys, hooks, users or snapshots' }),
    target_id: attr.string({ nullable: true, filter: ['eq'], description: 'Its id (a snapshot\'s name)' }),
    details: attr.json({ description: 'What else the action concerned, such as a key\'s name and permissions or a hook\'s event and URL; never a secret or password' }),
    source_address: attr.string({ nullable: true, description: 'The client\'s address (the forwarded one behind TRUST_PROXY); null for the CLI' }),
    created_at: attr.datetime({ sort: true, filter: ['gt', 'gte', 'lt', 'lte'], description: 'When it was done (real time, not the sandbox account clock)' }),
  },
  filters: {
    action: namedFilter('strings', 'Events of these actions, comma-separated (api_key.created,api_key.deleted)', (eb, actions) => eb('audit_events.action', 'in', actions)),
  },
});
