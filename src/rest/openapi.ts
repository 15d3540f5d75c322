import type { GraphQLSchema } from 'graphql';
import { errorCatalogue, type ErrorCode, type RestErrorShape } from '../errors/domain-error';
import { restErrorBody } from '../http/error-body';
import { compileRecord } from './record';
import type { RestRoute, ValueSource } from './route';

/** The documented body of errors of one shape, exactly: every key required, no other key. */
function errorSchema(codes: readonly ErrorCode[], shape: RestErrorShape): Record<string, unknown> {
  const code = codes[0]!;
  const { body } = restErrorBody(code, 'message', {}, shape);
  const valueSchema = (key: string, value: unknown): Record<string, unknown> => {
    if (key === 'success') return { const: false };
    // The shape whose message is the code itself.
    if (value === code) return { enum: [...codes] };
    if (Array.isArray(value)) return { type: 'array', items: { type: 'string' } };
    if (typeof value === 'number') return { type: 'integer' };
    return { type: typeof value };
  };
  return {
    type: 'object',
    required: Object.keys(body),
    properties: Object.fromEntries(Object.entries(body).map(([key, value]) => [key, valueSchema(key, value)])),
    additionalProperties: false,
    example: body,
  };
}

/**
 * Errors any documented path may answer: its input refused (by the route or by HTTP itself), no token, a server
 * that is stopping or failed. Routes add their own (src/rest/route.ts `errors`).
 */
const EVERY_ROUTE: readonly ErrorCode[] = [
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'UNAUTHENTICATED',
  'PAYLOAD_TOO_LARGE',
  'URI_TOO_LONG',
  'UNSUPPORTED_MEDIA_TYPE',
  'REQUEST_HEADERS_TOO_LARGE',
  'INTERNAL_SERVER_ERROR',
  'SERVICE_UNAVAILABLE',
];

/** Errors of tokens scoped to one account, on routes that act on an account. */
const ACCOUNT_SCOPED: readonly ErrorCode[] = ['ACCOUNT_ID_REQUIRED', 'FORBIDDEN', 'NOT_FOUND'];

/** Whether the route acts on an account named by `account_id` (organization tokens name it; its absence is a 400, another organization's a 404). */
function readsAccountId(route: RestRoute): boolean {
  return (Object.values(route.variables) as ValueSource[]).some((source) => source.from === 'query' && source.name === 'account_id');
}

function errorCodes(route: RestRoute): ErrorCode[] {
  const codes = new Set<ErrorCode>([...EVERY_ROUTE, ...(route.errors ?? [])]);
  if (route.organizationTokenOnly) codes.add('ORGANIZATION_TOKEN_REQUIRED');
  else for (const code of ACCOUNT_SCOPED) codes.add(code);
  if (readsAccountId(route)) for (const code of ['ACCOUNT_ID_REQUIRED', 'NOT_FOUND'] as const) codes.add(code);
  return [...codes];
}

/** One response per status; where codes of one status render differently (404), any of their shapes. */
function errorResponses(route: RestRoute): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodes(route)) {
    const { status } = errorCatalogue[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, unknown> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const byShape = new Map<RestErrorShape, ErrorCode[]>();
    for (const code of codes) {
      const shape = route.errorShapes?.[status] ?? errorCatalogue[code].shape;
      byShape.set(shape, [...(byShape.get(shape) ?? []), code]);
    }
    const schemas = [...byShape].map(([shape, shapeCodes]) => errorSchema(shapeCodes, shape));
    const schema = schemas.length === 1 ? schemas[0] : { oneOf: schemas };
    responses[String(status)] = { description: codes.join(', '), content: { 'application/json': { schema } } };
  }
  return responses;
}

function parameters(route: RestRoute): unknown[] {
  const selection = route.payload.fieldSelection;
  return [
    ...(Object.values(route.variables) as ValueSource[])
      .filter((source): source is Extract<ValueSource, { name: string }> => source.from !== 'bodyFields' && source.from !== 'body')
      .map((source) => ({
        name: source.name,
        in: source.from,
        required: source.from === 'path' || Boolean(source.required),
        description: source.description,
        schema: { type: 'string' },
      })),
    ...(selection ? [{ name: selection.parameter, in: 'query', required: false, description: selection.description, schema: { type: 'string' } }] : []),
  ];
}

/** The success body: the payload in its envelope; with a field selection, items need only the fields always kept. */
function successSchema(route: RestRoute, schema: GraphQLSchema): Record<string, unknown> {
  let payload = compileRecord(schema, route.operation, route.payload, `Route ${route.method} ${route.path}`).schema;
  const selection = route.payload.fieldSelection;
  if (selection) {
    const members = payload.properties as Record<string, Record<string, unknown>>;
    const list = members[selection.list]!;
    payload = {
      ...payload,
      properties: { ...members, [selection.list]: { ...list, items: { ...(list.items as object), required: [...selection.always] } } },
    };
  }
  if (route.envelope === 'spread') {
    return {
      type: 'object',
      required: ['success', ...((payload.required as string[]) ?? [])],
      properties: { success: { const: true }, ...(payload.properties as object) },
      additionalProperties: false,
    };
  }
  if (typeof route.envelope === 'object') {
    const constants = route.envelope.bare;
    return {
      type: 'object',
      required: [...((payload.required as string[]) ?? []), ...Object.keys(constants)],
      properties: { ...(payload.properties as object), ...Object.fromEntries(Object.entries(constants).map(([key, value]) => [key, { const: value }])) },
      additionalProperties: false,
    };
  }
  return { type: 'object', required: ['success', 'payload'], properties: { success: { const: true }, payload }, additionalProperties: false };
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
export function buildOpenApi(routes: readonly RestRoute[], schema: GraphQLSchema, serverUrl?: string): Record<string, unknown> {
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
          content: { 'application/json': { schema: successSchema(route, schema) } },
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
