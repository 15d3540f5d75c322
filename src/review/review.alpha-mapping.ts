import type { AlphaReview, AlphaReviewReplyState, AlphaStarRating } from '../providers/alpha/alpha.types';
import type { Review } from './review.entity';
import { ReviewReplyState } from './review.enums';

const STARS: Record<AlphaStarRating, number> = { ONE: 1, TWO: 2, THREE: 3, FOUR: 4, FIVE: 5 };

/** The provider's moderation states in the document's words: APPROVED is ACTIVE. */
export function replyStateOf(state: AlphaReviewReplyState): ReviewReplyState {
  return state === 'APPROVED' ? ReviewReplyState.ACTIVE : state === 'REJECTED' ? ReviewReplyState.REJECTED : ReviewReplyState.PENDING;
}

/** Our fields of a review the provider has: the one place the two vocabularies of reviews meet. */
export function reviewFieldsOf(remote: AlphaReview): Pick<
  Review,
  'name' | 'reviewerName' | 'reviewerPhotoUrl' | 'reviewerAnonymous' | 'starRating' | 'comment' | 'createTime' | 'updateTime' | 'replyComment' | 'replyUpdateTime' | 'replyState'
> {
  return {
    name: remote.name,
    reviewerName: remote.reviewer.isAnonymous ? null : remote.reviewer.displayName,
    reviewerPhotoUrl: remote.reviewer.profilePhotoUrl ?? null,
    reviewerAnonymous: remote.reviewer.isAnonymous,
    starRating: STARS[remote.starRating],
    comment: remote.comment ?? null,
    createTime: new Date(remote.createTime),
    updateTime: new Date(remote.updateTime),
    replyComment: remote.reviewReply?.comment ?? null,
    replyUpdateTime: remote.reviewReply ? new Date(remote.reviewReply.updateTime) : null,
    replyState: remote.reviewReply ? replyStateOf(remote.reviewReply.state) : null,
  };
}
