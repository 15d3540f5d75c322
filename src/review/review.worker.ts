import { eventWrite, recordEvent, type EventRecordDeps } from '../activity/record-event';
import { ChangeNews } from '../events/change-news';
import type { EventBus } from '../events/event-bus';
import { accountAccessToken, type AlphaTokenDeps } from '../account/alpha-tokens';
import type { JobFailure } from '../jobs/failure-policy';
import { defineWorker, type AnyWorker, type JobContext, type JobEngine } from '../jobs/job-engine';
import type { JobPayload } from '../jobs/queue';
import { AlphaProviderError } from '../providers/alpha/alpha.errors';
import type { AlphaReview } from '../providers/alpha/alpha.types';
import { changeLocked } from '../db/row-lock';
import { batchedReadWith, readByIds } from '../db/batched-read';
import type { WriteAlong } from '../db/change-statement';
import { runChanged, transitionedFrom, transitionRow } from '../db/row-transition';
import { statementsApart } from '../db/statements';
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

export type ReviewWorkerDeps = { database: Database; alpha: AlphaClient; jobs: JobEngine; clock: Clock; events: EventBus } & AlphaTokenDeps;

/** How long to wait before asking again about a reply under moderation: 1, 2, 4 … 60 s. */
function checkDelayMs(attempt: number): number {
  return Math.min(60, 2 ** attempt) * 1000;
}

/** Reads a review for its job, with the job's writes along; the reads of jobs starting together share a statement. */
type ReadReview = (reviewId: string, along: WriteAlong[]) => Promise<Review | undefined>;

/** A review whose reply is on its way: the only one a reply's job works on. */
function isPending(review: Review | undefined): review is Review {
  return review !== undefined && review.deletedAt === null && review.replyState === ReviewReplyState.PENDING;
}

/** The review as its job read it, PENDING: what a job's one-statement end is guarded by (its version included). */
function pendingAsRead(review: Review) {
  return { id: review.id, version: review.version, replyState: ReviewReplyState.PENDING, deletedAt: null };
}

/** A review the provider no longer has: marked deleted (a reply to it answers 410). */
async function markDeleted(runtime: { database: Database; clock: Clock }, reviewId: string): Promise<void> {
  await runtime.database.orm.em.fork().nativeUpdate(Review, { id: reviewId, deletedAt: null }, { deletedAt: runtime.clock.now() });
}

const isGone = (error: unknown) => error instanceof AlphaProviderError && error.status === 404;

/** Sends a PENDING reply (sending the same reply twice replaces it with itself), then queues its first check. */
export async function sendReviewReply(runtime: ReviewWorkerDeps, readReview: ReadReview, payload: JobPayload<typeof replySendQueue>, job: JobContext): Promise<void> {
  const review = await readReview(payload.reviewId, job.running());
  if (!isPending(review) || !review.replyComment) return;
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
  const replyUpdateTime = new Date(reply.updateTime);
  // The provider may have decided already: the first look is at once.
  if (await sentAtOnce(runtime, review, replyUpdateTime, job)) return;
  await changeLocked(runtime.database.orm.em.fork(), Review, { id: review.id, replyState: ReviewReplyState.PENDING }, async (current, tx) => {
    current.replyUpdateTime = replyUpdateTime;
    await runtime.jobs.enqueue(tx, replyCheckQueue, { reviewId: review.id, attempt: 0 });
  });
}

/**
 * The reply's send recorded on the review as read, with its first check queued (its job and work) and this job
 * completed with its work, in one statement (docs/write-path.md). False when the review moved on meanwhile: the
 * caller then decides under the row lock.
 */
async function sentAtOnce(runtime: ReviewWorkerDeps, review: Review, replyUpdateTime: Date, job: JobContext): Promise<boolean> {
  const em = runtime.database.orm.em.fork();
  const check = await runtime.jobs.enqueueWrites(replyCheckQueue, { reviewId: review.id, attempt: 0 });
  // This job's work SUCCEEDED, then the check's work QUEUED and its workers' wake-up.
  const news = new ChangeNews(runtime.events);
  const completion = job.completion(news);
  check.tell(news);
  const sent = await check.within(() =>
    transitionRow(em, Review, pendingAsRead(review), { replyUpdateTime }, runtime.clock.now(), [...check.writes, ...completion, ...news.writes()]),
  );
  if (!sent) return false;
  await news.announced();
  return true;
}

/**
 * Follows a reply's moderation: asks the provider for the review until its reply is APPROVED (ACTIVE here) or
 * REJECTED. A review the provider no longer has is marked deleted.
 */
