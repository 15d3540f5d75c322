import { AsyncWorkKind, AsyncWorkStatus } from '../jobs/work-ledger';

/**
 * The kinds whose work may be retried once its retries ran out: their record can be put back where its job starts
 * from (src/async-work/async-work.service.ts holds how, for each). Checks of a post's or a reply's moderation,
 * deletions, scans and brand syncs are not: their records settle as failed in ways a person resolves by acting on
 * the record itself (a new post, a new scan, editing the brand), which starts new work.
 */
export const RETRYABLE_KINDS = [
  AsyncWorkKind.POST_PUBLISH,
  AsyncWorkKind.LOCATION_PUBLISH,
  AsyncWorkKind.LOCATION_UPDATE,
  AsyncWorkKind.ACCOUNT_IMPORT,
] as const;

export type RetryableKind = (typeof RETRYABLE_KINDS)[number];

export function isRetryableKind(kind: AsyncWorkKind): kind is RetryableKind {
  return (RETRYABLE_KINDS as readonly AsyncWorkKind[]).includes(kind);
}

/** Whether the work may be retried now: its retries ran out, and its kind can start again. */
export function isRetryable(work: { kind: AsyncWorkKind; status: AsyncWorkStatus }): boolean {
  return work.status === AsyncWorkStatus.DEAD_LETTERED && isRetryableKind(work.kind);
}
