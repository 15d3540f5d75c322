import { errorCatalogue, type ErrorCode, type RestErrorShape } from '../errors/domain-error';
import { restErrorBody } from '../http/error-body';
import { headerRef, type ResponseHeaderName } from './openapi-headers';
import type { JsonSchema } from './record';
import type { RestRoute, ValueSource } from './route';

/** The documented body of errors of one shape, exactly: every key required, no other key. */
function errorSchema(codes: readonly ErrorCode[], shape: RestErrorShape): JsonSchema {
  const code = codes[0]!;
  const { body } = restErrorBody(code, 'message', {}, shape);
  const valueSchema = (key: string, value: unknown): JsonSchema => {
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

/** The response headers of an error status: when to try again (429, 503), the limit that refused (429). */
function errorHeaders(status: number): ResponseHeaderName[] {
  if (status === 429) return ['Retry-After', 'RateLimit-Policy', 'RateLimit'];
  if (status === 503) return ['Retry-After'];
  return [];
}

/**
 * One response per status; where codes of one status render differently (404), any of their shapes. `shapeOf`
 * says where a status is written in a shape of the route's own (`errorShapes`); `alsoHtml` adds the page a browser
 * is answered instead (the OAuth callbacks).
 */
export function errorResponsesFor(
  codes: readonly ErrorCode[],
  options: { shapeOf?: (status: number) => RestErrorShape | undefined; alsoHtml?: string } = {},
): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const { status } = errorCatalogue[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, unknown> = {};
  for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const byShape = new Map<RestErrorShape, ErrorCode[]>();
    for (const code of statusCodes) {
      const shape = options.shapeOf?.(status) ?? errorCatalogue[code].shape;
      byShape.set(shape, [...(byShape.get(shape) ?? []), code]);
    }
    const schemas = [...byShape].map(([shape, shapeCodes]) => errorSchema(shapeCodes, shape));
    const schema = schemas.length === 1 ? schemas[0] : { oneOf: schemas };
    responses[String(status)] = {
      description: statusCodes.join(', '),
      headers: Object.fromEntries(['X-Request-Id' as const, ...errorHeaders(status)].map((name) => [name, headerRef(name)])),
      content: {
        'application/json': { schema },
        ...(options.alsoHtml ? { 'text/html': { schema: { type: 'string', description: options.alsoHtml } } } : {}),
      },
    };
  }
  return responses;
}

/** Every error a route can answer, by status, in the route's shapes. */
export function errorResponses(route: RestRoute): Record<string, unknown> {
  return errorResponsesFor(errorCodes(route), { shapeOf: (status) => route.errorShapes?.[status] });
}

/** Whether the route counts requests against a limit (its answers carry RateLimit-Policy and RateLimit). */
export function isRateLimited(route: RestRoute): boolean {
  return (route.errors ?? []).some((code) => code === 'RATE_LIMIT_EXCEEDED' || code === 'QUOTA_REACHED');
}
