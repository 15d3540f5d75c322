import type { RateLimitState } from '../errors/domain-error';
import { limitHeaders } from '../http/limit-headers';
import type { RequestScope } from '../request-scope';
import type { Runtime } from '../runtime';

/**
 * What a resolver gets: the transport-free request scope services take, plus what only transports use. Built per
 * request (or per WebSocket operation) by `createContext` (src/context.ts) only, for GraphQL and for REST.
 */
export interface Context extends RequestScope<Runtime> {
  /** Headers resolvers derive from what services report (rate limits, idempotent replay); both transports send them. */
  responseHeaders: Map<string, string>;
}

/** Adds headers for the HTTP response of this operation (both transports send `responseHeaders`). */
export function addResponseHeaders(ctx: Context, headers: Map<string, string>): void {
  for (const [name, value] of headers) ctx.responseHeaders.set(name, value);
}

/**
 * A limited operation's result (src/limits/request-limits.ts `Limited`), with its limit's state sent as RateLimit
 * headers (both transports send them); none when the operation counted nothing (an idempotent replay).
 */
export function withLimitHeaders<T>(ctx: Context, outcome: { result: T; rateLimit?: RateLimitState }): T {
  addResponseHeaders(ctx, limitHeaders(outcome));
  return outcome.result;
}
