import { eventWrite, recordEvent } from '../activity/record-event';
import type { ObjectQuery } from '@mikro-orm/core';
import { resolveAccountScope } from '../account/account.access';
import { accountAccessToken } from '../account/alpha-tokens';
import { DomainError } from '../errors/domain-error';
import { findLocationOfAccount } from '../location/location.service';
import { ProviderError } from '../providers/shared/provider-error';
import { ALPHA_REVIEW_REPLY_MAX_BYTES } from '../providers/alpha/alpha.types';
import type { RequestScope } from '../request-scope';
import { findPlain } from '../db/prepared-reads';
import { isId } from '../shared/ids';
import { changeLocked } from '../db/row-lock';
import { transitionedFrom, transitionRow } from '../db/row-transition';
import { sliceOf, type Slice, type SliceRequest } from '../shared/slice';
import { Review } from './review.entity';
import { ReviewReplyState } from './review.enums';
import { replyStateChanged } from './review.events';
import { replySendQueue } from './review.queues';
import type { AlphaClient } from '../providers/alpha/alpha.client';
import type { JobEngine } from '../jobs/job-engine';
import type { ConsentTokenDeps } from '../providers/shared/consent-tokens';
import { ChangeNews } from '../events/change-news';
import type { EventBus } from '../events/event-bus';

export type ReviewServiceDeps = { alpha: AlphaClient; jobs: JobEngine; events: EventBus } & ConsentTokenDeps;

export interface ReviewFilter {
  accountId?: string | null;
  locationId: string;
  /** 1 to 5 stars. */
  starRating?: number | null;
  /** true: only reviews with a reply; false: only those without. */
  replied?: boolean | null;
  replyState?: ReviewReplyState | null;
}

/** A location's reviews still at the provider, newest first (they are imported oldest first, so ids follow their age). */
export async function listReviews(scope: RequestScope<ReviewServiceDeps>, filter: ReviewFilter, slice: SliceRequest): Promise<Slice<Review>> {
  const accountId = await resolveAccountScope(scope, filter.accountId);
  const location = await findLocationOfAccount(scope.em, accountId, filter.locationId);
  if (filter.starRating !== undefined && filter.starRating !== null && (filter.starRating < 1 || filter.starRating > 5)) {
    throw DomainError.badInput('starRating must be 1 to 5');
  }
  const where: ObjectQuery<Review> = { location: location.id, deletedAt: null };
  if (filter.starRating) where.starRating = filter.starRating;
  if (filter.replied === true) where.replyComment = { $ne: null };
  if (filter.replied === false) where.replyComment = null;
  if (filter.replyState) where.replyState = filter.replyState;
  const [rows, totalCount] = await Promise.all([
    findPlain(scope.em, Review, slice.afterId ? { ...where, id: { $lt: slice.afterId } } : where, { orderBy: { id: 'desc' }, limit: slice.first + 1 }),
    scope.em.count(Review, where),
  ]);
  return sliceOf(rows, slice.first, totalCount);
}

/** One review of the account, by our id or by its resource name (404 otherwise). */
export async function getReview(scope: RequestScope<ReviewServiceDeps>, args: { accountId?: string | null; id: string }): Promise<Review> {
  const accountId = await resolveAccountScope(scope, args.accountId);
  const [review] = await findPlain(scope.em, Review, isId(args.id) ? { id: args.id, account: accountId } : { name: args.id, account: accountId }, { limit: 1 });
  if (!review) throw DomainError.notFound('Review');
  return review;
}

export interface AnswerReviewOutcome {
  message: string;
  review: Review;
}

const inProgress = () =>
  new DomainError('REPLY_IN_PROGRESS', 'A reply to this review is being moderated', {
    payload: { msg: 'A reply to this review is already in progress: wait until the provider has moderated it' },
  });

const reviewDeleted = () => new DomainError('REVIEW_DELETED', 'The review was deleted');

