import { ApolloServer } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
  ApolloServerPluginSchemaReportingDisabled,
  ApolloServerPluginUsageReportingDisabled,
} from '@apollo/server/plugin/disabled';
import fastifyApollo, { fastifyApolloDrainPlugin } from '@as-integrations/fastify';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError } from 'graphql';
import { isDependencyUnavailable, UNAVAILABLE_MESSAGE, UNAVAILABLE_RETRY_AFTER_SECONDS } from './errors/dependency-unavailable';
import { DomainError, domainErrorOf } from './errors/domain-error';
import { createContext } from './context';
import type { Context } from './graphql/context';
import { compiledExecutionGateway } from './graphql/compiled-execution-gateway';
import { asGraphQLError, formatGraphQLError } from './graphql/format-error';
import { parseOptions } from './graphql/limits';
import { requestGuardsPlugin, requestValidationRules } from './graphql/request-guards';
import { subscriptionsOverWebSocketOnlyPlugin } from './graphql/subscriptions-over-websocket-only';
import { toGraphQLError } from './graphql/errors';
import { TrustedDocuments, trustRequest } from './graphql/trusted-documents';
import { gatewaySchema } from './schema';
import { attachGraphQLWebSocket } from './graphql/websocket';
import { registerHealth } from './health.routes';
import { AllowedMethods } from './http/allowed-methods';
import { registerCors } from './http/cors';
import { limitHeaders } from './http/limit-headers';
import { REQUEST_ID_HEADER, requestIdOf } from './http/request-id';
import { graphqlMetricsPlugin } from './graphql/metrics-plugin';
import { registerMetricsRoute } from './http/metrics-route';
import { runWithOrigin } from './observability/origin';
import { RequestLogController } from './http/request-log';
import { closeUnusedConnectionsOnClose } from './http/unused-connections';
import { clientErrorHandler, frameworkErrorHandler, handleFastifyError, sendHttpError } from './http/transport-errors';
import { ideHtml, registerIdeAssets, wantsIde } from './ide/ide.routes';
import { registerDashboard } from './dashboard/dashboard.routes';
import { registerApiReference } from './docs/api-reference.routes';
import { registerGraphQLOverSse } from './graphql/sse';
import { registerRestRoutes } from './rest/adapter';
import { buildOpenApi } from './rest/openapi';
import { routeTable } from './rest/routes';
import type { Runtime } from './runtime';
import { registerOAuthCallbacks } from './rest/routes/oauth-callbacks';

/**
 * The headers of an operation go on the GraphQL HTTP response too: those resolvers derived from services' results
 * (rate limits, idempotent replay), and those of a refusal (a rate limit's or quota's Retry-After).
 */
const responseHeadersPlugin: ApolloServerPlugin<Context> = {
  requestDidStart() {
    return Promise.resolve({
      willSendResponse({ contextValue, response, errors }) {
        const headers = new Map(contextValue.responseHeaders);
        for (const error of errors ?? []) {
          const refusal = domainErrorOf(error);
          if (refusal) for (const [name, value] of limitHeaders(refusal.data)) headers.set(name, value);
        }
        for (const [name, value] of headers) response.http.headers.set(name.toLowerCase(), value);
        return Promise.resolve();
      },
    });
  },
};

export interface ServerOptions {
  runtime: Runtime;
  log: FastifyBaseLogger;
  /** The token the IDE and the dashboard pre-fill in development (the demo token, when this data directory has one). */
  demoToken?: () => string | undefined;
  /** The dashboard's built bundle, when not where the build puts it beside the server (tests run the sources). */
  dashboardDir?: string;
  /** Registers what the starter mounts beside the product (src/stack.ts ServerExtension). */
  mount?: (app: FastifyInstance) => Promise<void>;
}

export interface GatewayServer {
  app: FastifyInstance;
  /** Stops accepting, answers 503 to requests that still arrive, drains HTTP requests and WebSockets. */
  close(): Promise<void>;
}

/** Seconds a client is told to wait when it reaches a server that is stopping. */
const RETRY_AFTER_STOPPING_SECONDS = 5;

