// buildApp(config) assembles the server without listening; tests drive it with app.inject().
import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { AuditRetention } from './audit/retention.js';
import { bearerAuthentication } from './auth/authenticate.js';
import { oauthRoutes } from './auth/oauth-routes.js';
import { installRateLimits } from './auth/rate-limits.js';
import { TokenService } from './auth/tokens.js';
import type { Config, Mode } from './config.js';
import { connectDatabase, type DatabaseHandle } from './db/connect.js';
import { REFERENCE_INTRODUCTION, referenceTags } from './docs/api-reference.js';
import { referencePageRoutes } from './docs/reference-page.js';
import { compressAnswers, COMPRESSION_THRESHOLD_BYTES } from './compression.js';
import { refuseControlCharacters } from './jsonapi/control-characters.js';
import { documentEdgeResponses } from './jsonapi/edge-responses.js';
import { answerParserError, answerUnmetExpectation } from './jsonapi/parser-errors.js';
import { conditionalReads } from './jsonapi/entity-tags.js';
import type { JsonApiEngine } from './jsonapi/engine.js';
import {
  acceptJsonBodies,
  frameworkErrorHandler,
  installErrorHandling,
  negotiateJsonApiMediaType,
  trackRoutesForMethodNotAllowed,
} from './jsonapi/http.js';
import type { ResourceDefinition } from './jsonapi/resource.js';
import { resourceRoutes } from './jsonapi/routes.js';
import { DeliveryWorker } from './webhooks/delivery-worker.js';
import { hookSampleRoutes } from './webhooks/sample-routes.js';
import type { Lookup } from './webhooks/target-addresses.js';
import { createEngine, servedResources } from './engine.js';
import { FaultInjector } from './sandbox/faults.js';
import { confirmationRoute } from './sandbox/messages.js';
import { RequestJournal } from './sandbox/request-journal.js';
import { sandboxRoutes } from './sandbox/routes.js';
import { meRoute } from './routes/me.js';
import { consoleRoutes } from './console/plugin.js';
import { consolePages } from './console/pages/index.js';
import { ConsoleSessions } from './console/sessions.js';
import { API_TITLE, API_VERSION, versionRoute } from './routes/version.js';
import { hoistNamedSchemas } from './jsonapi/schema-names.js';
import { markRoutes, refuseExtensions } from './jsonapi/upstream-check.js';
import { EXTENSION_ROUTE, UPSTREAM_UNCHECKED, UPSTREAM_WITHOUT_QUERY } from './jsonapi/upstream-surface.js';
import { healthRoutes, type Lifecycle } from './observability/health.js';
import { Metrics, metricsRoute } from './observability/metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    database: DatabaseHandle;
    engine: JsonApiEngine;
    tokens: TokenService;
    /** The webhook delivery worker (src/webhooks/delivery-worker.ts). */
    webhooks: DeliveryWorker;
    /** AUDIT_RETENTION_DAYS: removes the audit log's old rows hourly (src/audit/retention.ts). */
    auditRetention: AuditRetention;
    /** Whether a shutdown is draining this process (GET /readyz, src/server.ts). */
    lifecycle: Lifecycle;
  }
}

export interface WebhookOptions {
  /**
   * Start the delivery worker when the app is ready (default true). Tests that move the clock
   * pass false and drive it with app.webhooks.runDue().
   */
  autoStart?: boolean;
  /** Resolves target hosts instead of the system's resolver (tests: no real DNS). */
  lookup?: Lookup;
  /** How long closing lets attempts in flight finish before cutting them short, ms. */
  stopGraceMs?: number;
}

export interface AppOptions {
  config: Config;
  /** An open database; when absent the app connects using config.database. The app closes it. */
  database?: DatabaseHandle;
  /** The clock; tests move it to expire tokens. */
  now?: () => Date;
  /** The resources to serve; the engine's own tests pass fixtures. Default: every API resource. */
  resources?: readonly ResourceDefinition[];
  /** Prefix of the rate-limit keys in Redis (tests use their own); default `sitebiz:ratelimit:`. */
  redisNamespace?: string;
  webhooks?: WebhookOptions;
}

