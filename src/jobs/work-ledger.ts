import { newId } from '../shared/ids';
import type { QueueName, QueuePayloads } from './queues';

/**
 * The ledger of asynchronous work (docs/async-work.md): one `async_work` row per unit of work, written by the job
 * engine as the work's job is enqueued (in the caller's transaction), taken, retried, finished or dead-lettered.
 * The engine announces each change (`async-work.updated`); src/async-work/ reads and retries.
 */

export enum AsyncWorkKind {
  POST_PUBLISH = 'POST_PUBLISH',
  POST_CHECK = 'POST_CHECK',
  POST_DELETE = 'POST_DELETE',
  LOCATION_PUBLISH = 'LOCATION_PUBLISH',
  LOCATION_UPDATE = 'LOCATION_UPDATE',
  ACCOUNT_IMPORT = 'ACCOUNT_IMPORT',
  COMPETITOR_SCAN = 'COMPETITOR_SCAN',
  BETA_BRAND_SYNC = 'BETA_BRAND_SYNC',
  REVIEW_REPLY_SEND = 'REVIEW_REPLY_SEND',
  REVIEW_REPLY_CHECK = 'REVIEW_REPLY_CHECK',
  CITATIONS_DISABLE = 'CITATIONS_DISABLE',
}

/** SUCCEEDED, FAILED and DEAD_LETTERED are final; a retry reopens DEAD_LETTERED work. */
export enum AsyncWorkStatus {
  QUEUED = 'QUEUED',
  RUNNING = 'RUNNING',
  RETRYING = 'RETRYING',
  SUCCEEDED = 'SUCCEEDED',
  FAILED = 'FAILED',
  DEAD_LETTERED = 'DEAD_LETTERED',
}

/** The tables whose rows work is about, and how each names its organization and account. */
const OWNERS = {
  post: 'select organization_id, account_id from "post" where id = ?',
  // A location names its organization through its account.
  location: 'select a.organization_id, l.account_id from "location" l join "account" a on a.id = l.account_id where l.id = ?',
  location_update_job: 'select organization_id, account_id from "location_update_job" where id = ?',
  account: 'select organization_id, id as account_id from "account" where id = ?',
  competitor_scan: 'select organization_id, account_id from "competitor_scan" where id = ?',
  beta_brand: 'select organization_id, null::uuid as account_id from "beta_brand" where id = ?',
  review: 'select organization_id, account_id from "review" where id = ?',
} as const;

type Owner = keyof typeof OWNERS;

/** Each queue's kind of work, the record its payload names, and that record's table. */
const WORK_OF_QUEUE: { [Q in QueueName]: { kind: AsyncWorkKind; subject: (payload: QueuePayloads[Q]) => string; owner: Owner } } = {
  'post-publish': { kind: AsyncWorkKind.POST_PUBLISH, subject: (p) => p.postId, owner: 'post' },
  'post-check': { kind: AsyncWorkKind.POST_CHECK, subject: (p) => p.postId, owner: 'post' },
  'post-delete': { kind: AsyncWorkKind.POST_DELETE, subject: (p) => p.postId, owner: 'post' },
  'location-publish': { kind: AsyncWorkKind.LOCATION_PUBLISH, subject: (p) => p.locationId, owner: 'location' },
  'location-update': { kind: AsyncWorkKind.LOCATION_UPDATE, subject: (p) => p.jobId, owner: 'location_update_job' },
  'account-import': { kind: AsyncWorkKind.ACCOUNT_IMPORT, subject: (p) => p.accountId, owner: 'account' },
  'competitor-scan': { kind: AsyncWorkKind.COMPETITOR_SCAN, subject: (p) => p.scanId, owner: 'competitor_scan' },
  'beta-brand-sync': { kind: AsyncWorkKind.BETA_BRAND_SYNC, subject: (p) => p.brandId, owner: 'beta_brand' },
  'review-reply-send': { kind: AsyncWorkKind.REVIEW_REPLY_SEND, subject: (p) => p.reviewId, owner: 'review' },
  'review-reply-check': { kind: AsyncWorkKind.REVIEW_REPLY_CHECK, subject: (p) => p.reviewId, owner: 'review' },
};

/** A row as an event carries it and GraphQL shows it (dates as ISO text: it crosses processes as JSON). */
export interface AsyncWorkSnapshot {
  id: string;
  organizationId: string;
  accountId: string | null;
  kind: AsyncWorkKind;
  status: AsyncWorkStatus;
  subjectId: string;
  attempts: number;
  maxAttempts: number;
  error: string | null;
  progress: number | null;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  updatedAt: string;
  version: number;
}

/** Runs one statement (in a transaction, or on its own) and gives its rows. */
export type Execute = (sql: string, values: unknown[]) => Promise<Record<string, unknown>[]>;

/** Error texts are documented texts, but bounded anyway: a snapshot must fit an event (8000 bytes). */
const MAX_ERROR_CHARS = 1000;

