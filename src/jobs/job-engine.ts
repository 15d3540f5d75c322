import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import PgBoss from 'pg-boss';
import type { Config } from '../config';
import type { EventBus } from '../events/event-bus';
import { DEAD_LETTER_QUEUE, QUEUES, type QueueName, type QueuePayloads } from './queues';

export interface JobContext {
  id: string;
  /** 0 on the first attempt. */
  retryCount: number;
  retryLimit: number;
  /** True when a failure now would not be retried. */
  isLastAttempt: boolean;
}

export type JobHandler<Q extends QueueName> = (payload: QueuePayloads[Q], job: JobContext) => Promise<void>;

/** pg-boss writes `$1`-style SQL; MikroORM's knex transaction takes `?` bindings. */
function toKnexBindings(text: string, values: unknown[]): { sql: string; bindings: unknown[] } {
  const bindings: unknown[] = [];
  const sql = text.replace(/\?/g, '\\?').replace(/\$(\d+)/g, (_match, index: string) => {
    bindings.push(values[Number(index) - 1]);
    return '?';
  });
  return { sql, bindings };
}

/**
 * pg-boss on the application database. Jobs are enqueued inside the caller's transaction (no job without the
 * state change, no change without the job); workers are woken through the event bus on enqueue instead of
 * waiting for their poll; retryable failures back off exponentially with jitter (pg-boss's retryBackoff);
 * exhausted jobs go to the dead-letter queue.
 */
export class JobEngine {
  private readonly workerIds = new Map<QueueName, string>();
  private unsubscribeWake: (() => void) | undefined;

  private constructor(
    private readonly boss: PgBoss,
    private readonly events: EventBus,
    private readonly config: Config['jobs'],
    private readonly log: FastifyBaseLogger,
  ) {}

  static async start(options: { databaseUrl: string; events: EventBus; config: Config['jobs']; log: FastifyBaseLogger }): Promise<JobEngine> {
    const boss = new PgBoss({
      connectionString: options.databaseUrl,
      schema: 'pgboss',
      application_name: 'lg-jobs',
      max: 4,
      maintenanceIntervalSeconds: options.config.maintenanceSeconds,
      // Jobs whose worker died are retried once they expire; the provider's requestId makes the retry safe.
      expireInSeconds: options.config.expireSeconds,
    });
    boss.on('error', (error) => options.log.error({ err: error }, 'job engine error'));
    await boss.start();
    await boss.createQueue(DEAD_LETTER_QUEUE);
    for (const name of QUEUES) {
      const policy = {
        retryLimit: options.config.retryLimit,
        retryDelay: options.config.retryDelaySeconds,
        retryBackoff: true,
        expireInSeconds: options.config.expireSeconds,
        deadLetter: DEAD_LETTER_QUEUE,
      };
      // createQueue leaves an existing queue as it was: update it, so the configuration in force applies.
      await boss.createQueue(name, { name, ...policy });
      await boss.updateQueue(name, { name, ...policy });
    }
    const engine = new JobEngine(boss, options.events, options.config, options.log);
    engine.unsubscribeWake = options.events.subscribe('jobs.enqueued', ({ queue }) => engine.wakeLocal(queue));
    return engine;
  }

  /**
   * Adds a job in the transaction of `em` (which must be inside `em.transactional`). Call `wake` after the
   * commit so workers start at once.
   */
  async enqueue<Q extends QueueName>(em: EntityManager, queue: Q, payload: QueuePayloads[Q], options: { startAfter?: Date } = {}): Promise<string> {
    const trx = em.getTransactionContext();
    if (!trx) throw new Error(`enqueue(${queue}) must run inside a transaction`);
    const db = {
      executeSql: async (text: string, values: unknown[]) => {
        const { sql, bindings } = toKnexBindings(text, values);
        const result = (await em.getConnection().execute(sql, bindings as never[], 'all', trx)) as unknown;
        return { rows: Array.isArray(result) ? result : ((result as { rows?: unknown[] }).rows ?? []) };
      },
    };
    const id = await this.boss.send(queue, payload, { db, ...(options.startAfter ? { startAfter: options.startAfter } : {}) });
    // pg-boss answers null when it did not create the job (e.g. an unknown queue): never lose a job silently.
    if (!id) throw new Error(`pg-boss did not create a ${queue} job`);
    return id;
  }

  /** Wakes the workers of `queue` in every process (after the enqueuing transaction committed). */
  async wake(queue: QueueName): Promise<void> {
    await this.events.publish('jobs.enqueued', { queue });
  }

  private wakeLocal(queue: string): void {
    const workerId = this.workerIds.get(queue as QueueName);
    if (workerId) this.boss.notifyWorker(workerId);
  }

  async work<Q extends QueueName>(queue: Q, handler: JobHandler<Q>, options: { batchSize?: number } = {}): Promise<void> {
    const batchSize = options.batchSize ?? 8;
    const workerId: string = await this.boss.work<QueuePayloads[Q]>(
      queue,
      { includeMetadata: true, batchSize, pollingIntervalSeconds: 2 },
      async (jobs) => {
        // Jobs of one batch are independent: run them together and fail each one that threw on its own
        // (pg-boss then retries it with backoff). pg-boss completes the rest when this returns; completing
        // only touches jobs still active, so the failed ones stay failed.
        await Promise.all(
          jobs.map((job) =>
            handler(job.data, {
              id: job.id,
              retryCount: job.retryCount,
              retryLimit: job.retryLimit,
              isLastAttempt: job.retryCount >= job.retryLimit,
            }).catch(async (error: unknown) => {
              this.log.warn({ err: error, queue, jobId: job.id, retryCount: job.retryCount }, 'job failed');
              await this.boss.fail(queue, job.id, { message: error instanceof Error ? error.message : String(error) });
            }),
          ),
        );
        // A full batch means more may be waiting: fetch again at once instead of sleeping out the poll interval
        // (wake-ups only come with new jobs, so a backlog would otherwise drain one batch per poll).
        if (jobs.length === batchSize) this.boss.notifyWorker(workerId);
      },
    );
    this.workerIds.set(queue, workerId);
  }

  /** Counts of jobs per state in a queue (for tests, benchmarks and health). */
  async queueSize(queue: QueueName | typeof DEAD_LETTER_QUEUE): Promise<number> {
    return this.boss.getQueueSize(queue);
  }

  /** Stops taking jobs and lets running ones finish (up to `timeoutMs`). */
  async stop(timeoutMs = 20000): Promise<void> {
    this.unsubscribeWake?.();
    await this.boss.stop({ graceful: true, wait: true, timeout: timeoutMs });
  }

  get retryLimit(): number {
    return this.config.retryLimit;
  }
}
