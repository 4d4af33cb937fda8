// `sitebiz trigger <event>`: runs the flow that emits a webhook event on a site (the demo site by
// default), as a request would (the same domain code in one engine.transact, as the account's
// owner), and prints what it made: the records, the events and the deliveries queued for the
// site's hooks. The running server's delivery worker sends those (it polls; on PostgreSQL the
// commit's NOTIFY wakes it at once). Each event names its flow in TRIGGER_FLOWS.
import { randomBytes } from 'node:crypto';
import { createEngine } from '../engine.js';
import type { DatabaseHandle } from '../db/connect.js';
import { AdminError } from '../domain/accounts.js';
import { addContactTags, removeContactTags } from '../domain/contact-tags.js';
import { createCheckout } from '../domain/checkouts.js';
import { createContact } from '../domain/contacts.js';
import { submitForm } from '../domain/form-submissions.js';
import type { RecordAccess } from '../jsonapi/engine.js';
import { ApiError } from '../jsonapi/errors.js';
import type { WriteContext, WriteTarget } from '../jsonapi/resource.js';
import { accountPrincipal, idOption, siteOption } from './account-principal.js';
import { configFrom, report, UsageError, withDatabase, type Command } from './command.js';

type Values = Record<string, string | boolean | undefined>;

export interface FlowInput {
  siteId: number;
  /** The command's options (--form, --contact, --tag, ...), as given. */
  values: Values;
}

/** The records a flow made or changed, by type: `{ contacts: [12], form_submissions: [34] }`. */
export type Made = Record<string, number[]>;

export interface TriggerFlow {
  /** What the flow does, for --help. */
  summary: string;
  /** Runs in the trigger's transaction, as the account's owner, with the site locked. */
  run(ctx: WriteContext, records: RecordAccess, input: FlowInput): Promise<Made>;
}

/** A person nobody has seen yet: a new contact in any site. */
export function generatedPerson(): { name: string; email: string } {
  const first = pick(['Avery', 'Jordan', 'Riley', 'Morgan', 'Casey', 'Quinn', 'Taylor', 'Jamie', 'Rowan', 'Sasha']);
  const last = pick(['Lee', 'Patel', 'Garcia', 'Nguyen', 'Okafor', 'Rossi', 'Schmidt', 'Kowalski', 'Silva', 'Tanaka']);
  const tag = randomBytes(3).toString('hex');
  return { name: `${first} ${last}`, email: `${first}.${last}.${tag}@example.com`.toLowerCase() };
}

function pick<T>(items: readonly T[]): T {
  return items[randomBytes(1)[0]! % items.length]!;
}

/** A record of the site named by an option: 404s become the command's refusal. */
async function optionRecord(records: RecordAccess, type: string, id: number, siteId: number, option: string): Promise<WriteTarget> {
  const found = await records.find(type, id);
  if (found.siteId !== siteId) throw new AdminError(`--${option} ${id} is not a ${type} record of site ${siteId}`);
  return found;
}

async function newContact(ctx: WriteContext, siteId: number): Promise<WriteTarget> {
  const person = generatedPerson();
  const id = await createContact(ctx, { attributes: person, relationships: {}, meta: {}, targets: { site: { id: siteId, siteId } } });
  return { id, siteId };
}

const formSubmission: TriggerFlow = {
  summary: 'a generated person submits a form of the site (--form <id>; default: the site\'s default form)',
  async run(ctx, records, { siteId, values }) {
    const named = idOption(values, 'form');
    let formId = named;
    if (formId === undefined) {
      const row = await ctx.handle.db.selectFrom('forms').select('id').where('site_id', '=', siteId).orderBy('is_default', 'desc').orderBy('id').executeTakeFirst();
      if (!row) throw new AdminError(`site ${siteId} has no form to submit`);
      formId = Number(row.id);
    }
    const form = await optionRecord(records, 'forms', formId, siteId, 'form');
    const submitted = await submitForm(ctx, form, { attributes: generatedPerson(), relationships: {}, meta: {}, targets: {} });
    const row = await ctx.handle.db.selectFrom('form_submissions').select('contact_id').where('id', '=', submitted.id).executeTakeFirstOrThrow();
    return { forms: [form.id], form_submissions: [submitted.id], contacts: [Number(row.contact_id)] };
  },
};

