import { nextAttemptAfterFailure, RETRY_WINDOW_MS, retryDelayMs } from '../../src/webhook/webhook.rules';

/**
 * The retry schedule of a failed delivery (docs/webhooks.md, "Delivery, retries and disabling"): 30 s doubling to an
 * hour, each wait with a random half taken off, for a day from the delivery's creation.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/** The random number just below 1 (Math.random's largest). */
const TOP = 1 - Number.EPSILON;

describe('retryDelayMs', () => {
  it('doubles from 30 s with no jitter at the top of the random range, and stops doubling at an hour', () => {
    const ceilings = [1, 2, 3, 4, 5, 6, 7, 8, 9, 20].map((attempt) => retryDelayMs(attempt, TOP));
    expect(ceilings).toEqual([30 * SECOND, MINUTE, 2 * MINUTE, 4 * MINUTE, 8 * MINUTE, 16 * MINUTE, 32 * MINUTE, HOUR, HOUR, HOUR]);
  });

  it('takes at most half of each wait off: random 0 gives half the ceiling, and every draw lies between', () => {
    for (const attempt of [1, 2, 5, 8, 30]) {
      const ceiling = retryDelayMs(attempt, TOP);
      expect(retryDelayMs(attempt, 0)).toBe(ceiling / 2);
      for (const random of [0.1, 0.25, 0.5, 0.75, 0.9]) {
        const wait = retryDelayMs(attempt, random);
        expect(wait).toBeGreaterThanOrEqual(ceiling / 2);
        expect(wait).toBeLessThanOrEqual(ceiling);
      }
    }
  });

  it('grows with the random draw (it is jitter, not noise)', () => {
    const waits = [0, 0.2, 0.4, 0.6, 0.8, TOP].map((random) => retryDelayMs(4, random));
    expect(waits).toEqual([...waits].sort((a, b) => a - b));
    expect(new Set(waits).size).toBe(waits.length);
  });

  it('is capped at an hour however many attempts failed, and never overflows', () => {
    for (const attempt of [9, 50, 1000, 1e6]) {
      const wait = retryDelayMs(attempt, TOP);
      expect(Number.isFinite(wait)).toBe(true);
      expect(wait).toBe(HOUR);
    }
  });
});

describe('nextAttemptAfterFailure', () => {
  const createdAt = new Date('2026-03-01T00:00:00Z');
  const at = (ms: number) => new Date(createdAt.getTime() + ms);

  it('schedules a retry inside the day, and gives up on a failure a day or more after creation', () => {
    expect(nextAttemptAfterFailure(createdAt, at(0), 1, 0)).toEqual(at(15 * SECOND));
    expect(nextAttemptAfterFailure(createdAt, at(RETRY_WINDOW_MS - 1), 30, TOP)).toEqual(at(RETRY_WINDOW_MS - 1 + HOUR));
    expect(nextAttemptAfterFailure(createdAt, at(RETRY_WINDOW_MS), 30, TOP)).toBeNull();
    expect(nextAttemptAfterFailure(createdAt, at(RETRY_WINDOW_MS + HOUR), 31, 0)).toBeNull();
  });

  /** Fails every attempt at the moment it is due: the attempts' times from creation, until it is given up. */
  function failForever(random: () => number): number[] {
    const times = [0];
    for (let attempts = 1; attempts < 1000; attempts += 1) {
      const next = nextAttemptAfterFailure(createdAt, at(times.at(-1)!), attempts, random());
      if (next === null) return times;
      times.push(next.getTime() - createdAt.getTime());
    }
    throw new Error('the schedule never ended');
  }

  it('ends after a day: the last attempt is the first at or after 24 h, less than an hour later', () => {
    for (const random of [() => 0, () => TOP, () => 0.5]) {
      const times = failForever(random);
      const last = times.at(-1)!;
      expect(last).toBeGreaterThanOrEqual(RETRY_WINDOW_MS);
      expect(last).toBeLessThan(RETRY_WINDOW_MS + HOUR);
      expect(times.slice(0, -1).every((time) => time < RETRY_WINDOW_MS)).toBe(true);
    }
  });

  it('makes a bounded number of attempts over the day: 31 without jitter, 55 with every wait halved', () => {
    // Without jitter: 8 attempts by 63.5 min (waits of 30 s, 1, 2, 4, 8, 16, 32 min), then hourly until 24 h 3.5 min.
    expect(failForever(() => TOP)).toHaveLength(8 + 23);
    // Every wait halved: 8 attempts by 31.75 min, then every half hour until 24 h 1.75 min.
    expect(failForever(() => 0)).toHaveLength(8 + 47);
  });

  it('keeps every gap between consecutive attempts within its attempt’s bounds, whatever the draws', () => {
    let seed = 7;
    // A small deterministic generator: the test is the same on every run.
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const times = failForever(random);
    times.slice(1).forEach((time, index) => {
      const gap = time - times[index]!;
      const ceiling = retryDelayMs(index + 1, TOP);
      expect(gap).toBeGreaterThanOrEqual(ceiling / 2);
      expect(gap).toBeLessThanOrEqual(ceiling);
    });
  });
});
