import type { FastifyInstance, FastifyReply } from 'fastify';
import {
  execute,
  Kind,
  type GraphQLError,
  type GraphQLSchema,
  type OperationDefinitionNode,
  validate,
} from 'graphql';
import type { Runtime } from '../runtime';
import { createContext } from '../context';
import { DomainError, domainErrorOf } from '../errors/domain-error';
import { restErrorBody } from '../http/error-body';
import { classifyError } from '../graphql/format-error';
import { guardRequestInput } from '../http/input-guard';
import { limitHeaders } from '../http/limit-headers';
import { compileRecord } from './record';
import type { RestRoute } from './route';
import { prepareVariables } from './variables';

function operationOf(route: RestRoute): OperationDefinitionNode {
  const operation = route.operation.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (!operation) throw new Error(`Route ${route.method} ${route.path} has no GraphQL operation`);
  return operation;
}

export interface RestDependencies {
  runtime: Runtime;
  schema: GraphQLSchema;
}

function send(reply: FastifyReply, status: number, body: unknown, headers: Map<string, string>): FastifyReply {
  for (const [name, value] of headers) reply.header(name, value);
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

/**
 * Serves each route of the table by running its GraphQL operation against the same schema and context
 * factory as /graphql. The adapter only reads the request, picks the status and presents the result.
 */
export function registerRestRoutes(app: FastifyInstance, deps: RestDependencies, routes: readonly RestRoute[]): void {
  for (const route of routes) {
    const operation = operationOf(route);
    // Route documents are ours: validate them against the schema once, at start-up, not per request.
    const problems = validate(deps.schema, route.operation);
    if (problems.length > 0) {
      throw new Error(`Route ${route.method} ${route.path}: ${problems.map((p) => p.message).join('; ')}`);
    }
    const readVariables = prepareVariables(deps.schema, route, operation);
    const record = compileRecord(deps.schema, route.operation, route.payload, `Route ${route.method} ${route.path}`);

    app.route({
      method: route.method,
      url: route.path,
      handler: async (request, reply) => {
        const ctx = await createContext({
          runtime: deps.runtime,
          authorization: request.headers.authorization,
          log: request.log,
          source: 'external_api',
        });
        try {
          // Every documented path requires a token: say so before judging the request's parameters.
          if (!ctx.principal) throw new DomainError('UNAUTHENTICATED', 'Missing, unknown or revoked bearer token');
          // Then the input text rule over path, query and body, in the REST names (GraphQL checks its variables).
          const problem = guardRequestInput(request);
          if (problem) throw DomainError.badInput(problem);
          const read = readVariables(request);
          const variableValues = { ...read, ...route.derive?.(read) };
          const result = await execute({
            schema: deps.schema,
            document: route.operation,
            contextValue: ctx,
            variableValues,
          });
          if (result.errors?.length) {
            // Prefer a catalogue error when a response carries several.
            throw result.errors.find((e) => domainErrorOf(e)) ?? result.errors[0]!;
          }
          return send(reply, route.successStatus, { success: true, payload: record.present(result.data) }, ctx.responseHeaders);
        } catch (error) {
          const classified = classifyError(error as GraphQLError, { hideSuggestions: deps.runtime.config.nodeEnv === 'production' });
          if (classified.masked) request.log.error({ err: error }, 'unexpected error in a REST route');
          const code = classified.code === 'GRAPHQL_PARSE_FAILED' || classified.code === 'GRAPHQL_VALIDATION_FAILED'
            ? 'BAD_USER_INPUT'
            : classified.code;
          const rendered = restErrorBody(code, classified.message, classified.data);
          return send(reply, rendered.status, rendered.body, new Map([...ctx.responseHeaders, ...limitHeaders(classified.data)]));
        }
      },
    });
  }
}
