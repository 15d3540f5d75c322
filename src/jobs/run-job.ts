import type { FastifyBaseLogger } from 'fastify';
import type PgBoss from 'pg-boss';
import type { Metrics } from '../observability/metrics';
import { originIn, runCarrying } from '../observability/origin';
import { failActiveSpan } from '../observability/trace-context';
import { completionWrites } from './completion';
import { BOSS_SCHEMA } from './queue-setup';
import type { ProviderPauses } from './provider-pauses';
import { ProviderError } from '../providers/shared/provider-error';
import { judgeFailure } from './failure-policy';
import type { FetchLoops, RunningJob } from './fetch-loop';
import { noteProgress, noteWork, type LedgerDeps } from './ledger-notes';
import { deadLetterQueueOf } from './queue';
import type { JobContext, Worker } from './worker';
import { AsyncWorkStatus, workChangeAlong, workIdIn, type AsyncWorkSnapshot } from './work-ledger';
import { ChangeNews } from '../events/change-news';
import type { SlotStore } from '../providers/shared/provider-budget';

export interface JobRunDeps extends LedgerDeps {
  boss: PgBoss;
  loops: FetchLoops;
  log: FastifyBaseLogger;
  metrics: Metrics | undefined;
  /** How long jobs may wait for their providers (JOB_MAX_WAIT_SECONDS), and for how long when a 429 names no time. */
  waits: { maxWaitSeconds: number; defaultSeconds: number };
  /** Providers paused by a 429 that named their project's quota, as every process hears of them. */
  pauses: ProviderPauses;
  /** Where a pause is kept for the processes that start during it, and for every budget's next slots. */
  slots: Pick<SlotStore, 'pause'>;
}

export function jobContext(deps: LedgerDeps, job: PgBoss.JobWithMetadata<unknown>, running: RunningJob, log: FastifyBaseLogger): JobContext {
  const workId = workIdIn(job.data);
  return {
    id: job.id,
    retryCount: job.retryCount,
    retryLimit: job.retryLimit,
    isLastAttempt: job.retryCount >= job.retryLimit,
    signal: running.controller.signal,
    log,
    progress: (fraction) => noteProgress(deps, workId, fraction, log),
    completion: (news) => completionWrites(running.queue, job.id, workId, news, () => (running.completed = true)),
    running: () => {
      if (!workId) return [];
      // The statement of the read sends the news of its RUNNING (src/events/change-news.ts).
      const news = new ChangeNews(deps.events);
      let work: AsyncWorkSnapshot | undefined;
      const along = workChangeAlong(workId, { status: AsyncWorkStatus.RUNNING }, (recorded) => {
        work = recorded;
        // Where the bus announces after the statement: while the job goes on (never throws; it logs what it loses).
        void news.announced();
      });
      news.addRows('async-work.updated', along, () => work);
      return [along, ...news.writes()];
    },
  };
}

/** The budget's priority of a bulk queue's calls (an import's, a scan's): after a person's (0), before a campaign's turns. */
const BULK_CALL_PRIORITY = -1;

/**
 * Runs one attempt of a job: checks its payload, runs the worker, and applies the one failure policy
 * (src/jobs/failure-policy.ts) to what it threw: the record's failure, the job's completion or failure in pg-boss,
 * and its unit of work's status.
 */
