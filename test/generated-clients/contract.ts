// What test/generated-clients.test.ts hands each usage file and what a usage file answers. The
// usage files (beside this one) are compiled against code generated at test time, so they are
// not part of `npm run typecheck` (tsconfig.json excludes them); this file is, and both sides
// import it, so the two agree.

export interface UsageInput {
  /** Where the server listens, e.g. http://127.0.0.1:41234 (no trailing slash). */
  baseUrl: string;
  /** An access token from POST /v1/oauth/token, holding every permission. */
  token: string;
  /** The tenant's site: the create's relationships.site. */
  siteId: string;
  /** A contact that carries the tag `tagName`: shown with include=tags. */
  taggedContactId: string;
  tagName: string;
  /** What filter[email_contains] is given: matches the two seeded contacts and no other. */
  emailFragment: string;
  /** The email of the contact the usage creates (unique per run). */
  newEmail: string;
}

/** What the usage read from the typed answers: the test compares it with what it seeded. */
export interface UsageResult {
  list: { status: number; emails: string[]; totalCount: number; hasNext: boolean };
  show: { status: number; id: string; tagIds: string[]; includedTypes: string[]; includedTagName: string | undefined };
  create: { status: number; id: string; email: string; siteId: string | undefined };
  invalid: { status: number; code: string; pointer: string | undefined; detail: string };
}

export type Usage = (input: UsageInput) => Promise<UsageResult>;
