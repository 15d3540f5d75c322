import { requirePrincipal } from '../access/guards';
import type { Config } from '../config';
import { DomainError, type RateLimitState } from '../errors/domain-error';
import type { RequestScope } from '../request-scope';
import { consumeRateLimit, rateLimitInChange, type Counted, type CountedInChange, type InChangeOptions, type MonthlyQuota, type RateLimit } from './rate-limiter';
import type { Metrics } from '../observability/metrics';

export type LimitDeps = { config: Pick<Config, 'limits'>; metrics: Metrics | undefined };

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
  'scan-starts': { per: 'organization', windowSeconds: 3600, limit: (limits) => limits.scanStartsPerHour },
  // Weighted: a scan counts the provider searches it will make (one per dot of its grid).
  'scan-searches': { per: 'organization', windowSeconds: 3600, limit: (limits) => limits.scanSearchesPerHour },
} as const satisfies Record<string, { per: 'account' | 'organization' | 'token'; windowSeconds: number; limit: (limits: Config['limits']) => number }>;

export type RateLimitName = keyof typeof RATE_LIMITS;

/** What a limited operation did, and the state of its limit (the transports turn it into RateLimit headers). */
export interface Limited<T> {
  result: T;
  rateLimit: RateLimitState;
}

/**
 * Counts this request against the limit `name` (RATE_LIMIT_EXCEEDED over it). `accountId` is the account the
 * request acts on, for limits per account; `weight` is how much of the limit it uses (default 1); `monthlyPosts`
 * uses that many of the organization's monthly post quota in the same statement (QUOTA_REACHED over it). Returns
 * the limit's state, for the transports' headers, and a refund for a request that then fails for another reason.
 */
export function countRequest(scope: RequestScope<LimitDeps>, name: RateLimitName, target: LimitTarget = {}): Promise<Counted<RateLimitState>> {
  const { rule, quota } = limitOf(scope, name, target);
  return consumeRateLimit(scope.em, rule, quota).catch(countedRefusal(scope, name));
}

/**
 * `countRequest` made by the statement of the change it admits (src/db/change-statement.ts, `rateLimitInChange`): no
 * statement of its own, and nothing to refund. The caller runs the change with it and passes the statement's error
 * through `refusal`.
 */
export function countRequestInChange(scope: RequestScope<LimitDeps>, name: RateLimitName, target: LimitTarget = {}, options: InChangeOptions = {}): CountedInChange {
  return countRequestsInChange(scope, [{ name, ...target }], undefined, options);
}

/**
 * `countRequestInChange` against several limits at once (a scan's starts, and the searches it will make), counted in
 * the order given, and then, when `cap` is given, the organization's cap on what it has open (`OpenLimitInChange`):
 * all by the statement of the change they admit, which writes nothing when one refuses. The state answered is the
 * limit's nearest to refusing.
 */
export function countRequestsInChange(
  scope: RequestScope<LimitDeps>,
  requests: readonly ({ name: RateLimitName } & LimitTarget)[],
  cap?: OpenLimitInChange,
  options: InChangeOptions = {},
): CountedInChange {
  const limits = requests.map(({ name, ...target }) => limitOf(scope, name, target));
  const quotas = limits.flatMap((limit) => (limit.quota ? [limit.quota] : []));
  if (quotas.length > 1) throw new Error('one monthly quota a statement');
  const counted = rateLimitInChange(
    limits.map((limit) => limit.rule),
    quotas[0],
    cap && { count: cap.count, limit: openLimit(scope, cap.name), code: OPEN_LIMIT_REACHED },
    options,
  );
  return {
    ...counted,
    refusal(error) {
      const refusal = counted.refusal(error);
      if (refusal) {
        noteRefusal(scope, refusal.data.rateLimit?.name ?? requests[0]!.name, refusal);
        return refusal;
      }
      const { code, detail } = (error ?? {}) as { code?: unknown; detail?: unknown };
      if (!cap || code !== OPEN_LIMIT_REACHED) return undefined;
      // The detail is the cap's count, as the statement's function made it under the cap's lock.
      return openLimitExceeded(scope, cap.name, (JSON.parse(String(detail)) as { open: number }).open, cap.retryAfterSeconds);
    },
  };
}

/** What a request is counted against: the account it acts on, its weight, the monthly posts it uses. */
type LimitTarget = { accountId?: string; weight?: number; monthlyPosts?: { amount: number; now: Date } };

