import { RestAnswerReviewDocument } from '../../generated/graphql';
import { accountIdQuery, body, defineRoute } from '../route';

export const reviewRoutes = [
  defineRoute({
    method: 'POST',
    path: '/review/answer',
    operationId: 'answerReview',
    summary: 'Replies to a review of the account; the provider moderates the reply (PENDING, then ACTIVE or REJECTED).',
    tag: 'Reviews',
    operation: RestAnswerReviewDocument,
    variables: {
      accountId: accountIdQuery,
      reviewId: body('review_id', 'the review’s resource name: accounts/<account>/locations/<location>/reviews/<review>'),
      answer: body('answer', 'the reply, 1 to 4096 bytes'),
    },
    successStatus: 200,
    payload: { times: 'epochMs', at: 'answerReview.message' },
    errors: ['REPLY_IN_PROGRESS', 'REVIEW_DELETED', 'SERVICE_UNAVAILABLE'],
  }),
];