const tagAdded: TriggerFlow = {
  summary: 'tags a contact (--contact <id>; default: a new generated contact) with a tag (--tag <id>; default: the site\'s first tag)',
  async run(ctx, records, { siteId, values }) {
    const { db } = ctx.handle;
    const tagId = idOption(values, 'tag');
    let tag: WriteTarget;
    if (tagId !== undefined) tag = await optionRecord(records, 'contact_tags', tagId, siteId, 'tag');
    else {
      const row = await db.selectFrom('contact_tags').select('id').where('site_id', '=', siteId).orderBy('id').executeTakeFirst();
      if (!row) throw new AdminError(`site ${siteId} has no contact tag: create one, or name one with --tag`);
      tag = { id: Number(row.id), siteId };
    }
    const contactId = idOption(values, 'contact');
    const contact = contactId === undefined ? await newContact(ctx, siteId) : await optionRecord(records, 'contacts', contactId, siteId, 'contact');
    const has = await db.selectFrom('contact_taggings').select('contact_id').where('contact_id', '=', contact.id).where('contact_tag_id', '=', tag.id).executeTakeFirst();
    if (has) throw new AdminError(`contact ${contact.id} already has tag ${tag.id}: adding it again emits nothing`);
    await addContactTags(ctx, contact, [tag]);
    return { contacts: [contact.id], contact_tags: [tag.id] };
  },
};

const tagRemoved: TriggerFlow = {
  summary: 'removes a tag from a contact (--contact, --tag; default: the site\'s latest tagging, or the latest of the contact or tag named)',
  async run(ctx, records, { siteId, values }) {
    const contactId = idOption(values, 'contact');
    const tagId = idOption(values, 'tag');
    if (contactId !== undefined) await optionRecord(records, 'contacts', contactId, siteId, 'contact');
    if (tagId !== undefined) await optionRecord(records, 'contact_tags', tagId, siteId, 'tag');
    let query = ctx.handle.db
      .selectFrom('contact_taggings')
      .innerJoin('contacts', 'contacts.id', 'contact_taggings.contact_id')
      .select(['contact_taggings.contact_id', 'contact_taggings.contact_tag_id'])
      .where('contacts.site_id', '=', siteId);
    if (contactId !== undefined) query = query.where('contact_taggings.contact_id', '=', contactId);
    if (tagId !== undefined) query = query.where('contact_taggings.contact_tag_id', '=', tagId);
    const tagging = await query
      .orderBy('contact_taggings.created_at', 'desc')
      .orderBy('contact_taggings.contact_id', 'desc')
      .orderBy('contact_taggings.contact_tag_id', 'desc')
      .executeTakeFirst();
    if (!tagging) {
      const which = [contactId !== undefined ? `contact ${contactId}` : undefined, tagId !== undefined ? `tag ${tagId}` : undefined].filter(Boolean).join(' and ');
      throw new AdminError(`no tagging to remove in site ${siteId}${which ? ` for ${which}` : ''}`);
    }
    const contact = { id: Number(tagging.contact_id), siteId };
    await removeContactTags(ctx, contact, [{ id: Number(tagging.contact_tag_id), siteId }]);
    return { contacts: [contact.id], contact_tags: [Number(tagging.contact_tag_id)] };
  },
};

/**
 * A generated person buys an offer: every record and event of a checkout (src/domain/checkouts.ts),
 * so one flow emits purchase, payment_succeeded and order_created together.
 */
const checkout: TriggerFlow = {
  summary: 'a generated person checks out an offer of the site (--offer <id>; default: its first paid one-time offer): purchase, payment_succeeded and order_created',
  async run(ctx, records, { siteId, values }) {
    let offerId = idOption(values, 'offer');
    if (offerId === undefined) {
      const row = await ctx.handle.db
        .selectFrom('offers')
        .select('id')
        .where('site_id', '=', siteId)
        .where('payment_type', '=', 'one_time')
        .where('price_in_cents', '>', 0)
        .orderBy('id')
        .executeTakeFirst();
      if (!row) throw new AdminError(`site ${siteId} has no paid one-time offer to check out; name one with --offer`);
      offerId = Number(row.id);
    }
    await optionRecord(records, 'offers', offerId, siteId, 'offer');
    const result = await createCheckout(ctx, records, { offerId, ...generatedPerson() });
    const made: Made = { contacts: [result.contactId], customers: [result.customerId], purchases: result.purchaseIds, transactions: result.transactionIds };
    if (result.orderId !== null) made.orders = [result.orderId];
    return made;
  },
};

/** Each event `sitebiz trigger` knows, and the flow that emits it. */
export const TRIGGER_FLOWS: Readonly<Record<string, TriggerFlow>> = {
  purchase: checkout,
  payment_succeeded: checkout,
  order_created: checkout,
  form_submission: formSubmission,
  tag_added: tagAdded,
  tag_removed: tagRemoved,
};

export interface TriggeredEvent {
  id: string;
  event: string;
  resource_id: string | null;
  deliveries: Array<{ id: string; hook_id: string; webhook_id: string; target_url: string }>;
}

export interface TriggerResult {
  event: string;
  site_id: string;
  /** Account time of the flow. */
  at: string;
  made: Record<string, string[]>;
  /** Every event the flow emitted (a form submission may add tags too), oldest first. */
  events: TriggeredEvent[];
}

