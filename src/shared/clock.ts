/**
 * Where services, workers and the sandbox read the time, so a test can hold or move it instead of waiting for it.
 * The database keeps its own time: job start times are handed to the job engine as delays from the clock's now.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
