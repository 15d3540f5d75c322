import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  execute,
  Kind,
  type GraphQLError,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type TypeNode,
  validate,
} from 'graphql';
import type { Runtime } from '../runtime';
import { createContext } from '../context';
import { DomainError, domainErrorOf } from '../errors/domain-error';
import { restErrorBody } from '../http/error-body';
import { classifyError } from '../graphql/format-error';
import { guardRequestInput } from '../http/input-guard';
import { limitHeaders } from '../http/limit-headers';
import type { RestRoute, ValueSource } from './route';

interface VariableSpec {
  name: string;
  /** The named type under any list / non-null wrappers. */
  typeName: string;
  list: boolean;
}

function unwrap(type: TypeNode, list = false): { typeName: string; list: boolean } {
  if (type.kind === Kind.NON_NULL_TYPE) return unwrap(type.type, list);
  if (type.kind === Kind.LIST_TYPE) return unwrap(type.type, true);
  return { typeName: type.name.value, list };
}

function operationOf(route: RestRoute): OperationDefinitionNode {
  const operation = route.operation.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (!operation) throw new Error(`Route ${route.method} ${route.path} has no GraphQL operation`);
  return operation;
}

/** Converts a string from the path, query or headers to the GraphQL variable's scalar type. */
function fromText(raw: string, spec: VariableSpec, restName: string): unknown {
  if (spec.list) return raw.split(',').map((item) => fromText(item.trim(), { ...spec, list: false }, restName));
  switch (spec.typeName) {
    case 'Int': {
      if (!/^-?\d+$/.test(raw)) throw DomainError.badInput(`${restName} must be an integer`);
      return Number(raw);
    }
    case 'Float': {
      const value = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(value)) throw DomainError.badInput(`${restName} must be a number`);
      return value;
    }
    case 'Boolean': {
      if (raw !== 'true' && raw !== 'false') throw DomainError.badInput(`${restName} must be true or false`);
      return raw === 'true';
    }
    default:
      return raw;
  }
}

function firstValue(value: unknown): string | undefined {
  if (Array.isArray(value)) return value.length > 0 ? String(value[0]) : undefined;
  return value === undefined || value === null ? undefined : String(value);
}

function bodyObject(request: FastifyRequest): Record<string, unknown> {
  const { body } = request;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw DomainError.badInput('The request body must be a JSON object');
  return body as Record<string, unknown>;
}

function readValue(request: FastifyRequest, source: ValueSource, spec: VariableSpec): unknown {
  switch (source.from) {
    case 'path':
    case 'query':
    case 'header': {
      const bag = (source.from === 'path' ? request.params : source.from === 'query' ? request.query : request.headers) as
        Record<string, unknown>;
      const raw = firstValue(bag[source.from === 'header' ? source.name.toLowerCase() : source.name]);
      if (raw === undefined || raw === '') return undefined;
      return fromText(source.transform ? source.transform(raw) : raw, spec, source.name);
    }
    case 'body':
      return bodyObject(request)[source.name];
    case 'bodyFields': {
      const requestBody = bodyObject(request);
      const input: Record<string, unknown> = {};
      for (const [inputField, restName] of Object.entries(source.fields)) {
        if (restName in requestBody) input[inputField] = requestBody[restName];
      }
      return input;
    }
  }
}

/**
 * GraphQL's message for a variable of the wrong type or a missing field, rewritten with the REST field's
 * documented name (`location_id`, `params.topicType`), so a REST caller never sees GraphQL variable names.
 */
function restMessageForVariableError(route: RestRoute, error: GraphQLError): string | undefined {
  const match = /^Variable "\$(\w+)" got invalid value .*?(?: at "\w+((?:\.\w+|\[\d+\])+)")?; (.*)$/s.exec(error.message);
  if (!match) return undefined;
  const [, variable, fieldPath, reason] = match;
  const source = route.variables[variable!] as ValueSource | undefined;
  if (source?.from !== 'bodyFields') return `Invalid value for ${source?.name ?? variable}: ${reason}`;
  const restPath = (segments: string[]) => [source.fields[segments[0]!] ?? segments[0], ...segments.slice(1)].join('.');
  const missing = /^Field "(\w+)" of required type "[^"]+" was not provided\.$/.exec(reason!);
  const segments = fieldPath ? fieldPath.slice(1).split('.') : [];
  if (missing) return `${restPath([...segments, missing[1]!])} is required`;
  return `Invalid value for ${segments.length > 0 ? restPath(segments) : 'the request body'}: ${reason}`;
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
    const specs = new Map<string, VariableSpec>(
      (operation.variableDefinitions ?? []).map((definition) => [
        definition.variable.name.value,
        { name: definition.variable.name.value, ...unwrap(definition.type) },
      ]),
    );

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
          const read: Record<string, unknown> = {};
          for (const [name, source] of Object.entries(route.variables) as [string, ValueSource][]) {
            const value = readValue(request, source, specs.get(name)!);
            if (value !== undefined) read[name] = value;
          }
          const variableValues = { ...read, ...route.derive?.(read) };
          const result = await execute({
            schema: deps.schema,
            document: route.operation,
            contextValue: ctx,
            variableValues,
          });
          if (result.errors?.length) {
            // Prefer a catalogue error when a response carries several.
            const error = result.errors.find((e) => domainErrorOf(e)) ?? result.errors[0]!;
            const restMessage = restMessageForVariableError(route, error);
            throw restMessage ? DomainError.badInput(restMessage) : error;
          }
          return send(reply, route.successStatus, { success: true, payload: route.present(result.data as never) }, ctx.responseHeaders);
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
