import { errorCatalogue, type ErrorCode } from '../errors/domain-error';
import { restErrorBody } from '../http/error-body';
import type { RestRoute, ValueSource } from './route';

function errorSchema(code: ErrorCode): Record<string, unknown> {
  const { body } = restErrorBody(code, 'message');
  return {
    type: 'object',
    properties: Object.fromEntries(
      Object.entries(body).map(([key, value]) => [key, { type: typeof value === 'number' ? 'integer' : typeof value }]),
    ),
    example: body,
  };
}

/** Error responses every route may give, and the ones its kind adds. */
function errorResponses(route: RestRoute): Record<string, unknown> {
  const codes: ErrorCode[] = ['BAD_USER_INPUT', 'UNAUTHENTICATED', 'NOT_FOUND', 'INTERNAL_SERVER_ERROR'];
  if (route.organizationTokenOnly) codes.push('ORGANIZATION_TOKEN_REQUIRED');
  if (route.tag === 'Accounts and organization' && route.path.startsWith('/organization')) codes.push('ORGANIZATION_NOT_FOUND');
  const responses: Record<string, unknown> = {};
  for (const code of codes) {
    const status = String(errorCatalogue[code].status);
    // One schema per status; where two codes share a status (404), the route-specific one wins.
    responses[status] = { description: code, content: { 'application/json': { schema: errorSchema(code) } } };
  }
  return responses;
}

function parameters(route: RestRoute): unknown[] {
  return (Object.values(route.variables) as ValueSource[])
    .filter((source): source is Extract<ValueSource, { name: string }> => source.from !== 'bodyFields' && source.from !== 'body')
    .map((source) => ({
      name: source.name,
      in: source.from,
      required: source.from === 'path' || Boolean(source.required),
      description: source.description,
      schema: { type: 'string' },
    }));
}

function requestBody(route: RestRoute): unknown {
  const fields = (Object.values(route.variables) as ValueSource[]).flatMap((source) =>
    source.from === 'body' ? [source.name] : source.from === 'bodyFields' ? Object.values(source.fields) : [],
  );
  if (fields.length === 0) return undefined;
  return {
    required: true,
    content: {
      'application/json': {
        schema: { type: 'object', properties: Object.fromEntries(fields.map((field) => [field, {}])) },
      },
    },
  };
}

/** OpenAPI 3.1 of the REST surface, generated from the route table (never written by hand). */
export function buildOpenApi(routes: readonly RestRoute[], serverUrl?: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const openApiPath = route.path.replace(/:(\w+)/g, '{$1}');
    const body = requestBody(route);
    paths[openApiPath] ??= {};
    paths[openApiPath][route.method.toLowerCase()] = {
      summary: route.summary,
      tags: [route.tag],
      description: route.organizationTokenOnly ? 'Requires an organization token.' : undefined,
      parameters: parameters(route),
      ...(body ? { requestBody: body } : {}),
      responses: {
        [String(route.successStatus)]: {
          description: 'Success',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['success', 'payload'],
                properties: { success: { const: true }, payload: route.payloadSchema },
              },
            },
          },
        },
        ...errorResponses(route),
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Listings Gateway REST interface',
      version: '1',
      description: 'The documented REST paths. Each runs a GraphQL operation of /graphql.',
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    security: [{ bearer: [] }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}