export async function runJob<P extends object>(deps: JobRunDeps, worker: Worker<P>, job: PgBoss.JobWithMetadata<unknown>, running: RunningJob): Promise<void> {
  const queue = worker.queue.name;
  const origin = originIn(job.data);
  const log = deps.log.child({ queue, jobId: job.id, retryCount: job.retryCount, ...(origin ? { reqId: origin.requestId } : {}) });
  const context = jobContext(deps, job, running, log);
  // Payloads come back from the database as `unknown`: checked once here, typed from here on. A malformed one
  // can never run: it goes straight to the dead letters (nothing to record: its record cannot be named).
  if (!worker.queue.isPayload(job.data)) {
    log.error({ data: job.data }, 'job with a malformed payload');
    await settle(deps, queue, job.id, 'fail', 'malformed payload', log, { lastAttempt: true });
    return;
  }
  const payload = job.data;
  const workId = workIdIn(job.data);
  // Its provider is paused: back in the queue until then, before anything is noted or called (no attempt).
  const provider = worker.queue.provider;
  const pausedSeconds = provider ? Math.ceil(deps.pauses.remainingMs(provider) / 1000) : 0;
  if (pausedSeconds > 0 && waitedSecondsOf(job.data) + pausedSeconds <= deps.waits.maxWaitSeconds) {
    await waitForProvider(deps, queue, job.id, pausedSeconds, log);
    // Said once it is back in its queue: the line tells what was done.
    log.info({ provider, waitSeconds: pausedSeconds }, 'job waits: its provider is paused, no call made');
    deps.metrics?.countJob(queue, 'waited');
    return;
  }
  if (!worker.marksRunning) await noteWork(deps, workId, { status: AsyncWorkStatus.RUNNING }, log);
  try {
    // Its provider calls wait for their budget's slots in its priority's turn (a person's work before bulk work).
    const callPriority = worker.queue.bulk ? Math.min(job.priority, BULK_CALL_PRIORITY) : job.priority;
    await runCarrying(origin ? { origin, callPriority } : { callPriority }, () => worker.run(payload, context));
  } catch (error) {
    if (running.abandoned) {
      log.debug({ err: error }, 'abandoned job ended after the stop');
      return;
    }
    const judgement = judgeFailure(error, context.isLastAttempt, { ...deps.waits, waitedSeconds: waitedSecondsOf(job.data) });
    const { failure } = judgement;
    if (judgement.settle === 'wait') {
      // Waiting is not failing (docs/jobs.md): taken again later with its attempts as they were; nothing recorded.
      if (error instanceof ProviderError && error.quotaScope === 'project') {
        // The limit covers every call: no process calls this provider before then (announce never throws).
        const until = Date.now() + judgement.waitSeconds! * 1000;
        deps.pauses.note(error.provider, until);
        // Kept for the processes that start before it ends, and for every budget's next slots: before it is told, so a
        // budget that gives up its slots on hearing it reserves new ones after it.
        await deps.slots.pause(error.provider, judgement.waitSeconds! * 1000).catch((recordError: unknown) =>
          log.warn({ err: recordError, provider: error.provider }, 'could not keep the provider pause; processes running now still hear of it'),
        );
        void deps.events.announce('provider.paused', { provider: error.provider, until });
        deps.metrics?.providerPauses.inc({ provider: error.provider });
      }
      await waitForProvider(deps, queue, job.id, judgement.waitSeconds!, log);
      log.info({ reason: failure.reason, status: failure.status, waitSeconds: judgement.waitSeconds }, 'job waits for its provider, no attempt spent');
      deps.metrics?.countJob(queue, 'waited');
      await noteWork(deps, workId, { status: AsyncWorkStatus.QUEUED, waiting: true }, log);
      return;
    }
    failActiveSpan(error);
    const what = failure.final ? 'final' : 'will be retried';
    if (judgement.refusal && origin?.refusalExpected) {
      // What the work was made for (the demo's deliberate refusals): an outcome, not a problem; no stack to read.
      log.info({ reason: failure.reason, status: failure.status }, `job refused at the provider, as its origin expected: ${failure.message}`);
    } else if (judgement.fromProvider) log.warn({ err: error, reason: failure.reason, status: failure.status }, `job failed at the provider (${what})`);
    else log.error({ err: error }, `job failed unexpectedly (${what})`);
    let outcome = judgement.settle;
    try {
      await worker.recordFailure?.(payload, failure, context);
    } catch (recordError) {
      // The record could not take it (the database may be down): the job is retried, or dead-lettered, whose
      // settling records the failure again.
      log.error({ err: recordError }, 'could not record the job failure on its record');
      outcome = 'fail';
    }
    await settle(deps, queue, job.id, outcome, failure.message, log, { lastAttempt: context.isLastAttempt });
    deps.metrics?.countJob(queue, failure.final || context.isLastAttempt ? 'failed' : 'retried');
    // A last attempt that is not final goes to the dead letters, whose settling records DEAD_LETTERED.
    await noteWork(deps, workId, { status: failure.final ? AsyncWorkStatus.FAILED : AsyncWorkStatus.RETRYING, error: failure.message }, log);
    return;
  }
  if (running.abandoned) return;
  // Its record's change completed it, with the news of its unit of work (src/jobs/completion.ts): nothing is left.
  if (!running.completed) {
    await settle(deps, queue, job.id, 'complete', undefined, log, { lastAttempt: context.isLastAttempt });
    await noteWork(deps, workId, { status: AsyncWorkStatus.SUCCEEDED }, log);
  }
  deps.metrics?.countJob(queue, 'completed');
  log.debug('job done');
}

/** How long a job has waited for its provider, since it first did (pg-boss's data keeps when). */
function waitedSecondsOf(data: unknown): number {
  const since = (data as { waitingSince?: unknown } | null)?.waitingSince;
  const at = typeof since === 'string' ? Date.parse(since) : Number.NaN;
  return Number.isNaN(at) ? 0 : Math.max(0, (Date.now() - at) / 1000);
}

/**
 * Puts an active job back in its queue, due in `seconds`, as it was before it was taken: its retry count untouched
 * (pg-boss has no call for that; its documentation allows direct writes of its job table). Its data keeps when it
 * first waited. A job that cannot be put back stays active and is taken again when it expires (an attempt spent).
 */
async function waitForProvider(deps: JobRunDeps, queue: string, jobId: string, seconds: number, log: FastifyBaseLogger): Promise<void> {
  try {
    await deps.ledger(
      `update ${BOSS_SCHEMA}.job set state = 'created', started_on = null, start_after = now() + make_interval(secs => ?),
         data = case when data->'waitingSince' is null then coalesce(data, '{}'::jsonb) || jsonb_build_object('waitingSince', now()) else data end
       where name = ? and id = ?::uuid and state = 'active'`,
      [seconds, queue, jobId],
    );
  } catch (error) {
    log.error({ err: error }, 'could not put the waiting job back in its queue; it is taken again when it expires');
  }
}

/** Completes or fails a job in pg-boss; a failed last attempt wakes the queue's dead-letter taker. */
async function settle(
  deps: JobRunDeps,
  queue: string,
  jobId: string,
  outcome: 'complete' | 'fail',
  message: string | undefined,
  log: FastifyBaseLogger,
  options: { lastAttempt: boolean },
): Promise<void> {
  try {
    if (outcome === 'complete') await deps.boss.complete(queue, jobId);
    else await deps.boss.fail(queue, jobId, { message });
  } catch (error) {
    // The job stays active: pg-boss retries it when it expires (or dead-letters it when retries are used up).
    log.error({ err: error }, `could not ${outcome} the job; it is taken again when it expires`);
    return;
  }
  if (outcome === 'fail' && options.lastAttempt) deps.loops.wake(deadLetterQueueOf(queue));
}