/** Runs `event`'s flow on the site in one transaction; what it made, emitted and queued. */
export async function runTrigger(handle: DatabaseHandle, config: ReturnType<typeof configFrom>, event: string, values: Values): Promise<TriggerResult> {
  const flow = Object.hasOwn(TRIGGER_FLOWS, event) ? TRIGGER_FLOWS[event] : undefined;
  if (!flow) throw new UsageError(`unknown event ${JSON.stringify(event)}; known: ${Object.keys(TRIGGER_FLOWS).join(', ')}`);
  const { principal, siteId } = await accountPrincipal(handle, { siteId: siteOption(values) });
  const engine = await createEngine(config, handle);
  try {
    return await engine.transact(principal, async (ctx, records) => {
      await records.lockSites([siteId]);
      const { db } = ctx.handle;
      // Under the site's lock, every event of the site after this one is the flow's.
      const last = await db.selectFrom('outbox_events').select((eb) => eb.fn.max('id').as('id')).where('site_id', '=', siteId).executeTakeFirst();
      const made = await flow.run(ctx, records, { siteId, values });
      const events = await db
        .selectFrom('outbox_events')
        .select(['id', 'event_type', 'resource_id'])
        .where('site_id', '=', siteId)
        .where('id', '>', Number(last?.id ?? 0))
        .orderBy('id')
        .execute();
      const ids = events.map((e) => e.id);
      const deliveries =
        ids.length === 0
          ? []
          : await db.selectFrom('webhook_deliveries').select(['id', 'hook_id', 'event_id', 'webhook_id', 'target_url']).where('event_id', 'in', ids).orderBy('id').execute();
      return {
        event,
        site_id: String(siteId),
        at: ctx.now.toISOString(),
        made: Object.fromEntries(Object.entries(made).map(([type, list]) => [type, list.map(String)])),
        events: events.map((e) => ({
          id: String(e.id),
          event: e.event_type,
          resource_id: e.resource_id === null ? null : String(e.resource_id),
          deliveries: deliveries
            .filter((d) => Number(d.event_id) === Number(e.id))
            .map((d) => ({ id: String(d.id), hook_id: String(d.hook_id), webhook_id: d.webhook_id, target_url: d.target_url })),
        })),
      };
    });
  } catch (error) {
    // A record named by an option that the account does not have: the engine's 404.
    if (error instanceof ApiError) throw new AdminError(error.errors.map((e) => e.detail).join('; '));
    throw error;
  }
}

function describe(result: TriggerResult): string[] {
  const lines = [`Triggered ${result.event} on site ${result.site_id} at ${result.at} (account time).`];
  lines.push(`  made: ${Object.entries(result.made).map(([type, ids]) => `${type} ${ids.join(', ')}`).join('; ')}`);
  for (const e of result.events) {
    const queued = e.deliveries.length === 0 ? 'no hook listens for it' : `${e.deliveries.length} ${e.deliveries.length === 1 ? 'delivery' : 'deliveries'} queued: ${e.deliveries.map((d) => `hook ${d.hook_id} ${d.webhook_id}`).join(', ')}`;
    lines.push(`  event ${e.id} ${e.event} (resource ${e.resource_id}): ${queued}`);
  }
  if (result.events.some((e) => e.deliveries.length > 0)) lines.push('The running server\'s delivery worker sends them.');
  return lines;
}

export const triggerCommand: Command = {
  usage: `sitebiz trigger <${Object.keys(TRIGGER_FLOWS).join('|')}> [--site <id>] [--offer <id>] [--form <id>] [--contact <id>] [--tag <id>] [--json] [config flags]`,
  details: [
    'Acts as the owner of the site\'s account, on the database of the running server, with the same domain code as the API.',
    'The default site is the first site of the first account (the demo site after npm start).',
    ...Object.entries(TRIGGER_FLOWS).map(([event, flow]) => `  ${event.padEnd(18)} ${flow.summary}`),
    '--json: one object (event, site_id, at, made, events with their deliveries).',
  ],
  options: { site: { type: 'string' }, offer: { type: 'string' }, form: { type: 'string' }, contact: { type: 'string' }, tag: { type: 'string' } },
  async run(values, positionals) {
    const event = positionals[0];
    if (!event) throw new UsageError(`name an event: ${Object.keys(TRIGGER_FLOWS).join(', ')}`);
    if (positionals.length > 1) throw new UsageError(`one event at a time (got ${positionals.join(' ')})`);
    if (!Object.hasOwn(TRIGGER_FLOWS, event)) throw new UsageError(`unknown event ${JSON.stringify(event)}; known: ${Object.keys(TRIGGER_FLOWS).join(', ')}`);
    const config = configFrom(values);
    const result = await withDatabase(config, (handle) => runTrigger(handle, config, event, values));
    report(values, result as unknown as Record<string, unknown>, describe(result));
  },
};