export async function checkReviewReply(runtime: ReviewWorkerDeps, readReview: ReadReview, payload: JobPayload<typeof replyCheckQueue>, job: JobContext): Promise<void> {
  const review = await readReview(payload.reviewId, job.running());
  if (!isPending(review)) return;
  let remote: AlphaReview;
  try {
    remote = await runtime.alpha.getReview(review.name, { accessToken: await accountAccessToken(runtime, review.account.id), signal: job.signal });
  } catch (error) {
    if (!isGone(error)) throw error;
    return markDeleted(runtime, review.id);
  }
  const state = remote.reviewReply ? replyStateOf(remote.reviewReply.state) : null;
  const nextCheck = { reviewId: review.id, attempt: payload.attempt + 1 };
  const startAfter = new Date(runtime.clock.now().getTime() + checkDelayMs(payload.attempt));
  // Decided (or the reply was removed at the provider): what the provider shows.
  const decided = {
    replyState: state,
    replyComment: remote.reviewReply?.comment ?? null,
    replyUpdateTime: remote.reviewReply ? new Date(remote.reviewReply.updateTime) : null,
  };
  const atOnce = state === ReviewReplyState.PENDING ? await followedAtOnce(runtime, review, nextCheck, startAfter, job) : await decidedAtOnce(runtime, review, decided, job);
  if (atOnce) return;
  await changeLocked(runtime.database.orm.em.fork(), Review, { id: review.id, replyState: ReviewReplyState.PENDING }, async (current, tx) => {
    if (state === ReviewReplyState.PENDING) {
      await runtime.jobs.enqueue(tx, replyCheckQueue, nextCheck, { startAfter });
      return;
    }
    Object.assign(current, decided);
    recordEvent(tx, runtime, replyStateChanged, current);
  });
}

/**
 * The next check of a reply still under moderation, queued (its job and work) for the review as read, locked by
 * the statement that queues it and completes this job with its work (docs/write-path.md): the review itself does not
 * change. False when the review moved on meanwhile: the caller then decides under the row lock.
 */
async function followedAtOnce(runtime: ReviewWorkerDeps, review: Review, nextCheck: JobPayload<typeof replyCheckQueue>, startAfter: Date, job: JobContext): Promise<boolean> {
  const em = runtime.database.orm.em.fork();
  const reviews = em.getMetadata().get(Review.name).tableName;
  const check = await runtime.jobs.enqueueWrites(replyCheckQueue, nextCheck, { startAfter });
  const asRead = {
    sql: `select * from "${reviews}" where id = ? and version = ? and reply_state = ? and deleted_at is null for no key update`,
    values: [review.id, review.version, ReviewReplyState.PENDING],
  };
  const news = new ChangeNews(runtime.events);
  const completion = job.completion(news);
  check.tell(news);
  const followed = await check.within(() => runChanged(statementsApart(em), asRead, [...check.writes, ...completion, ...news.writes()]));
  if (!followed) return false;
  await news.announced();
  return true;
}

/**
 * The provider's decision on the review as read, with its event and this job completed with its work, in one
 * statement (docs/write-path.md). False when the review moved on meanwhile: the caller then decides under the row lock.
 */
async function decidedAtOnce(runtime: ReviewWorkerDeps, review: Review, decided: Partial<Record<keyof Review & string, string | Date | null>>, job: JobContext): Promise<boolean> {
  const em = runtime.database.orm.em.fork();
  const now = runtime.clock.now();
  const event = eventWrite(em.getMetadata(), runtime, replyStateChanged, transitionedFrom(em, Review, review, decided, now));
  const news = new ChangeNews(runtime.events);
  if ((await transitionRow(em, Review, pendingAsRead(review), decided, now, [event, ...job.completion(news), ...news.writes()])) === null) return false;
  await news.announced();
  return true;
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
  const readReview: ReadReview = batchedReadWith(readByIds(() => runtime.database.orm.em.fork(), Review));
  return [
    defineWorker({
      queue: replySendQueue,
      run: (payload, job) => sendReviewReply(runtime, readReview, payload, job),
      marksRunning: true,
      recordFailure: (payload, failure) => recordReplyFailure(runtime, payload, failure),
    }),
    defineWorker({
      queue: replyCheckQueue,
      run: (payload, job) => checkReviewReply(runtime, readReview, payload, job),
      marksRunning: true,
      recordFailure: (payload, failure) => recordReplyFailure(runtime, payload, failure),
    }),
  ];
}
