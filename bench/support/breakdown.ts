import { Client } from 'pg';

/**
 * Server-side timestamps of one phase's posts and their publish jobs, read from the database after the phase:
 * they split create-to-LIVE into its stages. All clocks are this machine's (Node's Date and PostgreSQL's now()).
 */
export interface PostTimeline {
  id: string;
  state: string;
  /** post.created_at: taken in the create transaction, after its BEGIN. */
  createdAt: number;
  /** post.updated_at: stamped just before the LIVE change commits. */
  updatedAt: number | undefined;
  /** pg-boss job.started_on: now() of the fetch that handed the job to a worker. */
  jobStartedOn: number | undefined;
  /** pg-boss job.completed_on: now() of the statement completing the worker's batch. */
  jobCompletedOn: number | undefined;
  retryCount: number;
}

const QUERY = `
  with jobs as (
    select data->>'postId' as post_id, started_on, completed_on, retry_count from pgboss.job where name = 'post-publish'
    union all
    select data->>'postId', started_on, completed_on, retry_count from pgboss.archive where name = 'post-publish'
  )
  select p.id::text as id, p.state,
         extract(epoch from p.created_at) * 1000 as created_at,
         extract(epoch from p.updated_at) * 1000 as updated_at,
         extract(epoch from j.started_on) * 1000 as started_on,
         extract(epoch from j.completed_on) * 1000 as completed_on,
         coalesce(j.retry_count, 0) as retry_count
    from post p left join jobs j on j.post_id = p.id::text
   where starts_with(p.params->>'summary', $1)`;

interface Row {
  id: string;
  state: string;
  created_at: string;
  updated_at: string | null;
  started_on: string | null;
  completed_on: string | null;
  retry_count: number;
}

const num = (value: string | null) => (value === null ? undefined : Number(value));

export async function readTimelines(databaseUrl: string, summaryPrefix: string): Promise<PostTimeline[]> {
  const client = new Client({ connectionString: databaseUrl, application_name: 'lg-bench' });
  await client.connect();
  try {
    const { rows } = await client.query<Row>(QUERY, [summaryPrefix]);
    return rows.map((row) => ({
      id: row.id,
      state: row.state,
      createdAt: Number(row.created_at),
      updatedAt: num(row.updated_at),
      jobStartedOn: num(row.started_on),
      jobCompletedOn: num(row.completed_on),
      retryCount: Number(row.retry_count),
    }));
  } finally {
    await client.end();
  }
}

/** How the publish worker fetched: one fetch hands out a batch, all with the same started_on. */
export interface FetchPattern {
  fetches: number;
  meanBatch: number;
  maxBatch: number;
  /** Gaps between consecutive fetches, ms. */
  gaps: number[];
  /** Gaps over 1 s: the worker slept its polling interval although jobs were waiting (a missed wake-up). */
  longGaps: number;
}

export function fetchPattern(timelines: PostTimeline[]): FetchPattern {
  const batches = new Map<number, number>();
  for (const timeline of timelines) {
    if (timeline.jobStartedOn !== undefined) batches.set(timeline.jobStartedOn, (batches.get(timeline.jobStartedOn) ?? 0) + 1);
  }
  const starts = [...batches.keys()].sort((a, b) => a - b);
  const gaps = starts.slice(1).map((start, index) => start - starts[index]!);
  const sizes = [...batches.values()];
  return {
    fetches: starts.length,
    meanBatch: sizes.length > 0 ? sizes.reduce((a, b) => a + b, 0) / sizes.length : 0,
    maxBatch: sizes.length > 0 ? Math.max(...sizes) : 0,
    gaps,
    longGaps: gaps.filter((gap) => gap > 1000).length,
  };
}

/** Publish jobs not finished yet: a scenario starts only once the previous one's backlog is gone. */
export async function pendingPublishJobs(databaseUrl: string): Promise<number> {
  const client = new Client({ connectionString: databaseUrl, application_name: 'lg-bench' });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `select count(*)::int as n from pgboss.job where name = 'post-publish' and state in ('created', 'retry', 'active')`,
    );
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}
