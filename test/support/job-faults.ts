import { Client } from 'pg';
/** A job queue's name (the modules declare them). */
type QueueName = string;
import { formOf, submit, visit } from './browser';
import { http } from './http';

/**
 * What the provider-fault tests share: the records that wait for a job, the figures of a queue's jobs, the faults a
 * sandbox is told to script, and a wait that polls without a fixed sleep.
 */

/** A record in a state that only a job of `queue` can end, while that queue holds no live job for it. */
export interface StuckRecord {
  queue: QueueName;
  table: string;
  id: string;
  state: string;
}

/**
 * Every record waiting for a job (a post SENDING, PROCESSING or SCHEDULED; a location of a connected account not yet
 * at the provider nor refused; an update job QUEUED or RUNNING; an account importing; a reply PENDING; a scan
 * queued or running; a brand PENDING) whose queue (or the queue's dead letters, which settle records) holds no
 * created, retry or active job for it: such a record would wait for ever. Should be empty at every moment.
 */
export async function stuckRecords(databaseUrl: string): Promise<StuckRecord[]> {
  const live = (queue: string, key: string, id: string) => `not exists (
    select 1 from pgboss.job j
    where j.name in ('${queue}', '${queue}-dead') and j.state in ('created', 'retry', 'active') and j.data->>'${key}' = ${id}::text
  )`;
  const sql = `
    select 'post-publish' as queue, 'post' as "table", p.id::text, p.state from post p
      where p.state = 'SENDING' and p.pending_action is distinct from 'delete' and ${live('post-publish', 'postId', 'p.id')}
    union all
    select 'post-delete', 'post', p.id::text, p.state || '/delete' from post p
      where p.pending_action = 'delete' and ${live('post-delete', 'postId', 'p.id')}
    union all
    select 'post-check', 'post', p.id::text, p.state from post p
      where p.state in ('PROCESSING', 'SCHEDULED') and ${live('post-check', 'postId', 'p.id')}
    union all
    select 'location-publish', 'location', l.id::text, 'not connected' from location l join account a on a.id = l.account_id
      where not l.connected and l.provider_error is null and a.alpha_account_id is not null and ${live('location-publish', 'locationId', 'l.id')}
    union all
    select 'location-update', 'location_update_job', u.id::text, u.status from location_update_job u
      where u.status in ('QUEUED', 'RUNNING') and ${live('location-update', 'jobId', 'u.id')}
    union all
    select 'account-import', 'account', a.id::text, a.sync_status from account a
      where a.sync_status in ('QUEUED', 'RUNNING') and ${live('account-import', 'accountId', 'a.id')}
    union all
    select 'review-reply-check', 'review', r.id::text, r.reply_state from review r
      where r.reply_state = 'PENDING' and r.deleted_at is null
        and ${live('review-reply-send', 'reviewId', 'r.id')} and ${live('review-reply-check', 'reviewId', 'r.id')}
    union all
    select 'competitor-scan', 'competitor_scan', s.id::text, s.status from competitor_scan s
      where s.status in ('queued', 'running') and ${live('competitor-scan', 'scanId', 's.id')}
    union all
    select 'beta-brand-sync', 'beta_brand', b.id::text, b.beta_sync_status from beta_brand b
      where b.beta_sync_status = 'PENDING' and ${live('beta-brand-sync', 'brandId', 'b.id')}
  `;
  return query(databaseUrl, sql) as Promise<StuckRecord[]>;
}

/** Jobs of a queue (pg-boss's rows) and the attempts they made; dead letters of the queue apart. */
export async function jobFigures(databaseUrl: string, queue: QueueName): Promise<{ jobs: number; attempts: number; deadLetters: number }> {
  const [row] = (await query(
    databaseUrl,
    `select
       count(*) filter (where name = $1)::int as jobs,
       coalesce(sum(retry_count + case when state in ('created', 'retry') then 0 else 1 end) filter (where name = $1), 0)::int as attempts,
       count(*) filter (where name = $1 || '-dead')::int as "deadLetters"
     from pgboss.job where name in ($1, $1 || '-dead')`,
    [queue],
  )) as { jobs: number; attempts: number; deadLetters: number }[];
  return row!;
}

export async function query(databaseUrl: string, sql: string, values: unknown[] = []): Promise<unknown[]> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** The faults a sandbox scripts: 429 (with Retry-After), 5xx, a dropped connection, a call slower than the client's time-out, a refusal. */
export type FaultKind = '429' | '5xx' | 'drop' | 'slow' | '4xx';

export const RETRYABLE_FAULTS: FaultKind[] = ['429', '5xx', 'drop', 'slow'];
export const ALL_FAULTS: FaultKind[] = [...RETRYABLE_FAULTS, '4xx'];

/** The body of POST /_control/fail for `count` calls of this kind, aimed by `aim`; `slowMs` holds a slow call. */
export function faultRule(
  kind: FaultKind,
  count: number,
  aim: { method?: string; pathContains?: string; bodyContains?: string },
  slowMs: number,
): { count: number; status?: number; delayMs?: number; method?: string; pathContains?: string; bodyContains?: string } {
  const fault = { '429': { status: 429 }, '5xx': { status: 503 }, drop: { status: 0 }, slow: { delayMs: slowMs }, '4xx': { status: 400 } }[kind];
  return { count, ...fault, ...aim };
}

/**
 * What a record's failure text must be after a final fault of this kind: the provider's own words, or the fixed
 * text of a call that got no answer. Never a transport's detail or an error of ours.
 */
export function expectedFailureText(kind: FaultKind, provider: 'alpha' | 'beta'): RegExp {
  switch (kind) {
    case 'drop':
      return new RegExp(`^The ${provider} provider could not be reached for `);
    case 'slow':
      return new RegExp(`^No answer from the ${provider} provider to .* within \\d+ ms$`);
    default:
      return /\S/;
  }
}

/** Texts that must never reach a record: a transport's detail, a stack, our generic text for a bug of ours. */
export const INTERNAL_TEXT = /ECONNRESET|UND_ERR|fetch failed|socket|TypeError|ReferenceError|\bat .*\.ts:|unexpected error occurred/i;

/** Polls `check` (every 150 ms) until it returns a value; fails after `timeoutMs` naming `what`. */
export async function until<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `; last error: ${last instanceof Error ? last.message : JSON.stringify(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

/** The beta consent as a browser goes through it, choosing `company`: the organization's connection to it. */
export async function betaConsent(baseUrl: string, token: string, company: string): Promise<void> {
  const generated = await http(baseUrl, 'POST', '/oauth/beta/generate-url', { token, body: { redirect_url: 'https://app.example/beta-return' } });
  if (generated.status !== 200) throw new Error(`beta generate-url answered ${generated.status}: ${JSON.stringify(generated.body)}`);
  const page = await visit(generated.body.url);
  const toCallback = await submit(formOf(page.body, generated.body.url), { button: ['decision', 'approve'], select: company });
  const fromCallback = await visit(toCallback.location!);
  const landed = new URL(fromCallback.location!).searchParams;
  if (landed.get('success') !== 'true' || landed.get('company_id') !== company) throw new Error(`the beta consent failed: ${fromCallback.location}`);
}
