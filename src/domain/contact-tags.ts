// Tags on a contact: POST, PATCH and DELETE /v1/contacts/{id}/relationships/tags. Called by the
// engine inside the request's transaction, with every tag already found in the contact's site.
//
// - adding a tag the contact already has changes nothing (no row, no event);
// - PATCH makes the set exactly the given tags: it removes the others and adds the missing ones;
// - each tagging actually added or removed writes a tag_added / tag_removed outbox event in the
//   same transaction, so webhooks announce exactly the changes that committed.
//
// "Actually" is decided by the database, not by what was read before: a tagging is inserted with
// ON CONFLICT DO NOTHING on its primary key and removed with DELETE ... RETURNING, and only the
// rows that came back are announced. A concurrent request that made the same change first (the
// engine serialises a site's writes, but the rule does not depend on it) leaves this one nothing
// to announce, and never a unique violation.
import type { WriteContext, WriteTarget } from '../jsonapi/resource.js';
import { recordEvent } from './outbox.js';

type TagEvent = 'tag_added' | 'tag_removed';

/** Tag ids the contact has now. */
async function currentTagIds(ctx: WriteContext, contactId: number): Promise<Set<number>> {
  const rows = await ctx.handle.db.selectFrom('contact_taggings').select('contact_tag_id').where('contact_id', '=', contactId).execute();
  return new Set(rows.map((r) => Number(r.contact_tag_id)));
}

/** One event per tag, in the given order; the payload is the contact and the tag as GET renders them. */
async function recordTagEvents(ctx: WriteContext, contact: WriteTarget, tagIds: number[], type: TagEvent): Promise<void> {
  for (const tagId of tagIds) {
    await recordEvent(ctx, {
      siteId: contact.siteId,
      type,
      records: [
        { type: 'contacts', id: contact.id },
        { type: 'contact_tags', id: tagId },
      ],
      hookResourceIds: [tagId],
    });
  }
}

/** The given ids that came back from a write, once each, in the given order. */
const written = (tagIds: number[], rows: Array<{ contact_tag_id: unknown }>): number[] => {
  const back = new Set(rows.map((r) => Number(r.contact_tag_id)));
  return [...new Set(tagIds)].filter((id) => back.has(id));
};

/** Tags the contact with each tag, in id order; announces those it did not have. */
async function insertTaggings(ctx: WriteContext, contact: WriteTarget, tagIds: number[]): Promise<void> {
  if (tagIds.length === 0) return;
  const ordered = [...new Set(tagIds)].sort((a, b) => a - b);
  const at = ctx.handle.traits.encodeTimestamp(ctx.now);
  const rows = await ctx.handle.db
    .insertInto('contact_taggings')
    .values(ordered.map((tagId) => ({ contact_id: contact.id, contact_tag_id: tagId, created_at: at })))
    .onConflict((oc) => oc.columns(['contact_id', 'contact_tag_id']).doNothing())
    .returning('contact_tag_id')
    .execute();
  await recordTagEvents(ctx, contact, written(tagIds, rows), 'tag_added');
}

/** Removes each tag from the contact; announces those it had. */
async function deleteTaggings(ctx: WriteContext, contact: WriteTarget, tagIds: number[]): Promise<void> {
  if (tagIds.length === 0) return;
  const rows = await ctx.handle.db
    .deleteFrom('contact_taggings')
    .where('contact_id', '=', contact.id)
    .where('contact_tag_id', 'in', tagIds)
    .returning('contact_tag_id')
    .execute();
  await recordTagEvents(ctx, contact, written(tagIds, rows), 'tag_removed');
}

/** POST: tags the contact with each tag it does not have yet. */
export async function addContactTags(ctx: WriteContext, contact: WriteTarget, tags: WriteTarget[]): Promise<void> {
  const current = await currentTagIds(ctx, contact.id);
  await insertTaggings(ctx, contact, tags.map((tag) => tag.id).filter((id) => !current.has(id)));
}

/** PATCH: the contact's tags become exactly `tags`. */
export async function replaceContactTags(ctx: WriteContext, contact: WriteTarget, tags: WriteTarget[]): Promise<void> {
  const current = await currentTagIds(ctx, contact.id);
  const wanted = new Set(tags.map((tag) => tag.id));
  await deleteTaggings(ctx, contact, [...current].filter((id) => !wanted.has(id)).sort((a, b) => a - b));
  await insertTaggings(ctx, contact, [...wanted].filter((id) => !current.has(id)));
}

/** DELETE: removes each of `tags` the contact has; the others are ignored. */
export async function removeContactTags(ctx: WriteContext, contact: WriteTarget, tags: WriteTarget[]): Promise<void> {
  const current = await currentTagIds(ctx, contact.id);
  await deleteTaggings(ctx, contact, tags.map((tag) => tag.id).filter((id) => current.has(id)));
}
