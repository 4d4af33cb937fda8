// What the API reference says besides the operations: its title, the introduction at the top of the
// OpenAPI document (authentication, paging, filters, extensions) and the tags' descriptions. The
// page at /docs that shows them is src/docs/reference-page.ts.
import type { Mode } from '../config.js';
import { SANDBOX_TAG } from '../sandbox/part.js';
import { tagOf } from '../jsonapi/nouns.js';
import type { ResourceDefinition } from '../jsonapi/resource.js';

export const REFERENCE_TITLE = 'sitebiz: Site Business Service API reference';

/** The introduction (Markdown) shown above the operations. */
export const REFERENCE_INTRODUCTION = [
  '**sitebiz** serves the Site Business Service API v1 (JSON:API 1.1) from a database you run.',
  'The files named below are in the sitebiz repository, under `docs/`.',
  '',
  '### Authentication',
  'Exchange an API key for tokens at `POST /v1/oauth/token` (form-encoded `grant_type=client_credentials`,',
  '`client_id`, `client_secret`), then send `Authorization: Bearer <access_token>`; on this page, put it in',
  '**Bearer token** at the top (or get one under *Get a token from an API key* below) to try requests.',
  'Access tokens last 2 hours by default; `grant_type=refresh_token` gives a new pair, and',
  '`POST /v1/oauth/revoke` ends a grant. A key carries permissions (`view:contacts`, `manage:contacts`, ...): a',
  'request without the one it needs answers 403. A new key: `sitebiz keys create` (docs/authentication.md,',
  'docs/permissions.md).',
  '',
  '### Paging',
  'Lists take `page[number]` and `page[size]` (default 25, at most 100) and answer with `links` (first, prev,',
  'next, last) and `meta.total_count`. Every list has a deterministic order: the `sort` field, then `id` (docs/paging.md).',
  '',
  '### Filters',
  'A list keeps the records matching every `filter[<name>]=<value>` given. Each operation lists its filters;',
  'exactly what each one means is in docs/filters.md. `filter[site_id]` chooses a site; it is required when',
  'the key\'s user reaches several sites.',
  '',
  '### sitebiz extensions',
  '- **Cursor paging**: `page[after]=` (empty to start) then `links.next` until it is null walks any list in any',
  '  sort at the same cost per page however deep; `page[before]` walks backwards (docs/paging.md).',
  '- **Strict parameters**: an unknown parameter, filter, sort field, include path or field is a 400 whose',
  '  `source.parameter` names it (upstream ignores unknown filters: set `IGNORE_UNKNOWN_FILTERS=true` to do the',
  '  same; docs/configuration.md).',
  '- **Webhook delivery log and events**: `GET /v1/hooks/{id}/deliveries` and `/v1/webhook_deliveries` (with their',
  '  attempts, `redeliver` answering 202), `POST /v1/hooks/{id}/enable`, and `GET /v1/events`, every event with its',
  '  payload, for reconciling (docs/webhooks.md).',
  '- **This document** is generated from the resource declarations; it is also served at `/v1/openapi.json` and `/v1/openapi.yaml`.',
].join('\n');

/** One tag per resource with routes, described by its declaration, after the fixed routes' tags. */
export function referenceTags(resources: readonly ResourceDefinition[], mode: Mode = 'sandbox'): Array<{ name: string; description: string }> {
  const fixed = [
    { name: 'Authentication', description: 'OAuth 2.0 client credentials: tokens for an API key, refresh and revocation.' },
    { name: 'Me', description: 'The user the access token acts for.' },
    { name: 'Version', description: 'The API version; needs no token (a health check).' },
  ];
  const sandbox =
    mode === 'sandbox'
      ? [
          {
            name: SANDBOX_TAG,
            description:
              'Test helpers (sitebiz extension, sandbox mode only; manage:sandbox): make checkouts, refunds and failed payments happen, move the account clock, reset and snapshot the data, inject faults, read the mailbox and the request journal. See docs/sandbox.md.',
          },
        ]
      : [];
  // A resource that declares its tag joins one described elsewhere (the sandbox's).
  const served = resources.filter((r) => (r.routes.list || r.routes.show) && r.tag === undefined);
  return [...fixed, ...served.map((r) => ({ name: tagOf(r), description: r.description })), ...sandbox];
}
