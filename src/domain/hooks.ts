// Hooks: a site's subscriptions to one of the six upstream webhook events (docs/webhooks.md).
// Creating one needs, besides manage:hooks, the read permissions upstream names for its event,
// since deliveries show those records; a hook limited to one resource names a record of the kind
// its event is about, in the hook's site. Called by the engine inside the request's transaction.
import { randomBytes } from 'node:crypto';
import { auditActorOf, recordAuditEvent, type AuditAction } from '../audit/audit-events.js';
import { realTimeOf } from '../auth/principal.js';
import { forbidden, unprocessable } from '../jsonapi/errors.js';
import type { PreWriteContext, WriteContext, WriteInput, WriteTarget } from '../jsonapi/resource.js';
import type { ResourceWrite } from '../jsonapi/write-document.js';

export interface HookEventSpec {
  /** Read permissions a key needs to create a hook for the event (and to see its sample). */
  permissions: readonly string[];
  /** The table of the records a hook's resource_id may name, and what they are called. */
  resource: { table: 'offers' | 'forms' | 'contact_tags'; noun: string };
}

const OFFER = { table: 'offers', noun: 'offer' } as const;
const TAG = { table: 'contact_tags', noun: 'contact tag' } as const;

/** The upstream events and the permissions its "Available Event Types" table names for each. */
export const HOOK_EVENTS: Readonly<Record<string, HookEventSpec>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, HookEventSpec>, {
    purchase: { permissions: ['view:purchases'], resource: OFFER },
    payment_succeeded: { permissions: ['view:transactions'], resource: OFFER },
    order_created: { permissions: ['view:transactions', 'view:orders'], resource: OFFER },
    form_submission: { permissions: ['view:form_submissions'], resource: { table: 'forms', noun: 'form' } },
    tag_added: { permissions: ['view:contacts'], resource: TAG },
    tag_removed: { permissions: ['view:contacts'], resource: TAG },
  }),
);

export const HOOK_EVENT_NAMES: readonly string[] = Object.keys(HOOK_EVENTS);

/** How long deliveries are also signed with the secret a rotation replaced. */
export const PREVIOUS_SECRET_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** A Standard Webhooks signing secret: `whsec_` and the base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** 403 naming the permissions the key lacks for hooks of `event` (its sample too). */
export function requireEventPermissions(permissions: ReadonlySet<string>, event: string): void {
  const spec = HOOK_EVENTS[event]!;
  const missing = spec.permissions.filter((p) => !permissions.has(p));
  if (missing.length > 0) {
    throw forbidden(`Hooks for ${event} events need the ${spec.permissions.join(' and ')} permission(s); this API key lacks ${missing.join(' and ')}`);
  }
}

