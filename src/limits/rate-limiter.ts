import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError, type RateLimitState } from '../errors/domain-error';
import type { FollowingWrite } from '../db/change-statement';

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
  const period = quota && periodOf(quota);
  const [window] = quota
    ? await connection.execute<WindowRow[]>(
        `with counted as (select * from consume_rate_limit(?, ?, ?, ?)),
           quota as (${QUOTA_UPSERT} select ?, ?, ? from counted where counted.admitted and ? <= ? ${QUOTA_CONFLICT})
         select counted.*, (select used from quota) as quota_used from counted`,
        [rule.bucket, rule.limit, rule.windowSeconds, weight, quota.bucket, period, quota.amount, quota.amount, quota.quota, quota.quota],
      )
    : await connection.execute<WindowRow[]>('select * from consume_rate_limit(?, ?, ?, ?)', [rule.bucket, rule.limit, rule.windowSeconds, weight]);
  if (!window!.admitted) throw windowExceeded(rule, window!);
  const refundWindow = async () => {
    await connection.execute('delete from rate_limit_event where id = ?', [window!.event_id]);
  };
  if (quota && window!.quota_used === null) {
    await refundWindow();
    throw quotaReached(quota);
  }
  return {
    state: admittedState(rule, window!),
    refund: async () => {
      await refundWindow();
      if (quota) await refundQuota(em, quota, period!);
    },
  };
}

/** A count made by the statement of the change it admits (src/db/change-statement.ts). */
export interface CountedInChange {
  /** CTEs to go before the change: the count, the quota's, and `lg_admitted`, whose `ok` the change requires. */
  preamble: { sql: string; values: unknown[] };
  /** The name of the CTE whose `ok` admits the change (the change must read it, so the count decides first). */
  admittedBy: string;
  /** A write of the statement that brings the count's state back. */
  writes: FollowingWrite[];
  /** Once the statement has run: the limit's state (the RateLimit headers). */
  state(): RateLimitState;
  /** The refusal the statement's error stands for (RATE_LIMIT_EXCEEDED, QUOTA_REACHED), or undefined. */
  refusal(error: unknown): DomainError | undefined;
}

export interface InChangeOptions {
  /**
   * An advisory lock (`pg_advisory_xact_lock(hashtext(key))`, as `lockUntilCommit`) the statement takes before it
   * counts and holds to its end: requests of one key wait for each other without holding the count's lock meanwhile.
   */
  lockFirst?: string;
}

/** The SQLSTATEs of `lg_refuse` (migrations/Migration20261130000000_RefusalsInStatements.ts) for a window and a quota. */
const WINDOW_EXCEEDED = 'LGRLX';
const QUOTA_EXCEEDED = 'LGQRX';

/**
 * The same count as `consumeRateLimit`, made by the statement of the change it admits: the change, and all the
 * statement writes, happen only when the window (and the quota) admit it; otherwise `lg_refuse` ends the statement
 * and nothing of it is written, the count included. No refund exists or is needed: a change that fails takes its
 * count with it. One statement instead of two (docs/write-path.md).
 */
export function rateLimitInChange(rule: RateLimit, quota?: MonthlyQuota, options: InChangeOptions = {}): CountedInChange {
  const weight = rule.weight ?? 1;
  // A one-time filter of the count's scan: PostgreSQL takes the lock before it counts.
  const first = options.lockFirst
    ? { sql: 'lg_first_lock as (select true as ok from (select pg_advisory_xact_lock(hashtext(?))) as l), ', values: [options.lockFirst], where: ' where (select ok from lg_first_lock)' }
    : { sql: '', values: [], where: '' };
  const quotaCte = quota
    ? {
        sql: `, lg_quota as (${QUOTA_UPSERT} select ?, ?, ? from lg_counted where lg_counted.admitted and ? <= ? ${QUOTA_CONFLICT})`,
        values: [quota.bucket, periodOf(quota), quota.amount, quota.amount, quota.quota, quota.quota],
      }
    : { sql: '', values: [] };
  const quotaUsed = quota ? '(select used from lg_quota)' : 'null::int';
  let window: WindowRow | undefined;
  return {
    preamble: {
      sql: `${first.sql}lg_counted as (select * from consume_rate_limit(?, ?, ?, ?)${first.where})${quotaCte.sql},
        lg_admitted as (select lg_counted.*, ${quotaUsed} as quota_used,
          case when not lg_counted.admitted then lg_refuse('${WINDOW_EXCEEDED}', to_jsonb(lg_counted))
               when ${quota ? `${quotaUsed} is null` : 'false'} then lg_refuse('${QUOTA_EXCEEDED}', '{}'::jsonb)
               else true end as ok
          from lg_counted)`,
      values: [...first.values, rule.bucket, rule.limit, rule.windowSeconds, weight, ...quotaCte.values],
    },
    admittedBy: 'lg_admitted',
    writes: [{ sql: 'select * from lg_admitted', values: [], returned: (rows) => (window = rows[0] as unknown as WindowRow | undefined) }],
    state() {
      if (!window) throw new Error(`the ${rule.name} limit was read before its statement ran`);
      return admittedState(rule, window);
    },
    refusal(error) {
      const { code, detail } = error as { code?: unknown; detail?: unknown };
      if (code === WINDOW_EXCEEDED) return windowExceeded(rule, JSON.parse(String(detail)) as WindowRow);
      if (code === QUOTA_EXCEEDED && quota) return quotaReached(quota);
      return undefined;
    },
  };
}

/** Seconds until the window has room again: from its oldest counted request (or the one whose leaving makes room). */
function resetSecondsOf(rule: RateLimit, window: WindowRow): number {
  return window.oldest
    ? Math.max(1, Math.ceil((new Date(window.oldest).getTime() + rule.windowSeconds * 1000 - new Date(window.checked_at).getTime()) / 1000))
    : rule.windowSeconds;
}

function admittedState(rule: RateLimit, window: WindowRow): RateLimitState {
  const weight = rule.weight ?? 1;
  return { name: rule.name, limit: rule.limit, windowSeconds: rule.windowSeconds, resetSeconds: resetSecondsOf(rule, window), remaining: rule.limit - window.counted - weight };
}

function windowExceeded(rule: RateLimit, window: WindowRow): DomainError {
  const resetSeconds = resetSecondsOf(rule, window);
  return new DomainError('RATE_LIMIT_EXCEEDED', `Rate limit of ${rule.limit} per ${rule.windowSeconds} s exceeded`, {
    payload: { allowed: false, limit: rule.limit, remaining: 0, retryAfter: resetSeconds },
    rateLimit: { name: rule.name, limit: rule.limit, windowSeconds: rule.windowSeconds, resetSeconds, remaining: 0 },
    retryAfterSeconds: resetSeconds,
  });
}

function periodOf(quota: MonthlyQuota): string {
  return startOfMonth(quota.now).toISOString().slice(0, 10);
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
