import { newId } from '../shared/ids';
import type { FollowingWrite, WriteAlong } from '../db/change-statement';
import type { QueueDefinition, QueueWork } from './queue';

/**
 * The ledger of asynchronous work (docs/async-work.md): one `async_work` row per unit of work, written by the job
 * engine as the work's job is enqueued (in the caller's transaction), taken, retried, finished or dead-lettered.
 * The engine announces each change (`async-work.updated`); src/async-work/ reads and retries.
 */

/** What a unit of work does (POST_PUBLISH, …): the modules declare their kinds (src/async-work/work-kinds.ts). */
export type AsyncWorkKind = string;

/** SUCCEEDED, FAILED and DEAD_LETTERED are final; a retry reopens DEAD_LETTERED work. */
export enum AsyncWorkStatus {
  QUEUED = 'QUEUED',
  RUNNING = 'RUNNING',
  RETRYING = 'RETRYING',
  SUCCEEDED = 'SUCCEEDED',
  FAILED = 'FAILED',
  DEAD_LETTERED = 'DEAD_LETTERED',
}

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
  /** 1, then one more at each retry of dead-lettered work; `runAttempts` are the current run's (docs/async-work.md). */
  run: number;
  runAttempts: number;
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

const RETURNING = `returning id, organization_id, account_id, kind, status, subject_id, attempts, max_attempts, run, run_attempts, error, progress,
  created_at, started_at, ended_at, updated_at, version`;

/** A timestamp as PostgreSQL's JSON writes it in UTC: `2026-11-28T15:24:50.123456+00:00` (the fraction optional). */
const PG_UTC_TIME = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?\+00:00$/;

/**
 * A time as ISO text in UTC with milliseconds, as `toISOString` gives it. PostgreSQL's UTC text is rewritten
 * directly (the fraction cut to milliseconds, as Date's parser cuts it): parsing that format is slow, and every
 * ledger row of every event is read so, in each process.
 */
function iso(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const utc = typeof value === 'string' ? PG_UTC_TIME.exec(value) : null;
  if (utc) return `${utc[1]}.${(utc[2] ?? '').padEnd(3, '0').slice(0, 3)}Z`;
  return new Date(value as string | Date).toISOString();
}

/** The snapshot of a row as this ledger's statements return it (from the driver, or as JSON: `to_jsonb`). */
export function asyncWorkOfRow(row: Record<string, unknown>): AsyncWorkSnapshot {
  return {
    id: row.id as string,
    organizationId: row.organization_id as string,
    accountId: (row.account_id as string | null) ?? null,
    kind: row.kind as AsyncWorkKind,
    status: row.status as AsyncWorkStatus,
    subjectId: row.subject_id as string,
    attempts: Number(row.attempts),
    maxAttempts: Number(row.max_attempts),
    run: Number(row.run),
    runAttempts: Number(row.run_attempts),
    error: (row.error as string | null) ?? null,
    progress: row.progress === null || row.progress === undefined ? null : Number(row.progress),
    createdAt: iso(row.created_at)!,
    startedAt: iso(row.started_at),
    endedAt: iso(row.ended_at),
    updatedAt: iso(row.updated_at)!,
    version: Number(row.version),
  };
}

/** The insert of a new unit of work, QUEUED, its owner's columns selected `from` (a FROM clause). */
function queuedStatement<P extends object>(work: QueueWork<P>, queue: QueueDefinition<P>, payload: P, maxAttempts: number, from: string) {
  return {
    sql: `insert into async_work (id, organization_id, account_id, kind, status, subject_id, queue, payload, attempts, max_attempts, created_at, updated_at, version)
     select ?::uuid, ${work.owner.columns}, ?::text, ?::text, ?::uuid, ?::text, ?::jsonb, 0, ?::int, now(), now(), 1
     ${from} ${RETURNING}`,
    values: [newId(), work.kind, AsyncWorkStatus.QUEUED, work.subject(payload), queue.name, JSON.stringify(payload), maxAttempts],
  };
}

/**
 * A new unit of work for a job about to be sent: its row, QUEUED, in the caller's transaction (`execute`), owned by
 * the organization and account of the record it is about. Undefined when that record is gone (nothing to show).
 */
export async function recordQueued<P extends object>(execute: Execute, queue: QueueDefinition<P>, payload: P, maxAttempts: number): Promise<AsyncWorkSnapshot | undefined> {
  const { work } = queue;
  if (!work) return undefined;
  const { sql, values } = queuedStatement(work, queue, payload, maxAttempts, work.owner.from);
  const [row] = await execute(sql, [...values, work.subject(payload)]);
  if (!row) return undefined;
  return asyncWorkOfRow(row);
}

/**
 * The same, written by the statement that inserts the record (src/db/change-statement.ts): its owner's columns are
 * the new row's. The new work's id is given now; `recorded` gets the row once the statement has run.
 */
export function queuedWrite<P extends object>(
  work: QueueWork<P>,
  queue: QueueDefinition<P>,
  payload: P,
  maxAttempts: number,
  recorded: (work: AsyncWorkSnapshot) => void,
): { workId: string; write: FollowingWrite } {
  const statement = queuedStatement(work, queue, payload, maxAttempts, work.owner.fromChanged);
  return { workId: statement.values[0] as string, write: { ...statement, returned: (rows) => recorded(asyncWorkOfRow(rows[0]!)) } };
}

/**
 * `queuedWrite` for the jobs of records a statement creates together (a campaign's posts, `insertRowsChange`), each
 * job's subject being one of those records: one row each, in one write, its owner's columns its record's.
 */
