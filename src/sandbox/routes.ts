// The sandbox's test helpers (docs/sandbox.md): everything under /v1/test_helpers/, Stripe's name
// for the same idea. Mounted only in sandbox mode, so that in production mode every path under it
// answers 404 as an unknown route does. Each route needs manage:sandbox and acts on the key's own
// account only. Each part of the sandbox is one plugin in this folder, listed in SANDBOX_PARTS.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { principalOf } from '../auth/authenticate.js';
import type { Config } from '../config.js';
import type { DatabaseHandle } from '../db/connect.js';
import type { JsonApiEngine } from '../jsonapi/engine.js';
import { forbidden } from '../jsonapi/errors.js';
import type { DeliveryWorker } from '../webhooks/delivery-worker.js';
import { snapshotRoutes } from './snapshot-routes.js';

export const SANDBOX_PERMISSION = 'manage:sandbox';

/** The OpenAPI tag of every test helper route. */
export const SANDBOX_TAG = 'Sandbox';

/** What the sandbox's routes work with: the app's engine, database and worker. */
export interface SandboxServices {
  config: Config;
  engine: JsonApiEngine;
  database: DatabaseHandle;
  webhooks: DeliveryWorker;
  /** Real time (the app's clock); an account's "now" is engine.now(principal). */
  now: () => Date;
}

/** A part of the sandbox: registers its routes, relative to /v1/test_helpers. */
export type SandboxPart = (services: SandboxServices) => (app: FastifyInstance) => Promise<void>;

/** Every part, in the order the reference lists them. */
export const SANDBOX_PARTS: readonly SandboxPart[] = [snapshotRoutes];

async function requireSandboxPermission(request: FastifyRequest): Promise<void> {
  if (!principalOf(request).permissions.has(SANDBOX_PERMISSION)) {
    throw forbidden(`The sandbox test helpers need the ${SANDBOX_PERMISSION} permission, which this API key does not have`);
  }
}

/** The /v1/test_helpers routes; register with that prefix inside the authenticated scope. */
export function sandboxRoutes(services: SandboxServices, parts: readonly SandboxPart[] = SANDBOX_PARTS) {
  return async function register(app: FastifyInstance): Promise<void> {
    app.addHook('onRequest', requireSandboxPermission);
    for (const part of parts) await app.register(part(services));
  };
}
