// OpenTelemetry traces (docs/operations.md, "Traces"), loaded by buildApp only when
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. Spans:
// - one SERVER span per HTTP request, named by its route template, continuing the caller's trace
//   when the request carries a W3C traceparent;
// - one CLIENT span per database statement run while a request (or a webhook attempt) is being
//   served, made from the statement observers of src/db/connect.ts after the statement ended;
// - one CLIENT span per webhook attempt, in the trace of the request that queued the event
//   (outbox_events.trace_parent), whose traceparent goes to the receiver.
// They leave in batches over OTLP/HTTP (JSON), and closing the app flushes the last batch.
//
// Nothing here is registered globally (no global tracer provider, propagator or context manager):
// each app has its own provider, so tests can build traced and untraced apps in one process, and
// a library's own instrumentation cannot mix into ours. Only the context manager is shared: the
// async context is the process's anyway.
import { readFileSync } from 'node:fs';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { setGlobalErrorHandler, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import {
  ATTR_DB_COLLECTION_NAME,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_QUERY_TEXT,
  ATTR_DB_SYSTEM_NAME,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_URL_FULL,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
} from '@opentelemetry/semantic-conventions';
import type { TracingConfig } from '../config.js';
import type { DatabaseHandle, StatementEvent } from '../db/connect.js';
import { setTraceparentSource, type WebhookAttemptSpan, type WebhookTracer } from './trace-context.js';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Longest db.query.text kept: the statement's shape is in its start; parameters are never sent. */
const QUERY_TEXT_CHARS = 2_000;

const contextManager = new AsyncLocalStorageContextManager().enable();

/**
 * Now, epoch ms, on the monotonic clock. Every span gets its times from here: the SDK's own
 * times re-anchor each span to Date.now() (whole milliseconds), so a statement could seem to start
 * before its request did.
 */
const now = () => performance.timeOrigin + performance.now();
const propagator = new W3CTraceContextPropagator();

/** The traceparent of the active span, as the outbox keeps it (trace-context.ts). */
function activeTraceparent(): string | undefined {
  const active = contextManager.active();
  if (!trace.getSpan(active)) return undefined;
  const carrier: Record<string, string> = {};
  propagator.inject(active, carrier, defaultTextMapSetter);
  return carrier.traceparent;
}
setTraceparentSource(activeTraceparent);

export interface Tracing {
  /** Adds the request spans' hooks; call before any route or hook is added. */
  instrumentRequests(app: FastifyInstance): void;
  /** Spans for the handle's statements, until the returned function removes them. */
  instrumentStatements(handle: DatabaseHandle): () => void;
  webhooks: WebhookTracer;
  /** Exports what is still queued and stops. */
  shutdown(): Promise<void>;
}

/** How long closing waits for the last spans to be exported. */
const FLUSH_DEADLINE_MS = 2_000;

/** At most one warning this often about failed exports (a collector down fails every batch). */
const EXPORT_WARNING_INTERVAL_MS = 60_000;

export function startTracing(config: TracingConfig, log: FastifyBaseLogger): Tracing {
  // The SDK reports failed exports to one handler per process (by default to its silent diag
  // logger): say so in the log, once a minute at most. Spans that could not go are dropped.
  let warnedAt = -Infinity;
  setGlobalErrorHandler((error) => {
    if (performance.now() - warnedAt < EXPORT_WARNING_INTERVAL_MS) return;
    warnedAt = performance.now();
    log.warn({ err: error, endpoint: config.tracesUrl }, 'traces: spans could not be exported (dropped); the next failure is reported in a minute at the earliest');
  });
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName, [ATTR_SERVICE_VERSION]: VERSION }));
  // The exporter reads OTEL_EXPORTER_OTLP_HEADERS (and _TIMEOUT, _COMPRESSION) itself; the
  // processor OTEL_BSP_*, the provider OTEL_TRACES_SAMPLER.
  const exporter = new OTLPTraceExporter({ url: config.tracesUrl });
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  const tracer = provider.getTracer('sitebiz', VERSION);
  return {
    instrumentRequests: (app) => instrumentRequests(app, tracer),
    instrumentStatements: (handle) => {
      const statement = statementSpans(tracer, handle.traits.name === 'postgres' ? 'postgresql' : 'sqlite');
      return handle.observe?.({ statement }) ?? (() => {});
    },
    webhooks: webhookSpans(tracer),
    // Closing never fails nor waits long for the collector: what cannot be sent within
    // FLUSH_DEADLINE_MS is dropped, with a warning (a collector that refuses connections is retried
    // by the exporter for up to OTEL_EXPORTER_OTLP_TIMEOUT, 10 s).
    shutdown: async () => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), FLUSH_DEADLINE_MS)));
      const flushed = provider.shutdown().then(
        () => 'done' as const,
        (error: unknown) => log.warn({ err: error, endpoint: config.tracesUrl }, 'traces: the last spans could not be exported'),
      );
      const outcome = await Promise.race([flushed, deadline]);
      clearTimeout(timer);
      if (outcome === 'late') log.warn({ endpoint: config.tracesUrl, deadlineMs: FLUSH_DEADLINE_MS }, 'traces: the last spans were not exported in time; dropped');
    },
  };
}

