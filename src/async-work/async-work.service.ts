import type { FilterQuery } from '@mikro-orm/core';
import { requireOrganizationToken, requirePrincipal } from '../access/guards';
import type { Principal } from '../access/principal';
import { accountsWithinReach } from '../access/reach';
import { DomainError } from '../errors/domain-error';
import { AsyncWorkStatus, type AsyncWorkKind, type AsyncWorkSnapshot } from '../jobs/work-ledger';
import type { RequestScope } from '../request-scope';
import { findPlain } from '../db/prepared-reads';
import { isId, NO_MATCH_ID } from '../shared/ids';
import { lockRow } from '../db/row-lock';
import { sliceOf, type Slice, type SliceRequest } from '../shared/slice';
import { AsyncWorkRecord } from './async-work.entity';
import { countWorkByKindAndStatus, type WorkCount } from './async-work.sql';
import { isRetryable, retryOf, type RetryDeps } from './work-kinds';
import type { JobEngine } from '../jobs/job-engine';
import { waitingJobsByQueue } from '../jobs/waiting-jobs';
import { statementsApart } from '../db/statements';
import { PROVIDER_NAMES, type ProviderName } from '../providers/shared/provider-error';
import type { ProviderBudgets } from '../providers/shared/provider-budget';

export type AsyncWorkDeps = RetryDeps;

/** A unit of work as the API shows it: its row, with dates as dates, and whether it may be retried now. */
export interface AsyncWorkView {
  id: string;
  kind: AsyncWorkKind;
  status: AsyncWorkStatus;
  attempts: number;
  maxAttempts: number;
  run: number;
  runAttempts: number;
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
    run: record.run,
    runAttempts: record.runAttempts,
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
  /** Leaves these kinds out (the dashboard lists the polling checks apart). */
  excludeKinds?: AsyncWorkKind[] | null;
  /** Only the work about this record. */
  subjectId?: string | null;
}

/**
 * The work within the principal's reach (src/access/reach.ts): one account's when asked, or for an account token.
 * An account out of reach has no work here, as in the activity log: the same answer as an unknown one.
 */
function reachOf(principal: Principal, accountId: string | null | undefined): { organization: string; account?: string } {
  const reach = accountsWithinReach(principal);
  if (reach.id !== undefined) return { organization: reach.organization, account: reach.id };
  if (accountId) return { organization: reach.organization, account: isId(accountId) ? accountId.toLowerCase() : NO_MATCH_ID };
  return { organization: reach.organization };
}

