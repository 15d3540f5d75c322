import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError, type RateLimitState } from '../errors/domain-error';

export interface RateLimit {
  /** Names the limit in the RateLimit headers, e.g. "posts". */
  name: string;
  /** The counted thing, e.g. `post:<account id>`. */
  bucket: string;
  limit: number;
  windowSeconds: number;
}

interface WindowState {
  count: number;
  oldest: Date | null;
  now: Date;
}

/**
 * Counts one request against a rolling window (a sliding log in PostgreSQL, serialized per bucket by an
 * advisory lock held until the caller's transaction ends). Over the limit: RATE_LIMIT_EXCEEDED with the
 * documented payload. Returns the limit's state (the transports turn it into RateLimit headers; a refusal carries
 * it too). Must run inside the caller's transaction, so a request that fails later is not counted.
 */
export async function consumeRateLimit(em: EntityManager, rule: RateLimit): Promise<RateLimitState> {
  const connection = em.getConnection();
  const trx = em.getTransactionContext();
  await connection.execute('select pg_advisory_xact_lock(hashtext(?))', [rule.bucket], 'all', trx);
  const [window] = (await connection.execute(
    `select count(*)::int as count, min(at) as oldest, now() as now from rate_limit_event
      where bucket = ? and at > now() - make_interval(secs => ?)`,
    [rule.bucket, rule.windowSeconds],
    'all',
    trx,
  )) as WindowState[];
  const { count, oldest, now } = window!;
  const resetSeconds = oldest
    ? Math.max(1, Math.ceil((new Date(oldest).getTime() + rule.windowSeconds * 1000 - new Date(now).getTime()) / 1000))
    : rule.windowSeconds;
  const state = { name: rule.name, limit: rule.limit, windowSeconds: rule.windowSeconds, resetSeconds };
  if (count >= rule.limit) {
    throw new DomainError('RATE_LIMIT_EXCEEDED', `Rate limit of ${rule.limit} per ${rule.windowSeconds} s exceeded`, {
      payload: { allowed: false, limit: rule.limit, remaining: 0, retryAfter: resetSeconds },
      rateLimit: { ...state, remaining: 0 },
      retryAfterSeconds: resetSeconds,
    });
  }
  await connection.execute(
    'delete from rate_limit_event where bucket = ? and at <= now() - make_interval(secs => ?)',
    [rule.bucket, rule.windowSeconds],
    'all',
    trx,
  );
  await connection.execute('insert into rate_limit_event (bucket, at) values (?, now())', [rule.bucket], 'all', trx);
  return { ...state, remaining: rule.limit - count - 1 };
}

/** Seconds from `now` to the first instant of the next calendar month (UTC). */
export function secondsToNextMonth(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

export function startOfMonth(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/** QUOTA_REACHED when `used` has reached `quota` this calendar month (UTC). */
export function enforceMonthlyQuota(used: number, quota: number, now: Date): void {
  if (used < quota) return;
  const retryAfter = secondsToNextMonth(now);
  throw new DomainError('QUOTA_REACHED', `Monthly quota of ${quota} posts reached`, {
    payload: { allowed: false, retryAfter },
    retryAfterSeconds: retryAfter,
  });
}
