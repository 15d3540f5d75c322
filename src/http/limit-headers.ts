import type { DomainErrorData, RateLimitState } from '../errors/domain-error';

/**
 * The HTTP headers of a limited request, from what the services report: `RateLimit-Policy` and `RateLimit` (IETF
 * httpapi draft) for a rate limit, and `Retry-After` when refused. Both transports send them, on success (from the
 * service's result) and on refusal (from the error).
 */
export function limitHeaders(data: Pick<DomainErrorData, 'rateLimit' | 'retryAfterSeconds'>): Map<string, string> {
  const headers = new Map<string, string>();
  const state: RateLimitState | undefined = data.rateLimit;
  if (state) {
    headers.set('RateLimit-Policy', `"${state.name}";q=${state.limit};w=${state.windowSeconds}`);
    headers.set('RateLimit', `"${state.name}";r=${state.remaining};t=${state.resetSeconds}`);
  }
  if (data.retryAfterSeconds !== undefined) headers.set('Retry-After', String(data.retryAfterSeconds));
  return headers;
}