/** Newest first (ids are UUID v7), filtered by kind and status. */
export async function listWork(scope: RequestScope<AsyncWorkDeps>, filters: WorkFilters, slice: SliceRequest): Promise<Slice<AsyncWorkView>> {
  const principal = requirePrincipal(scope);
  const where: FilterQuery<AsyncWorkRecord> = {
    $and: [
      reachOf(principal, filters.accountId),
      filters.kinds?.length ? { kind: { $in: filters.kinds } } : {},
      filters.statuses?.length ? { status: { $in: filters.statuses } } : {},
      filters.excludeKinds?.length ? { kind: { $nin: filters.excludeKinds } } : {},
      filters.subjectId != null ? { subjectId: isId(filters.subjectId) ? filters.subjectId.toLowerCase() : NO_MATCH_ID } : {},
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

export async function findWork(scope: RequestScope<AsyncWorkDeps>, id: string): Promise<AsyncWorkView | null> {
  const principal = requirePrincipal(scope);
  if (!isId(id)) return null;
  const [record] = await findPlain(scope.em, AsyncWorkRecord, { $and: [{ id }, reachOf(principal, undefined)] }, { limit: 1 });
  return record ? viewOfRecord(record) : null;
}

export type { WorkCount };

/** How much work there is of each kind in each status (only the pairs there is work of). */
export async function countWork(scope: RequestScope<AsyncWorkDeps>, accountId: string | null | undefined): Promise<WorkCount[]> {
  const principal = requirePrincipal(scope);
  return countWorkByKindAndStatus(scope.em, reachOf(principal, accountId));
}

/**
 * Retries dead-lettered work (organization tokens): its record goes back where its job starts from and the job is
 * enqueued again, in one transaction; the unit of work goes back to QUEUED, its attempts kept.
 */
export async function retryWork(scope: RequestScope<AsyncWorkDeps>, id: string): Promise<AsyncWorkView> {
  const principal = requireOrganizationToken(scope);
  if (!isId(id)) throw DomainError.notFound('Async work');
  return scope.em.transactional(async (tx) => {
    const record = await lockRow(tx, AsyncWorkRecord, { id, organization: principal.organizationId });
    if (!record) throw DomainError.notFound('Async work');
    const retry = retryOf(record.kind);
    if (record.status !== AsyncWorkStatus.DEAD_LETTERED || !retry) {
      throw new DomainError('NOT_RETRYABLE', `Only work whose retries ran out can be retried (this is ${record.status} ${record.kind})`);
    }
    // The record goes back where its job starts from, and the job is enqueued again for the same unit of work.
    const { payload } = record;
    const retried = retry.queue.isPayload(payload) && (await retry.reopen(tx, scope.runtime, payload));
    if (!retried) throw new DomainError('NOT_RETRYABLE', 'Its record has moved on since: there is nothing to retry');
    await scope.runtime.jobs.enqueue(tx, retry.queue, payload, { workId: record.id });
    // The answer is the work as this retry left it (QUEUED), read in its transaction: once it commits, a worker may
    // take the job at once, and the retry's answer must not depend on whether it already did.
    return viewOfRecord(await tx.refreshOrFail(record));
  });
}

/** What the provider budgets' view reads of the process: the budgets, and the job engine's pauses and queues. */
export type ProviderBudgetDeps = { jobs: Pick<JobEngine, 'pausedProviders' | 'queuesCalling'>; providerBudgets: ProviderBudgets };

/** A provider's budget, its pause, and what of the caller's waits for it (docs/operations.md, "Provider budgets"). */
export interface ProviderBudgetView {
  provider: ProviderName;
  /** The deployment's budget (ALPHA_BUDGET, BETA_BUDGET); null: none. */
  requestsPerSecond: number | null;
  pausedUntil: Date | null;
  /** The caller's units of work whose job waits for this provider (a 429, or its pause, put it back in its queue). */
  waitingWork: number;
  nextWaitingDueAt: Date | null;
  /** Calls of the answering process waiting for a slot of the budget now: the deployment's, no organization's. */
  waitingCalls: number;
}

/**
 * Each provider's budget and pause, and the caller's work waiting for it: an organization token its organization's,
 * an account token its account's (never another's, not even as a count). The pause is the one the answering process
 * obeys (heard on the event bus from the process that met the 429, or read from the database as it started); the
 * waiting work is read in one statement for every provider.
 */
export async function providerBudgets(scope: RequestScope<ProviderBudgetDeps>): Promise<ProviderBudgetView[]> {
  const principal = requirePrincipal(scope);
  const { jobs, providerBudgets: budgets } = scope.runtime;
  const queuesOf = new Map(PROVIDER_NAMES.map((provider) => [provider, jobs.queuesCalling(provider)]));
  const waiting = await waitingJobsByQueue(statementsApart(scope.em), [...queuesOf.values()].flat(), reachOf(principal, undefined));
  const pauses = new Map(jobs.pausedProviders().map((pause) => [pause.provider, pause.untilMs]));
  return PROVIDER_NAMES.map((provider) => {
    const queues = queuesOf.get(provider)!;
    const own = waiting.filter((row) => queues.includes(row.queue));
    const dues = own.flatMap((row) => (row.firstDueAt ? [row.firstDueAt.getTime()] : []));
    const budget = budgets[provider]?.reading();
    const pausedUntil = pauses.get(provider);
    return {
      provider,
      requestsPerSecond: budget?.perSecond ?? null,
      pausedUntil: pausedUntil === undefined ? null : new Date(pausedUntil),
      waitingWork: own.reduce((sum, row) => sum + row.count, 0),
      nextWaitingDueAt: dues.length > 0 ? new Date(Math.min(...dues)) : null,
      waitingCalls: budget?.waiting ?? 0,
    };
  });
}
