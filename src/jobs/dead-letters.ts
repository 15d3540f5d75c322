import type PgBoss from 'pg-boss';
import { failActiveSpan } from '../observability/trace-context';
import { RETRIES_EXHAUSTED } from './failure-policy';
import type { RunningJob } from './fetch-loop';
import { noteWork } from './ledger-notes';
import { deadLetterQueueOf } from './queue';
import { jobContext, type JobRunDeps } from './run-job';
import type { Worker } from './worker';
import { AsyncWorkStatus, workIdIn } from './work-ledger';

/**
 * Starts the taker of a worker's dead letters. They arrive when a last attempt fails here (which wakes this loop)
 * or when pg-boss's maintenance fails an expired job: the idle loops' look for due jobs finds those.
 */
export function takeDeadLetters<P extends object>(deps: JobRunDeps, worker: Worker<P>): void {
  deps.loops.start(deadLetterQueueOf(worker.queue.name), 8, (job, running) => settleDeadLetter(deps, worker, job, running));
}

/**
 * A dead-lettered job: its record is settled as finally failed (docs/jobs.md; a record whose last attempt recorded
 * its own failure is terminal already, and stays as it is). Failing here is retried like any job.
 */
async function settleDeadLetter<P extends object>(deps: JobRunDeps, worker: Worker<P>, job: PgBoss.JobWithMetadata<unknown>, running: RunningJob): Promise<void> {
  const queue = deadLetterQueueOf(worker.queue.name);
  const log = deps.log.child({ queue, jobId: job.id, retryCount: job.retryCount });
  try {
    if (worker.queue.isPayload(job.data)) {
      await worker.recordFailure?.(job.data, RETRIES_EXHAUSTED, jobContext(deps, job, running, log));
      log.warn({ data: job.data }, 'a job ran out of retries; its record is settled as failed');
      deps.metrics?.countJob(worker.queue.name, 'dead_lettered');
      await noteWork(deps, workIdIn(job.data), { status: AsyncWorkStatus.DEAD_LETTERED }, log);
    } else {
      log.error({ data: job.data }, 'dead letter with a malformed payload: nothing to settle');
    }
    if (!running.abandoned) await deps.boss.complete(queue, job.id);
  } catch (error) {
    if (running.abandoned) return;
    failActiveSpan(error);
    log.error({ err: error }, 'settling a dead-lettered job failed; it is retried');
    await deps.boss.fail(queue, job.id, { message: 'settling failed' }).catch((failError: unknown) => {
      log.error({ err: failError }, 'could not record the failure; the dead letter is taken again when it expires');
    });
  }
}
