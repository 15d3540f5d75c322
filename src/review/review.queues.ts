import { defineQueue, ownedRow } from '../jobs/queue';

/** Send a review's PENDING reply to the provider, then follow its moderation. */
export const replySendQueue = defineQueue({
  name: 'review-reply-send',
  payload: { reviewId: 'string' },
  work: { kind: 'REVIEW_REPLY_SEND', subject: (payload) => payload.reviewId, owner: ownedRow('review') },
  provider: 'alpha',
});

/** Ask the provider how the moderation of a review's reply is going. */
export const replyCheckQueue = defineQueue({
  name: 'review-reply-check',
  payload: { reviewId: 'string', attempt: 'number' },
  work: { kind: 'REVIEW_REPLY_CHECK', subject: (payload) => payload.reviewId, owner: ownedRow('review') },
  provider: 'alpha',
});
