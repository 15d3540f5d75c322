import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The header a request's id travels in, both ways. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** What an incoming id may be to be kept: 1 to 128 visible ASCII characters (no spaces, no control characters). */
const ACCEPTABLE_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * A request's id: the caller's `X-Request-Id` when it is acceptable (a proxy or the caller chose it, so its log
 * lines and ours match), else a new UUID, unique across processes and restarts. Fastify calls it once per request
 * (`genReqId`); it is on every log line of the request and on every answer (src/http/edge.ts).
 */
export function requestIdOf(request: IncomingMessage): string {
  const sent = request.headers[REQUEST_ID_HEADER];
  return typeof sent === 'string' && ACCEPTABLE_ID.test(sent) ? sent : randomUUID();
}

/** For answers written before any request exists (Node's parser refused the bytes): an id for the answer and its log line. */
export function newRequestId(): string {
  return randomUUID();
}
