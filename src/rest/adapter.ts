import type { FastifyInstance, FastifyReply } from 'fastify';
import { Kind, type GraphQLSchema, type OperationDefinitionNode, validate } from 'graphql';
import type { Runtime } from '../runtime';
import { createContext } from '../context';
import { catalogueEntry, DomainError, domainErrorOf } from '../errors/domain-error';
import { restErrorBody } from '../http/error-body';
import type { Context } from '../graphql/context';
import { handleFastifyError } from '../http/transport-errors';
import { compileOperation, type CompiledOperation } from '../graphql/compiled-operation';
import { classifyError, logMasked } from '../graphql/format-error';
import { guardRequestInput } from '../http/input-guard';
import { limitHeaders } from '../http/limit-headers';
import { restFieldNamer, restMessage } from './field-names';
import { compileRecord, REST_LEAF_SERIALIZERS, successSerializerSchema, type CompiledRecord } from './record';
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
/** A route's operation and payload, compiled: what serves it, and what presents events as GET /events (src/rest/event-presenter.ts). */
export interface CompiledRoute {
  operation: OperationDefinitionNode;
  compiled: CompiledOperation;
  record: CompiledRecord;
}

/** Validates a route's document against the schema and compiles its operation and its record, once, at start-up. */
export function compileRoute(schema: GraphQLSchema, route: RestRoute): CompiledRoute {
  const operation = operationOf(route);
  // Route documents are ours: validate them against the schema once, at start-up, not per request.
  const problems = validate(schema, route.operation);
  if (problems.length > 0) {
    throw new Error(`Route ${route.method} ${route.path}: ${problems.map((p) => p.message).join('; ')}`);
  }
  const record = compileRecord(schema, route.operation, route.payload, `Route ${route.method} ${route.path}`);
  // Compiled once, at start-up: a REST request pays for resolving its fields, not for walking the document.
  // Times stay Date to the record, which writes them in the route's unit (src/rest/record.ts).
  const compiled = compileOperation(schema, route.operation, operation.name?.value, { customSerializers: REST_LEAF_SERIALIZERS });
  return { operation, compiled, record };
}

export function registerRestRoutes(app: FastifyInstance, deps: RestDependencies, routes: readonly RestRoute[]): void {
  for (const route of routes) {
    const { operation, compiled, record } = compileRoute(deps.schema, route);
    const readVariables = prepareVariables(deps.schema, route, operation);
    const restNameOf = restFieldNamer(deps.schema, route, operation);
    const selectFields = fieldSelector(route, record);
    // The success body is written by a serializer compiled once from its documented schema; a route whose schema
    // cannot be compiled to JSON.stringify's bytes keeps JSON.stringify (src/rest/record.ts).
    const successSchema = successSerializerSchema(route, record.schema);
    const operationName = operation.name?.value;
    if (compiled.fallbackReason) app.log.warn({ route: `${route.method} ${route.path}`, reason: compiled.fallbackReason }, 'graphql-jit cannot compile this route\'s operation: graphql-js executes it');

    app.route({
      method: route.method,
      url: route.path,
      ...(successSchema ? { schema: { response: { [route.successStatus]: successSchema } } } : {}),
      // Fastify's own refusals of this route's requests (a body that is not JSON) in the route's shapes too.
      errorHandler: (error, request, reply) => {
        // The answer is sent here; the reply it gives back (a thenable) is not the handler's to return.
        void handleFastifyError(error, request, reply, (status) => route.errorShapes?.[status]);
      },
      handler: async (request, reply) => {
        let ctx: Context | undefined;
        const started = performance.now();
        let errorCode = 'none';
        try {
          ctx = await createContext({
            runtime: deps.runtime,
            authorization: request.headers.authorization,
            log: request.log,
            source: 'external_api',
          });
          // Every documented path requires a token: say so before judging the request's parameters.
          if (!ctx.principal) throw new DomainError('UNAUTHENTICATED', 'Missing, unknown or revoked bearer token');
          // Then the input text rule over path, query and body, in the REST names (GraphQL checks its variables).
          const problem = guardRequestInput(request);
          if (problem) throw DomainError.badInput(problem);
          const read = readVariables(request);
          const keep = selectFields(request.query as Record<string, unknown>);
          const variableValues = { ...read, ...route.derive?.(read) };
          const result = await compiled.run(ctx, variableValues);
          if (result.errors?.length) {
            // Prefer a catalogue error when a response carries several.
            throw result.errors.find((e) => domainErrorOf(e)) ?? result.errors[0]!;
          }
          const payload = keep(record.present(result.data));
          const body = envelop(route, payload);
          return send(reply, route.successStatus, body, ctx.responseHeaders);
        } catch (error) {
          const classified = classifyError(error, { hideSuggestions: deps.runtime.config.nodeEnv === 'production' });
          if (classified.masked) logMasked(request.log, classified, error, 'a REST route');
          const code = classified.code === 'GRAPHQL_PARSE_FAILED' || classified.code === 'GRAPHQL_VALIDATION_FAILED'
            ? 'BAD_USER_INPUT'
            : classified.code;
          errorCode = code;
          const message = restMessage(classified.message, classified.data, restNameOf);
          const rendered = restErrorBody(code, message, classified.data, route.errorShapes?.[catalogueEntry(code).status]);
          return send(reply, rendered.status, rendered.body, new Map([...(ctx?.responseHeaders ?? []), ...limitHeaders(classified.data)]));
        } finally {
          deps.runtime.metrics?.countOperation({ name: operationName, type: operation.operation, transport: 'rest', errorCode, started });
        }
      },
    });
  }
}

/**
 * The route's field selection (`include_fields`), checked against the REST names of the listed items' fields:
 * a function from the query to what keeps the chosen fields of each item (everything when none is asked for).
 */
function fieldSelector(route: RestRoute, record: CompiledRecord): (query: Record<string, unknown>) => (payload: unknown) => unknown {
  const selection = route.payload.fieldSelection;
  if (!selection) return () => (payload) => payload;
  const known = record.itemFields(selection.list);
  if (!known) throw new Error(`Route ${route.method} ${route.path}: ${selection.list} is not a list of records in its payload`);
  return (query) => {
    // Sent once (the route's variable reader refuses a repeated parameter before this runs).
    const raw = query[selection.parameter];
    const text = typeof raw === 'string' ? raw : '';
    const asked = text.split(',').map((name) => name.trim()).filter(Boolean);
    if (asked.length === 0) return (payload) => payload;
    const unknown = asked.filter((name) => !known.includes(name));
    if (unknown.length > 0) {
      throw DomainError.badInput(`${selection.parameter}: unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (known: ${known.join(', ')})`);
    }
    const kept = new Set([...selection.always, ...asked]);
    const fields = known.filter((name) => kept.has(name));
    return (payload) => {
      const members = payload as Record<string, unknown>;
      const items = members[selection.list] as Record<string, unknown>[];
      return { ...members, [selection.list]: items.map((item) => Object.fromEntries(fields.map((name) => [name, item[name]]))) };
    };
  };
}

/** The success body of a route: its payload in the route's envelope. */
function envelop(route: RestRoute, payload: unknown): Record<string, unknown> {
  if (route.envelope === 'spread') return { success: true, ...(payload as Record<string, unknown>) };
  if (typeof route.envelope === 'object') return { ...(payload as Record<string, unknown>), ...route.envelope.bare };
  return { success: true, payload };
}
