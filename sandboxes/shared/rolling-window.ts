/**
 * The sandboxes' quotas count events in a rolling window of the clock: at most `limit` in any `windowMs` ending now.
 * One rule for the alpha location edit quota and the per-project quotas (docs/alpha-sandbox.md).
 */

/**
 * How long until one more event fits under `limit` per rolling `windowMs` ending at `now`; 0 when it fits now.
 * `times`: the clock times of the events counted, oldest first; those older than the window are not counted.
 */
export function rollingWindowWait(times: readonly number[], limit: number, windowMs: number, now: number): number {
  let first = 0;
  while (first < times.length && times[first]! <= now - windowMs) first += 1;
  if (times.length - first < limit) return 0;
  // Free again when enough of the oldest events have left the window for one more to fit.
  return times[times.length - limit]! + windowMs - now;
}

/**
 * A wait as Retry-After and RetryInfo say it: whole seconds, rounded up (a client waiting that long finds room), at
 * least 1, as the providers answer.
 */
export function retryAfterSecondsOf(waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / 1000));
}
