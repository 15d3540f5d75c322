import type { FastifyBaseLogger } from 'fastify';
import type PgBoss from 'pg-boss';
import type { Metrics } from '../observability/metrics';
import { originIn } from '../observability/origin';
import { inConsumerSpan } from '../observability/trace-context';
import { BOSS_SCHEMA } from './queue-setup';
import type { Execute } from './work-ledger';

/**
 * Where an idle loop waits: until a wake-up arrives (a job enqueued or due, a job ending, the engine stopping), or
 * `ms` when given. A wake-up that arrives while the loop is busy is remembered, so the next wait ends at once and no
 * job waits for the next look.
 */
class IdleWait {
  private pending = false;
  private release: (() => void) | undefined;

  wake(): void {
    if (this.release) this.release();
    else this.pending = true;
  }

  wait(ms?: number): Promise<void> {
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
      const timer = ms === undefined ? undefined : setTimeout(done, ms);
      this.release = done;
    });
  }
}

/** One queue's loop: where it waits, whether a wake-up came since its last fetch, and its end. */
interface Loop {
  idle: IdleWait;
  /** Set by a wake-up (a job enqueued, a dead letter made), cleared by the next fetch. */
  woken: boolean;
  /** Waiting for a wake-up: the due jobs' look (`lookForDueJobs`) covers it. */
  waiting: boolean;
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
 *
 * An idle loop does not poll its queue. Wake-ups come from the enqueues (in any process, through the event bus) and
 * from the jobs' ends; what no wake-up announces (a job put off to later, a retry's backoff ending, a wake-up lost
 * while the event bus was down) is found by one look every `pollingMs` at every idle loop's queue at once
 * (`lookForDueJobs`): one statement per interval for the process, not one per queue.
 */
export class FetchLoops {
  private readonly loops = new Map<string, Loop>();
  private readonly running = new Set<RunningJob>();
  private taking = true;
  private readonly lookWait = new IdleWait();
  private looking: Promise<void> | undefined;

  constructor(
    private readonly boss: PgBoss,
    private readonly log: FastifyBaseLogger,
    private readonly metrics: Metrics | undefined,
    /** Runs the due jobs' look (one statement, autocommit). */
    private readonly run: Execute,
    private readonly pollingMs: number,
  ) {}

  has(queue: string): boolean {
    return this.loops.has(queue);
  }

  start(queue: string, batchSize: number, process: JobProcessor): void {
    const loop: Loop = { idle: new IdleWait(), woken: false, waiting: false, done: Promise.resolve() };
    this.loops.set(queue, loop);
    loop.done = this.fetchLoop(queue, process, loop, batchSize);
    this.looking ??= this.lookForDueJobs();
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
    this.lookWait.wake();
  }

  /**
   * Stops taking jobs and waits for every loop and its running jobs, up to `timeoutMs`. Jobs still running then are
   * abandoned: their handlers are told (`signal`), and pg-boss retries them once they expire.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.stopTaking();
    const loopsDone = Promise.all([...[...this.loops.values()].map((loop) => loop.done), this.looking]);
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
   * Every `pollingMs`, one statement asks which of the idle loops' queues have a job due (pg-boss's own condition for
   * a fetch), and wakes those loops. A failed look is logged and the next one tried: the wake-ups go on meanwhile.
   */
  private async lookForDueJobs(): Promise<void> {
    while (this.taking) {
      await this.lookWait.wait(this.pollingMs);
      const idle = [...this.loops].filter(([, loop]) => loop.waiting).map(([queue]) => queue);
      if (!this.taking || idle.length === 0) continue;
      try {
        for (const queue of await queuesWithDueJobs(this.run, idle)) this.wake(queue);
      } catch (error) {
        this.log.error({ err: error }, 'looking for due jobs failed');
      }
    }
  }

  /**
   * Keeps up to `batchSize` jobs of the queue running: takes as many as there are free slots, and takes more as jobs
   * end, so one slow job (a provider call waiting out its time-out) never holds up the others. While jobs run, it
   * takes more once half of the slots are free rather than at every job's end: under a backlog each fetch (one
   * locking statement of pg-boss's) then brings several jobs instead of one. An idle loop waits for a wake-up: a job
   * enqueued or found due (`lookForDueJobs`), or a job ending. A job's end wakes the loop only when more may be waiting: its last fetch took all
   * it asked for, or a wake-up came since; otherwise the queue was drained and the next job's enqueue wakes it (at a
   * low rate this saves a fetch that finds nothing after every job). Ends when the engine stops taking jobs and the
   * running ones have ended.
   */
  private async fetchLoop(queue: string, process: JobProcessor, loop: Loop, batchSize: number): Promise<void> {
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
      // Every slot busy, or nothing waiting: the next look is when a job ends or a wake-up comes.
      if (this.taking) {
        loop.waiting = true;
        await idle.wait();
        loop.waiting = false;
      }
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

/** Those of `queues` with a job due now, as pg-boss's fetch would take it (not yet active, its start time passed). */
async function queuesWithDueJobs(run: Execute, queues: readonly string[]): Promise<string[]> {
  const rows = await run(
    `select q.name from unnest(?::text[]) as q(name)
      where exists (select 1 from ${BOSS_SCHEMA}.job j where j.name = q.name and j.state < 'active' and j.start_after < now())`,
    [[...queues]],
  );
  return rows.map((row) => row.name as string);
}
