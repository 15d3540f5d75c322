import type { FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { findAccountWithinReach } from '../account/account.access';
import { reopenImport } from '../account-import/account-import.worker';
import { requireOrganizationToken, requirePrincipal } from '../access/guards';
import type { Principal } from '../access/principal';
import { DomainError } from '../errors/domain-error';
import { isQueuePayload, type QueueName, type QueuePayloads } from '../jobs/queues';
import { AsyncWorkKind, AsyncWorkStatus, type AsyncWorkSnapshot } from '../jobs/work-ledger';
import { reopenLocationPublish, reopenLocationUpdate } from '../location/location.worker';
import { reopenPublish } from '../post/post.worker';
import type { RequestScope } from '../request-scope';
import type { Runtime } from '../runtime';
import { findPlain } from '../shared/entity-snapshot';
import { isId } from '../shared/ids';
import { lockRow } from '../shared/row-lock';
import { sliceOf, type Slice, type SliceRequest } from '../shared/slice';
import { AsyncWorkRecord } from './async-work.entity';
import { isRetryable, isRetryableKind, type RetryableKind } from './async-work.retry-rules';

/** A unit of work as the API shows it: its row, with dates as dates, and whether it may be retried now. */
export interface AsyncWorkView {
  id: string;
  kind: AsyncWorkKind;
  status: AsyncWorkStatus;
  attempts: number;
  maxAttempts: number;
  error: string | null;
  progress: number | null;
  organizationId: string;
  accountId: string | null;
  subjectId: string;
  createdAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
  updatedAt: Date;
  retryable: boolean;
  version: number;
}

const dateOf = (text: string | null) => (text === null ? null : new Date(text));

/** The view of a row as an event carried it. */
export function viewOfWork(work: AsyncWorkSnapshot): AsyncWorkView {
  return {
    ...work,
    createdAt: new Date(work.createdAt),
    startedAt: dateOf(work.startedAt),
    endedAt: dateOf(work.endedAt),
    updatedAt: new Date(work.updatedAt),
    retryable: isRetryable(work),
  };
}

function viewOfRecord(record: AsyncWorkRecord): AsyncWorkView {
  return {
    id: record.id,
    kind: record.kind,
    status: record.status,
    attempts: record.attempts,
    maxAttempts: record.maxAttempts,
    error: record.error,
    progress: record.progress,
    organizationId: record.organization.id,
    accountId: record.account?.id ?? null,
    subjectId: record.subjectId,
    createdAt: record.createdAt,
    startedAt: record.startedAt,
    endedAt: record.endedAt,
    updatedAt: record.updatedAt,
    retryable: isRetryable(record),
    version: record.version,
  };
}

export interface WorkFilters {
  /** With an organization token, one account's work; ignored with an account token (its own only). */
  accountId?: string | null;
  kinds?: AsyncWorkKind[] | null;
  statuses?: AsyncWorkStatus[] | null;
}

/** The work within the principal's reach (one account's when asked, or for an account token). */
async function reachOf(scope: RequestScope, principal: Principal, accountId: string | null | undefined): Promise<FilterQuery<AsyncWorkRecord>> {
  if (principal.accountId) return { organization: principal.organizationId, account: principal.accountId };
  if (accountId) {
    await findAccountWithinReach(scope, principal, accountId);
    return { organization: principal.organizationId, account: accountId };
  }
  return { organization: principal.organizationId };
}

/** Newest first (ids are UUID v7), filtered by kind and status. */
export async function listWork(scope: RequestScope, filters: WorkFilters, slice: SliceRequest): Promise<Slice<AsyncWorkView>> {
  const principal = requirePrincipal(scope);
  const where: FilterQuery<AsyncWorkRecord> = {
    $and: [
      await reachOf(scope, principal, filters.accountId),
      filters.kinds?.length ? { kind: { $in: filters.kinds } } : {},
      filters.statuses?.length ? { status: { $in: filters.statuses } } : {},
    ],
  };
  const [rows, totalCount] = await Promise.all([
    findPlain(scope.em, AsyncWorkRecord, slice.afterId ? { $and: [where, { id: { $lt: slice.afterId } }] } : where, {
      orderBy: { id: 'desc' },
      limit: slice.first + 1,
    }),
    scope.em.count(AsyncWorkRecord, where),
  ]);
  return sliceOf(rows.map(viewOfRecord), slice.first, totalCount);
}

export async function findWork(scope: RequestScope, id: string): Promise<AsyncWorkView | null> {
  const principal = requirePrincipal(scope);
  if (!isId(id)) return null;
  const [record] = await findPlain(scope.em, AsyncWorkRecord, { $and: [{ id }, await reachOf(scope, principal, undefined)] }, { limit: 1 });
  return record ? viewOfRecord(record) : null;
}

export interface WorkCount {
  kind: AsyncWorkKind;
  status: AsyncWorkStatus;
  count: number;
}

/** How much work there is of each kind in each status (only the pairs there is work of). */
export async function countWork(scope: RequestScope, accountId: string | null | undefined): Promise<WorkCount[]> {
  const principal = requirePrincipal(scope);
  const reach = (await reachOf(scope, principal, accountId)) as { organization: string; account?: string };
  const rows = await scope.em.getConnection().execute<{ kind: AsyncWorkKind; status: AsyncWorkStatus; count: number }[]>(
    `select kind, status, count(*)::int as count from async_work
      where organization_id = ? ${reach.account ? 'and account_id = ?' : ''}
      group by kind, status order by kind, status`,
    reach.account ? [reach.organization, reach.account] : [reach.organization],
  );
  return rows.map((row) => ({ kind: row.kind, status: row.status, count: Number(row.count) }));
}

/** What a retry uses: the job queue, and what the resources' reopen rules use (they announce their changes). */
type RetryDeps = Pick<Runtime, 'jobs' | 'database' | 'events' | 'clock'>;

type Retry = (tx: EntityManager, runtime: RetryDeps, payload: unknown, workId: string) => Promise<boolean>;

/** Puts the record back where its job starts from, and enqueues the job again for the same unit of work. */
function again<Q extends QueueName>(queue: Q, reopen: (tx: EntityManager, runtime: RetryDeps, payload: QueuePayloads[Q]) => Promise<boolean>): Retry {
  return async (tx, runtime, payload, workId) => {
    if (!isQueuePayload(queue, payload) || !(await reopen(tx, runtime, payload))) return false;
    await runtime.jobs.enqueue(tx, queue, payload, { workId });
    return true;
  };
}

/** How each retryable kind starts again: each record's own rule, in its resource's worker. */
const RETRIES: { [K in RetryableKind]: Retry } = {
  [AsyncWorkKind.POST_PUBLISH]: again('post-publish', reopenPublish),
  [AsyncWorkKind.LOCATION_PUBLISH]: again('location-publish', reopenLocationPublish),
  [AsyncWorkKind.LOCATION_UPDATE]: again('location-update', reopenLocationUpdate),
  [AsyncWorkKind.ACCOUNT_IMPORT]: again('account-import', reopenImport),
};

/**
 * Retries dead-lettered work (organization tokens): its record goes back where its job starts from and the job is
 * enqueued again, in one transaction; the unit of work goes back to QUEUED, its attempts kept.
 */
export async function retryWork(scope: RequestScope, id: string): Promise<AsyncWorkView> {
  const principal = requireOrganizationToken(scope);
  if (!isId(id)) throw DomainError.notFound('Async work');
  return scope.em.transactional(async (tx) => {
    const record = await lockRow(tx, AsyncWorkRecord, { id, organization: principal.organizationId });
    if (!record) throw DomainError.notFound('Async work');
    if (record.status !== AsyncWorkStatus.DEAD_LETTERED || !isRetryableKind(record.kind)) {
      throw new DomainError('NOT_RETRYABLE', `Only work whose retries ran out can be retried (this is ${record.status} ${record.kind})`);
    }
    const retried = await RETRIES[record.kind](tx, scope.runtime, record.payload, record.id);
    if (!retried) throw new DomainError('NOT_RETRYABLE', 'Its record has moved on since: there is nothing to retry');
    // The answer is the work as this retry left it (QUEUED), read in its transaction: once it commits, a worker may
    // take the job at once, and the retry's answer must not depend on whether it already did.
    return viewOfRecord(await tx.refreshOrFail(record));
  });
}
