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
           quota as (${QUOTA_UPSERT} select ?, ?, ? from counted where counted.admitted and ?::int <= ?::int ${QUOTA_CONFLICT})
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
  /** CTEs to go before the change: the counts, the quota's, the cap's, and `lg_admitted`, whose `ok` the change requires. */
  preamble: { sql: string; values: unknown[] };
  /** The name of the CTE whose `ok` admits the change (the change must read it, so the count decides first). */
  admittedBy: string;
  /** A write of the statement that brings the counts' states back. */
  writes: FollowingWrite[];
  /** Once the statement has run: the state of the limit nearest to refusing (the RateLimit headers show that one). */
  state(): RateLimitState;
  /** The refusal the statement's error stands for (RATE_LIMIT_EXCEEDED, QUOTA_REACHED), or undefined. */
  refusal(error: unknown): DomainError | undefined;
}

/**
 * A check the statement makes once its windows (and quota) have admitted the change (an organization's cap on what
 * it has open, src/limits/request-limits.ts): `count` is an SQL expression of a number, counted under a lock held to
 * the statement's end by a VOLATILE function (which reads with a fresh snapshot, so it sees what committed while it
 * waited); at `limit` or more, `lg_refuse(code, {open})` ends the statement.
 */
export interface InChangeOptions {
  /**
   * An advisory lock (`pg_advisory_xact_lock(hashtext(key))`, as `lockUntilCommit`) the statement takes before it
   * counts and holds to its end: requests of one key (a post's Idempotency-Key) take turns, and the count's own lock
   * is not held while one waits for its turn.
   */
  lockFirst?: string;
  /**
   * A condition (an SQL boolean expression) that must hold for the change: checked before anything is counted, and
   * false ends the statement with the SQLSTATE `code` (`lg_refuse`), nothing counted or written. For what a request
   * took from this process's memory rather than from a read of its own (a location as last read, src/location/
   * recent-locations.ts), which the statement then holds to the row as it is.
   */
  checkFirst?: { sql: string; values: unknown[]; code: string };
}

export interface CapInChange {
  count: { sql: string; values: unknown[] };
  limit: number;
  code: string;
}

/** The SQLSTATEs of `lg_refuse` (migrations/Migration20261130000000_RefusalsInStatements.ts) for a window and a quota. */
const WINDOW_EXCEEDED = 'LGRLX';
const QUOTA_EXCEEDED = 'LGQRX';

/**
 * The same counts as `consumeRateLimit`, made by the statement of the change they admit: the change, and all the
 * statement writes, happen only when every window (and the quota, and `cap`) admits it; otherwise `lg_refuse` ends
 * the statement and nothing of it is written, the counts included. No refund exists or is needed: a change that
 * fails takes its counts with it. One statement instead of one per count and the change's (docs/write-path.md).
 *
 * The windows are counted in the order given, each only once those before it admitted the request (a one-time
 * filter on the one before), so every statement takes their locks in that order, and the cap's last; the first
 * refusal is the one answered, as counting them one after the other did.
 */
export function rateLimitInChange(windows: readonly RateLimit[], quota?: MonthlyQuota, cap?: CapInChange, options: InChangeOptions = {}): CountedInChange {
  if (windows.length === 0) throw new Error('rateLimitInChange was given no limit');
  // Each a one-time filter of the count's scan: PostgreSQL takes the lock first, and counts a window only once the
  // one before it admitted the request.
  const gate = (index: number) =>
    index > 0 ? ` where (select admitted from lg_counted_${index - 1})` : options.lockFirst ? ' where (select ok from lg_first_lock)' : '';
  const first = options.lockFirst
    ? [{ sql: 'lg_first_lock as (select true as ok from (select pg_advisory_xact_lock(hashtext(?))) as l)', values: [options.lockFirst] }]
    : [];
  const counts = windows.map((rule, index) => ({
    sql: `lg_counted_${index} as (select * from consume_rate_limit(?, ?, ?, ?)${gate(index)})`,
    values: [rule.bucket, rule.limit, rule.windowSeconds, rule.weight ?? 1],
  }));
  const last = `lg_counted_${windows.length - 1}`;
  const quotaCte = quota && {
    sql: `lg_quota as (${QUOTA_UPSERT} select ?, ?, ? from ${last} where ${last}.admitted and ?::int <= ?::int ${QUOTA_CONFLICT})`,
    values: [quota.bucket, periodOf(quota), quota.amount, quota.amount, quota.quota, quota.quota],
  };
  const capCte = cap && { sql: `lg_cap as (select (${cap.count.sql})::int as open)`, values: cap.count.values };
  const check = options.checkFirst;
  if (check && !/^[0-9A-Z]{5}$/.test(check.code)) throw new Error(`not an SQLSTATE: ${check.code}`);
  // In order: a WHEN's subquery runs only when the WHENs before it passed, and a count's CTE only when first read.
  const refusals = [
    ...(check ? [`when not (${check.sql}) then lg_refuse('${check.code}', '{}'::jsonb)`] : []),
    ...windows.map(
      (_rule, index) =>
        `when not (select admitted from lg_counted_${index}) then lg_refuse('${WINDOW_EXCEEDED}', (select to_jsonb(c) || jsonb_build_object('rule', ${index}) from lg_counted_${index} c))`,
    ),
    ...(quota ? [`when (select used from lg_quota) is null then lg_refuse('${QUOTA_EXCEEDED}', '{}'::jsonb)`] : []),
    ...(cap ? [`when (select open from lg_cap) >= ? then lg_refuse('${cap.code}', (select to_jsonb(c) from lg_cap c))`] : []),
  ];
  const parts = [...first, ...counts, ...(quotaCte ? [quotaCte] : []), ...(capCte ? [capCte] : [])];
  let counted: WindowRow[] | undefined;
  return {
    preamble: {
      sql: `${parts.map((part) => part.sql).join(',\n        ')},
        lg_admitted as (select case ${refusals.join(' ')} else true end as ok)`,
      values: [...parts.flatMap((part) => part.values), ...(check?.values ?? []), ...(cap ? [cap.limit] : [])],
    },
    admittedBy: 'lg_admitted',
    writes: [
      {
        sql: windows.map((_rule, index) => `select ${index} as rule, c.* from lg_counted_${index} c`).join(' union all '),
        values: [],
        returned: (rows) => (counted = [...(rows as unknown as (WindowRow & { rule: number })[])].sort((a, b) => a.rule - b.rule)),
      },
    ],
    state() {
      if (!counted || counted.length !== windows.length) throw new Error(`the ${windows.map((rule) => rule.name).join(', ')} limits were read before their statement ran`);
      // The nearer to refusing by its share left (the first of equals).
      const states = windows.map((rule, index) => admittedState(rule, counted![index]!));
      return states.reduce((nearest, state) => (state.remaining / state.limit < nearest.remaining / nearest.limit ? state : nearest));
    },
    refusal(error) {
      const { code, detail } = error as { code?: unknown; detail?: unknown };
      if (code === WINDOW_EXCEEDED) {
        const window = JSON.parse(String(detail)) as WindowRow & { rule: number };
        return windowExceeded(windows[window.rule]!, window);
      }
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
