// The audit log (docs/operations.md "Audit log"): who did which administrative action, when, and
// from where. Every action writes its row with recordAuditEvent inside the action's own
// transaction, so a rolled-back action leaves no row and a committed one always has its row. The
// only row written without a change beside it is a failed console sign-in.
import { hostname, userInfo } from 'node:os';
import type { Kysely } from 'kysely';
import type { DialectTraits } from '../db/dialect-traits.js';
import type { Database } from '../db/schema.js';

export const AUDIT_ACTIONS = [
  'api_key.created',
  'api_key.rotated',
  'api_key.deleted',
  'hook.created',
  'hook.deleted',
  'hook.enabled',
  'hook.secret_rotated',
  'user.password_set',
  'console.signed_in',
  'console.sign_in_failed',
  'console.signed_out',
  'sandbox.snapshot_saved',
  'sandbox.snapshot_deleted',
  'sandbox.snapshot_restored',
  'sandbox.reset',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDIT_ACTOR_KINDS = ['api_key', 'console_user', 'cli', 'system'] as const;
export type AuditActorKind = (typeof AUDIT_ACTOR_KINDS)[number];

/** Who acted: an API key (and its user), a console user, the CLI, or sitebiz itself. */
export interface AuditActor {
  kind: AuditActorKind;
  apiKeyId?: number | null;
  userId?: number | null;
  /** What a person recognises: a key's client id, a user's email, user@host for the CLI. */
  label: string;
  /** The client's address (behind TRUST_PROXY, the forwarded one); none for the CLI. */
  address?: string | null;
}

/** sitebiz itself: seeding, `init`'s first key, the demo, imports, tests' fixtures. */
export const SYSTEM_ACTOR: AuditActor = Object.freeze({ kind: 'system', label: 'sitebiz' });

let cliLabel: string | undefined;
/** The CLI as the operating-system user running it: `user@host`. */
export function cliActor(): AuditActor {
  if (cliLabel === undefined) {
    let user = process.env.USER ?? '';
    try {
      user = userInfo().username;
    } catch {
      // A container user without a passwd entry: USER, or nothing.
    }
    cliLabel = `${user || 'unknown'}@${hostname()}`;
  }
  return { kind: 'cli', label: cliLabel };
}

export interface AuditEvent {
  accountId: number;
  action: AuditAction;
  actor: AuditActor;
  target?: { type: string; id: number | string };
  /** A small object: names, permissions, counts. Never a secret: see safeDetails. */
  details?: Record<string, unknown>;
  /** Real time (not a sandbox account's clock). */
  at: Date;
}

/** Anything with a database handle (or its transaction) and the dialect's traits: a DatabaseHandle, a WriteContext's handle. */
export interface AuditWriter {
  db: Kysely<Database>;
  traits: DialectTraits;
}

/** Names of detail members that are never kept, whatever a caller passes. */
const SECRET_NAME = /secret|password|token|hash|credential/i;

/** The details without any member whose name suggests a secret, and cut to a small size. */
export function safeDetails(details: Record<string, unknown> = {}): string {
  const clean = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(clean);
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).filter(([name]) => !SECRET_NAME.test(name)).map(([name, v]) => [name, clean(v)]));
    }
    return typeof value === 'string' && value.length > 200 ? `${value.slice(0, 200)}…` : value;
  };
  const text = JSON.stringify(clean(details));
  return text.length > 2000 ? '{"truncated":true}' : text;
}

/** Writes one audit row; call it with the action's transaction so both commit or neither. */
export async function recordAuditEvent(trx: AuditWriter, event: AuditEvent): Promise<void> {
  await trx.db
    .insertInto('audit_events')
    .values({
      account_id: event.accountId,
      action: event.action,
      actor_kind: event.actor.kind,
      actor_api_key_id: event.actor.apiKeyId ?? null,
      actor_user_id: event.actor.userId ?? null,
      actor_label: event.actor.label,
      target_type: event.target?.type ?? null,
      target_id: event.target === undefined ? null : String(event.target.id),
      details: safeDetails(event.details),
      source_address: event.actor.address ?? null,
      created_at: trx.traits.encodeTimestamp(event.at),
    })
    .execute();
}

/** The actor of a principal: what authentication, the console or the CLI set, else its API key, else sitebiz. */
export function auditActorOf(principal: { actor?: AuditActor; apiKeyId: number; userId: number; clientId?: string }): AuditActor {
  if (principal.actor) return principal.actor;
  if (principal.apiKeyId > 0) return { kind: 'api_key', apiKeyId: principal.apiKeyId, userId: principal.userId, label: principal.clientId ?? `key ${principal.apiKeyId}` };
  return SYSTEM_ACTOR;
}
