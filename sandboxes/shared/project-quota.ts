import { z } from 'zod';
import { retryAfterSecondsOf, rollingWindowWait } from './rolling-window';

/**
 * The per-project quota of a sandbox's provider API (docs/alpha-sandbox.md, "The per-project quota"): every call of
 * the API counts against it, admitted or refused as it arrives, on the sandbox's clock.
 */

/** The quota's part of a sandbox's configuration; null: no such limit. Both null (the default): unlimited. */
export interface ProjectQuotaLimits {
  /** Calls admitted in any rolling second of the clock. */
  quotaPerSecond: number | null;
  /** Calls admitted in any rolling minute of the clock. */
  quotaPerMinute: number | null;
}

export const UNLIMITED_PROJECT_QUOTA: Readonly<ProjectQuotaLimits> = { quotaPerSecond: null, quotaPerMinute: null };

/** The limits a sandbox starts with: those given, the others unlimited. */
export function startingQuota(given: Partial<ProjectQuotaLimits> = {}): ProjectQuotaLimits {
  return { quotaPerSecond: given.quotaPerSecond ?? null, quotaPerMinute: given.quotaPerMinute ?? null };
}

/** The largest limit a control or a setting takes. */
export const MAX_PROJECT_QUOTA = 1_000_000;

/** A limit as a control or a setting gives it: a whole number of calls, at least 1. */
export const projectQuotaLimitSchema = z.number().int().min(1).max(MAX_PROJECT_QUOTA);

/** The configuration patch fields of the quota (see commonConfigPatchShape); null lifts the limit. */
export const projectQuotaPatchShape = {
  quotaPerSecond: projectQuotaLimitSchema.nullable().optional(),
  quotaPerMinute: projectQuotaLimitSchema.nullable().optional(),
};

/** A call over the quota: the limit it was over and the seconds the 429 tells the client to wait. */
export interface ProjectQuotaExceeded {
  /** The limit that keeps the wait longest, when both are reached. */
  limit: keyof ProjectQuotaLimits;
  limitValue: number;
  retryAfterSeconds: number;
}

/** One 429 the quota answered, as GET /_control/state shows it. */
export interface ProjectQuotaRefusal {
  /** When the call arrived, on the sandbox's clock (ISO 8601). */
  at: string;
  limit: keyof ProjectQuotaLimits;
  /** What Retry-After (and alpha's RetryInfo) said. */
  retryAfterSeconds: number;
  /** Calls, admitted or refused, that arrived after this refusal and before its Retry-After had passed. */
  callsBeforeRetry: number;
}

/** The quota's counters in GET /_control/state, since the last reset. */
export interface ProjectQuotaState {
  /** Calls the quota let through (they may still fail later: authentication, a scripted failure, validation). */
  admitted: number;
  /** Calls answered 429 by the quota. */
  refused: number;
  /** When the last call arrived, admitted or refused (ISO 8601); null: none since the reset. */
  lastCallAt: string | null;
  /** Calls that arrived while a Retry-After the quota had answered was still running (each call once). */
  callsDuringRetryAfter: number;
  /** The latest refusals, oldest first: at most REFUSALS_KEPT; `refused` counts them all. */
  refusals: ProjectQuotaRefusal[];
}

/** How many refusals the state lists: enough for a campaign's few, bounded for a flood. */
export const REFUSALS_KEPT = 100;

const SECOND_MS = 1000;
const MINUTE_MS = 60_000;

interface RefusalRecord {
  at: number;
  limit: keyof ProjectQuotaLimits;
  retryAfterSeconds: number;
  retryAt: number;
  callsBeforeRetry: number;
}

/**
 * A sliding-window log: the arrival times of the admitted calls of the last minute, so "at most N in any rolling
 * second (minute)" holds exactly, and the wait a 429 gives is the time until the oldest call that stands in the way
 * leaves the window. Refused calls do not use the quota.
 */
export class ProjectQuota {
  /** Admitted calls of the last minute, oldest first; only while a limit is set. */
  private recent: number[] = [];
  private admitted = 0;
  private refused = 0;
  private lastCallAt: number | undefined;
  private callsDuringRetryAfter = 0;
  private retryUntil = Number.NEGATIVE_INFINITY;
  private refusals: RefusalRecord[] = [];

  clear(): void {
    this.recent = [];
    this.admitted = 0;
    this.refused = 0;
    this.lastCallAt = undefined;
    this.callsDuringRetryAfter = 0;
    this.retryUntil = Number.NEGATIVE_INFINITY;
    this.refusals = [];
  }

  /** Charges a call arriving at `now`: undefined when the limits admit it, otherwise what its 429 says. */
  take(limits: ProjectQuotaLimits, now: number): ProjectQuotaExceeded | undefined {
    this.lastCallAt = now;
    if (now < this.retryUntil) this.callsDuringRetryAfter += 1;
    for (const refusal of this.refusals) if (now < refusal.retryAt) refusal.callsBeforeRetry += 1;

    const waits = (['quotaPerSecond', 'quotaPerMinute'] as const).flatMap((limit) => {
      const limitValue = limits[limit];
      if (limitValue === null) return [];
      const windowMs = limit === 'quotaPerSecond' ? SECOND_MS : MINUTE_MS;
      return [{ limit, limitValue, waitMs: rollingWindowWait(this.recent, limitValue, windowMs, now) }];
    });
    if (waits.length === 0) {
      // No limit in force: nothing to count against. A limit set later counts the calls from then on.
      this.recent = [];
      this.admitted += 1;
      return undefined;
    }
    const longest = waits.reduce((a, b) => (b.waitMs > a.waitMs ? b : a));
    if (longest.waitMs <= 0) {
      this.dropBefore(now - MINUTE_MS);
      this.recent.push(now);
      this.admitted += 1;
      return undefined;
    }
    const retryAfterSeconds = retryAfterSecondsOf(longest.waitMs);
    this.refused += 1;
    this.retryUntil = Math.max(this.retryUntil, now + retryAfterSeconds * 1000);
    this.refusals.push({ at: now, limit: longest.limit, retryAfterSeconds, retryAt: now + retryAfterSeconds * 1000, callsBeforeRetry: 0 });
    if (this.refusals.length > REFUSALS_KEPT) this.refusals.shift();
    return { limit: longest.limit, limitValue: longest.limitValue, retryAfterSeconds };
  }

  snapshot(): ProjectQuotaState {
    return {
      admitted: this.admitted,
      refused: this.refused,
      lastCallAt: this.lastCallAt === undefined ? null : new Date(this.lastCallAt).toISOString(),
      callsDuringRetryAfter: this.callsDuringRetryAfter,
      refusals: this.refusals.map((refusal) => ({
        at: new Date(refusal.at).toISOString(),
        limit: refusal.limit,
        retryAfterSeconds: refusal.retryAfterSeconds,
        callsBeforeRetry: refusal.callsBeforeRetry,
      })),
    };
  }

  private dropBefore(oldest: number): void {
    let count = 0;
    while (count < this.recent.length && this.recent[count]! <= oldest) count += 1;
    if (count > 0) this.recent.splice(0, count);
  }
}
