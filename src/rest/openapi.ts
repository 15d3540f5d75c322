import { Kind, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { oauthCallbackPaths, consentCallbacks } from './openapi-callbacks';
import { SchemaComponents } from './openapi-components';
import { errorResponses, isRateLimited } from './openapi-errors';
import { headerRef, REQUEST_ID_PARAMETER, REQUEST_ID_PARAMETER_REF, RESPONSE_HEADERS, type ResponseHeaderName } from './openapi-headers';
import { operationVariables, requestBodySchema, variableParameters, type ParameterObject } from './openapi-inputs';
import { nameRecords } from './openapi-records';
import { compileRecord, successBodySchema, type JsonSchema } from './record';
import type { RestRoute, ValueSource } from './route';

/**
 * OpenAPI 3.1 of the REST surface, generated from the route table and the schema, never written by hand, so it
 * cannot say other than the routes do. Which file builds which part: docs/openapi.md.
 */

function operationOf(route: RestRoute): OperationDefinitionNode {
  const operation = route.operation.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (!operation) throw new Error(`Route ${route.method} ${route.path} has no GraphQL operation`);
  return operation;
}

/** The route's operationId: its own, or its GraphQL operation's name without `Rest` (`RestCreatePost` -> `createPost`). */
export function operationIdOf(route: RestRoute): string {
  if (route.operationId) return route.operationId;
  const name = operationOf(route).name?.value;
  if (!name) throw new Error(`Route ${route.method} ${route.path}: an anonymous operation needs an operationId`);
  const bare = name.replace(/^Rest(?=[A-Z])/, '');
  return bare.charAt(0).toLowerCase() + bare.slice(1);
}

/** The field selection's parameter (`include_fields`): the REST names of the listed records' fields, comma-separated. */
function fieldSelectionParameter(route: RestRoute, schema: GraphQLSchema, where: string): ParameterObject[] {
  const selection = route.payload.fieldSelection;
  if (!selection) return [];
  const known = compileRecord(schema, route.operation, route.payload, where).itemFields(selection.list);
  if (!known) throw new Error(`${where}: ${selection.list} is not a list of records in its payload`);
  return [
    {
      name: selection.parameter,
      in: 'query',
      required: false,
      ...(selection.description ? { description: selection.description } : {}),
      schema: { type: 'array', items: { type: 'string', enum: known } },
      style: 'form',
      explode: false,
    },
  ];
}

/** The success body, its records named as the document's components. */
function successSchema(route: RestRoute, schema: GraphQLSchema, components: SchemaComponents, where: string): JsonSchema {
  const payload = compileRecord(schema, route.operation, route.payload, where).schema;
  return successBodySchema(route, payload, (compiled, rootMayBeShared) => nameRecords(schema, route, compiled, components, { where, rootMayBeShared }));
}

/** The headers of the route's success: its id, a limit's state, an idempotent replay. */
function successHeaders(route: RestRoute): Record<string, unknown> {
  const names: ResponseHeaderName[] = ['X-Request-Id'];
  if (isRateLimited(route)) names.push('RateLimit-Policy', 'RateLimit');
  // A route reading an Idempotency-Key may answer an earlier request's record again.
  if ((Object.values(route.variables) as ValueSource[]).some((source) => source.from === 'header' && source.name.toLowerCase() === 'idempotency-key')) {
    names.push('Idempotent-Replayed');
  }
  return Object.fromEntries(names.map((name) => [name, headerRef(name)]));
}

function describeRoute(route: RestRoute, operation: OperationDefinitionNode): string {
  const rootFields = operation.selectionSet.selections.flatMap((selection) => (selection.kind === Kind.FIELD ? [selection.name.value] : []));
  return [
    route.organizationTokenOnly ? 'Requires an organization token.' : undefined,
    `Runs the GraphQL ${operation.operation} ${rootFields.map((field) => `\`${field}\``).join(' or ')} of /graphql.`,
  ]
    .filter(Boolean)
    .join(' ');
}

function buildOperation(route: RestRoute, schema: GraphQLSchema, components: SchemaComponents): Record<string, unknown> {
  const where = `Route ${route.method} ${route.path}`;
  const operation = operationOf(route);
  const variables = operationVariables(schema, route, operation);
  const body = requestBodySchema(components, route, variables, where);
  const callbacks = consentCallbacks(route.method, route.path);
  return {
    operationId: operationIdOf(route),
    summary: route.summary,
    description: describeRoute(route, operation),
    tags: [route.tag],
    parameters: [...variableParameters(components, route, variables, where), ...fieldSelectionParameter(route, schema, where), REQUEST_ID_PARAMETER_REF],
    ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: body } } } } : {}),
    responses: {
      [String(route.successStatus)]: {
        description: 'Success',
        headers: successHeaders(route),
        content: { 'application/json': { schema: successSchema(route, schema, components, where) } },
      },
      ...errorResponses(route),
    },
    ...(callbacks ? { callbacks } : {}),
  };
}

/**
 * OpenAPI 3.1 of the REST surface. `serverUrl` is PUBLIC_URL; without it the server is `/`, the origin the document
 * was read from (docs/openapi.md).
 */
export function buildOpenApi(routes: readonly RestRoute[], schema: GraphQLSchema, serverUrl?: string): Record<string, unknown> {
  const components = new SchemaComponents();
  const paths: Record<string, Record<string, unknown>> = {};
  const operationIds = new Map<string, string>();
  for (const route of routes) {
    const openApiPath = route.path.replace(/:(\w+)/g, '{$1}');
    const operation = buildOperation(route, schema, components);
    const operationId = operation.operationId as string;
    const taken = operationIds.get(operationId);
    if (taken) throw new Error(`OpenAPI: ${route.method} ${route.path} and ${taken} are both ${operationId}`);
    operationIds.set(operationId, `${route.method} ${route.path}`);
    paths[openApiPath] ??= {};
    paths[openApiPath][route.method.toLowerCase()] = operation;
  }
  for (const [path, item] of Object.entries(oauthCallbackPaths())) {
    if (paths[path]) throw new Error(`OpenAPI: ${path} is a route of the table and a consent callback`);
    paths[path] = item;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Listings Gateway REST interface',
      version: '1',
      description:
        'The documented REST paths. Each runs a GraphQL operation of /graphql (its description names it). ' +
        'Send `Authorization: Bearer <token>` (an organization or an account token). The reference page is at /docs.',
    },
    // A server URL ends without a slash: the paths start with one.
    servers: [serverUrl ? { url: serverUrl.replace(/\/+$/, '') } : { url: '/', description: 'the origin this document was read from' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      schemas: components.toJSON(),
      headers: RESPONSE_HEADERS,
      parameters: { RequestId: REQUEST_ID_PARAMETER },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An organization token (lgo_…) or an account token (lga_…).' } },
    },
  };
}
