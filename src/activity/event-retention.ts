import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config';
import type { Database } from '../db/orm';
import type { Clock } from '../shared/clock';

/** What the retention reads: the clock and EVENT_RETENTION_DAYS; the sweep, the database too. */
export type RetentionDeps = { clock: Clock; config: Pick<Config, 'eventRetentionDays'> };

const DAY_MS = 24 * 60 * 60 * 1000;
/** How often old events are deleted. Lists never show them meanwhile (they read from the same cut-off). */
const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/** The oldest time the activity log still shows: EVENT_RETENTION_DAYS before the clock's now. The one rule. */
export function retainedSince(runtime: RetentionDeps): Date {
  return new Date(runtime.clock.now().getTime() - runtime.config.eventRetentionDays * DAY_MS);
}

/** Deletes the events older than the retention; returns how many. */
export async function deleteExpiredEvents(runtime: RetentionDeps & { database: Database }): Promise<number> {
  const em = runtime.database.orm.em.fork();
  const result = await em.getConnection().execute<{ affectedRows: number }>(
    'delete from "activity_event" where "occurred_at" < ?',
    [retainedSince(runtime)],
    'run',
  );
  return result.affectedRows;
}

/**
 * The retention sweep of the processes that run jobs: at start, then hourly. A failed sweep is logged and tried
 * again at the next one (the events it left are not listed anyway). Returns its stop.
 */
export function startEventRetention(runtime: RetentionDeps & { database: Database }, log: FastifyBaseLogger): () => Promise<void> {
  let running: Promise<void> = Promise.resolve();
  const sweep = () => {
    running = deleteExpiredEvents(runtime).then(
      (deleted) => {
        if (deleted > 0) log.info({ deleted }, 'deleted activity events past their retention');
      },
      (error: unknown) => log.warn({ err: error }, 'the activity log retention sweep failed; the next one tries again'),
    );
  };
  sweep();
  const timer = setInterval(sweep, SWEEP_INTERVAL_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
