// The sandbox's test helpers (docs/sandbox.md): everything under /v1/test_helpers/, Stripe's name
// for the same idea. Mounted only in sandbox mode, so that in production mode every path under it
// answers 404 as an unknown route does. Each route needs manage:sandbox and acts on the key's own
// account only. Each part of the sandbox is one plugin in this folder, listed in SANDBOX_PARTS.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { principalOf } from '../auth/authenticate.js';
import { forbidden } from '../jsonapi/errors.js';
import { resourceRoutes } from '../jsonapi/routes.js';
import { markRoutes } from '../jsonapi/upstream-check.js';
import { checkoutRoutes } from './checkouts.js';
import { clockPart } from './clock.js';
import { emailActivityRoutes } from './email-activity.js';
import { failNextPaymentPart } from './fail-next-payment.js';
import { faultsPart } from './fault-routes.js';
import { journalPart } from './journal.js';
import { snapshotRoutes } from './snapshot-routes.js';
import { SANDBOX_PERMISSION, type SandboxPart, type SandboxServices } from './part.js';

export { ACCOUNT_BUSY_RESPONSE, SANDBOX_PERMISSION, SANDBOX_TAG, type SandboxPart, type SandboxServices } from './part.js';

/**
 * The declared resources served under /v1/test_helpers (pathPrefix test_helpers: email broadcasts
 * and activities, the mailbox, faults): their generic routes.
 */
const sandboxResourceRoutes: SandboxPart = ({ engine }) => resourceRoutes(engine, 'test_helpers');

/** Every part, in the order the reference lists them. */
export const SANDBOX_PARTS: readonly SandboxPart[] = [
  checkoutRoutes,
  failNextPaymentPart,
  clockPart,
  sandboxResourceRoutes,
  emailActivityRoutes,
  journalPart,
  faultsPart,
  snapshotRoutes,
];

async function requireSandboxPermission(request: FastifyRequest): Promise<void> {
  if (!principalOf(request).permissions.has(SANDBOX_PERMISSION)) {
    throw forbidden(`The sandbox test helpers need the ${SANDBOX_PERMISSION} permission, which this API key does not have`);
  }
}

/** The /v1/test_helpers routes; register with that prefix inside the authenticated scope. */
export function sandboxRoutes(services: SandboxServices, parts: readonly SandboxPart[] = SANDBOX_PARTS) {
  return async function register(app: FastifyInstance): Promise<void> {
    app.addHook('onRequest', requireSandboxPermission);
    // Not upstream, and available in UPSTREAM_STRICT mode too: a test suite drives the sandbox.
    markRoutes(app, { kind: 'exempt', reason: 'the test helpers (/v1/test_helpers) are a sitebiz extension' });
    for (const part of parts) await app.register(part(services));
  };
}
