import type { EntityManager } from '@mikro-orm/postgresql';
import { accountAccessToken } from '../account/alpha-tokens';
import type { JobContext } from '../jobs/job-engine';
import type { QueuePayloads } from '../jobs/queues';
import { AlphaProviderError } from '../providers/alpha/alpha.errors';
import type { Runtime } from '../runtime';
import { replyStateOf } from './review.alpha-mapping';
import { Review } from './review.entity';
import { ReviewReplyState } from './review.enums';

/** How long to wait before asking again about a reply under moderation: 1, 2, 4 … 60 s. */
function checkDelayMs(attempt: number): number {
  return Math.min(60, 2 ** attempt) * 1000;
}

/**
 * Follows a reply's moderation: asks the provider for the review until its reply is APPROVED (ACTIVE here) or
 * REJECTED. A review the provider no longer has is marked deleted. Retryable failures are retried by the engine.
 */
export async function checkReviewReply(runtime: Runtime, payload: QueuePayloads['review-reply-check'], job: JobContext): Promise<void> {
  const em = runtime.database.orm.em.fork() as EntityManager;
  const review = await em.findOne(Review, payload.reviewId);
  if (!review || review.deletedAt || review.replyState !== ReviewReplyState.PENDING) return;
  const now = runtime.clock.now();
  let remote;
  try {
    remote = await runtime.alpha.getReview(review.name, { accessToken: await accountAccessToken(runtime, review.account.id), signal: job.signal });
  } catch (error) {
    if (error instanceof AlphaProviderError && error.status === 404) {
      await em.nativeUpdate(Review, { id: review.id, deletedAt: null }, { deletedAt: now });
      return;
    }
    throw error;
  }
  const state = remote.reviewReply ? replyStateOf(remote.reviewReply.state) : null;
  if (state === ReviewReplyState.PENDING) {
    await em.transactional(async (tx) => {
      await runtime.jobs.enqueue(tx, 'review-reply-check', { reviewId: review.id, attempt: payload.attempt + 1 }, {
        startAfter: new Date(now.getTime() + checkDelayMs(payload.attempt)),
      });
    });
    return;
  }
  // Decided (or the reply was removed at the provider): record what the provider shows, once.
  await em.nativeUpdate(
    Review,
    { id: review.id, replyState: ReviewReplyState.PENDING },
    {
      replyState: state,
      replyComment: remote.reviewReply?.comment ?? null,
      replyUpdateTime: remote.reviewReply ? new Date(remote.reviewReply.updateTime) : null,
    },
  );
}

export async function registerReviewWorkers(runtime: Runtime): Promise<void> {
  await runtime.jobs.work('review-reply-check', (payload, job) => checkReviewReply(runtime, payload, job));
}
