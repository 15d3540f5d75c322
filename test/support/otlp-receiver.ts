import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for an OpenTelemetry collector: an OTLP/HTTP receiver that keeps the spans it is sent (the service
 * exports with OTEL_EXPORTER_OTLP_PROTOCOL=http/json), so a test reads the trace a server process made.
 */

/** SpanKind as OTLP numbers it. */
export const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as const;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Undefined for a trace's root. */
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  /** The resource's `service.name`. */
  service: string;
  /** The instrumentation scope that made it (`@opentelemetry/instrumentation-pg`, `listings-gateway`, …). */
  scope: string;
  attributes: Record<string, string | number | boolean | undefined>;
  /** 0 unset, 1 ok, 2 error. */
  status: number;
}

export interface OtlpReceiver {
  /** The base URL to give as OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds /v1/traces). */
  url: string;
  spans(): ReceivedSpan[];
  /** Export requests received, whatever their path. */
  requests(): number;
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}

function valueOf(value: AnyValue | undefined): string | number | boolean | undefined {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  return value.boolValue;
}

interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value?: AnyValue }[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: { key: string; value?: AnyValue }[];
        status?: { code?: number };
      }[];
    }[];
  }[];
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  let requests = 0;
  const server: Server = createServer((request, response) => {
    requests += 1;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method === 'POST' && request.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest;
        for (const resource of body.resourceSpans ?? []) {
          const service = String(valueOf(resource.resource?.attributes?.find(({ key }) => key === 'service.name')?.value) ?? '');
          for (const scoped of resource.scopeSpans ?? []) {
            for (const span of scoped.spans ?? []) {
              received.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId || undefined,
                name: span.name,
                service,
                kind: span.kind,
                scope: scoped.scope?.name ?? '',
                attributes: Object.fromEntries((span.attributes ?? []).map(({ key, value }) => [key, valueOf(value)])),
                status: span.status?.code ?? 0,
              });
            }
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    requests: () => requests,
    close: () =>
      new Promise((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