const RETURNING = `returning id, organization_id, account_id, kind, status, subject_id, attempts, max_attempts, error, progress,
  created_at, started_at, ended_at, updated_at, version`;

const iso = (value: unknown): string | null => (value === null || value === undefined ? null : new Date(value as string | Date).toISOString());

function snapshotOf(row: Record<string, unknown>): AsyncWorkSnapshot {
  return {
    id: row.id as string,
    organizationId: row.organization_id as string,
    accountId: (row.account_id as string | null) ?? null,
    kind: row.kind as AsyncWorkKind,
    status: row.status as AsyncWorkStatus,
    subjectId: row.subject_id as string,
    attempts: Number(row.attempts),
    maxAttempts: Number(row.max_attempts),
    error: (row.error as string | null) ?? null,
    progress: row.progress === null || row.progress === undefined ? null : Number(row.progress),
    createdAt: iso(row.created_at)!,
    startedAt: iso(row.started_at),
    endedAt: iso(row.ended_at),
    updatedAt: iso(row.updated_at)!,
    version: Number(row.version),
  };
}

/**
 * A new unit of work for a job about to be sent: its row, QUEUED, in the caller's transaction (`execute`), owned by
 * the organization and account of the record it is about. Undefined when that record is gone (nothing to show).
 */
export async function recordQueued<Q extends QueueName>(execute: Execute, queue: Q, payload: QueuePayloads[Q], maxAttempts: number): Promise<AsyncWorkSnapshot | undefined> {
  const work = WORK_OF_QUEUE[queue];
  const subjectId = work.subject(payload);
  const [owner] = await execute(OWNERS[work.owner], [subjectId]);
  if (!owner) return undefined;
  const [row] = await execute(
    `insert into async_work (id, organization_id, account_id, kind, status, subject_id, queue, payload, attempts, max_attempts, created_at, updated_at, version)
     values (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, now(), now(), 1) ${RETURNING}`,
    [newId(), owner.organization_id, owner.account_id ?? null, work.kind, AsyncWorkStatus.QUEUED, subjectId, queue, JSON.stringify(payload), maxAttempts],
  );
  return snapshotOf(row!);
}

/** A recorded change of a unit of work. */
export type WorkChange =
  | { status: AsyncWorkStatus.RUNNING }
  | { status: AsyncWorkStatus.SUCCEEDED }
  | { status: AsyncWorkStatus.RETRYING | AsyncWorkStatus.FAILED; error: string }
  /** Without an error of its own: the last attempt's stays. */
  | { status: AsyncWorkStatus.DEAD_LETTERED }
  | { status: AsyncWorkStatus.QUEUED };

/** Records a change of the work `workId`; undefined when there is no such row (work enqueued before the ledger). */
export async function recordChange(execute: Execute, workId: string, change: WorkChange): Promise<AsyncWorkSnapshot | undefined> {
  const error = 'error' in change ? change.error.slice(0, MAX_ERROR_CHARS) : null;
  const ended = [AsyncWorkStatus.SUCCEEDED, AsyncWorkStatus.FAILED, AsyncWorkStatus.DEAD_LETTERED].includes(change.status);
  const [row] = await execute(
    `update async_work set
       status = ?,
       attempts = attempts + case when ? then 1 else 0 end,
       started_at = case when ? then now() else started_at end,
       ended_at = case when ? then now() else null end,
       error = case when ? then ? when ? then null else error end,
       updated_at = now(),
       version = version + 1
     where id = ? ${RETURNING}`,
    [
      change.status,
      change.status === AsyncWorkStatus.RUNNING,
      change.status === AsyncWorkStatus.RUNNING,
      ended,
      error !== null,
      error,
      change.status === AsyncWorkStatus.SUCCEEDED,
      workId,
    ],
  );
  return row ? snapshotOf(row) : undefined;
}

/** Work done within a request (no job): recorded once, as it ended. */
export async function recordDone(
  execute: Execute,
  work: { kind: AsyncWorkKind; organizationId: string; accountId: string | null; subjectId: string; error?: string },
): Promise<AsyncWorkSnapshot> {
  const status = work.error === undefined ? AsyncWorkStatus.SUCCEEDED : AsyncWorkStatus.FAILED;
  const [row] = await execute(
    `insert into async_work (id, organization_id, account_id, kind, status, subject_id, attempts, max_attempts, error, created_at, started_at, ended_at, updated_at, version)
     values (?, ?, ?, ?, ?, ?, 1, 1, ?, now(), now(), now(), now(), 1) ${RETURNING}`,
    [newId(), work.organizationId, work.accountId, work.kind, status, work.subjectId, work.error?.slice(0, MAX_ERROR_CHARS) ?? null],
  );
  return snapshotOf(row!);
}

/** The id of the work a job's data names (the engine keeps it there), if any. */
export function workIdIn(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null || !('workId' in data)) return undefined;
  return typeof data.workId === 'string' ? data.workId : undefined;
}