function instrumentRequests(app: FastifyInstance, tracer: Tracer): void {
  const spans = new WeakMap<FastifyRequest, Span>();
  app.addHook('onRequest', (request, _reply, done) => {
    const parent = propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
    const route = request.routeOptions.url;
    const query = request.url.indexOf('?');
    const attributes: Attributes = {
      [ATTR_HTTP_REQUEST_METHOD]: request.method,
      // The path only: a query string may carry what should not leave (filter values, tokens).
      [ATTR_URL_PATH]: query < 0 ? request.url : request.url.slice(0, query),
      [ATTR_URL_SCHEME]: request.protocol,
    };
    if (route) attributes[ATTR_HTTP_ROUTE] = route;
    const span = tracer.startSpan(route ? `${request.method} ${route}` : request.method, { kind: SpanKind.SERVER, attributes, startTime: now() }, parent);
    spans.set(request, span);
    // The rest of the request (its hooks, handler, statements) runs in the span's context.
    contextManager.with(trace.setSpan(parent, span), done);
  });
  const end = (request: FastifyRequest, status: number | undefined) => {
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    if (status !== undefined) {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      // A server's 4xx is the client's error, not the span's (HTTP semantic conventions).
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR }).setAttribute(ATTR_ERROR_TYPE, String(status));
    } else {
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client went away' }).setAttribute(ATTR_ERROR_TYPE, 'aborted');
    }
    span.end(now());
  };
  app.addHook('onError', (request, _reply, error, done) => {
    spans.get(request)?.recordException(error);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    end(request, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    end(request, undefined);
    done();
  });
}

interface StatementShape {
  name: string;
  attributes: Attributes;
}

/** Shapes by SQL text: the engine runs the same few hundred statements over and over. */
const SHAPE_CACHE_SIZE = 500;

function statementSpans(tracer: Tracer, system: 'sqlite' | 'postgresql'): (event: StatementEvent) => void {
  const shapes = new Map<string, StatementShape>();
  const shapeOf = (sql: string): StatementShape => {
    let shape = shapes.get(sql);
    if (shape) return shape;
    const operation = /^\s*\(?\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL';
    const table = /\b(?:from|into|update)\s+"?([A-Za-z_][A-Za-z0-9_]*)"?/i.exec(sql)?.[1];
    const attributes: Attributes = {
      // db.system is the name most backends still index on; db.system.name the current one.
      'db.system': system,
      [ATTR_DB_SYSTEM_NAME]: system,
      [ATTR_DB_OPERATION_NAME]: operation,
      [ATTR_DB_QUERY_TEXT]: sql.length > QUERY_TEXT_CHARS ? `${sql.slice(0, QUERY_TEXT_CHARS)}…` : sql,
    };
    if (table) attributes[ATTR_DB_COLLECTION_NAME] = table;
    shape = { name: table ? `${operation} ${table}` : operation, attributes };
    if (shapes.size >= SHAPE_CACHE_SIZE) shapes.delete(shapes.keys().next().value as string);
    shapes.set(sql, shape);
    return shape;
  };
  return ({ sql, milliseconds, failed }) => {
    const active = contextManager.active();
    // Statements outside a traced request or attempt (the worker's polls, the journal's batches)
    // would each be a trace of one span: left out.
    if (!trace.getSpan(active)?.isRecording()) return;
    const shape = shapeOf(sql);
    // The observer hears of a statement once it has ended, with its duration.
    const endedAt = now();
    const span = tracer.startSpan(shape.name, { kind: SpanKind.CLIENT, attributes: shape.attributes, startTime: endedAt - milliseconds }, active);
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(endedAt);
  };
}

function webhookSpans(tracer: Tracer): WebhookTracer {
  return {
    startAttempt(attempt): WebhookAttemptSpan {
      const parent = attempt.traceparent ? propagator.extract(ROOT_CONTEXT, { traceparent: attempt.traceparent }, defaultTextMapGetter) : ROOT_CONTEXT;
      const attributes: Attributes = {
        [ATTR_HTTP_REQUEST_METHOD]: 'POST',
        'sitebiz.webhook.event': attempt.event,
        'sitebiz.webhook.id': attempt.webhookId,
        'sitebiz.webhook.delivery_id': attempt.deliveryId,
        'sitebiz.webhook.attempt': attempt.attemptNumber,
      };
      try {
        const url = new URL(attempt.targetUrl);
        // Without query, fragment or credentials: a target URL may carry the receiver's secret.
        attributes[ATTR_URL_FULL] = `${url.protocol}//${url.host}${url.pathname}`;
        attributes[ATTR_SERVER_ADDRESS] = url.hostname;
        attributes[ATTR_SERVER_PORT] = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
      } catch {
        // Not a URL: the attempt is refused, and the span says why through its status.
      }
      const span = tracer.startSpan(`POST webhook ${attempt.event}`, { kind: SpanKind.CLIENT, attributes, startTime: now() }, parent);
      const headers: Record<string, string> = {};
      propagator.inject(trace.setSpan(parent, span), headers, defaultTextMapSetter);
      return {
        headers,
        end(result) {
          if (result.status !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, result.status);
          // Only a 2xx delivers (delivery-outcomes.ts): a redirect is not followed, so it failed too.
          if (result.status === null || result.status < 200 || result.status >= 300) {
            span.setStatus({ code: SpanStatusCode.ERROR, ...(result.error ? { message: result.error } : {}) });
            span.setAttribute(ATTR_ERROR_TYPE, result.status === null ? 'no_answer' : String(result.status));
          }
          span.end(now());
        },
      };
    },
  };
}