/**
 * Replies to a review of the caller's account (product-decisions §8; docs/jobs.md, "Review replies"). The reply is
 * claimed PENDING under the review's row lock, so of concurrent replies one wins, in the transaction that queues its
 * send (src/review/review.worker.ts): no PENDING is ever left without a job that will end it.
 */
export async function answerReview(scope: RequestScope<ReviewServiceDeps>, args: { accountId?: string | null; reviewId: string; answer: string }): Promise<AnswerReviewOutcome> {
  const accountId = await resolveAccountScope(scope, args.accountId);
  const answer = args.answer.trim();
  const bytes = Buffer.byteLength(answer, 'utf8');
  if (bytes < 1 || bytes > ALPHA_REVIEW_REPLY_MAX_BYTES) throw DomainError.badInput(`answer must be 1 to ${ALPHA_REVIEW_REPLY_MAX_BYTES} bytes of text`);
  const review = await scope.em.findOne(Review, { name: args.reviewId, account: accountId });
  if (!review) throw DomainError.notFound('Review');
  if (review.deletedAt) throw reviewDeleted();
  if (review.replyState === ReviewReplyState.PENDING) throw inProgress();
  const { runtime } = scope;
  const now = runtime.clock.now();
  try {
    await runtime.alpha.getReview(review.name, { accessToken: await accountAccessToken(runtime, accountId) });
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    if (error.status === 404) {
      await scope.em.nativeUpdate(Review, { id: review.id, deletedAt: null }, { deletedAt: now });
      throw reviewDeleted();
    }
    throw new DomainError('SERVICE_UNAVAILABLE', `The alpha provider could not take the reply now; try again (${error.message})`, { retryAfterSeconds: 5 });
  }
  const claim: ReplyClaim = { replyComment: answer, replyUpdateTime: now, replyState: ReviewReplyState.PENDING, replyError: null };
  const claimed = (await claimAtOnce(scope, review, claim)) ?? (await claimLocked(scope, review.id, claim));
  return { message: 'The reply was accepted: it is sent to the provider, which then moderates it', review: claimed };
}

/** What claiming a reply sets on its review. */
interface ReplyClaim {
  replyComment: string;
  replyUpdateTime: Date;
  replyState: ReviewReplyState.PENDING;
  replyError: null;
}

/**
 * The reply claimed on the review as read (its version guards it: not PENDING, not deleted, as checked), with its
 * event, its send job and the job's work, in one statement (docs/write-path.md); null when the review moved on since.
 */
async function claimAtOnce(scope: RequestScope<ReviewServiceDeps>, read: Review, claim: ReplyClaim): Promise<Review | null> {
  const { runtime, em } = scope;
  const now = runtime.clock.now();
  const job = await runtime.jobs.enqueueWrites(replySendQueue, { reviewId: read.id });
  const event = eventWrite(em.getMetadata(), runtime, replyStateChanged, transitionedFrom(em, Review, read, { ...claim }, now));
  const news = new ChangeNews(runtime.events);
  job.tell(news);
  const claimed = await job.within(() => transitionRow(em, Review, { id: read.id, version: read.version }, { ...claim }, now, [event, ...job.writes, ...news.writes()]));
  if (claimed) await news.announced();
  return claimed;
}

/** The reply claimed under the review's row lock, in a transaction: for a review that moved on after it was read. */
async function claimLocked(scope: RequestScope<ReviewServiceDeps>, reviewId: string, claim: ReplyClaim): Promise<Review> {
  const { runtime } = scope;
  const claimed = await changeLocked(scope.em, Review, { id: reviewId }, async (current, tx) => {
    if (current.deletedAt) throw reviewDeleted();
    if (current.replyState === ReviewReplyState.PENDING) throw inProgress();
    Object.assign(current, claim);
    recordEvent(tx, runtime, replyStateChanged, current);
    await runtime.jobs.enqueue(tx, replySendQueue, { reviewId });
  });
  if (!claimed) throw DomainError.notFound('Review');
  return claimed.row;
}
