import { ConnectionException } from '@mikro-orm/core';

/**
 * Whether an error means a dependency of the request is down or unreachable for now (the database connection was
 * lost or refused, its pool gave none in time), rather than a fault of the request or of our code. Such errors are
 * answered 503 SERVICE_UNAVAILABLE with Retry-After by both transports (src/graphql/format-error.ts), never 500.
 */
const UNAVAILABLE_CODES = new Set([
  // PostgreSQL: the server is shutting down, or terminated this backend (pg_terminate_backend, a failover).
  '57P01',
  '57P02',
  '57P03',
  // PostgreSQL: connection exceptions, and too many connections.
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53300',
  // The socket: refused, reset, broken, timed out.
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
]);

/**
 * Messages that carry no code: node-postgres's and knex's, and a socket's error as it sometimes reaches us through
 * them (`BEGIN; - read ECONNRESET`, its code lost on the way).
 */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|connection is closed|Client has encountered a connection error|Timeout acquiring a connection|\b(?:read|write|connect) (?:ECONNRESET|EPIPE|ECONNREFUSED|ETIMEDOUT)\b/i;

/**
 * Walks the error and what it wraps (GraphQL's originalError, MikroORM's previous, a cause, and the value graphql-js
 * wrapped when something that is not an Error was thrown). Judged by shape, not `instanceof Error`: an error made in
 * another realm (Node's own socket errors, seen from a vm context such as jest's) or a rejected plain object with a
 * code is judged the same.
 */
export function isDependencyUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current; depth += 1) {
    if (current instanceof ConnectionException) return true;
    if (typeof current === 'object') {
      const { code, name, message } = current as { code?: unknown; name?: unknown; message?: unknown };
      if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
      if (name === 'KnexTimeoutError' || (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message))) return true;
    }
    const next = current as { originalError?: unknown; previous?: unknown; cause?: unknown; thrownValue?: unknown };
    current = next.originalError ?? next.previous ?? next.cause ?? next.thrownValue;
  }
  return false;
}

/** What clients read in its place. */
export const UNAVAILABLE_MESSAGE = 'A service this request needs is unavailable for a moment; try again shortly';
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;
