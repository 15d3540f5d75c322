import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { context, diag, DiagLogLevel, ROOT_CONTEXT } from '@opentelemetry/api';
import type { NodeSDK } from '@opentelemetry/sdk-node';
import type { Config } from '../config';

/**
 * OpenTelemetry traces, exported over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise nothing of the SDK or
 * the instrumentations is even loaded. The instrumentations patch modules (http, Fastify, pg, graphql) as they are
 * required, so the entries (src/main.ts, dev/main.ts) start this before loading the rest of the service. The standard
 * OTEL_* variables (protocol, headers, sampler, batching, resource) are read by the SDK itself; docs/operations.md.
 */

let sdk: NodeSDK | undefined;

/** Paths probed or scraped every few seconds: a trace each would drown the requests worth tracing. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

function untraced(url: string | undefined): boolean {
  return UNTRACED_PATHS.has((url ?? '').split('?')[0]!);
}

/**
 * Query parameters whose values never reach a span: the OAuth callbacks' `code` and `state`, beside the signed-URL
 * parameters the HTTP instrumentation redacts by default (which this list replaces, so it repeats them).
 */
const REDACTED_QUERY_PARAMETERS = ['code', 'state', 'sig', 'Signature', 'AWSAccessKeyId', 'X-Goog-Signature', 'X-Amz-Signature', 'X-Amz-Credential', 'X-Amz-Security-Token'];

/** How long a stop waits for the last spans to reach the collector (an unreachable one would hold it much longer). */
const FLUSH_TIMEOUT_MS = 5000;

/**
 * Starts the SDK with the instrumentations for HTTP in and out (the Fastify routes; the providers' calls and the
 * webhooks, made with node:http), PostgreSQL and GraphQL, when `config.otlpEndpoint` is set (and OTEL_SDK_DISABLED is not
 * true). Resolves once the modules it instruments may be loaded.
 */
export async function startTracing(config: Pick<Config, 'otlpEndpoint'>): Promise<void> {
  // OTEL_SDK_DISABLED is the standard switch that turns an SDK off whatever else is set: nothing is loaded then either.
  if (!config.otlpEndpoint || sdk || process.env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return;
  const [{ NodeSDK, resources }, { HttpInstrumentation }, { FastifyOtelInstrumentation }, { PgInstrumentation }, { GraphQLInstrumentation }] =
    await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/instrumentation-http'),
      import('@fastify/otel'),
      import('@opentelemetry/instrumentation-pg'),
      import('@opentelemetry/instrumentation-graphql'),
    ]);
  sdk = new NodeSDK({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (read by the SDK's environment detector) win over this default.
    resource: resources.defaultResource().merge(resources.resourceFromAttributes({ 'service.name': 'listings-gateway' })),
    // Traces only: metrics are Prometheus's (/metrics), logs are pino's lines. Left unset, the SDK would start OTLP
    // metric and log exporters of its own.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request: IncomingMessage) => untraced(request.url),
        // An outgoing call outside any trace (a library's own) is not one of ours.
        requireParentforOutgoingSpans: true,
        redactedQueryParamsServer: REDACTED_QUERY_PARAMETERS,
      }),
      new FastifyOtelInstrumentation({
        registerOnInitialization: true,
        ignorePaths: (route) => untraced(route.url),
        // The request span and the route handler's; a span per lifecycle hook would outnumber the work's own.
        instrumentHooks: false,
        requestHook: (span, request) => {
          // The path without its query (the OAuth callbacks' codes), and the id the request's log lines carry.
          span.setAttributes({ 'url.path': request.url.split('?')[0]!, 'lg.request_id': request.id });
        },
      }),
      new PgInstrumentation({
        // pg-boss polls its queues every few seconds outside any request or job: only statements of traced work.
        requireParentSpan: true,
        // The pool's waits are in lg_db_pool_connections; a span per checkout would double every statement's.
        ignoreConnectSpans: true,
      }),
      new GraphQLInstrumentation({
        // The operation's parse, validation and execution, its SQL under the execution. No resolver spans: to make
        // them (even at a limited depth) it wraps every field's resolver, and a list of 250 locations then served
        // at under half the rate (bench/lists).
        ignoreResolveSpans: true,
      }),
    ],
  });
  sdk.start();
}

/**
 * The SDK's own problems (an unreachable collector, a bad OTEL_* value) as lines of the process's logger, at warn
 * and above, unless OTEL_LOG_LEVEL asks for the SDK's console diagnostics. Nothing when tracing is off.
 */
export function logTracingProblems(log: FastifyBaseLogger): void {
  if (!sdk || process.env.OTEL_LOG_LEVEL) return;
  // Written outside any span: an export runs in the context of whichever span scheduled it, whose trace_id is not this line's.
  const line = (level: 'error' | 'warn' | 'info' | 'debug' | 'trace') => (message: string, ...args: unknown[]) =>
    context.with(ROOT_CONTEXT, () => log[level]({ otel: args.length > 0 ? args : undefined }, `tracing: ${message}`));
  diag.setLogger({ error: line('error'), warn: line('warn'), info: line('info'), debug: line('debug'), verbose: line('trace') }, DiagLogLevel.WARN);
}

/**
 * Exports the spans not sent yet and stops the SDK (a stop step of src/stack.ts); nothing when tracing is off. A
 * collector that does not answer in time costs those spans, never the stop.
 */
export async function stopTracing(log: FastifyBaseLogger): Promise<void> {
  const stopping = sdk;
  sdk = undefined;
  if (!stopping) return;
  let timer: NodeJS.Timeout | undefined;
  const flushed = await Promise.race([
    stopping.shutdown().then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), FLUSH_TIMEOUT_MS))),
  ]);
  clearTimeout(timer);
  if (!flushed) log.warn(`tracing: the last spans were not exported within ${FLUSH_TIMEOUT_MS} ms; they are dropped`);
}
