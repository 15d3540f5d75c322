import { requirePrincipal } from '../access/guards';
import type { Config } from '../config';
import type { RateLimitState } from '../errors/domain-error';
import type { RequestScope } from '../request-scope';
import { consumeRateLimit, type Counted } from './rate-limiter';

/**
 * The rate limits of the documented operations, in one table: what each counts (per account, organization or
 * token), over which rolling window, with the configured threshold. GraphQL and REST reach the same services, so
 * an operation counts against its limit whichever way it came.
 */
const RATE_LIMITS = {
  posts: { per: 'account', windowSeconds: 60, limit: (limits) => limits.postsPerMinute },
  'location-creates': { per: 'organization', windowSeconds: 60, limit: (limits) => limits.locationCreatesPerMinute },
  'location-reads': { per: 'token', windowSeconds: 60, limit: (limits) => limits.locationReadsPerMinute },
  'location-updates': { per: 'account', windowSeconds: 3600, limit: (limits) => limits.locationUpdatesPerHour },
  'business-profile-reads': { per: 'token', windowSeconds: 60, limit: (limits) => limits.businessProfileReadsPerMinute },
  'business-profile-updates': { per: 'organization', windowSeconds: 60, limit: (limits) => limits.businessProfileUpdatesPerMinute },
  citations: { per: 'account', windowSeconds: 60, limit: (limits) => limits.citationsPerMinute },
} as const satisfies Record<string, { per: 'account' | 'organization' | 'token'; windowSeconds: number; limit: (limits: Config['limits']) => number }>;

export type RateLimitName = keyof typeof RATE_LIMITS;

/** What a limited operation did, and the state of its limit (the transports turn it into RateLimit headers). */
export interface Limited<T> {
  result: T;
  rateLimit: RateLimitState;
}

/**
 * Counts this request against the limit `name` (RATE_LIMIT_EXCEEDED over it). `accountId` is the account the
 * request acts on, for limits per account. Returns the limit's state, for the transports' headers, and a refund
 * for a request that then fails for another reason.
 */
export function countRequest(scope: RequestScope, name: RateLimitName, target: { accountId?: string } = {}): Promise<Counted<RateLimitState>> {
  const principal = requirePrincipal(scope);
  const rule = RATE_LIMITS[name];
  const key =
    rule.per === 'token' ? principal.tokenId : rule.per === 'organization' ? principal.organizationId : (target.accountId ?? principal.accountId);
  if (!key) throw new Error(`the ${name} limit counts per account: the request's account is needed`);
  return consumeRateLimit(scope.em, { name, bucket: `${name}:${key}`, limit: rule.limit(scope.runtime.config.limits), windowSeconds: rule.windowSeconds });
}

/** Runs `work` with the request counted; a failure takes the count back (refused requests are not counted). */
export async function withCountedRequest<T>(counted: Counted<RateLimitState>, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    await counted.refund();
    throw error;
  }
}
