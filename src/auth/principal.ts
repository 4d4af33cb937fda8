// Who is making a request, resolved once per request from the Bearer token.

export interface Principal {
  accountId: number;
  userId: number;
  apiKeyId: number;
  grantId: number;
  role: string;
  permissions: ReadonlySet<string>;
  /** Sites of the account this user may access, ascending. */
  siteIds: readonly number[];
}
