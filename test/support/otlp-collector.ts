// A local OTLP/HTTP receiver for the trace tests: node:http on 127.0.0.1 (port 0) taking
// POST /v1/traces in OTLP's JSON encoding (what @opentelemetry/exporter-trace-otlp-http sends),
// and keeping every span it got, flattened, with its resource's attributes.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

type OtlpValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
type OtlpAttribute = { key: string; value: OtlpValue };

export interface CollectedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  startNanos: bigint;
  endNanos: bigint;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: number;
  attributes: Record<string, string | number | boolean>;
  resource: Record<string, string | number | boolean>;
}

export const SPAN_KIND = { server: 2, client: 3 } as const;
export const STATUS = { unset: 0, error: 2 } as const;

const valueOf = (v: OtlpValue): string | number | boolean =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue ?? ''));
const attributesOf = (list: OtlpAttribute[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));

export class OtlpCollector {
  readonly spans: CollectedSpan[] = [];
  /** Content types of the exports received. */
  readonly contentTypes: string[] = [];

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<OtlpCollector> {
    const server = http.createServer();
    const collector = new OtlpCollector(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        collector.contentTypes.push(String(req.headers['content-type']));
        collector.take(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return collector;
  }

  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private take(body: {
    resourceSpans?: Array<{
      resource?: { attributes?: OtlpAttribute[] };
      scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }>;
    }>;
  }): void {
    for (const rs of body.resourceSpans ?? []) {
      const resource = attributesOf(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            traceId: String(s.traceId),
            spanId: String(s.spanId),
            parentSpanId: String(s.parentSpanId ?? ''),
            name: String(s.name),
            kind: Number(s.kind),
            startNanos: BigInt(String(s.startTimeUnixNano)),
            endNanos: BigInt(String(s.endTimeUnixNano)),
            status: Number((s.status as { code?: number } | undefined)?.code ?? 0),
            attributes: attributesOf(s.attributes as OtlpAttribute[] | undefined),
            resource,
          });
        }
      }
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
