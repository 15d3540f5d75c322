/**
 * The headers of the REST answers (`components.headers`) and the request's own id (`components.parameters`), as
 * src/graphql/http.ts, src/http/limit-headers.ts and the post resolver write them (docs/frontend.md, "For REST clients").
 */

export type ResponseHeaderName = 'X-Request-Id' | 'RateLimit-Policy' | 'RateLimit' | 'Retry-After' | 'Idempotent-Replayed';

export const RESPONSE_HEADERS: Record<ResponseHeaderName, Record<string, unknown>> = {
  'X-Request-Id': {
    description:
      'The request’s id, on every answer: the X-Request-Id the request sent when it is 1 to 128 visible ASCII characters, else a new UUID. ' +
      'Every log line of the request and of the jobs it caused carries it; quote it when reporting a problem.',
    required: true,
    schema: { type: 'string', minLength: 1, maxLength: 128 },
  },
  'RateLimit-Policy': {
    description: 'The limit that counts this request (IETF httpapi RateLimit draft): its name, quota q and window w in seconds, e.g. `"posts";q=60;w=60`.',
    schema: { type: 'string', examples: ['"posts";q=60;w=60'] },
  },
  RateLimit: {
    description: 'What is left of that limit: requests remaining r, and seconds t until the oldest counted request leaves the window, e.g. `"posts";r=59;t=60`.',
    schema: { type: 'string', examples: ['"posts";r=59;t=60'] },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again: a refusal by a limit or a quota (429), a server stopping or a dependency down (503).',
    schema: { type: 'integer', minimum: 0 },
  },
  'Idempotent-Replayed': {
    description: 'true when the answer is the original post of an earlier request with the same Idempotency-Key and body (nothing was created).',
    schema: { type: 'boolean', enum: [true] },
  },
};

export function headerRef(name: ResponseHeaderName): Record<string, string> {
  return { $ref: `#/components/headers/${name}` };
}

/** The request header every operation takes: the caller's id for the request, kept when acceptable. */
export const REQUEST_ID_PARAMETER = {
  name: 'X-Request-Id',
  in: 'header',
  required: false,
  description: 'Your id for the request (1 to 128 visible ASCII characters), answered back and written on its log lines; otherwise the server makes one.',
  schema: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$' },
};

export const REQUEST_ID_PARAMETER_REF = { $ref: '#/components/parameters/RequestId' };
