import type { FastifyBaseLogger } from 'fastify';
import type { EventBus } from '../events/event-bus';
import { recordChange, recordProgress, type Execute, type WorkChange } from './work-ledger';

/**
 * A running job's changes of its unit of work, recorded and announced. They never fail the job: the ledger is a
 * view, and a change it misses (the database away for a moment) is logged; the next change of that work writes
 * its state.
 */

export interface LedgerDeps {
  events: EventBus;
  /** Runs a statement on its own (autocommit). */
  ledger: Execute;
}

export async function noteWork(deps: LedgerDeps, workId: string | undefined, change: WorkChange, log: FastifyBaseLogger): Promise<void> {
  if (!workId) return;
  try {
    const work = await recordChange(deps.ledger, workId, change);
    if (work) await deps.events.announce('async-work.updated', work);
  } catch (error) {
    log.warn({ err: error, workId, status: change.status }, 'could not record a change of the job\'s unit of work');
  }
}

export async function noteProgress(deps: LedgerDeps, workId: string | undefined, fraction: number, log: FastifyBaseLogger): Promise<void> {
  if (!workId) return;
  try {
    const work = await recordProgress(deps.ledger, workId, fraction);
    if (work) await deps.events.announce('async-work.updated', work);
  } catch (error) {
    log.warn({ err: error, workId, progress: fraction }, "could not record the progress of the job's unit of work");
  }
}
