// What people call a resource's records, for the words of the API reference ("List contacts",
// "Show a contact", the "Contact Notes" tag). Derived from the JSON:API type; a declaration whose
// type does not make its own words (`media`, `hooks`) says them with `nouns`.
import type { ResourceDefinition } from './resource.js';

export interface Nouns {
  /** "contact note" */
  singular: string;
  /** "contact notes" */
  plural: string;
  /** "a" or "an" before the singular; by default "an" before a, e, i and o. */
  article?: 'a' | 'an';
}

/** The declared nouns, or the ones the type spells: `contact_notes` → contact note(s). */
export function nounsOf(resource: Pick<ResourceDefinition, 'type' | 'nouns'>): Required<Nouns> {
  const plural = resource.nouns?.plural ?? resource.type.replace(/_/g, ' ');
  const singular = resource.nouns?.singular ?? singularOf(plural);
  const article = resource.nouns?.article ?? (/^[aeio]/i.test(singular) ? 'an' : 'a');
  return { singular, plural, article };
}

function singularOf(plural: string): string {
  if (plural.endsWith('ies')) return `${plural.slice(0, -3)}y`;
  if (plural.endsWith('s')) return plural.slice(0, -1);
  return plural;
}

/** "a contact note" */
export const oneOf = (resource: Pick<ResourceDefinition, 'type' | 'nouns'>): string => {
  const n = nounsOf(resource);
  return `${n.article} ${n.singular}`;
};

/** The tag that groups a resource's operations in the reference: "Contact Notes". */
export const tagOf = (resource: Pick<ResourceDefinition, 'type' | 'nouns' | 'tag'>): string =>
  resource.tag ??
  nounsOf(resource)
    .plural.split(' ')
    .map((word) => (word === word.toLowerCase() ? word.charAt(0).toUpperCase() + word.slice(1) : word))
    .join(' ');

/** A relationship or action name as words: `cancel_subscription` → "cancel subscription". */
export const words = (name: string): string => name.replace(/_/g, ' ');

export const capitalized = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);
