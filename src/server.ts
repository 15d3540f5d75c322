import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { createContext } from './context';
import { dashboardPlugin } from './dashboard/dashboard.routes';
import { apiReferencePlugin } from './docs/api-reference.routes';
import { graphqlHttpPlugin } from './graphql/http';
import { graphqlSsePlugin } from './graphql/sse';
import { TrustedDocuments } from './graphql/trusted-documents';
import { graphqlWebSocketPlugin } from './graphql/websocket';
import { corsPlugin } from './http/cors';
import { httpEdgePlugin } from './http/edge';
import { healthPlugin } from './http/health';
import { httpMetricsPlugin } from './http/metrics-route';
import { requestIdOf } from './http/request-id';
import { RequestLogController } from './http/request-log';
import { clientErrorHandler, frameworkErrorHandler } from './http/transport-errors';
import { frontDoorLinks } from './home/front-door';
import { frontDoorPlugin } from './home/home.routes';
import { idePlugin } from './ide/ide.routes';
import { buildOpenApi } from './rest/openapi';
import { restPlugin } from './rest/plugin';
import { routeTable } from './rest/routes';
import type { Runtime } from './runtime';
import { gatewaySchema } from './schema';

export interface ServerOptions {
  runtime: Runtime;
  log: FastifyBaseLogger;
  /** The token the front door shows and the IDE, the reference page and the dashboard pre-fill in development (the demo token, when this data directory has one). */
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

/**
 * One Fastify app, composed of a plugin per concern, each with the dependencies it uses and its own stop: the edge
 * (request ids, refusals, the stop's 503) and CORS first, so their hooks cover every answer; then metrics, the front door
 * (GET /), health, the pages, GraphQL over HTTP, SSE and WebSocket, and REST. `app.close()` runs the plugins' stops.
 */
export async function buildServer(options: ServerOptions): Promise<GatewayServer> {
  const { runtime } = options;
  const { config, metrics } = runtime;
  const production = config.nodeEnv === 'production';
  const app = Fastify({
    loggerInstance: options.log,
    // Request ids let one request's log lines be found together: the caller's when acceptable, else a UUID.
    requestIdHeader: false,
    genReqId: requestIdOf,
    // One line per request: at debug in development (a terminal is for reading), info elsewhere.
    logController: new RequestLogController(config.isDevelopment ? 'debug' : 'info'),
    // Fastify's own 503 while closing is not in a documented shape: the edge answers instead.
    return503OnClosing: false,
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  });
  const schema = await gatewaySchema();
  const trusted = config.trustedDocuments ? TrustedDocuments.load(config.trustedDocuments) : undefined;
  if (trusted) app.log.info({ documents: trusted.size, manifests: config.trustedDocuments }, 'trusted documents only: /graphql runs the operations of the manifests');
  const contextFor = (source: 'app') => (authorization: unknown, log: FastifyBaseLogger) => createContext({ runtime, authorization, log, source });

  // CORS headers go on every answer, refusals and errors included: its hook runs first.
  await app.register(corsPlugin, { cors: config.cors });
  await app.register(httpEdgePlugin);
  if (metrics) {
    await app.register(httpMetricsPlugin, {
      metrics,
      route: config.metrics.mode === 'on' ? { token: config.metricsToken, loopbackOnly: production } : undefined,
    });
  }
  await app.register(frontDoorPlugin, { links: frontDoorLinks(config), demoToken: options.demoToken });
  await app.register(idePlugin, { demoToken: options.demoToken });
  await app.register(healthPlugin, { database: runtime.database });
  // Built once: /openapi.json answers it, and the reference page shows it.
  const openApi = buildOpenApi(routeTable, schema, config.publicUrl);
  await app.register(apiReferencePlugin, { document: openApi, demoToken: options.demoToken, log: app.log });
  await app.register(graphqlSsePlugin, { schema, runtime, hideSuggestions: production, createContext: contextFor('app'), trusted });
  await app.register(dashboardPlugin, { dir: options.dashboardDir, demoToken: options.demoToken, log: app.log });
  await app.register(graphqlHttpPlugin, {
    schema,
    createContext: contextFor('app'),
    trusted,
    production,
    publicUrl: () => runtime.publicUrl(),
    metrics,
  });
  await app.register(restPlugin, { schema, runtime, openApi });
  await options.mount?.(app);
  await app.register(graphqlWebSocketPlugin, {
    schema,
    log: app.log,
    hideSuggestions: production,
    events: runtime.events,
    authenticate: (authorization) => runtime.authentication.authenticate(() => runtime.database.orm.em.fork(), authorization),
    metrics,
    createContext: (authorization) => createContext({ runtime, authorization, log: app.log, source: 'app' }),
    trusted,
  });
  return { app, close: () => app.close() };
}
