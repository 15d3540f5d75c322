import { ProviderError, UNEXPECTED_FAILURE_MESSAGE } from '../providers/shared/provider-error';

/**
 * The one failure policy of every job: docs/jobs.md, "The failure policy". A handler throws; the engine asks
 * `judgeFailure` what that means, and the worker only says how its record keeps a failure (`recordFailure`).
 */

/** What a record keeps of a failure: safe for clients to read. */
export interface JobFailure {
  /** The provider's HTTP status; 0 when no answer arrived or the failure was not the provider's. */
  status: number;
  /** The provider's reason code, or INTERNAL / RETRIES_EXHAUSTED. */
  reason: string;
  message: string;
  /** The provider's error details, when it gave any. */
  details: unknown[];
  /** No retry follows: the record must reach its terminal state now. */
  final: boolean;
}

export interface FailureJudgement {
  failure: JobFailure;
  /** A provider failure (expected, logged as a warning) rather than an error of ours (logged with its stack). */
  fromProvider: boolean;
  /**
   * complete: the record holds the final outcome; fail: pg-boss retries the job, or dead-letters it; wait: the
   * provider asked to come back later (a 429), and the job does, after `waitSeconds`, without spending an attempt.
   */
  settle: 'complete' | 'fail' | 'wait';
  /** For `wait`: how long. */
  waitSeconds?: number;
  /** The provider answered and refused: no retry could change it (not a failure to reach it, nor an error of ours). */
  refusal: boolean;
}

export const INTERNAL_REASON = 'INTERNAL';
export const RETRIES_EXHAUSTED_REASON = 'RETRIES_EXHAUSTED';

/** How long a job may wait for its provider, in all, before a 429 counts as a failure like any other. */
export interface WaitAllowance {
  /** Waited so far (since this job first waited). */
  waitedSeconds: number;
  /** JOB_MAX_WAIT_SECONDS: 0 makes every 429 a failure. */
  maxWaitSeconds: number;
  /** The wait when the provider names none (JOB_RETRY_DELAY_SECONDS). */
  defaultSeconds: number;
}

/** The provider asks the caller to come back later: over its quota (429). */
function asksToWait(error: ProviderError): boolean {
  return error.status === 429;
}

export function judgeFailure(error: unknown, lastAttempt: boolean, allowance?: WaitAllowance): FailureJudgement {
  if (error instanceof ProviderError && allowance && asksToWait(error)) {
    const waitSeconds = Math.max(1, error.retryAfterSeconds ?? allowance.defaultSeconds);
    // Waiting is not failing (docs/jobs.md): no attempt spent, nothing recorded, as long as the allowance lasts.
    if (allowance.waitedSeconds + waitSeconds <= allowance.maxWaitSeconds) {
      const failure = { status: error.status, reason: error.reason, message: error.message, details: [], final: false };
      return { failure, fromProvider: true, settle: 'wait', waitSeconds, refusal: false };
    }
  }
  if (error instanceof ProviderError) {
    const final = !error.retryable || lastAttempt;
    const details = (error as { details?: unknown }).details;
    return {
      failure: { status: error.status, reason: error.reason, message: error.message, details: Array.isArray(details) ? details : [], final },
      fromProvider: true,
      settle: error.retryable ? 'fail' : 'complete',
      refusal: !error.retryable && error.status > 0,
    };
  }
  return {
    failure: { status: 0, reason: INTERNAL_REASON, message: UNEXPECTED_FAILURE_MESSAGE, details: [], final: lastAttempt },
    fromProvider: false,
    settle: 'fail',
    refusal: false,
  };
}

/**
 * The failure a dead-lettered job leaves on its record: its retries ran out, whether its last attempt managed to
 * record why (then its record is terminal already and this changes nothing) or not (its process died, or the
 * database was down when it tried).
 */
export const RETRIES_EXHAUSTED: JobFailure = {
  status: 0,
  reason: RETRIES_EXHAUSTED_REASON,
  message: 'The work was retried as often as allowed and did not succeed',
  details: [],
  final: true,
};
