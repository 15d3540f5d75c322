import type { FastifyBaseLogger } from 'fastify';
import type PgBoss from 'pg-boss';
import type { Metrics } from '../observability/metrics';
import { originIn } from '../observability/origin';
import { inConsumerSpan } from '../observability/trace-context';

/**
 * Where an idle loop waits: until its polling interval ends, a wake-up arrives, or the engine stops. A wake-up
 * that arrives while the loop is busy is remembered, so the next wait ends at once and no job waits a whole
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

/** One queue's loop: where it waits, whether a wake-up came since its last fetch, and its end. */
interface Loop {
  idle: IdleWait;
  /** Set by a wake-up (a job enqueued, a dead letter made), cleared by the next fetch. */
  woken: boolean;
  done: Promise<void>;
}

export interface RunningJob {
  queue: string;
  id: string;
  controller: AbortController;
  /** Given up at stop: whatever its handler does later is not recorded (the job is retried instead). */
  abandoned: boolean;
  /** Set when its record's change completed it, with its unit of work's news (src/jobs/completion.ts). */
  completed?: boolean;
}

/** What a fetch loop does with each job it takes; it completes or fails the job itself. */
export type JobProcessor = (job: PgBoss.JobWithMetadata<unknown>, running: RunningJob) => Promise<void>;

/**
 * This process's fetch loops, one per queue, over pg-boss `fetch` rather than pg-boss `work()`: its workers keep a
 * detached one-second polling loop alive after `stop()` resolves, and complete jobs without awaiting it. Owning
 * the loops lets `drain()` wait for every fetch, handler and completion before the connections close.
 */
export class FetchLoops {
  private readonly loops = new Map<string, Loop>();
  private readonly running = new Set<RunningJob>();
  private taking = true;

  constructor(
    private readonly boss: PgBoss,
    private readonly log: FastifyBaseLogger,
    private readonly metrics: Metrics | undefined,
  ) {}

  has(queue: string): boolean {
    return this.loops.has(queue);
  }

  start(queue: string, batchSize: number, pollingMs: number, process: JobProcessor): void {
    const loop: Loop = { idle: new IdleWait(), woken: false, done: Promise.resolve() };
    this.loops.set(queue, loop);
    loop.done = this.fetchLoop(queue, process, loop, batchSize, pollingMs);
  }

  /** Ends the queue's idle wait now (a job was enqueued, or a dead letter made). */
  wake(queue: string): void {
    const loop = this.loops.get(queue);
    if (!loop) return;
    loop.woken = true;
    loop.idle.wake();
  }

  /** No loop takes a job from now on; running ones go on. */
  stopTaking(): void {
    this.taking = false;
    for (const { idle } of this.loops.values()) idle.wake();
  }

  /**
   * Stops taking jobs and waits for every loop and its running jobs, up to `timeoutMs`. Jobs still running then are
   * abandoned: their handlers are told (`signal`), and pg-boss retries them once they expire.
   */
  async drain(timeoutMs: number): Promise<void> {
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
        job.abandoned = true;
        job.controller.abort();
      }
      this.log.warn({ jobs: left.map(({ queue, id }) => ({ queue, id })) }, `${left.length} running jobs left to be retried after the stop`);
    }
    this.loops.clear();
  }

  /**
   * Keeps up to `batchSize` jobs of the queue running: takes as many as there are free slots, and takes more as jobs
   * end, so one slow job (a provider call waiting out its time-out) never holds up the others. While jobs run, it
   * takes more once half of the slots are free rather than at every job's end: under a backlog each fetch (one
   * locking statement of pg-boss's) then brings several jobs instead of one. An idle loop waits for a wake-up, a job
   * ending, or its polling interval. A job's end wakes the loop only when more may be waiting: its last fetch took all
   * it asked for, or a wake-up came since; otherwise the queue was drained and the next job's enqueue wakes it (at a
   * low rate this saves a fetch that finds nothing after every job). Ends when the engine stops taking jobs and the
   * running ones have ended.
   */
  private async fetchLoop(queue: string, process: JobProcessor, loop: Loop, batchSize: number, pollingMs: number): Promise<void> {
    const { idle } = loop;
    const inFlight = new Set<Promise<void>>();
    const refillAt = Math.ceil(batchSize / 2);
    let tookAllAsked = false;
    while (this.taking) {
      const free = batchSize - inFlight.size;
      let jobs: PgBoss.JobWithMetadata<unknown>[] = [];
      if (free > 0 && (inFlight.size === 0 || free >= refillAt)) {
        loop.woken = false;
        try {
          jobs = await this.boss.fetch<unknown>(queue, { batchSize: free, includeMetadata: true });
        } catch (error) {
          this.log.error({ err: error, queue }, 'fetching jobs failed');
        }
        tookAllAsked = jobs.length === free;
      }
      for (const job of jobs) {
        const running: Promise<void> = this.track(queue, job, process).finally(() => {
          inFlight.delete(running);
          if (tookAllAsked || loop.woken) idle.wake();
        });
        inFlight.add(running);
      }
      // Every slot busy, or nothing waiting: the next look is when a job ends, a wake-up comes, or the interval ends.
      if (this.taking) await idle.wait(pollingMs);
    }
    await Promise.all(inFlight);
  }

  private async track(queue: string, job: PgBoss.JobWithMetadata<unknown>, process: JobProcessor): Promise<void> {
    const running: RunningJob = { queue, id: job.id, controller: new AbortController(), abandoned: false };
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
}
