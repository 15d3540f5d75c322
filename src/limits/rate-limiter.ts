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
export async function consumeRateLimit(em: EntityManager, rule: RateLimit): Promise<Counted<RateLimitState>> {
  const connection = em.getConnection();
  const weight = rule.weight ?? 1;
  const [window] = await connection.execute<WindowRow[]>('select * from consume_rate_limit(?, ?, ?, ?)', [rule.bucket, rule.limit, rule.windowSeconds, weight]);
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
  return {
    state: { ...state, remaining: rule.limit - counted - weight },
    refund: async () => {
      await connection.execute('delete from rate_limit_event where id = ?', [eventId]);
    },
  };
}

/**
 * Uses `amount` of a monthly quota (calendar months, UTC, of the runtime's clock): one statement on the counter
 * row of the bucket and month, which adds only while the total stays within the quota. Past it: QUOTA_REACHED.
 */
export async function consumeMonthlyQuota(
  em: EntityManager,
  rule: { bucket: string; quota: number; amount: number; now: Date },
): Promise<Counted<{ used: number }>> {
  const connection = em.getConnection();
  const period = startOfMonth(rule.now).toISOString().slice(0, 10);
  const rows =
    rule.amount > rule.quota
      ? []
      : (await connection.execute<{ used: number }[]>(
          `insert into usage_counter as c (bucket, period, used) values (?, ?, ?)
             on conflict (bucket, period) do update set used = c.used + excluded.used
             where c.used + excluded.used <= ?
           returning used`,
          [rule.bucket, period, rule.amount, rule.quota],
        ));
  if (rows.length === 0) {
    const retryAfter = secondsToNextMonth(rule.now);
    throw new DomainError('QUOTA_REACHED', `Monthly quota of ${rule.quota} posts reached`, {
      payload: { allowed: false, retryAfter },
      retryAfterSeconds: retryAfter,
    });
  }
  return {
    state: { used: rows[0]!.used },
    refund: async () => {
      await connection.execute('update usage_counter set used = used - ? where bucket = ? and period = ?', [rule.amount, rule.bucket, period]);
    },
  };
}

/** Seconds from `now` to the first instant of the next calendar month (UTC). */
export function secondsToNextMonth(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

export function startOfMonth(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}
