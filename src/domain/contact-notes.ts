// Contact notes: staff notes about a contact. A note lives in its contact's site; its body is
// required and may not be blank. Called by the engine inside the request's transaction.
import { unprocessable } from '../jsonapi/errors.js';
import type { WriteContext, WriteInput, WriteTarget } from '../jsonapi/resource.js';

function noteBody(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw unprocessable('missing_attribute', 'body is required and may not be blank', '/data/attributes/body');
  }
  return value;
}

export async function createContactNote(ctx: WriteContext, input: WriteInput): Promise<number> {
  const contact = input.targets.contact!;
  const body = noteBody(input.attributes.body);
  const at = ctx.handle.traits.encodeTimestamp(ctx.now);
  const row = await ctx.handle.db
    .insertInto('contact_notes')
    .values({ site_id: contact.siteId, contact_id: contact.id, body, created_at: at, updated_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

export async function updateContactNote(ctx: WriteContext, record: WriteTarget, input: WriteInput): Promise<void> {
  if (input.attributes.body === undefined) return;
  const body = noteBody(input.attributes.body);
  await ctx.handle.db
    .updateTable('contact_notes')
    .set({ body, updated_at: ctx.handle.traits.encodeTimestamp(ctx.now) })
    .where('id', '=', record.id)
    .execute();
}

export async function deleteContactNote(ctx: WriteContext, record: WriteTarget): Promise<void> {
  await ctx.handle.db.deleteFrom('contact_notes').where('id', '=', record.id).execute();
}