/** An absolute http(s) URL with a host, or why not. */
function targetUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must be an http or https URL, not ${url.protocol.slice(0, -1)}`;
  if (url.hostname === '') return 'must name a host';
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  if (value.length > 2048) return 'must be at most 2048 characters';
  return undefined;
}

/** The checks of a new hook that need no database, in the order they answer: event, permissions, URL. */
function checkHookInput(permissions: ReadonlySet<string>, attributes: ResourceWrite['attributes']): { event: string; targetUrl: string } {
  const event = attributes.event as string;
  if (!Object.hasOwn(HOOK_EVENTS, event)) {
    throw unprocessable('invalid_attribute', `event must be one of ${HOOK_EVENT_NAMES.join(', ')}`, '/data/attributes/event');
  }
  requireEventPermissions(permissions, event);
  const targetUrl = attributes.target_url as string;
  const urlProblem = targetUrlProblem(targetUrl);
  if (urlProblem) throw unprocessable('invalid_attribute', `target_url ${urlProblem}`, '/data/attributes/target_url');
  return { event, targetUrl };
}

/**
 * Before the create's transaction: the target must be one the installation accepts (production
 * mode refuses hosts that are or resolve to non-public addresses; src/webhooks/target-addresses.ts).
 * It runs outside the transaction because resolving a name can take seconds, which must not be
 * spent holding the write lock; the delivery worker checks again at each attempt (DNS rebinding).
 */
export async function checkHookTarget(ctx: PreWriteContext, input: ResourceWrite): Promise<void> {
  const { targetUrl } = checkHookInput(ctx.principal.permissions, input.attributes);
  const refusal = await ctx.services.webhookTargets.refusal(new URL(targetUrl));
  if (refusal) {
    throw unprocessable(
      'target_not_public',
      `target_url is refused in production mode, which delivers only to public addresses: ${refusal}`,
      '/data/attributes/target_url',
    );
  }
}

export async function createHook(ctx: WriteContext, input: WriteInput): Promise<{ id: number; meta: { signing_secret: string } }> {
  const site = input.targets.site!;
  const { event, targetUrl } = checkHookInput(ctx.principal.permissions, input.attributes);
  const resourceId = (input.attributes.resource_id ?? null) as number | null;
  if (resourceId !== null) {
    const { table, noun } = HOOK_EVENTS[event]!.resource;
    const found = await ctx.handle.db
      .selectFrom(table)
      .select('id')
      .where('id', '=', resourceId)
      .where('site_id', '=', site.siteId)
      .executeTakeFirst();
    if (!found) {
      throw unprocessable('invalid_attribute', `resource_id must be the id of a ${noun} of the site for ${event} hooks; there is no ${noun} ${resourceId} there`, '/data/attributes/resource_id');
    }
  }
  const secret = newSigningSecret();
  const at = ctx.handle.traits.encodeTimestamp(ctx.now);
  const row = await ctx.handle.db
    .insertInto('hooks')
    .values({
      site_id: site.siteId,
      event,
      target_url: targetUrl,
      resource_id: resourceId,
      signing_secret: secret,
      previous_signing_secret: null,
      previous_secret_expires_at: null,
      created_at: at,
      updated_at: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await auditHook(ctx, 'hook.created', Number(row.id), { site_id: site.siteId, event, target_url: targetUrl, resource_id: resourceId });
  return { id: Number(row.id), meta: { signing_secret: secret } };
}

/** The audit row of a hook's change, in the write's transaction (the secret is never in it). */
async function auditHook(ctx: WriteContext, action: AuditAction, hookId: number, details: Record<string, unknown>): Promise<void> {
  await recordAuditEvent(ctx.handle, {
    accountId: ctx.principal.accountId,
    action,
    actor: auditActorOf(ctx.principal),
    target: { type: 'hooks', id: hookId },
    details,
    // Real time: the log is not moved by a sandbox account's clock.
    at: realTimeOf(ctx.now, ctx.principal),
  });
}

/**
 * A new signing secret; the one it replaces keeps signing (beside the new one) for 24 hours, so
 * receivers can switch without missing a delivery.
 */
export async function rotateHookSecret(ctx: WriteContext, record: WriteTarget): Promise<{ type: string; id: number; created: boolean; meta: { signing_secret: string } }> {
  const current = await ctx.handle.db.selectFrom('hooks').select('signing_secret').where('id', '=', record.id).executeTakeFirstOrThrow();
  const secret = newSigningSecret();
  const traits = ctx.handle.traits;
  await ctx.handle.db
    .updateTable('hooks')
    .set({
      signing_secret: secret,
      previous_signing_secret: current.signing_secret,
      previous_secret_expires_at: current.signing_secret === null ? null : traits.encodeTimestamp(new Date(ctx.now.getTime() + PREVIOUS_SECRET_LIFETIME_MS)),
      updated_at: traits.encodeTimestamp(ctx.now),
    })
    .where('id', '=', record.id)
    .execute();
  await auditHook(ctx, 'hook.secret_rotated', record.id, { site_id: record.siteId });
  return { type: 'hooks', id: record.id, created: false, meta: { signing_secret: secret } };
}

/**
 * Deletes the hook: nothing more is delivered to it. Its deliveries keep the hook's id, event and
 * URL themselves, so they stay in the log; those not finished are cancelled (an attempt in flight
 * finishes, and its outcome is logged without reopening the delivery).
 */
export async function deleteHook(ctx: WriteContext, record: WriteTarget): Promise<void> {
  const at = ctx.handle.traits.encodeTimestamp(ctx.now);
  await ctx.handle.db
    .updateTable('webhook_deliveries')
    .set({ status: 'cancelled', next_attempt_at: null, last_error: 'the hook was deleted', updated_at: at })
    .where('hook_id', '=', record.id)
    .where('next_attempt_at', 'is not', null)
    .execute();
  const hook = await ctx.handle.db.selectFrom('hooks').select(['event', 'target_url']).where('id', '=', record.id).executeTakeFirst();
  await ctx.handle.db.deleteFrom('hooks').where('id', '=', record.id).execute();
  await auditHook(ctx, 'hook.deleted', record.id, { site_id: record.siteId, ...(hook ? { event: hook.event, target_url: hook.target_url } : {}) });
}

/**
 * Turns a disabled hook on again (POST /v1/hooks/{id}/enable): disabled_at and failing_since are
 * cleared, so events are delivered to it again from now on (those committed while it was disabled
 * were not queued for it). An enabled hook is left exactly as it is.
 */
export async function enableHook(ctx: WriteContext, record: WriteTarget): Promise<void> {
  const enabled = await ctx.handle.db
    .updateTable('hooks')
    .set({ disabled_at: null, failing_since: null, updated_at: ctx.handle.traits.encodeTimestamp(ctx.now) })
    .where('id', '=', record.id)
    .where('disabled_at', 'is not', null)
    .executeTakeFirst();
  // An enabled hook is left as it is: nothing was done, nothing is recorded.
  if (Number(enabled.numUpdatedRows) > 0) await auditHook(ctx, 'hook.enabled', record.id, { site_id: record.siteId });
}

/**
 * What a key needs to see an event of each type (GET /v1/events): what it needs to create a hook
 * for that event, since the event's payload shows the same records a delivery would.
 */
export const EVENT_READ_PERMISSIONS: Readonly<Record<string, readonly string[]>> = Object.freeze(
  Object.fromEntries(HOOK_EVENT_NAMES.map((event) => [event, HOOK_EVENTS[event]!.permissions])),
);
