import type { FastifyBaseLogger } from 'fastify';
import type { FollowingWrite, WriteAlong } from '../db/change-statement';
import type { ChangeNews } from '../events/change-news';
import type { JobFailure } from './failure-policy';
import type { QueueDefinition } from './queue';

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
  /**
   * This job's completion as writes for the statement of its record's final change (src/db/change-statement.ts):
   * the job completes and its unit of work SUCCEEDS in that statement, and the engine then completes nothing more.
   * Unused, or in a change that did not happen, the engine completes the job when `run` returns, as always. The
   * news of its unit of work joins `news`, the statement's.
   */
  completion(news: ChangeNews): FollowingWrite[];
  /**
   * For a worker that `marksRunning`: its unit of work's RUNNING, as a write for the statement of its first read
   * (src/db/change-statement.ts `readWith`). Empty for a job without a unit of work.
   */
  running(): WriteAlong[];
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
  /**
   * True when `run` begins with one read that carries `JobContext.running()`: the engine then writes no RUNNING of
   * its own (one statement fewer per job, docs/write-path.md).
   */
  marksRunning?: boolean;
  /** Jobs taken (and run together) per fetch. */
  batchSize?: number;
}

/** Declares a worker with its payload type inferred from the queue. */
export function defineWorker<P extends object>(worker: Worker<P>): Worker<P> {
  return worker;
}

/** A worker of some queue: what a module's list of workers holds. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each worker is checked against its own queue by defineWorker
export type AnyWorker = Worker<any>;
