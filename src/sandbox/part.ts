// What every part of the sandbox shares (src/sandbox/routes.ts mounts the parts): its permission,
// its OpenAPI tag, and the services a part is built with. A module of its own so that the parts
// import it without importing the list of parts, which imports them.
import type { FastifyInstance } from 'fastify';
import { errorDocumentSchema } from '../jsonapi/route-schemas.js';
import type { Config } from '../config.js';
import type { DatabaseHandle } from '../db/connect.js';
import type { JsonApiEngine } from '../jsonapi/engine.js';
import type { DeliveryWorker } from '../webhooks/delivery-worker.js';
import type { RequestJournal } from './request-journal.js';

export const SANDBOX_PERMISSION = 'manage:sandbox';

/**
 * The answer of an account-wide action (clock advance, reset, snapshots, checkouts) that waited its
 * bound for the account's turn (src/domain/account-lock.ts).
 */
export const ACCOUNT_BUSY_RESPONSE = {
  429: {
    ...errorDocumentSchema,
    description: 'Other actions on the account (clock advances, resets, snapshots, checkouts) hold it longer than a request waits (account_busy); Retry-After says when to try again',
  },
};

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
  /** The request journal of this process (request-journal.ts). */
  journal: RequestJournal;
}

/** A part of the sandbox: registers its routes, relative to /v1/test_helpers. */
export type SandboxPart = (services: SandboxServices) => (app: FastifyInstance) => Promise<void>;
