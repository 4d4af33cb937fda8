// The one-line summaries of the API reference, in plain words made from the declarations
// (nouns.ts): "List contacts", "Show a contact", "List a contact's tags", "Deactivate a purchase".
import { capitalized, nounsOf, oneOf, words } from './nouns.js';
import type { ResourceDefinition } from './resource.js';

type Named = Pick<ResourceDefinition, 'type' | 'nouns'>;

export const listSummary = (r: Named) => `List ${nounsOf(r).plural}`;
export const showSummary = (r: Named) => `Show ${oneOf(r)}`;
export const createSummary = (r: Named) => `Create ${oneOf(r)}`;
export const updateSummary = (r: Named) => `Update ${oneOf(r)}`;
export const deleteSummary = (r: Named) => `Delete ${oneOf(r)}`;

/** `GET /v1/contacts/{id}/tags`: the related records themselves. */
export const relatedSummary = (r: Named, name: string) => `List ${oneOf(r)}'s ${words(name)}`;

/** `GET /v1/contacts/{id}/relationships/tags`: only their identifiers. */
export const relationshipSummary = (r: Named, name: string) => `Show ${oneOf(r)}'s ${words(name)} (identifiers)`;

export function relationshipWriteSummary(r: Named, name: string, operation: 'add' | 'replace' | 'remove'): string {
  if (operation === 'add') return `Add ${words(name)} to ${oneOf(r)}`;
  if (operation === 'replace') return `Replace ${oneOf(r)}'s ${words(name)}`;
  return `Remove ${words(name)} from ${oneOf(r)}`;
}

/** `POST /v1/purchases/{id}/deactivate` → "Deactivate a purchase"; `cancel_subscription` → "Cancel subscription of a purchase". */
export const actionSummary = (r: Named, name: string) =>
  name.includes('_') ? `${capitalized(words(name))} of ${oneOf(r)}` : `${capitalized(name)} ${oneOf(r)}`;
