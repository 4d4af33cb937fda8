// Invariants of customer records that every path creating or changing a customer applies
// (offer grants, form submissions, purchases, the demo data). Name and email come from the
// contact (src/domain/contacts.ts: normalizeEmail, nameFromEmail).

/** Why a public_website value was refused. */
export class InvalidWebsite extends Error {
  override name = 'InvalidWebsite';
}

/**
 * Validates and normalizes a public website: trims it, adds `https://` when no scheme is given,
 * accepts only http and https URLs with a host that has a dot (or `localhost`), lower-cases the
 * host, drops a default port and a bare trailing `/`... and gives back the URL text. Blank → null.
 */
export function normalizePublicWebsite(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const trimmed = value.trim();
  if (trimmed === '') return null;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `https://${trimmed}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new InvalidWebsite(`${JSON.stringify(value)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidWebsite(`${JSON.stringify(value)} is not an http or https URL`);
  if (url.username || url.password) throw new InvalidWebsite(`${JSON.stringify(value)} must not carry credentials`);
  if (!(url.hostname.includes('.') || url.hostname === 'localhost') || /\s/.test(trimmed)) {
    throw new InvalidWebsite(`${JSON.stringify(value)} has no valid host`);
  }
  // URL already lower-cases the host and drops default ports; keep a path but not a lone "/".
  const text = url.toString();
  return url.pathname === '/' && !url.search && !url.hash ? text.replace(/\/$/, '') : text;
}
