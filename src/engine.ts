// The JSON:API engine over a database, as the server builds it, without the HTTP app: the CLI
// commands that act as an account (trigger, listen, clock) build theirs here too, so their writes
// are the server's, and they load neither Fastify nor the console nor the API reference.
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/connect.js';
import { loadCursorSigningKey } from './db/instance-settings.js';
import { JsonApiEngine } from './jsonapi/engine.js';
import { Registry } from './jsonapi/registry.js';
import type { ResourceDefinition } from './jsonapi/resource.js';
import { RESOURCES, sandboxResources } from './resources/index.js';
import { webhookTargetPolicy, type Lookup } from './webhooks/target-addresses.js';

/** The resources a server in its mode serves: the API's, and in sandbox mode the test helpers' too. */
export function servedResources(config: Pick<Config, 'mode' | 'publicUrl'>): readonly ResourceDefinition[] {
  return config.mode === 'sandbox' ? [...RESOURCES, ...sandboxResources(config.publicUrl)] : RESOURCES;
}

export async function createEngine(
  config: Config,
  database: DatabaseHandle,
  options: { now?: () => Date; resources?: readonly ResourceDefinition[]; lookup?: Lookup } = {},
): Promise<JsonApiEngine> {
  return new JsonApiEngine({
    db: database.db,
    traits: database.traits,
    registry: new Registry(options.resources ?? servedResources(config)),
    publicUrl: config.publicUrl,
    ignoreUnknownFilters: config.ignoreUnknownFilters,
    answerCacheBytes: config.answerCacheMb * 1024 * 1024,
    now: options.now ?? (() => new Date()),
    cursorSigningKey: await loadCursorSigningKey(database),
    services: { webhookTargets: webhookTargetPolicy(config.mode, options.lookup) },
    ...(database.runSelect ? { runSelect: database.runSelect } : {}),
    ...(database.replicas ? { replicaReads: database.replicas.sourceAfter.bind(database.replicas) } : {}),
  });
}

