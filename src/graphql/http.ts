import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
  ApolloServerPluginSchemaReportingDisabled,
  ApolloServerPluginUsageReportingDisabled,
} from '@apollo/server/plugin/disabled';
import fastifyApollo, { fastifyApolloDrainPlugin } from '@as-integrations/fastify';
import type { FastifyBaseLogger } from 'fastify';
import fp from 'fastify-plugin';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import { isDependencyUnavailable, UNAVAILABLE_MESSAGE, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../errors/dependency-unavailable';
import { DomainError, domainErrorOf } from '../errors/domain-error';
import { limitHeaders } from '../http/limit-headers';
import type { Metrics } from '../observability/metrics';
import { compiledExecutionGateway } from './compiled-execution-gateway';
import type { Context } from './context';
import { toGraphQLError } from './errors';
import { asGraphQLError, formatGraphQLError } from './format-error';
import { parseOptions } from './limits';
import { graphqlMetricsPlugin } from './metrics-plugin';
import { requestGuardsPlugin, requestValidationRules } from './request-guards';
import { subscriptionsOverWebSocketOnlyPlugin } from './subscriptions-over-websocket-only';
import { trustRequest, type TrustedDocuments } from './trusted-documents';

export interface GraphQLHttpOptions {
  schema: GraphQLSchema;
  /** The one context factory (src/context.ts), per request, with the request's logger. */
  createContext: (authorization: unknown, log: FastifyBaseLogger) => Promise<Context>;
  trusted?: TrustedDocuments;
  /** Production: no "Did you mean" hints, and the schema only for callers with a token. */
  production: boolean;
  /** Where a client is sent for subscriptions over WebSocket. */
  publicUrl: () => string;
  metrics?: Metrics;
}

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

/** GraphQL over HTTP at /graphql (POST and GET): Apollo Server, its operations executed compiled (graphql-jit). */
export const graphqlHttpPlugin = fp<GraphQLHttpOptions>(
  async (app, options) => {
    const { schema, trusted } = options;
    const errorOptions = { log: app.log, hideSuggestions: options.production };
    const apollo = new ApolloServer<Context>({
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
        // GraphOS, which this service does not report to, said off: an APOLLO_KEY in the environment never sends
        // operations or the schema out, and no request pays for a federated trace.
        ApolloServerPluginUsageReportingDisabled(),
        ApolloServerPluginSchemaReportingDisabled(),
        ApolloServerPluginInlineTraceDisabled(),
        responseHeadersPlugin,
        // In production the schema is for callers with a token (the IDE sends one).
        requestGuardsPlugin({ schemaNeedsToken: options.production }),
        subscriptionsOverWebSocketOnlyPlugin({ publicUrl: options.publicUrl, formatError: (error) => formatGraphQLError(error, errorOptions) }),
        ...(options.metrics ? [graphqlMetricsPlugin(options.metrics) as ApolloServerPlugin<Context>] : []),
      ],
    });
    await apollo.start();

    if (trusted) {
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

    await app.register(fastifyApollo(apollo), {
      path: '/graphql',
      method: ['GET', 'POST'],
      context: async (request) => {
        try {
          return await options.createContext(request.headers.authorization, request.log);
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
  },
  { name: 'graphql-http', dependencies: ['http-edge'] },
);
