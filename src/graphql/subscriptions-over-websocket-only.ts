import type { ApolloServerPlugin, GraphQLRequestContext } from '@apollo/server';
import { OperationTypeNode, type GraphQLError, type GraphQLFormattedError } from 'graphql';
import { DomainError } from '../errors/domain-error';
import type { Context } from './context';
import { toGraphQLError } from './errors';
import { SSE_PATH } from './sse';

/**
 * Subscriptions are served over graphql-ws (src/graphql/websocket.ts) on /graphql and over Server-Sent Events
 * (src/graphql/sse.ts) on /graphql/stream, never by Apollo on /graphql: there, GET or POST, whatever the `Accept`, a
 * subscription answers 400 BAD_REQUEST naming both places, before anything runs (left to run, its resolver met an
 * HTTP request instead of an event and failed: 500 and an error in the log).
 */
export function subscriptionsOverWebSocketOnlyPlugin(options: {
  /** The server's own URL (http(s)://host:port): the WebSocket and SSE URLs the refusal names are derived from it. */
  publicUrl: () => string;
  /** The transports' one formatter, for the GET answer this plugin writes itself. */
  formatError: (error: GraphQLError) => GraphQLFormattedError;
}): ApolloServerPlugin<Context> {
  const refusal = () =>
    toGraphQLError(
      new DomainError(
        'BAD_REQUEST',
        `Subscriptions are not served here: subscribe over WebSocket at ${options.publicUrl().replace(/^http/, 'ws')}/graphql (protocol graphql-transport-ws), ` +
          `or over Server-Sent Events at ${options.publicUrl()}${SSE_PATH} (protocol graphql-sse, Accept: text/event-stream)`,
      ),
      { httpStatus: 400 },
    );
  return {
    async requestDidStart() {
      return {
        async didResolveOperation(requestContext) {
          if (requestContext.operation?.operation !== OperationTypeNode.SUBSCRIPTION) return;
          answerAsJson(requestContext);
          throw refusal();
        },
        async willSendResponse(requestContext) {
          // Apollo refuses every operation but a query over GET itself (405, "use POST") before any plugin's
          // didResolveOperation; a subscription is refused over POST too, so GET gets the same answer as POST.
          const { request, response, operation } = requestContext;
          if (request.http?.method !== 'GET' || operation?.operation !== OperationTypeNode.SUBSCRIPTION) return;
          response.http.status = 400;
          response.http.headers.delete('allow');
          answerAsJson(requestContext);
          response.body = { kind: 'single', singleResult: { errors: [options.formatError(refusal())] } };
        },
      };
    },
  };
}

/**
 * A client that accepts no JSON (an SSE client's `Accept: text/event-stream`) would otherwise get Apollo's 406,
 * which hides why; the refusal is sent as JSON to it. Others get the type Apollo negotiates.
 */
function answerAsJson({ request, response }: GraphQLRequestContext<Context>): void {
  const accept = request.http?.headers.get('accept');
  if (accept && !/json|\*\/\*|application\/\*/i.test(accept)) response.http.headers.set('content-type', 'application/json; charset=utf-8');
}
