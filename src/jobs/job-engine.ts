import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import PgBoss from 'pg-boss';
import type { Config } from '../config';
import { announceOnCommit } from '../events/announce-on-commit';
import type { Metrics } from '../observability/metrics';
import { currentOrigin, originIn, runWithOrigin } from '../observability/origin';
import { activeTraceContext, failActiveSpan, inConsumerSpan } from '../observability/trace-context';
import { AsyncWorkStatus, recordChange, recordProgress, recordQueued, workIdIn, type Execute, type WorkChange } from './work-ledger';
import type { EventBus } from '../events/event-bus';
import type { Clock } from '../shared/clock';
import { judgeFailure, RETRIES_EXHAUSTED, type JobFailure } from './failure-policy';
import { deadLetterQueueOf, type QueueDefinition } from './queue';

export interface JobContext {
  id: string;
  /** 0 on the first attempt. */
  retryCount: number;
  retryLimit: number;
  /** True when a failure now would not be retried. */
  isLastAttempt: boolean;
  /**
   * Aborted when the process stops and gives up waiting for this job: the job is then left to be retried, so a
   * handler seeing it aborted must not record the interruption as the job's own failure.
   */
  signal: AbortSignal;
  log: FastifyBaseLogger;
  /**
   * Reports how far the job has come (0 to 1) on its unit of work, for the one view of asynchronous work and its
   * subscribers. Never fails the job: a report that cannot be written is logged, and the next one writes again.
   */
  progress(fraction: number): Promise<void>;
}

export type JobHandler<P> = (payload: P, job: JobContext) => Promise<void>;

/**
 * A queue's worker: what a job does, and how its record keeps a failure. Everything else about failures (retry,
 * backoff, dead letter, logging, what a client may read) is the engine's, by one policy (src/jobs/failure-policy.ts).
 */
export interface Worker<P extends object> {
  queue: QueueDefinition<P>;
  /** Reloads the record by the payload's id, checks its state, does the work. Throws on failure. */
  run: JobHandler<NoInfer<P>>;
  /**
   * Writes a failure onto the job's record: every failure but a stop's interruption, the latest one each time;
   * with `failure.final` the record must reach its terminal state. Must change only a record still waiting for this
   * queue's work (it is called again, with RETRIES_EXHAUSTED, when the job is dead-lettered). Not called while
   * `run` holds a row lock: it opens its own short transaction.
   */
  recordFailure?(payload: NoInfer<P>, failure: JobFailure, job: JobContext): Promise<void>;
  /** Jobs taken (and run together) per fetch. */
  batchSize?: number;
  /** How long an idle worker waits before looking again when no wake-up comes. */
  pollingIntervalMs?: number;
}

/** Declares a worker with its payload type inferred from the queue. */
export function defineWorker<P extends object>(worker: Worker<P>): Worker<P> {
  return worker;
}

/** A worker of some queue: what a module's list of workers holds. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each worker is checked against its own queue by defineWorker
export type AnyWorker = Worker<any>;

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
 * Where an idle worker waits: until its polling interval ends, a wake-up arrives, or the engine stops. A wake-up
 * that arrives while the worker is busy is remembered, so the next wait ends at once and no job waits a whole
 * interval.
 */
class IdleWait {
  private pending = false;
  private release: (() => void) | undefined;

  wake(): void {
    if (this.release) this.release();
    else this.pending = true;
  }

  wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.release = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.release = done;
    });
  }
}

interface RunningJob {
  queue: string;
  id: string;
  controller: AbortController;
}

/** What a fetch loop does with each job it takes; it completes or fails the job itself. */
type JobProcessor = (job: PgBoss.JobWithMetadata<unknown>, running: RunningJob) => Promise<void>;

/**
 * pg-boss on the application database, with workers of our own. Jobs are enqueued inside the caller's transaction
 * (no job without the state change, no change without the job); workers are woken through the event bus on enqueue
 * instead of waiting for their poll; failures follow one policy (src/jobs/failure-policy.ts): retried with
 * exponential backoff and jitter (pg-boss's retryBackoff), then dead-lettered into the queue's own dead-letter
 * queue, whose jobs the engine takes to settle their records, so no record waits for a job that no longer runs.
 *
 * The fetch loops are ours (pg-boss `fetch`, `complete`, `fail`) rather than pg-boss `work()`: its workers keep a
 * detached one-second polling loop alive after `stop()` resolves, and complete jobs without awaiting it. Owning the
 * loop lets `stop()` wait for every fetch, handler and completion before the connections close.
 */
