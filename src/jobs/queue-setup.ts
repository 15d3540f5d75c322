import type { FastifyBaseLogger } from 'fastify';
import PgBoss from 'pg-boss';
import type { Config } from '../config';
import { deadLetterQueueOf, type QueueDefinition } from './queue';

/** pg-boss's schema: its job table is written directly only where its documentation allows (src/jobs/completion.ts). */
export const BOSS_SCHEMA = 'pgboss';

/**
 * Starts pg-boss on the application database and creates every queue with its dead-letter queue, or updates them
 * to the configuration in force. pg-boss is stopped again when a queue cannot be set up.
 */
export async function startQueues(options: {
  databaseUrl: string;
  config: Config['jobs'];
  log: FastifyBaseLogger;
  queues: readonly QueueDefinition[];
}): Promise<PgBoss> {
  const { config } = options;
  const boss = new PgBoss({
    connectionString: options.databaseUrl,
    schema: BOSS_SCHEMA,
    application_name: 'lg-jobs',
    max: 4,
    maintenanceIntervalSeconds: config.maintenanceSeconds,
    // Jobs whose worker died are retried once they expire; the provider's requestId makes the retry safe.
    expireInSeconds: config.expireSeconds,
    // No cron schedules here: pg-boss's timekeeper would only add a polling worker of its own.
    schedule: false,
  });
  boss.on('error', (error) => options.log.error({ err: error }, 'job engine error'));
  await boss.start();
  try {
    for (const { name } of options.queues) {
      const retries = {
        retryLimit: config.retryLimit,
        retryDelay: config.retryDelaySeconds,
        retryBackoff: true,
        expireInSeconds: config.expireSeconds,
      };
      const deadLetter = deadLetterQueueOf(name);
      const policy = { ...retries, deadLetter };
      // createQueue leaves an existing queue as it was: update it, so the configuration in force applies.
      await boss.createQueue(deadLetter, { name: deadLetter, ...retries });
      await boss.updateQueue(deadLetter, { name: deadLetter, ...retries });
      await boss.createQueue(name, { name, ...policy });
      await boss.updateQueue(name, { name, ...policy });
    }
  } catch (error) {
    await boss.stop({ graceful: false, wait: true });
    throw error;
  }
  return boss;
}
