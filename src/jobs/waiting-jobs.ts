import type { QueueDefinition } from './queue';
import { BOSS_SCHEMA } from './queue-setup';
import type { Execute } from './work-ledger';

/**
 * Jobs waiting for their provider (docs/jobs.md, "Waiting is not failing"): the pg-boss rows `waitForProvider`
 * (src/jobs/run-job.ts) put back to `created`, due later, with when they first waited kept in their data as
 * `waitingSince`. Once taken again a job is `active` (then `completed`, `retry`, …): it no longer waits. pg-boss keeps
 * one partition per queue, with an index on (name, start_after) of the jobs not yet taken: a read of a few queues'
 * waiting jobs touches those rows only.
 */

/** What waits in one queue: how many jobs, and when the first of them is due. */
export interface QueueWaiting {
  queue: string;
  count: number;
  firstDueAt: Date | null;
}

/** Whose unit of work (async_work, src/jobs/work-ledger.ts) a waiting job must be to be counted. */
export interface WorkOwnerFilter {
  organization: string;
  /** An account token's: its own account's work only. */
  account?: string;
}

/**
 * The jobs of `queues` waiting for their provider, per queue with any, in one statement. With `owner`, only the jobs
 * whose unit of work is that organization's (and account's): a job without one (none is recorded for it) is nobody's.
 */
export async function waitingJobsByQueue(run: Execute, queues: readonly string[], owner?: WorkOwnerFilter): Promise<QueueWaiting[]> {
  if (queues.length === 0) return [];
  const ownerJoin = owner
    ? `join async_work w on w.id = (j.data->>'workId')::uuid and w.organization_id = ? ${owner.account ? 'and w.account_id = ?' : ''}`
    : '';
  const ownerValues = owner ? [owner.organization, ...(owner.account ? [owner.account] : [])] : [];
  const rows = await run(
    `select j.name as queue, count(*)::int as count, min(j.start_after) as first_due_at
       from ${BOSS_SCHEMA}.job j ${ownerJoin}
      where j.name = any(?::text[]) and j.state = 'created' and j.data->'waitingSince' is not null
      group by j.name`,
    [...ownerValues, queues],
  );
  return rows.map((row) => ({
    queue: row.queue as string,
    count: Number(row.count),
    firstDueAt: row.first_due_at === null || row.first_due_at === undefined ? null : new Date(row.first_due_at as string | Date),
  }));
}

/** Every queue that calls a provider with how many of its jobs wait now, 0 included (a gauge's values). */
export async function countWaitingJobs(run: Execute, queues: readonly QueueDefinition[]): Promise<{ queue: string; provider: string; count: number }[]> {
  const calling = queues.filter((queue) => queue.provider);
  const waiting = new Map((await waitingJobsByQueue(run, calling.map((queue) => queue.name))).map((row) => [row.queue, row.count]));
  return calling.map((queue) => ({ queue: queue.name, provider: queue.provider!, count: waiting.get(queue.name) ?? 0 }));
}
