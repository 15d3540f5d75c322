import type { EntityManager } from '@mikro-orm/postgresql';
// How a unit of work's row travels in events (registered once, as the engine loads).
import './work-events';
import { ProviderPauses } from './provider-pauses';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config';
import type { EventBus } from '../events/event-bus';
import type { Metrics } from '../observability/metrics';
import type { Clock } from '../shared/clock';
import { takeDeadLetters } from './dead-letters';
import { enqueueBulkWrites, enqueueJob, enqueueWrites, type BulkEnqueueInChange, type EnqueueDeps, type EnqueueInChange, type EnqueueOptions } from './enqueue';
import { FetchLoops } from './fetch-loop';
import type { QueueDefinition } from './queue';
import { startQueues } from './queue-setup';
import { runJob, type JobRunDeps } from './run-job';
import type { Worker } from './worker';
import type { ProviderName } from '../providers/shared/provider-error';
import type { SlotStore } from '../providers/shared/provider-budget';
import type { Execute } from './work-ledger';

/** How often the idle loops' queues are looked at for jobs due that no wake-up announced (src/jobs/fetch-loop.ts). */
const IDLE_LOOK_MS = 2000;

export { defineWorker, type AnyWorker, type JobContext, type JobHandler, type Worker } from './worker';

/**
 * pg-boss on the application database, with fetch loops of our own (src/jobs/fetch-loop.ts). Jobs are enqueued in
 * the caller's transaction (enqueue.ts), and workers are woken through the event bus instead of waiting for their
 * poll; failures follow one policy (docs/jobs.md, "The failure policy").
 */
export class JobEngine {
  private unsubscribeWake: (() => void) | undefined;
  private unsubscribePauses: (() => void) | undefined;

  private constructor(
    private readonly deps: JobRunDeps & EnqueueDeps,
    private readonly config: Config['jobs'],
    private readonly queues: ReadonlyMap<string, QueueDefinition>,
  ) {}

  static async start(options: {
    databaseUrl: string;
    events: EventBus;
    config: Config['jobs'];
    log: FastifyBaseLogger;
    clock: Clock;
    metrics?: Metrics;
    /** Runs a statement on its own (autocommit): how the engine records a unit of work's changes. */
    ledger: Execute;
    /** Where the providers' budgets and pauses are shared (src/limits/): a pause met here is kept there. */
    slots: SlotStore;
    /** Every queue of the deployment (its modules'): created, or updated to the configuration in force, at start. */
    queues: readonly QueueDefinition[];
  }): Promise<JobEngine> {
    const boss = await startQueues(options);
    const { events, log, clock, metrics, ledger, config, slots } = options;
    const loops = new FetchLoops(boss, log, metrics, ledger, IDLE_LOOK_MS);
    const waits = { maxWaitSeconds: config.maxWaitSeconds, defaultSeconds: config.retryDelaySeconds };
    const pauses = new ProviderPauses();
    // A pause met by another process before this one started (a 429 naming the provider's project quota).
    for (const { provider, leftMs } of await slots.pauses()) pauses.note(provider, Date.now() + leftMs);
    const deps = { boss, events, log, clock, metrics, ledger, loops, waits, pauses, slots, maxAttempts: config.retryLimit + 1 };
    const engine = new JobEngine(deps, config, new Map(options.queues.map((queue) => [queue.name, queue])));
    engine.unsubscribeWake = events.subscribe('jobs.enqueued', ({ queue }) => loops.wake(queue));
    engine.unsubscribePauses = events.subscribe('provider.paused', ({ provider, until }) => pauses.note(provider, until));
    return engine;
  }

  /**
   * Adds a job in the transaction of `em` (which must be inside `em.transactional`); when that transaction
   * commits, the queue's workers in every process are woken (once per queue and transaction). `startAfter` is a
   * time of the runtime's clock.
   */
  enqueue<P extends object>(em: EntityManager, queue: QueueDefinition<P>, payload: P, options: EnqueueOptions = {}): Promise<string> {
    return enqueueJob(this.deps, em, queue, payload, options);
  }

  /** A job and its unit of work as writes of its record's insert (enqueue.ts). */
  enqueueWrites<P extends object>(queue: QueueDefinition<P>, payload: P, options: Pick<EnqueueOptions, 'startAfter'> = {}): Promise<EnqueueInChange> {
    return enqueueWrites(this.deps, queue, payload, options);
  }

  /**
   * An organization's bulk jobs (a campaign's posts) as writes of the statement that inserts their records: after the
   * work people ask for one by one, and in turn with other organizations' bulk work in the queue (enqueue.ts).
   */
  enqueueBulkWrites<P extends object>(queue: QueueDefinition<P>, organizationId: string, payloads: readonly P[]): Promise<BulkEnqueueInChange> {
    return enqueueBulkWrites(this.deps, queue, organizationId, payloads);
  }

  /**
   * Starts this process's worker for its queue: it takes jobs in batches until `stop()`; and the taker of the
   * queue's dead letters, which settles each one's record as finally failed.
   */
  async work<P extends object>(worker: Worker<P>): Promise<void> {
    const queue = worker.queue.name;
    if (this.queues.get(queue) !== worker.queue) throw new Error(`${queue} is not a queue of this engine`);
    if (this.deps.loops.has(queue)) throw new Error(`a worker for ${queue} is already running`);
    this.deps.loops.start(queue, worker.batchSize ?? 8, (job, running) => runJob(this.deps, worker, job, running));
    takeDeadLetters(this.deps, worker);
  }

  /** Jobs in a queue that are not finished yet (for tests, benchmarks and health). */
  async queueSize(queue: string): Promise<number> {
    return this.deps.boss.getQueueSize(queue);
  }

  /** No job starts from now on; running ones go on (and `stop()` waits for them). */
  stopTaking(): void {
    this.unsubscribeWake?.();
    this.unsubscribePauses?.();
    this.deps.loops.stopTaking();
  }

  /**
   * Stops taking jobs and waits for the running ones, up to `timeoutMs`. Jobs still running then are abandoned:
   * their handlers are told (`signal`), nothing they do afterwards is recorded, and pg-boss retries them once they
   * expire. Resolves when every fetch loop and every handler awaited here has ended.
   */
  async drain(timeoutMs = this.config.stopTimeoutSeconds * 1000): Promise<void> {
    this.stopTaking();
    await this.deps.loops.drain(timeoutMs);
  }

  /** Drains (when that was not done already), then stops pg-boss: resolves when its connections have ended. */
  async stop(timeoutMs = this.config.stopTimeoutSeconds * 1000): Promise<void> {
    await this.drain(timeoutMs);
    await this.deps.boss.stop({ graceful: false, wait: true });
  }

  /** Calls `listener` at every pause of a provider this process meets or hears of; answers how to stop. */
  onProviderPause(listener: (provider: ProviderName, untilMs: number) => void): () => void {
    return this.deps.pauses.listen(listener);
  }

  /** The providers paused now, and until when (ms since the epoch). */
  pausedProviders(): { provider: ProviderName; untilMs: number }[] {
    return this.deps.pauses.current();
  }

  /** The queues whose jobs call `provider` (their definitions' `provider`): where what waits for it is. */
  queuesCalling(provider: ProviderName): string[] {
    return [...this.queues.values()].filter((queue) => queue.provider === provider).map((queue) => queue.name);
  }

  get retryLimit(): number {
    return this.config.retryLimit;
  }
}
