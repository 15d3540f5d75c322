import type { FastifyBaseLogger } from 'fastify';
import {
  getOperationAST,
  GraphQLError,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
} from 'graphql';
import type { Context as WsContext } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import type { Server } from 'node:http';
import { WebSocketServer } from 'ws';
import type { Principal } from '../auth/principal';
import { authenticate } from '../auth/token.service';
import type { Database } from '../db/orm';
import { createContext } from './context';
import { formatGraphQLError } from './format-error';
import { limitRules, parseOptions } from './limits';

export interface WebSocketDependencies {
  server: Server;
  schema: GraphQLSchema;
  database: Database;
  log: FastifyBaseLogger;
  isDevelopment: boolean;
}

const validationRules = [...specifiedRules, ...limitRules];

/**
 * graphql-ws on the same path and port as HTTP. The connection authenticates once, in connection_init
 * (`{"authorization": "Bearer <token>"}`); a missing or bad token closes the socket with 4403. Each operation
 * goes through the same parse limits and validation rules as over HTTP (graphql-ws's own validation would
 * skip them), and the same error formatter.
 */
export function attachGraphQLWebSocket(deps: WebSocketDependencies): { close(): Promise<void> } {
  const wss = new WebSocketServer({ server: deps.server, path: '/graphql' });
  const principals = new WeakMap<WsContext, Principal>();
  const format = (error: GraphQLError) => formatGraphQLError(error, { log: deps.log, isDevelopment: deps.isDevelopment });

  const cleanup = useServer(
    {
      schema: deps.schema,
      onConnect: async (ctx) => {
        const params = ctx.connectionParams ?? {};
        const authorization = params.authorization ?? params.Authorization;
        const principal = await authenticate(deps.database.orm.em.fork(), authorization);
        if (!principal) return false;
        principals.set(ctx, principal);
        return true;
      },
      onSubscribe: async (ctx, _id, payload) => {
        let document: DocumentNode;
        try {
          document = parse(payload.query, parseOptions);
        } catch (error) {
          return [error instanceof GraphQLError ? error : new GraphQLError(String(error))];
        }
        const errors = validate(deps.schema, document, validationRules);
        if (errors.length > 0) return errors;
        const operation = getOperationAST(document, payload.operationName);
        if (!operation) return [new GraphQLError('Unable to identify the operation to run')];
        const contextValue = await createContext({
          database: deps.database,
          authorization: undefined,
          principal: principals.get(ctx) ?? null,
          log: deps.log,
          surface: 'graphql',
        });
        return {
          schema: deps.schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue,
        };
      },
      onError: (_ctx, _id, _payload, errors) => errors.map(format),
      onNext: (_ctx, _id, _payload, _args, result: ExecutionResult) =>
        result.errors ? { ...result, errors: result.errors.map(format) } : undefined,
    },
    wss,
  );

  return {
    close: async () => {
      await cleanup.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
