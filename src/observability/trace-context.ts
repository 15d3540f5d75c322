import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';

/**
 * The service's own spans and the W3C trace context that work carries from one process (or moment) to another: a
 * job's data (src/jobs/enqueue.ts) and an event's envelope (src/events/event-codec.ts). Only the OpenTelemetry
 * API is used here: without the SDK (src/observability/tracing.ts, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set)
 * every call is a no-op that records nothing.
 */

/** A span's context as W3C Trace Context headers carry it. */
export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

/** version-traceid-spanid-flags, lower-case hex (W3C Trace Context, level 1). */
const TRACEPARENT = /^[\da-f]{2}-[\da-f]{32}-[\da-f]{16}-[\da-f]{2}$/;
/** The W3C limit on tracestate: 32 members of at most 256 characters each, in practice far less. */
const MAX_TRACESTATE = 512;

function tracer() {
  // Asked each time: the global provider is a proxy until the SDK registers its own.
  return trace.getTracer('listings-gateway');
}

/** The active span's context, to hand to work that goes on elsewhere; undefined when nothing is being traced. */
export function activeTraceContext(): TraceContext | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  if (!carrier.traceparent) return undefined;
  return carrier.tracestate ? { traceparent: carrier.traceparent, tracestate: carrier.tracestate } : { traceparent: carrier.traceparent };
}

/** The trace context kept in a value read back from storage or the wire, when there is a well-formed one. */
export function traceContextIn(value: unknown): TraceContext | undefined {
  if (typeof value !== 'object' || value === null || !('traceparent' in value)) return undefined;
  const { traceparent } = value;
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return undefined;
  const tracestate = 'tracestate' in value ? value.tracestate : undefined;
  return typeof tracestate === 'string' && tracestate.length > 0 && tracestate.length <= MAX_TRACESTATE ? { traceparent, tracestate } : { traceparent };
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** Marks a span as failed by `error`: its status, and the exception as an event (type and message, with the stack). */
function fail(span: Span, error: unknown): void {
  if (error instanceof Error) {
    span.recordException(error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
  } else {
    span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
  }
}

/**
 * Runs `work` as the active span `name`, and ends the span when the work ends (when its promise settles, for
 * asynchronous work); a throw or rejection marks it failed and goes on to the caller unchanged.
 */
function activeSpan<T>(name: string, options: { kind: SpanKind; attributes: Attributes }, parent: Context, work: () => T): T {
  return tracer().startActiveSpan(name, options, parent, (span) => {
    let result: T;
    try {
      result = work();
    } catch (error) {
      fail(span, error);
      span.end();
      throw error;
    }
    if (!isPromiseLike(result)) {
      span.end();
      return result;
    }
    return Promise.resolve(result).then(
      (value) => {
        span.end();
        return value;
      },
      (error: unknown) => {
        fail(span, error);
        span.end();
        throw error;
      },
    ) as T;
  });
}

/** A span of this process's own work, a child of the active span (a REST route's GraphQL operation). */
export function inSpan<T>(name: string, attributes: Attributes, work: () => T): T {
  return activeSpan(name, { kind: SpanKind.INTERNAL, attributes }, context.active(), work);
}

/**
 * A CONSUMER span for work that arrived from elsewhere (a job, an event): its parent is the context the work carried,
 * never whatever happens to be active where it arrived (a connection's callbacks); without one it starts a trace.
 */
export function inConsumerSpan<T>(name: string, carried: Partial<TraceContext> | undefined, attributes: Attributes, work: () => T): T {
  const parent = carried?.traceparent ? propagation.extract(ROOT_CONTEXT, carried) : ROOT_CONTEXT;
  return activeSpan(name, { kind: SpanKind.CONSUMER, attributes }, parent, work);
}

/** Marks the active span failed, for work that handles its own failure instead of throwing it (a job's). */
export function failActiveSpan(error: unknown): void {
  const span = trace.getActiveSpan();
  if (span) fail(span, error);
}

/** The active span's trace id, for log lines; undefined when nothing is being traced. */
export function activeTraceId(): string | undefined {
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext && isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}