export class JobEngine {
  private readonly loops = new Map<string, { idle: IdleWait; done: Promise<void> }>();
  private readonly running = new Set<RunningJob>();
  private unsubscribeWake: (() => void) | undefined;
  private taking = true;
  /** Jobs given up at stop: whatever their handlers do later is not recorded (they are retried instead). */
  private readonly abandoned = new WeakSet<RunningJob>();

  private constructor(
    private readonly boss: PgBoss,
    private readonly events: EventBus,
    private readonly config: Config['jobs'],
    private readonly log: FastifyBaseLogger,
    private readonly clock: Clock,
    private readonly metrics: Metrics | undefined,
    private readonly ledger: Execute,
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
    /** Every queue of the deployment (its modules'): created, or updated to the configuration in force, at start. */
    queues: readonly QueueDefinition[];
  }): Promise<JobEngine> {
    const boss = new PgBoss({
      connectionString: options.databaseUrl,
      schema: 'pgboss',
      application_name: 'lg-jobs',
      max: 4,
      maintenanceIntervalSeconds: options.config.maintenanceSeconds,
      // Jobs whose worker died are retried once they expire; the provider's requestId makes the retry safe.
      expireInSeconds: options.config.expireSeconds,
      // No cron schedules here: pg-boss's timekeeper would only add a polling worker of its own.
      schedule: false,
    });
    boss.on('error', (error) => options.log.error({ err: error }, 'job engine error'));
    await boss.start();
    try {
      for (const { name } of options.queues) {
        const retries = {
          retryLimit: options.config.retryLimit,
          retryDelay: options.config.retryDelaySeconds,
          retryBackoff: true,
          expireInSeconds: options.config.expireSeconds,
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
    const queues = new Map(options.queues.map((queue) => [queue.name, queue]));
    const engine = new JobEngine(boss, options.events, options.config, options.log, options.clock, options.metrics, options.ledger, queues);
    engine.unsubscribeWake = options.events.subscribe('jobs.enqueued', ({ queue }) => engine.wakeLocal(queue));
    return engine;
  }

  /**
   * Adds a job in the transaction of `em` (which must be inside `em.transactional`); when that transaction
   * commits, the queue's workers in every process are woken (once per queue and transaction). `startAfter` is a
   * time of the runtime's clock.
   */
  async enqueue<P extends object>(
    em: EntityManager,
    queue: QueueDefinition<P>,
    payload: P,
    options: { startAfter?: Date; /** A retry: the unit of work the job carries on (its row goes back to QUEUED). */ workId?: string } = {},
  ): Promise<string> {
    const trx = em.getTransactionContext<Knex.Transaction>();
    if (!trx) throw new Error(`enqueue(${queue.name}) must run inside a transaction`);
    const execute: Execute = (sql, values) => em.getConnection().execute(sql, values, 'all', trx);
    const db = {
      executeSql: async (text: string, values: unknown[]) => {
        const { sql, bindings } = toKnexBindings(text, values);
        const result = (await em.getConnection().execute(sql, bindings, 'all', trx)) as unknown;
        return { rows: Array.isArray(result) ? result : ((result as { rows?: unknown[] }).rows ?? []) };
      },
    };
    // The clock may be held or moved (tests); pg-boss compares start times with real time: keep the delay.
    const startAfter = options.startAfter
      ? new Date(Date.now() + Math.max(0, options.startAfter.getTime() - this.clock.now().getTime()))
      : undefined;
    // The request (or job) that caused this one: its id goes on the job's log lines; and the span enqueuing it (a
    // request's, or the job's when a job enqueues one), which the job's own span continues.
    const cause = currentOrigin();
    const origin = cause && { requestId: cause.requestId, ...activeTraceContext() };
    // Its unit of work (docs/async-work.md), in the same transaction: no job without its row.
    const work = options.workId
      ? await recordChange(execute, options.workId, { status: AsyncWorkStatus.QUEUED })
      : await recordQueued(execute, queue, payload, this.config.retryLimit + 1);
    const data = { ...payload, ...(origin ? { origin } : {}), ...(work ? { workId: work.id } : {}) };
    const id = await this.boss.send(queue.name, data, { db, ...(startAfter ? { startAfter } : {}) });
    // pg-boss answers null when it did not create the job (e.g. an unknown queue): never lose a job silently.
    if (!id) throw new Error(`pg-boss did not create a ${queue.name} job`);
    // Counted as sent: a transaction that rolls back afterwards takes the job with it (rare: a failed request).
    this.metrics?.jobsCreated.inc({ queue: queue.name });
    if (work) announceOnCommit(em, this.events, 'async-work.updated', () => work);
    // Woken after the transaction's own announcements: subscribers hear of the change before a job moves it on.
    if (!options.startAfter) announceOnCommit(em, this.events, 'jobs.enqueued', () => ({ queue: queue.name }), { wakeKey: queue.name });
    return id;
  }

  private wakeLocal(queue: string): void {
    this.loops.get(queue)?.idle.wake();
  }

  /**
   * Starts this process's worker for its queue: it takes jobs in batches until `stop()`; and the taker of the
   * queue's dead letters, which settles each one's record as finally failed.
   */
  async work<P extends object>(worker: Worker<P>): Promise<void> {
    const queue = worker.queue.name;
    if (this.queues.get(queue) !== worker.queue) throw new Error(`${queue} is not a queue of this engine`);
    if (this.loops.has(queue)) throw new Error(`a worker for ${queue} is already running`);
    const deadLetter = deadLetterQueueOf(queue);
    this.startLoop(queue, worker.batchSize ?? 8, worker.pollingIntervalMs ?? 2000, (job, running) => this.runJob(worker, job, running));
    // Dead letters arrive when a last attempt fails here (which wakes this loop) or when pg-boss's maintenance
    // fails an expired job: polling at the maintenance interval finds those.
    this.startLoop(deadLetter, 8, this.config.maintenanceSeconds * 1000, (job, running) => this.settleDeadLetter(worker, job, running));
  }

  private startLoop(queue: string, batchSize: number, pollingMs: number, process: JobProcessor): void {
    const idle = new IdleWait();
    const done = this.fetchLoop(queue, process, idle, batchSize, pollingMs);
    this.loops.set(queue, { idle, done });
  }

  /**
   * Keeps up to `batchSize` jobs of the queue running: takes as many as there are free slots, and takes more as jobs
   * end, so one slow job (a provider call waiting out its time-out) never holds up the others. While jobs run, it
   * takes more once half of the slots are free rather than at every job's end: under a backlog each fetch (one
   * locking statement of pg-boss's) then brings several jobs instead of one. An idle loop waits for a wake-up, a job
   * ending, or its polling interval. Ends when the engine stops taking jobs and the running ones have ended.
   */
  private async fetchLoop(queue: string, process: JobProcessor, idle: IdleWait, batchSize: number, pollingMs: number): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    const refillAt = Math.ceil(batchSize / 2);
    while (this.taking) {
      const free = batchSize - inFlight.size;
      let jobs: PgBoss.JobWithMetadata<unknown>[] = [];
      if (free > 0 && (inFlight.size === 0 || free >= refillAt)) {
        try {
          jobs = await this.boss.fetch<unknown>(queue, { batchSize: free, includeMetadata: true });
        } catch (error) {
          this.log.error({ err: error, queue }, 'fetching jobs failed');
        }
      }
      for (const job of jobs) {
        const running: Promise<void> = this.track(queue, job, process).finally(() => {
          inFlight.delete(running);
          idle.wake();
        });
        inFlight.add(running);
      }
      // Every slot busy, or nothing waiting: the next look is when a job ends, a wake-up comes, or the interval ends.
      if (this.taking) await idle.wait(pollingMs);
    }
    await Promise.all(inFlight);
  }

  private async track(queue: string, job: PgBoss.JobWithMetadata<unknown>, process: JobProcessor): Promise<void> {
    const running: RunningJob = { queue, id: job.id, controller: new AbortController() };
    this.running.add(running);
    const { metrics } = this;
    const started = performance.now();
    if (metrics) {
      // From when it could start (created, or the time it was put off to: a schedule or a retry's backoff).
      const couldStart = Math.max(job.createdOn.getTime(), job.startAfter.getTime());
      metrics.jobWait.observe({ queue }, Math.max(0, Date.now() - couldStart) / 1000);
      metrics.jobsActive.inc({ queue });
    }
    try {
      // Every attempt is a span in the trace of the work that enqueued the job: its SQL and provider calls are
      // children of it. Dead letters too (their data is the job's, origin included).
      const origin = originIn(job.data);
      const attributes = {
        'messaging.system': 'pg-boss',
        'messaging.operation.type': 'process',
        'messaging.destination.name': queue,
        'messaging.message.id': job.id,
        'lg.job.retry_count': job.retryCount,
        ...(origin ? { 'lg.request_id': origin.requestId } : {}),
      };
      await inConsumerSpan(`job ${queue}`, origin, attributes, () => process(job, running));
    } finally {
      this.running.delete(running);
      if (metrics) {
        metrics.jobsActive.dec({ queue });
        metrics.jobRun.observe({ queue }, (performance.now() - started) / 1000);
      }
    }
  }

  private contextOf(job: PgBoss.JobWithMetadata<unknown>, running: RunningJob, log: FastifyBaseLogger): JobContext {
    const workId = workIdIn(job.data);
    return {
      id: job.id,
      retryCount: job.retryCount,
      retryLimit: job.retryLimit,
      isLastAttempt: job.retryCount >= job.retryLimit,
      signal: running.controller.signal,
      log,
      progress: (fraction) => this.noteProgress(workId, fraction, log),
    };
  }

  private async runJob<P extends object>(worker: Worker<P>, job: PgBoss.JobWithMetadata<unknown>, running: RunningJob): Promise<void> {
    const queue = worker.queue.name;
    const origin = originIn(job.data);
    const log = this.log.child({ queue, jobId: job.id, retryCount: job.retryCount, ...(origin ? { reqId: origin.requestId } : {}) });
    const context = this.contextOf(job, running, log);
    // Payloads come back from the database as `unknown`: checked once here, typed from here on. A malformed one
    // can never run: it goes straight to the dead letters (nothing to record: its record cannot be named).
    if (!worker.queue.isPayload(job.data)) {
      log.error({ data: job.data }, 'job with a malformed payload');
      await this.settle(queue, job.id, 'fail', 'malformed payload', log, { lastAttempt: true });
      return;
    }
    const payload = job.data;
    const workId = workIdIn(job.data);
    await this.noteWork(workId, { status: AsyncWorkStatus.RUNNING }, log);
    try {
      await (origin ? runWithOrigin(origin, () => worker.run(payload, context)) : worker.run(payload, context));
    } catch (error) {
      if (this.abandoned.has(running)) {
        log.debug({ err: error }, 'abandoned job ended after the stop');
        return;
      }
      const judgement = judgeFailure(error, context.isLastAttempt);
      const { failure } = judgement;
      failActiveSpan(error);
      const what = failure.final ? 'final' : 'will be retried';
      if (judgement.fromProvider) log.warn({ err: error, reason: failure.reason, status: failure.status }, `job failed at the provider (${what})`);
      else log.error({ err: error }, `job failed unexpectedly (${what})`);
      let settle = judgement.settle;
      try {
        await worker.recordFailure?.(payload, failure, context);
      } catch (recordError) {
        // The record could not take it (the database may be down): the job is retried, or dead-lettered, whose
        // settling records the failure again.
        log.error({ err: recordError }, 'could not record the job failure on its record');
        settle = 'fail';
      }
      await this.settle(queue, job.id, settle, failure.message, log, { lastAttempt: context.isLastAttempt });
      this.metrics?.countJob(queue, failure.final || context.isLastAttempt ? 'failed' : 'retried');
      // A last attempt that is not final goes to the dead letters, whose settling records DEAD_LETTERED.
      await this.noteWork(workId, { status: failure.final ? AsyncWorkStatus.FAILED : AsyncWorkStatus.RETRYING, error: failure.message }, log);
      return;
    }
    if (this.abandoned.has(running)) return;
    await this.settle(queue, job.id, 'complete', undefined, log, { lastAttempt: context.isLastAttempt });
    this.metrics?.countJob(queue, 'completed');
    await this.noteWork(workId, { status: AsyncWorkStatus.SUCCEEDED }, log);
    log.debug('job done');
  }

  /**
   * Records a change of a job's unit of work and announces it. Never fails the job: the ledger is a view, and a
   * change it misses (the database away for a moment) is logged; the next change of that work writes its state.
   */
  private async noteWork(workId: string | undefined, change: WorkChange, log: FastifyBaseLogger): Promise<void> {
    if (!workId) return;
    try {
      const work = await recordChange(this.ledger, workId, change);
      if (work) await this.events.announce('async-work.updated', work);
    } catch (error) {
      log.warn({ err: error, workId, status: change.status }, 'could not record a change of the job\'s unit of work');
    }
  }

  /** Records how far a job's unit of work has come and announces it; like noteWork, never fails the job. */
  private async noteProgress(workId: string | undefined, fraction: number, log: FastifyBaseLogger): Promise<void> {
    if (!workId) return;
    try {
      const work = await recordProgress(this.ledger, workId, fraction);
      if (work) await this.events.announce('async-work.updated', work);
    } catch (error) {
      log.warn({ err: error, workId, progress: fraction }, "could not record the progress of the job's unit of work");
    }
  }

  /** Completes or fails a job in pg-boss; a failed last attempt wakes the queue's dead-letter taker. */
  private async settle(queue: string, jobId: string, settle: 'complete' | 'fail', message: string | undefined, log: FastifyBaseLogger, options: { lastAttempt: boolean }): Promise<void> {
    try {
      if (settle === 'complete') await this.boss.complete(queue, jobId);
      else await this.boss.fail(queue, jobId, { message });
    } catch (error) {
      // The job stays active: pg-boss retries it when it expires (or dead-letters it when retries are used up).
      log.error({ err: error }, `could not ${settle} the job; it is taken again when it expires`);
      return;
    }
    if (settle === 'fail' && options.lastAttempt) this.loops.get(deadLetterQueueOf(queue))?.idle.wake();
  }

  /**
   * A dead-lettered job: its record is settled as finally failed (a record whose last attempt recorded its own
   * failure is terminal already, and stays as it is). Failing here is retried like any job.
   */
  private async settleDeadLetter<P extends object>(worker: Worker<P>, job: PgBoss.JobWithMetadata<unknown>, running: RunningJob): Promise<void> {
    const queue = deadLetterQueueOf(worker.queue.name);
    const log = this.log.child({ queue, jobId: job.id, retryCount: job.retryCount });
    try {
      if (worker.queue.isPayload(job.data)) {
        await worker.recordFailure?.(job.data, RETRIES_EXHAUSTED, this.contextOf(job, running, log));
        log.warn({ data: job.data }, 'a job ran out of retries; its record is settled as failed');
        this.metrics?.countJob(worker.queue.name, 'dead_lettered');
        await this.noteWork(workIdIn(job.data), { status: AsyncWorkStatus.DEAD_LETTERED }, log);
      } else {
        log.error({ data: job.data }, 'dead letter with a malformed payload: nothing to settle');
      }
      if (!this.abandoned.has(running)) await this.boss.complete(queue, job.id);
    } catch (error) {
      if (this.abandoned.has(running)) return;
      failActiveSpan(error);
      log.error({ err: error }, 'settling a dead-lettered job failed; it is retried');
      await this.boss.fail(queue, job.id, { message: 'settling failed' }).catch((failError: unknown) => {
        log.error({ err: failError }, 'could not record the failure; the dead letter is taken again when it expires');
      });
    }
  }

  /** Jobs in a queue that are not finished yet (for tests, benchmarks and health). */
  async queueSize(queue: string): Promise<number> {
    return this.boss.getQueueSize(queue);
  }

  /** No job starts from now on; running ones go on (and `stop()` waits for them). */
  stopTaking(): void {
    this.taking = false;
    this.unsubscribeWake?.();
    for (const { idle } of this.loops.values()) idle.wake();
  }

  /**
   * Stops taking jobs and waits for the running ones, up to `timeoutMs`. Jobs still running then are abandoned:
   * their handlers are told (`signal`), nothing they do afterwards is recorded, and pg-boss retries them once they
   * expire. Resolves when every fetch loop and every handler awaited here has ended.
   */
  async drain(timeoutMs = this.config.stopTimeoutSeconds * 1000): Promise<void> {
    this.stopTaking();
    const loopsDone = Promise.all([...this.loops.values()].map((loop) => loop.done));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      loopsDone.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      const left = [...this.running];
      for (const job of left) {
        this.abandoned.add(job);
        job.controller.abort();
      }
      this.log.warn({ jobs: left.map(({ queue, id }) => ({ queue, id })) }, `${left.length} running jobs left to be retried after the stop`);
    }
    this.loops.clear();
  }

  /** Drains (when that was not done already), then stops pg-boss: resolves when its connections have ended. */
  async stop(timeoutMs = this.config.stopTimeoutSeconds * 1000): Promise<void> {
    await this.drain(timeoutMs);
    await this.boss.stop({ graceful: false, wait: true });
  }

  get retryLimit(): number {
    return this.config.retryLimit;
  }
}
