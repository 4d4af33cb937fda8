// What the rest of sitebiz knows of traces without loading OpenTelemetry: tracing.ts (which
// imports the SDK) is loaded only when OTEL_EXPORTER_OTLP_ENDPOINT is set, so the outbox and the
// webhook worker see these shapes and nothing else. With traces off every call below is a check of
// an undefined value.

/** One webhook attempt's span, from just before the POST to its result. */
export interface WebhookAttemptSpan {
  /** W3C trace context headers for the POST (traceparent, and tracestate when there is one). */
  readonly headers: Readonly<Record<string, string>>;
  end(result: { status: number | null; error: string | null }): void;
}

export interface WebhookTracer {
  startAttempt(attempt: {
    /** The traceparent of the request that queued the event (outbox_events.trace_parent), if any. */
    traceparent: string | null;
    event: string;
    targetUrl: string;
    webhookId: string;
    deliveryId: number;
    attemptNumber: number;
  }): WebhookAttemptSpan;
}

let source: (() => string | undefined) | undefined;

/**
 * The W3C traceparent of the span being served in this async context (a request's), kept with an
 * outbox event so that its webhook attempts join the request's trace; undefined with traces off.
 */
export function currentTraceparent(): string | undefined {
  return source?.();
}

/** tracing.ts sets the source once it is loaded (the context it reads is the process's). */
export function setTraceparentSource(next: () => string | undefined): void {
  source = next;
}

/** Whether tracing.ts has been loaded in this process (it never is while traces are off). */
export function tracingLoaded(): boolean {
  return source !== undefined;
}
