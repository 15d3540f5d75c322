import { recordEvent, type EventRecordDeps } from '../activity/record-event';
import { accountAccessToken, type AlphaTokenDeps } from '../account/alpha-tokens';
import type { JobFailure } from '../jobs/failure-policy';
import { defineWorker, type AnyWorker, type JobContext, type JobEngine } from '../jobs/job-engine';
import type { JobPayload } from '../jobs/queue';
import { AlphaProviderError } from '../providers/alpha/alpha.errors';
import type { AlphaReview } from '../providers/alpha/alpha.types';
import { changeLocked } from '../db/row-lock';
import { replyStateOf } from './review.alpha-mapping';
import { Review } from './review.entity';
import { ReviewReplyState } from './review.enums';
import { replyStateChanged } from './review.events';
import { replyCheckQueue, replySendQueue } from './review.queues';
import type { AlphaClient } from '../providers/alpha/alpha.client';
import type { Clock } from '../shared/clock';
import type { Database } from '../db/orm';

/**
 * A reply's way to the provider, in jobs (docs/jobs.md, "Review replies"): each job queues the next in the transaction
 * that records its step, so a PENDING reply always has one that will end it.
 */

export type ReviewWorkerDeps = { database: Database; alpha: AlphaClient; jobs: JobEngine; clock: Clock } & AlphaTokenDeps;

/** How long to wait before asking again about a reply under moderation: 1, 2, 4 … 60 s. */
function checkDelayMs(attempt: number): number {
  return Math.min(60, 2 ** attempt) * 1000;
}

function loadPending(runtime: { database: Database }, reviewId: string): Promise<Review | null> {
  const em = runtime.database.orm.em.fork();
  return em.findOne(Review, { id: reviewId, deletedAt: null, replyState: ReviewReplyState.PENDING });
}

/** A review the provider no longer has: marked deleted (a reply to it answers 410). */
async function markDeleted(runtime: { database: Database; clock: Clock }, reviewId: string): Promise<void> {
  await runtime.database.orm.em.fork().nativeUpdate(Review, { id: reviewId, deletedAt: null }, { deletedAt: runtime.clock.now() });
}

const isGone = (error: unknown) => error instanceof AlphaProviderError && error.status === 404;

/** Sends a PENDING reply (sending the same reply twice replaces it with itself), then queues its first check. */
export async function sendReviewReply(runtime: ReviewWorkerDeps, payload: JobPayload<typeof replySendQueue>, job: JobContext): Promise<void> {
  const review = await loadPending(runtime, payload.reviewId);
  if (!review?.replyComment) return;
  let reply;
  try {
    reply = await runtime.alpha.replyToReview(review.name, review.replyComment, {
      accessToken: await accountAccessToken(runtime, review.account.id),
      signal: job.signal,
    });
  } catch (error) {
    if (!isGone(error)) throw error;
    return markDeleted(runtime, review.id);
  }
  await changeLocked(runtime.database.orm.em.fork(), Review, { id: review.id, replyState: ReviewReplyState.PENDING }, async (current, tx) => {
    current.replyUpdateTime = new Date(reply.updateTime);
    // The provider may have decided already: the first look is at once.
    await runtime.jobs.enqueue(tx, replyCheckQueue, { reviewId: review.id, attempt: 0 });
  });
}

/**
 * Follows a reply's moderation: asks the provider for the review until its reply is APPROVED (ACTIVE here) or
 * REJECTED. A review the provider no longer has is marked deleted.
 */
export async function checkReviewReply(runtime: ReviewWorkerDeps, payload: JobPayload<typeof replyCheckQueue>, job: JobContext): Promise<void> {
  const review = await loadPending(runtime, payload.reviewId);
  if (!review) return;
  let remote: AlphaReview;
  try {
    remote = await runtime.alpha.getReview(review.name, { accessToken: await accountAccessToken(runtime, review.account.id), signal: job.signal });
  } catch (error) {
    if (!isGone(error)) throw error;
    return markDeleted(runtime, review.id);
  }
  const state = remote.reviewReply ? replyStateOf(remote.reviewReply.state) : null;
  await changeLocked(runtime.database.orm.em.fork(), Review, { id: review.id, replyState: ReviewReplyState.PENDING }, async (current, tx) => {
    if (state === ReviewReplyState.PENDING) {
      await runtime.jobs.enqueue(tx, replyCheckQueue, { reviewId: review.id, attempt: payload.attempt + 1 }, {
        startAfter: new Date(runtime.clock.now().getTime() + checkDelayMs(payload.attempt)),
      });
      return;
    }
    // Decided (or the reply was removed at the provider): what the provider shows.
    current.replyState = state;
    current.replyComment = remote.reviewReply?.comment ?? null;
    current.replyUpdateTime = remote.reviewReply ? new Date(remote.reviewReply.updateTime) : null;
    recordEvent(tx, runtime, replyStateChanged, current);
  });
}

/** A reply whose send or check failed for good is FAILED, with the reason; a new reply may then be sent. */
async function recordReplyFailure(runtime: { database: Database } & EventRecordDeps, payload: { reviewId: string }, failure: JobFailure): Promise<void> {
  if (!failure.final) return;
  await changeLocked(runtime.database.orm.em.fork(), Review, { id: payload.reviewId, replyState: ReviewReplyState.PENDING }, (current, tx) => {
    current.replyState = ReviewReplyState.FAILED;
    current.replyError = { status: failure.status, reason: failure.reason, message: failure.message };
    recordEvent(tx, runtime, replyStateChanged, current);
  });
}

export function reviewWorkers(runtime: ReviewWorkerDeps): AnyWorker[] {
  return [
    defineWorker({
      queue: replySendQueue,
      run: (payload, job) => sendReviewReply(runtime, payload, job),
      recordFailure: (payload, failure) => recordReplyFailure(runtime, payload, failure),
    }),
    defineWorker({
      queue: replyCheckQueue,
      run: (payload, job) => checkReviewReply(runtime, payload, job),
      recordFailure: (payload, failure) => recordReplyFailure(runtime, payload, failure),
    }),
  ];
}