/** One Fastify app: /graphql (HTTP and graphql-ws), the REST route table, /openapi.json, health, the IDE and the dashboard. */
export async function buildServer(options: ServerOptions): Promise<GatewayServer> {
  const { runtime } = options;
  const { config, database } = runtime;
  const production = config.nodeEnv === 'production';
  let stopping = false;
  const app = Fastify({
    loggerInstance: options.log,
    // Request ids let one request's log lines be found together: the caller's when acceptable, else a UUID.
    requestIdHeader: false,
    genReqId: requestIdOf,
    // One line per request: at debug in development (a terminal is for reading), info elsewhere.
    logController: new RequestLogController(config.isDevelopment ? 'debug' : 'info'),
    // Fastify's own 503 while closing is not in a documented shape: the onRequest hook below answers instead.
    return503OnClosing: false,
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  });
  // A client's spare connection that never sent a request would hold the stop until the client drops it.
  closeUnusedConnectionsOnClose(app);
  const allowed = new AllowedMethods();
  // CORS's preflight route (`OPTIONS *`) names no path: a path that has no route of its own stays a 404.
  app.addHook('onRoute', (route) => {
    if (route.url !== '*') allowed.add(route.url, route.method);
  });
  // First of the hooks: CORS headers go on every answer, refusals and errors included.
  await registerCors(app, config.cors);
  const schema = await gatewaySchema();
  const hideSuggestions = production;
  const errorOptions = { log: app.log, hideSuggestions };

  const apollo = new ApolloServer<Context>({
    // The schema, and its operations executed compiled (graphql-jit) rather than by graphql-js.
    gateway: compiledExecutionGateway(schema, app.log),
    validationRules: requestValidationRules,
    parseOptions,
    allowBatchedHttpRequests: false,
    introspection: true,
    // Authentication is by bearer header, never cookies, so a cross-site request cannot carry credentials.
    csrfPrevention: false,
    includeStacktraceInErrorResponses: false,
    // The stack owns the stop (src/stack.ts): Apollo's own signal handler would stop it early and raise the
    // signal again, which reads as a second Ctrl-C.
    stopOnTerminationSignals: false,
    formatError: (formatted, error) => formatGraphQLError(asGraphQLError(formatted, error), errorOptions),
    plugins: [
      fastifyApolloDrainPlugin(app),
      ApolloServerPluginLandingPageDisabled(),
      // No cache hints are used; left on, it wraps every field's resolver of the schema (REST's too) to compute them.
      ApolloServerPluginCacheControlDisabled(),
      // Apollo's defaults for GraphOS, which this service does not report to: said off here, so that an APOLLO_KEY
      // or APOLLO_SCHEMA_REPORTING in the environment never sends operations or the schema out, and no request
      // pays for a federated trace (the inline trace plugin's hook runs on every request to check it is off).
      ApolloServerPluginUsageReportingDisabled(),
      ApolloServerPluginSchemaReportingDisabled(),
      ApolloServerPluginInlineTraceDisabled(),
      responseHeadersPlugin,
      // In production the schema is for callers with a token (the IDE sends one).
      requestGuardsPlugin({ schemaNeedsToken: production }),
      subscriptionsOverWebSocketOnlyPlugin({ publicUrl: () => runtime.publicUrl(), formatError: (error) => formatGraphQLError(error, errorOptions) }),
      ...(runtime.metrics ? [graphqlMetricsPlugin(runtime.metrics) as ApolloServerPlugin<Context>] : []),
    ],
  });
  await apollo.start();

  // Errors Fastify raises before a handler (bad JSON, body too large, unsupported media type): the documented
  // generic body on REST paths, a GraphQL error list on /graphql. REST routes answer theirs in the route's own
  // shapes (src/rest/adapter.ts).
  app.setErrorHandler((error: FastifyError, request, reply) => handleFastifyError(error, request, reply));
  app.setNotFoundHandler((request, reply) => {
    const pathname = request.url.split('?')[0]!;
    const methods = allowed.for(pathname);
    if (methods.length > 0) {
      return sendHttpError(request, reply, 405, `${request.method} is not allowed on ${pathname}; use ${methods.join(', ')}`, {
        allow: methods.join(', '),
      });
    }
    return sendHttpError(request, reply, 404, `No route ${request.method} ${pathname}`);
  });

  const { metrics } = runtime;
  if (metrics) {
    // By Fastify's route template (an unmatched path is `unmatched`): bounded, never a path with ids in it.
    app.addHook('onResponse', async (request, reply) => {
      const route = request.routeOptions.url ?? 'unmatched';
      metrics.httpRequests.inc({ method: request.method, route, status_code: String(reply.statusCode) });
      metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    });
    if (config.metrics.mode === 'on') registerMetricsRoute(app, metrics, { token: config.metricsToken, loopbackOnly: production });
  }
  // The request's origin for everything it runs (the jobs it enqueues name it): the rest of the lifecycle runs inside.
  app.addHook('onRequest', (request, _reply, done) => runWithOrigin({ requestId: request.id }, done));
  app.addHook('onRequest', async (request, reply) => {
    // First: every answer carries the request's id, refusals by Fastify itself and errors included.
    reply.header(REQUEST_ID_HEADER, request.id);
    if (stopping) {
      return sendHttpError(request, reply, 503, 'The server is stopping; retry shortly', {
        connection: 'close',
        ...Object.fromEntries(limitHeaders({ retryAfterSeconds: RETRY_AFTER_STOPPING_SECONDS })),
      });
    }
    const [pathname, search] = request.url.split('?');
    if (request.method === 'GET' && pathname === '/graphql' && wantsIde(request.headers.accept, Boolean(search && /(^|&)query=/.test(search)))) {
      return reply.type('text/html; charset=utf-8').send(ideHtml(options.demoToken?.()));
    }
    return undefined;
  });

  const trusted = config.trustedDocuments ? TrustedDocuments.load(config.trustedDocuments) : undefined;
  if (config.trustedDocuments && trusted) {
    app.log.info({ documents: trusted.size, manifests: config.trustedDocuments }, 'trusted documents only: /graphql runs the operations of the manifests');
    // Before Apollo reads the request: the id becomes the manifest's text, a text not in the manifests is refused.
    app.addHook('preHandler', async (request, reply) => {
      if (request.routeOptions.url !== '/graphql') return undefined;
      const source = request.method === 'GET' ? request.query : request.body;
      if (typeof source !== 'object' || source === null) return undefined;
      try {
        trustRequest(trusted, source as Record<string, unknown>);
        // Apollo reads a GET's operation from the URL itself: it is written back there.
        if (request.method === 'GET') request.raw.url = `${request.url.split('?')[0]}?${new URLSearchParams(source as Record<string, string>).toString()}`;
        return undefined;
      } catch (error) {
        const refusal = domainErrorOf(error);
        if (!refusal) throw error;
        return reply.code(400).type('application/json; charset=utf-8').send({ errors: [formatGraphQLError(toGraphQLError(refusal), errorOptions)] });
      }
    });
  }
  registerHealth(app, database);
  registerIdeAssets(app);
  registerApiReference(app);
  registerGraphQLOverSse(app, {
    schema,
    runtime,
    hideSuggestions,
    createContext: (authorization, log) => createContext({ runtime, authorization, log, source: 'app' }),
    trusted,
  });
  registerDashboard(app, { dir: options.dashboardDir, demoToken: options.demoToken, log: app.log });
  await app.register(fastifyApollo(apollo), {
    path: '/graphql',
    method: ['GET', 'POST'],
    context: async (request) => {
      try {
        return await createContext({ runtime, authorization: request.headers.authorization, log: request.log, source: 'app' });
      } catch (error) {
        // Apollo answers a context failure with 500 unless the error names its status: a database that is down is a 503.
        if (!isDependencyUnavailable(error)) throw error;
        request.log.warn({ err: error }, 'a dependency is unavailable');
        const unavailable = new DomainError('SERVICE_UNAVAILABLE', UNAVAILABLE_MESSAGE, { retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS });
        throw new GraphQLError(UNAVAILABLE_MESSAGE, {
          originalError: unavailable,
          extensions: { code: unavailable.code, http: { status: 503, headers: new Map(limitHeaders(unavailable.data)) } },
        });
      }
    },
  });

  registerRestRoutes(app, { runtime, schema }, routeTable);
  registerOAuthCallbacks(app, runtime);
  await options.mount?.(app);
  const openApi = buildOpenApi(routeTable, schema, config.publicUrl);
  app.get('/openapi.json', (_request, reply) => reply.send(openApi));

  const ws = attachGraphQLWebSocket({
    server: app.server,
    schema,
    log: app.log,
    hideSuggestions,
    events: runtime.events,
    authenticate: (authorization) => runtime.authentication.authenticate(() => database.orm.em.fork(), authorization),
    metrics: runtime.metrics,
    createContext: (authorization) => createContext({ runtime, authorization, log: app.log, source: 'app' }),
    trusted,
  });

  return {
    app,
    async close() {
      stopping = true;
      // Sockets first (subscribers are told 1001 "going away"), then HTTP: stop listening and wait for
      // requests in flight.
      await ws.close();
      await app.close();
    },
  };
}
