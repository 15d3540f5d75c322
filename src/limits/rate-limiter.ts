import type { EntityManager } from '@mikro-orm/postgresql';
import type { Context } from '../graphql/context';
import { AppError } from '../graphql/errors';

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
 * advisory lock held until the caller's transaction ends). Over the limit: 429 RATE_LIMIT_EXCEEDED with the
 * documented payload. Either way the response carries RateLimit-Policy and RateLimit headers (IETF httpapi
 * draft) and, when refused, Retry-After. Must run inside the caller's transaction, so a request that fails
 * later is not counted.
 */
export async function consumeRateLimit(ctx: Context, em: EntityManager, rule: RateLimit): Promise<void> {
  const connection = em.getConnection();
  const trx = em.getTransactionContext();
  await connection.execute('select pg_advisory_xact_lock(hashtext(?))', [rule.bucket], 'all', trx);
  const [state] = (await connection.execute(
    `select count(*)::int as count, min(at) as oldest, now() as now from rate_limit_event
      where bucket = ? and at > now() - make_interval(secs => ?)`,
    [rule.bucket, rule.windowSeconds],
    'all',
    trx,
  )) as WindowState[];
  const { count, oldest, now } = state!;
  const resetSeconds = oldest
    ? Math.max(1, Math.ceil((new Date(oldest).getTime() + rule.windowSeconds * 1000 - new Date(now).getTime()) / 1000))
    : rule.windowSeconds;
  ctx.responseHeaders.set('RateLimit-Policy', `"${rule.name}";q=${rule.limit};w=${rule.windowSeconds}`);
  if (count >= rule.limit) {
    ctx.responseHeaders.set('RateLimit', `"${rule.name}";r=0;t=${resetSeconds}`);
    ctx.responseHeaders.set('Retry-After', String(resetSeconds));
    throw new AppError('RATE_LIMIT_EXCEEDED', `Rate limit of ${rule.limit} per ${rule.windowSeconds} s exceeded`, {
      payload: { allowed: false, limit: rule.limit, remaining: 0, retryAfter: resetSeconds },
    });
  }
  await connection.execute(
    'delete from rate_limit_event where bucket = ? and at <= now() - make_interval(secs => ?)',
    [rule.bucket, rule.windowSeconds],
    'all',
    trx,
  );
  await connection.execute('insert into rate_limit_event (bucket, at) values (?, now())', [rule.bucket], 'all', trx);
  ctx.responseHeaders.set('RateLimit', `"${rule.name}";r=${rule.limit - count - 1};t=${resetSeconds}`);
}

/** Seconds from `now` to the first instant of the next calendar month (UTC). */
export function secondsToNextMonth(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

export function startOfMonth(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/** QUOTA_REACHED (429) when `used` has reached `quota` this calendar month. */
export function enforceMonthlyQuota(ctx: Context, used: number, quota: number, now = new Date()): void {
  if (used < quota) return;
  const retryAfter = secondsToNextMonth(now);
  ctx.responseHeaders.set('Retry-After', String(retryAfter));
  throw new AppError('QUOTA_REACHED', `Monthly quota of ${quota} posts reached`, { payload: { allowed: false, retryAfter } });
}
