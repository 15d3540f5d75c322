import type { FollowingWrite } from '../db/change-statement';
import type { ChangeNews } from '../events/change-news';
import { BOSS_SCHEMA } from './queue-setup';
import { AsyncWorkStatus, workChangeWrite, type AsyncWorkSnapshot } from './work-ledger';

/**
 * The completion of job `jobId` as writes that go in the statement of its record's final change
 * (src/db/change-statement.ts): pg-boss's job row completed as pg-boss's own `complete()` does (an active job only;
 * pg-boss documents direct writes of its job table), and its unit of work SUCCEEDED, whose news joins the statement's
 * `news`. `completed` is called once that statement changed its row.
 */
export function completionWrites(
  queue: string,
  jobId: string,
  workId: string | undefined,
  news: ChangeNews,
  completed: () => void,
): FollowingWrite[] {
  const job = {
    sql: `update ${BOSS_SCHEMA}.job set completed_on = now(), state = 'completed'
      where name = ? and id = ?::uuid and state = 'active' and exists (select 1 from changed)`,
    values: [queue, jobId],
  };
  if (!workId) return [{ ...job, sql: `${job.sql} returning id`, returned: completed }];
  let succeeded: AsyncWorkSnapshot | undefined;
  const work = workChangeWrite(workId, { status: AsyncWorkStatus.SUCCEEDED }, (recorded) => {
    succeeded = recorded;
    completed();
  });
  news.addRows('async-work.updated', work, () => succeeded);
  return [job, work];
}