// An incoming X-Request-Id is kept when it looks like an id, so logs join up across services.
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * One log line per request, when it completes (method, URL, status, time), instead of Fastify's
 * two: logging is a visible share of a cheap request's cost.
 */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const line = { req: { method: request.method, url: request.url }, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const now = options.now ?? (() => new Date());
  const database = options.database ?? (await connectDatabase(config.database));

  const app = Fastify({
    logger: config.logLevel === 'silent' ? false : { level: config.logLevel },
    bodyLimit: config.bodyLimitBytes,
    requestIdHeader: false,
    // Behind the load balancers of TRUST_PROXY, request.ip (what per-address limits count) is the
    // client's, from X-Forwarded-For; from any other peer the header is ignored.
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy : false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    routerOptions: {
      ignoreTrailingSlash: true,
      // The engine parses query strings itself (bracket keys, repeats are errors).
      querystringParser: () => ({}),
    },
    // Requests that arrive while closing (on a connection accepted before) are answered, not
    // refused: the shutdown in server.ts waits for them (Connection: close ends their connection).
    return503OnClosing: false,
    ...connectionTimeouts(config),
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler: answerParserError,
    logController: new OneLinePerRequest(),
  });

  // OpenTelemetry traces (docs/operations.md, "Traces"): the SDK is loaded only when an OTLP
  // endpoint is set; otherwise nothing of it runs. Its request hooks come before every other.
  const tracing = config.tracing ? (await import('./observability/tracing.js')).startTracing(config.tracing, app.log.child({ component: 'traces' })) : undefined;
  if (tracing) {
    tracing.instrumentRequests(app);
    const stopStatementSpans = tracing.instrumentStatements(database);
    // Added before the other onClose hooks, so it runs after them: the last webhook attempts'
    // spans are ended, then the queue is exported.
    app.addHook('onClose', async () => {
      stopStatementSpans();
      await tracing.shutdown();
    });
  }

  // What Node answers before Fastify (parser errors above, an unmet Expect here) is a JSON:API error too.
  app.server.on('checkExpectation', answerUnmetExpectation);
  // Before any route: the plugin hooks each route as it is added (src/compression.ts).
  if (config.compression) await compressAnswers(app);

  // Schemas document the API; the planner and handlers check requests with better errors than
  // Ajv would, and Ajv's defaults would silently strip unknown members.
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  app.decorate('database', database);
  app.addHook('onClose', async () => database.close());
  // METRICS (docs/operations.md "Metrics"): off creates nothing, so nothing below records.
  const metrics = config.metrics === 'off' ? undefined : new Metrics({ database, now, warn: (err, message) => app.log.warn({ err }, message) });
  if (metrics) {
    app.addHook('onResponse', metrics.onResponse);
    app.addHook('onClose', async () => metrics.close());
  }
  const webhooks = new DeliveryWorker({
    handle: database,
    log: app.log.child({ component: 'webhooks' }),
    now,
    mode: config.mode,
    timeoutMs: config.webhookTimeoutMs,
    concurrency: config.webhookConcurrency,
    pollMs: config.webhookPollMs,
    ...(metrics ? { onAttempt: metrics.webhookAttempt } : {}),
    ...(tracing ? { tracer: tracing.webhooks } : {}),
    ...(options.webhooks?.lookup ? { lookup: options.webhooks.lookup } : {}),
    ...(options.webhooks?.stopGraceMs !== undefined ? { stopGraceMs: options.webhooks.stopGraceMs } : {}),
  });
  app.decorate('webhooks', webhooks);
  if (config.webhookWorker && (options.webhooks?.autoStart ?? true)) app.addHook('onReady', async () => webhooks.start());
  // onClose hooks run last-added first: the worker stops (and records its attempts) before the
  // database closes.
  app.addHook('onClose', async () => webhooks.stop());
  const auditRetention = new AuditRetention({ handle: database, days: config.auditRetentionDays, now, log: app.log.child({ component: 'audit-retention' }) });
  app.decorate('auditRetention', auditRetention);
  app.addHook('onReady', async () => auditRetention.start());
  app.addHook('onClose', async () => auditRetention.stop());
  app.decorateRequest('principal', null);
  app.decorateRequest('clientKey', null);
  // Once the app is closing, every answer ends its connection: a kept-alive connection would
  // otherwise hold the shutdown until its keep-alive timeout.
  // So does every answer while a shutdown drains the process (SHUTDOWN_DRAIN_MS): its clients
  // come back through the balancer, to another process.
  let closing = false;
  const lifecycle: Lifecycle = { draining: false };
  app.decorate('lifecycle', lifecycle);
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (closing || lifecycle.draining) reply.header('connection', 'close');
  });
  const replicas = database.replicas;
  if (replicas) {
    // Read-your-writes with read replicas (src/db/replicas.ts): a request of an account that may
    // have written records the primary's WAL position before its answer leaves, so the account's
    // next reads, on any process, wait for a replica that has it.
    app.addHook('onSend', async (request) => {
      if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return;
      const accountId = request.principal?.accountId ?? request.consoleSession?.principal.accountId;
      if (accountId === undefined) return;
      await replicas.recordWrite(accountId).catch((error: unknown) => request.log.warn({ err: error }, 'the write position for read replicas was not recorded: until it is, a read of this account may miss this write on a lagging replica'));
    });
  }

  const tokens = new TokenService(database, {
    accessTokenTtlSeconds: config.accessTokenTtlSeconds,
    refreshTokenTtlSeconds: config.refreshTokenTtlSeconds,
    now,
    onTouchError: (error) => app.log.warn({ err: error }, 'an API key\'s last_used_at was not written'),
  });
  // Added after the database's onClose hook, so it runs first: a key's last_used_at write in
  // flight finishes before the database closes.
  app.addHook('onClose', async () => tokens.settle());
  const resources = options.resources ?? servedResources(config);
  const engine = await createEngine(config, database, { now, resources, ...(options.webhooks?.lookup ? { lookup: options.webhooks.lookup } : {}) });
  app.decorate('tokens', tokens);
  app.decorate('engine', engine);

  const limits = await installRateLimits(app, config, {
    ...(options.redisNamespace ? { redisNamespace: options.redisNamespace } : {}),
    ...(metrics ? { onRefusal: metrics.rateLimitRefused } : {}),
  });
  if (config.rateLimitPerMinute > 0) {
    // Authenticated routes count in their Bearer hook (by API key); every other /v1 request (the
    // token endpoint, version, 404s, 405s) counts here, by address, before its body is read.
    app.addHook('preParsing', async (request, reply) => {
      if (!limits.counted(request) && isApiPath(request.url)) await limits.countRequest(request, reply);
    });
  }

  // The sandbox's request journal and faults (docs/sandbox.md); production mode has neither.
  const sandbox =
    config.mode === 'sandbox'
      ? {
          journal: new RequestJournal({ handle: database, size: config.requestJournalSize, now, log: app.log.child({ component: 'request-journal' }) }),
          faults: new FaultInjector(database, Math.random, metrics?.faultInjected),
        }
      : undefined;
  sandbox?.journal.install(app);

  installErrorHandling(app);
  // UPSTREAM_STRICT (docs/upstream-strict.md): what only sitebiz has is refused before its handler.
  if (config.upstreamStrict) refuseExtensions(app);
  refuseControlCharacters(app);
  const addMethodNotAllowedRoutes = trackRoutesForMethodNotAllowed(app);
  acceptJsonBodies(app);
  negotiateJsonApiMediaType(app);
  conditionalReads(app, config.compression ? { compressedFromBytes: COMPRESSION_THRESHOLD_BYTES } : {});
  documentEdgeResponses(app);

  await app.register(swagger, {
    // Schemas marked with named() are declared once under components.schemas (schema-names.ts).
    transformObject: (documents) => ('openapiObject' in documents ? hoistNamedSchemas(documents.openapiObject) : documents.swaggerObject),
    openapi: {
      openapi: '3.1.0',
      info: { title: API_TITLE, version: API_VERSION, description: REFERENCE_INTRODUCTION },
      servers: [{ url: config.publicUrl }],
      tags: referenceTags(resources, config.mode),
      components: {
        securitySchemes: {
          Bearer: { type: 'http', scheme: 'bearer' },
          // Client authentication of the OAuth routes (RFC 6749 §2.3.1); client_id/client_secret in the body also work.
          ClientBasic: { type: 'http', scheme: 'basic' },
        },
      },
    },
  });
  // The reference page (docs/architecture.md): sitebiz's own HTML of the same document.
  await app.register(referencePageRoutes('/docs', () => app.swagger()));

  await app.register(
    async (v1) => {
      // The document does not change once the routes are registered: serialize it once (380 KB
      // take tens of milliseconds of the event loop to stringify).
      let openapiJson: string | undefined;
      v1.get('/openapi.json', { schema: { hide: true }, config: { upstream: EXTENSION_ROUTE } }, async (_request, reply) =>
        reply.type('application/json; charset=utf-8').send((openapiJson ??= JSON.stringify(app.swagger()))),
      );
      // The same document in YAML (RFC 9512's media type), for the tools that read YAML.
      v1.get('/openapi.yaml', { schema: { hide: true }, config: { upstream: EXTENSION_ROUTE } }, async (_request, reply) =>
        reply.type('application/yaml; charset=utf-8').send(app.swagger({ yaml: true })),
      );
      await v1.register(async (upstream) => {
        markRoutes(upstream, UPSTREAM_WITHOUT_QUERY);
        await upstream.register(versionRoute(config.publicUrl));
      });
      await v1.register(async (upstream) => {
        markRoutes(upstream, UPSTREAM_UNCHECKED);
        await upstream.register(oauthRoutes(tokens, limits));
      });
      await v1.register(async (api) => {
        api.addHook('onRequest', bearerAuthentication(tokens, limits));
        if (config.upstreamStrict) {
          api.addHook('onRequest', async (request) => {
            if (request.principal) request.principal.upstreamOnly = true;
          });
        }
        if (sandbox) api.addHook('onRequest', sandbox.faults.inject);
        await api.register(meRoute(engine));
        await api.register(resourceRoutes(engine));
        await api.register(hookSampleRoutes(engine));
        // The test helpers work on the API's resources; an app of other resources (the engine's
        // own tests serve fixtures) has none.
        if (sandbox && !options.resources) {
          await api.register(sandboxRoutes({ config, engine, database, webhooks, now, journal: sandbox.journal }), { prefix: '/test_helpers' });
        }
      });
      // The link of a double opt-in message is followed without a token.
      if (sandbox) await v1.register(confirmationRoute({ database, now }), { prefix: '/test_helpers' });
    },
    { prefix: '/v1' },
  );
  await app.register(healthRoutes(lifecycle, database));
  if (metrics) await app.register(metricsRoute(config, metrics));
  // The console (docs/console.md): HTML pages for people, in a scope of its own (headers,
  // cookies, form bodies, errors as pages), on the same engine. An app of other resources (the
  // engine's own tests serve fixtures) has none.
  if (!options.resources) await app.register(
    consoleRoutes(
      {
        config,
        engine,
        database,
        webhooks,
        tokens,
        sessions: new ConsoleSessions(database, now, (user) => tokens.reachableSiteIds(user)),
        now,
        ...(sandbox ? { journal: sandbox.journal } : {}),
        ...(metrics ? { onRefusal: metrics.rateLimitRefused } : {}),
      },
      consolePages,
    ),
    { prefix: '/console' },
  );
  addMethodNotAllowedRoutes();
  return app;
}

const isApiPath = (url: string) => url.startsWith('/v1/') || url === '/v1' || url.startsWith('/v1?');

/**
 * Slow clients: a request must arrive whole within REQUEST_TIMEOUT_MS (then Node answers 408 and
 * closes), and a connection with a request open on which no byte moves for IDLE_TIMEOUT_MS is
 * closed. An idle keep-alive connection between requests is closed after Fastify's 72 s
 * keep-alive timeout, longer than the usual load balancer's 60 s, so that the balancer closes first.
 */
function connectionTimeouts(config: Config) {
  return {
    requestTimeout: config.requestTimeoutMs,
    connectionTimeout: config.idleTimeoutMs,
    http: {
      headersTimeout: config.requestTimeoutMs,
      // Node checks the request and header deadlines on this interval (30 s by default, which
      // would let a 30 s deadline run to 60 s).
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(config.requestTimeoutMs / 10))),
    },
  };
}
