import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError, type RateLimitState } from '../errors/domain-error';

export interface RateLimit {
  /** Names the limit in the RateLimit headers, e.g. "posts". */
  name: string;
  /** The counted thing, e.g. `post:<account id>`. */
  bucket: string;
  limit: number;
  windowSeconds: number;
  /** How much of the limit this request uses (a scan counts its searches); 1 for a plain request. */
  weight?: number;
}

interface WindowRow {
  admitted: boolean;
  /** The weight already in the window. */
  counted: number;
  /** Admitted: the oldest counted request's time. Refused: the time of the one whose leaving makes room for this. */
  oldest: Date | string | null;
  checked_at: Date | string;
  event_id: string | null;
  /** With a quota: what it has used after this request, or null when this request would exceed it. */
  quota_used?: number | null;
}

/** A counted request: its limit's state, and how to take the count back if the request fails after all. */
export interface Counted<T> {
  state: T;
  refund(): Promise<void>;
}

/**
 * Counts one request (of `weight`) against a rolling window, in one short statement of its own, never inside the
 * caller's transaction (docs/decisions.md, "Rate limits"). Over the limit: RATE_LIMIT_EXCEEDED, `retryAfter` being
 * when enough of the window has left for this request. Returns the limit's state (the RateLimit headers) and a refund
 * for a request that fails later.
 */
/** A monthly quota (calendar months, UTC): `amount` of `quota` for `bucket`, in the month of `now`. */
export interface MonthlyQuota {
  bucket: string;
  quota: number;
  amount: number;
  now: Date;
}

/**
 * Counts one request (of `weight`) against a rolling window, in one short statement of its own, never inside the
 * caller's transaction (docs/decisions.md, "Rate limits"); with `quota`, the same statement also uses a monthly
 * quota, only when the window admits the request. Over the limit: RATE_LIMIT_EXCEEDED, `retryAfter` being when
 * enough of the window has left for this request; over the quota: QUOTA_REACHED, the window's count taken back.
 * Returns the limit's state (the RateLimit headers) and a refund for a request that fails later.
 */
export async function consumeRateLimit(em: EntityManager, rule: RateLimit, quota?: MonthlyQuota): Promise<Counted<RateLimitState>> {
  const connection = em.getConnection();
  const weight = rule.weight ?? 1;
  const period = quota && startOfMonth(quota.now).toISOString().slice(0, 10);
  const [window] = quota
    ? await connection.execute<WindowRow[]>(
        `with counted as (select * from consume_rate_limit(?, ?, ?, ?)),
           quota as (${QUOTA_UPSERT} select ?, ?, ? from counted where counted.admitted and ? <= ? ${QUOTA_CONFLICT})
         select counted.*, (select used from quota) as quota_used from counted`,
        [rule.bucket, rule.limit, rule.windowSeconds, weight, quota.bucket, period, quota.amount, quota.amount, quota.quota, quota.quota],
      )
    : await connection.execute<WindowRow[]>('select * from consume_rate_limit(?, ?, ?, ?)', [rule.bucket, rule.limit, rule.windowSeconds, weight]);
  const { admitted, counted, oldest, checked_at: checkedAt, event_id: eventId } = window!;
  const resetSeconds = oldest
    ? Math.max(1, Math.ceil((new Date(oldest).getTime() + rule.windowSeconds * 1000 - new Date(checkedAt).getTime()) / 1000))
    : rule.windowSeconds;
  const state = { name: rule.name, limit: rule.limit, windowSeconds: rule.windowSeconds, resetSeconds };
  if (!admitted) {
    throw new DomainError('RATE_LIMIT_EXCEEDED', `Rate limit of ${rule.limit} per ${rule.windowSeconds} s exceeded`, {
      payload: { allowed: false, limit: rule.limit, remaining: 0, retryAfter: resetSeconds },
      rateLimit: { ...state, remaining: 0 },
      retryAfterSeconds: resetSeconds,
    });
  }
  const refundWindow = async () => {
    await connection.execute('delete from rate_limit_event where id = ?', [eventId]);
  };
  if (quota && window!.quota_used === null) {
    await refundWindow();
    throw quotaReached(quota);
  }
  return {
    state: { ...state, remaining: rule.limit - counted - weight },
    refund: async () => {
      await refundWindow();
      if (quota) await refundQuota(em, quota, period!);
    },
  };
}

/** The counter row of a bucket and month, added to only while the total stays within the quota. */
const QUOTA_UPSERT = 'insert into usage_counter as c (bucket, period, used)';
const QUOTA_CONFLICT = 'on conflict (bucket, period) do update set used = c.used + excluded.used where c.used + excluded.used <= ? returning used';

function quotaReached(rule: MonthlyQuota): DomainError {
  const retryAfter = secondsToNextMonth(rule.now);
  return new DomainError('QUOTA_REACHED', `Monthly quota of ${rule.quota} posts reached`, {
    payload: { allowed: false, retryAfter },
    retryAfterSeconds: retryAfter,
  });
}

async function refundQuota(em: EntityManager, rule: MonthlyQuota, period: string): Promise<void> {
  await em.getConnection().execute('update usage_counter set used = used - ? where bucket = ? and period = ?', [rule.amount, rule.bucket, period]);
}

/** Seconds from `now` to the first instant of the next calendar month (UTC). */
export function secondsToNextMonth(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

export function startOfMonth(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}