/** The window (and quota) a request of `name` counts against, with its bucket. */
function limitOf(scope: RequestScope<LimitDeps>, name: RateLimitName, target: LimitTarget): { rule: RateLimit; quota: MonthlyQuota | undefined } {
  const principal = requirePrincipal(scope);
  const rule = RATE_LIMITS[name];
  const key =
    rule.per === 'token' ? principal.tokenId : rule.per === 'organization' ? principal.organizationId : (target.accountId ?? principal.accountId);
  if (!key) throw new Error(`the ${name} limit counts per account: the request's account is needed`);
  const { limits } = scope.runtime.config;
  const quota = target.monthlyPosts && { bucket: `posts:${principal.organizationId}`, quota: limits.postsPerMonth, ...target.monthlyPosts };
  return { rule: { name, bucket: `${name}:${key}`, limit: rule.limit(limits), windowSeconds: rule.windowSeconds, weight: target.weight ?? 1 }, quota };
}

/** Passes a failure on, counting a refusal by a limit (metrics) on its way. */
function countedRefusal(scope: RequestScope<LimitDeps>, limit: string): (error: unknown) => never {
  return (error) => {
    noteRefusal(scope, limit, error);
    throw error;
  };
}

/** Counts a refusal by a limit or the monthly quota (metrics); any other error is not one. */
function noteRefusal(scope: RequestScope<LimitDeps>, limit: string, error: unknown): void {
  if (error instanceof DomainError && error.code === 'RATE_LIMIT_EXCEEDED') scope.runtime.metrics?.rateLimitRefusals.inc({ limit });
  if (error instanceof DomainError && error.code === 'QUOTA_REACHED') scope.runtime.metrics?.rateLimitRefusals.inc({ limit: 'posts-per-month' });
}

/**
 * Caps on what an organization has open at once (not a window of requests): what each counts is the service's to
 * count, under a lock that keeps concurrent requests from both passing; over the cap is RATE_LIMIT_EXCEEDED, with
 * Retry-After when the service knows when one will close.
 */
const OPEN_LIMITS = {
  'scans-running': { limit: (limits) => limits.scansRunning, what: 'scans of the organization are queued or running' },
  'consent-sessions': { limit: (limits) => limits.consentSessionsOpen, what: 'consents of the organization wait for their callback' },
} as const satisfies Record<string, { limit: (limits: Config['limits']) => number; what: string }>;

export type OpenLimitName = keyof typeof OPEN_LIMITS;

/** The cap `name`, as configured. */
export function openLimit(scope: RequestScope<LimitDeps>, name: OpenLimitName): number {
  return OPEN_LIMITS[name].limit(scope.runtime.config.limits);
}

/**
 * Refuses one more of `name` when `open` are already open (429 RATE_LIMIT_EXCEEDED, the documented payload, and
 * `Retry-After` = `retryAfterSeconds`, the service's estimate of when one closes).
 */
export function requireBelowOpenLimit(scope: RequestScope<LimitDeps>, name: OpenLimitName, open: number, retryAfterSeconds: number): void {
  if (open < openLimit(scope, name)) return;
  throw openLimitExceeded(scope, name, open, retryAfterSeconds);
}

/**
 * A cap counted by the statement of the change it admits (`countRequestsInChange`), where a count of the statement's
 * own would read its snapshot, taken before any lock it waits for, so concurrent requests could all pass. `count` is
 * an SQL expression of how many are open, made by a VOLATILE function of the migrations that takes the cap's
 * advisory lock (held to the statement's end) and then counts with a snapshot of its own, so it sees what committed
 * while it waited (as `consume_rate_limit` counts a window). Over the cap: as `requireBelowOpenLimit`.
 */
export interface OpenLimitInChange {
  name: OpenLimitName;
  count: { sql: string; values: unknown[] };
  retryAfterSeconds: number;
}

/** The SQLSTATE of `lg_refuse` for a cap reached, with `{open}` as its detail. */
const OPEN_LIMIT_REACHED = 'LGOLX';

/** Over the cap `name` with `open` open: its refusal, counted (metrics). */
function openLimitExceeded(scope: RequestScope<LimitDeps>, name: OpenLimitName, open: number, retryAfterSeconds: number): DomainError {
  const limit = openLimit(scope, name);
  const retryAfter = Math.max(1, Math.ceil(retryAfterSeconds));
  scope.runtime.metrics?.rateLimitRefusals.inc({ limit: name });
  return new DomainError('RATE_LIMIT_EXCEEDED', `${open} ${OPEN_LIMITS[name].what}, the most allowed at once (${limit}): try again when one ends`, {
    payload: { allowed: false, limit, remaining: 0, retryAfter },
    retryAfterSeconds: retryAfter,
  });
}

/**
 * Runs `work` with the request counted (against a rate limit, a quota, or both); a failure takes the count back
 * (refused requests are not counted).
 */
export async function withCountedRequest<T>(counted: Pick<Counted<unknown>, 'refund'>, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    await counted.refund();
    throw error;
  }
}