export function queuedRowsWrite<P extends object>(
  work: QueueWork<P>,
  queue: QueueDefinition<P>,
  payloads: readonly P[],
  maxAttempts: number,
  recorded: (works: AsyncWorkSnapshot[]) => void,
): { workIds: string[]; write: FollowingWrite } {
  const workIds = payloads.map(() => newId());
  const rows = payloads.map(() => '(?::uuid, ?::uuid, ?::jsonb)').join(', ');
  return {
    workIds,
    write: {
      sql: `insert into async_work (id, organization_id, account_id, kind, status, subject_id, queue, payload, attempts, max_attempts, created_at, updated_at, version)
       select lg_work.lg_id, ${work.owner.columns}, ?::text, ?::text, lg_work.lg_subject, ?::text, lg_work.lg_payload, 0, ?::int, now(), now(), 1
       from (values ${rows}) as lg_work (lg_id, lg_subject, lg_payload) join changed on changed.id = lg_work.lg_subject ${RETURNING}`,
      values: [
        work.kind,
        AsyncWorkStatus.QUEUED,
        queue.name,
        maxAttempts,
        ...payloads.flatMap((payload, index) => [workIds[index], work.subject(payload), JSON.stringify(payload)]),
      ],
      returned: (rows) => recorded(rows.map(asyncWorkOfRow)),
    },
  };
}

export type WorkChange =
  | { status: AsyncWorkStatus.RUNNING }
  | { status: AsyncWorkStatus.SUCCEEDED }
  | { status: AsyncWorkStatus.RETRYING | AsyncWorkStatus.FAILED; error: string }
  /** Without an error of its own: the last attempt's stays. */
  | { status: AsyncWorkStatus.DEAD_LETTERED }
  /** Queued again: a retry of ended work; or, `waiting`, a job waiting for its provider, the attempt it began given back. */
  | { status: AsyncWorkStatus.QUEUED; waiting?: boolean };

/** The statement of a change of the work `workId`, with `condition` (SQL) added to its WHERE. */
function changeStatement(workId: string, change: WorkChange, condition = ''): { sql: string; values: unknown[] } {
  const error = 'error' in change ? change.error.slice(0, MAX_ERROR_CHARS) : null;
  const ended = [AsyncWorkStatus.SUCCEEDED, AsyncWorkStatus.FAILED, AsyncWorkStatus.DEAD_LETTERED].includes(change.status);
  return {
    sql: `update async_work set
       status = ?,
       attempts = greatest(0, attempts + ?::int),
       started_at = case when ? then now() else started_at end,
       ended_at = case when ? then now() else null end,
       error = case when ? then ? when ? then null else error end,
       progress = case when ? then null when ? and progress is not null then 1 else progress end,
       updated_at = now(),
       version = version + 1
     where id = ? ${condition} ${RETURNING}`,
    values: [
      change.status,
      change.status === AsyncWorkStatus.RUNNING ? 1 : 'waiting' in change && change.waiting ? -1 : 0,
      change.status === AsyncWorkStatus.RUNNING,
      ended,
      error !== null,
      error,
      change.status === AsyncWorkStatus.SUCCEEDED,
      // A new attempt reports its own progress from the start; a success that reported some is complete.
      change.status === AsyncWorkStatus.RUNNING,
      change.status === AsyncWorkStatus.SUCCEEDED,
      workId,
    ],
  };
}

/** Records a change of the work `workId`; undefined when there is no such row (work enqueued before the ledger). */
export async function recordChange(execute: Execute, workId: string, change: WorkChange): Promise<AsyncWorkSnapshot | undefined> {
  const { sql, values } = changeStatement(workId, change);
  const [row] = await execute(sql, values);
  return row ? asyncWorkOfRow(row) : undefined;
}

/** A change of the work `workId` carried by a read's statement (src/db/change-statement.ts `readWith`). */
export function workChangeAlong(workId: string, change: WorkChange, recorded: (work: AsyncWorkSnapshot | undefined) => void): WriteAlong {
  return { ...changeStatement(workId, change), returned: (rows) => recorded(rows[0] ? asyncWorkOfRow(rows[0]) : undefined) };
}

/**
 * A change of the work `workId` written by the statement of the record's change (src/db/change-statement.ts), when
 * that change happens; `recorded` is given the work as changed (undefined when there is no such row).
 */
export function workChangeWrite(workId: string, change: WorkChange, recorded: (work: AsyncWorkSnapshot | undefined) => void): FollowingWrite {
  return {
    ...changeStatement(workId, change, 'and exists (select 1 from changed)'),
    returned: (rows) => recorded(rows[0] ? asyncWorkOfRow(rows[0]) : undefined),
  };
}

/**
 * How far a running unit of work has come, 0 to 1, as its worker knows it (an import's locations, a scan's dots).
 * Undefined when the work is not running (anymore): a late report never overwrites an ended state.
 */
export async function recordProgress(execute: Execute, workId: string, fraction: number): Promise<AsyncWorkSnapshot | undefined> {
  const progress = Math.min(1, Math.max(0, fraction));
  const [row] = await execute(
    `update async_work set progress = ?, updated_at = now(), version = version + 1 where id = ? and status = ? ${RETURNING}`,
    [progress, workId, AsyncWorkStatus.RUNNING],
  );
  return row ? asyncWorkOfRow(row) : undefined;
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
  return asyncWorkOfRow(row!);
}

/** The id of the work a job's data names (the engine keeps it there), if any. */
export function workIdIn(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null || !('workId' in data)) return undefined;
  return typeof data.workId === 'string' ? data.workId : undefined;
}
