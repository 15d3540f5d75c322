import type { FastifyInstance } from 'fastify';

export interface Sleeper {
  sleep(ms: number): Promise<void>;
}

/** A plain timer: for a store used without a server. */
export const timerSleeper: Sleeper = { sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };

/**
 * Latency timers that the closing server cuts short, so a close never waits out a long configured latency.
 */
export function closableSleeper(app: FastifyInstance): Sleeper {
  const sleepers = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const wake of [...sleepers]) wake();
  });
  return {
    sleep(ms) {
      return new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          sleepers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, ms);
        sleepers.add(wake);
      });
    },
  };
}
