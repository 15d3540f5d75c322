import { z } from 'zod';
import {
  ALPHA_REVIEW_REPLY_MAX_BYTES,
  ALPHA_REVIEW_REPLY_STATES,
  ALPHA_STAR_RATINGS,
  type AlphaReview,
  type AlphaReviewReply,
  type AlphaReviewer,
  type AlphaStarRating,
} from '../../src/providers/alpha/alpha.types';
import { FieldViolation, isObject, onlyKnown } from './alpha-sandbox.validation';

/**
 * Reviews on locations and the owners' replies, with the provider's reply moderation: a reply is PENDING for the
 * moderation period, then APPROVED, or REJECTED when it contains the reject marker, worked out on every read.
 */

export const REVIEW_ID_PATTERN = /^[A-Za-z0-9_-]{1,100}$/;
export const REVIEW_COMMENT_MAX_LENGTH = 4096;
const ANONYMOUS_NAME = 'Anonymous';
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

interface ReplyRecord {
  comment: string;
  updatedAt: number;
  /** When moderation ends; null: held PENDING until replaced (a reply seeded as PENDING). */
  decideAt: number | null;
  decision: 'APPROVED' | 'REJECTED';
}

export interface ReviewRecord {
  /** Creation order: breaks ties between reviews of one createTime. */
  seq: number;
  id: string;
  accountId: string;
  locationId: string;
  reviewer: AlphaReviewer;
  starRating: AlphaStarRating;
  comment?: string;
  createdAt: number;
  updatedAt: number;
  reply?: ReplyRecord;
}

/** Where a page of reviews ends: the next page starts below it. */
export interface ReviewPosition {
  createdAt: number;
  seq: number;
}

const STAR_VALUES: Record<AlphaStarRating, number> = { ONE: 1, TWO: 2, THREE: 3, FOUR: 4, FIVE: 5 };

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

const timestampSchema = z
  .string()
  .refine((text) => RFC3339.test(text) && !Number.isNaN(Date.parse(text)), 'must be an RFC 3339 timestamp');

const replyCommentSchema = z
  .string()
  .refine(
    (text) => utf8Bytes(text) >= 1 && utf8Bytes(text) <= ALPHA_REVIEW_REPLY_MAX_BYTES,
    `must be 1 to ${ALPHA_REVIEW_REPLY_MAX_BYTES} bytes`,
  );

/** A review as a control adds it (POST /_control/identities, POST /_control/reviews). */
export const reviewInputSchema = z
  .strictObject({
    /** Absent: a new random one. */
    reviewId: z.string().regex(REVIEW_ID_PATTERN).optional(),
    /** Absent: an anonymous reviewer. */
    reviewer: z
      .strictObject({
        displayName: z.string().min(1).max(200).optional(),
        profilePhotoUrl: z
          .url({ protocol: /^https?$/ })
          .max(2048)
          .optional(),
        isAnonymous: z.boolean().default(false),
      })
      .optional(),
    starRating: z.enum(ALPHA_STAR_RATINGS),
    comment: z.string().min(1).max(REVIEW_COMMENT_MAX_LENGTH).optional(),
    /** Absent: now, on the sandbox clock. */
    createTime: timestampSchema.optional(),
    /** Absent: createTime. */
    updateTime: timestampSchema.optional(),
    reviewReply: z
      .strictObject({
        comment: replyCommentSchema,
        /** PENDING here is held until the owner replies again; the others are decided already. */
        state: z.enum(ALPHA_REVIEW_REPLY_STATES).default('APPROVED'),
        /** Absent: the review's updateTime. */
        updateTime: timestampSchema.optional(),
      })
      .optional(),
  })
  .refine(({ reviewer }) => reviewer === undefined || reviewer.isAnonymous || reviewer.displayName !== undefined, {
    message: 'a reviewer who is not anonymous needs a displayName',
    path: ['reviewer', 'displayName'],
  });

export type AlphaSandboxReviewInput = z.input<typeof reviewInputSchema>;
export type AlphaSandboxReviewPlan = z.output<typeof reviewInputSchema>;

/** The review a control's input describes, at the place and time the store gives it. */
export function reviewRecordOf(
  input: AlphaSandboxReviewPlan,
  at: { seq: number; id: string; accountId: string; locationId: string; now: number },
): ReviewRecord {
  const createdAt = input.createTime === undefined ? at.now : Date.parse(input.createTime);
  const updatedAt = input.updateTime === undefined ? createdAt : Date.parse(input.updateTime);
  if (updatedAt < createdAt) throw new FieldViolation('updateTime', 'must not be before createTime');
  const anonymous = input.reviewer === undefined || input.reviewer.isAnonymous;
  const reviewer: AlphaReviewer = {
    displayName: anonymous ? (input.reviewer?.displayName ?? ANONYMOUS_NAME) : input.reviewer!.displayName!,
    ...(input.reviewer?.profilePhotoUrl !== undefined ? { profilePhotoUrl: input.reviewer.profilePhotoUrl } : {}),
    isAnonymous: anonymous,
  };
  const record: ReviewRecord = {
    seq: at.seq,
    id: at.id,
    accountId: at.accountId,
    locationId: at.locationId,
    reviewer,
    starRating: input.starRating,
    ...(input.comment !== undefined ? { comment: input.comment } : {}),
    createdAt,
    updatedAt,
  };
  if (input.reviewReply !== undefined) {
    const repliedAt = input.reviewReply.updateTime === undefined ? updatedAt : Date.parse(input.reviewReply.updateTime);
    const { state } = input.reviewReply;
    record.reply = {
      comment: input.reviewReply.comment,
      updatedAt: repliedAt,
      decideAt: state === 'PENDING' ? null : repliedAt,
      decision: state === 'REJECTED' ? 'REJECTED' : 'APPROVED',
    };
  }
  return record;
}

/** The body of PUT …/reviews/{r}/reply: its comment. The output-only fields may be sent back and are ignored. */
export function validateReplyBody(body: unknown): string {
  if (!isObject(body)) throw new FieldViolation('reviewReply', 'the request body must be a JSON object');
  onlyKnown(body, ['comment', 'updateTime', 'state'], '');
  if (body.comment === undefined) throw new FieldViolation('comment', 'is required');
  if (typeof body.comment !== 'string') throw new FieldViolation('comment', 'must be a string');
  const bytes = utf8Bytes(body.comment);
  if (bytes < 1 || bytes > ALPHA_REVIEW_REPLY_MAX_BYTES) {
    throw new FieldViolation(
      'comment',
      `must be 1 to ${ALPHA_REVIEW_REPLY_MAX_BYTES} bytes of UTF-8 (it has ${bytes})`,
    );
  }
  return body.comment;
}

/** A review as a state file holds it. */
export const reviewRecordSchema = z.strictObject({
  seq: z.number().int().min(1),
  id: z.string().regex(REVIEW_ID_PATTERN),
  accountId: z.string().regex(/^[^/]+$/),
  locationId: z.string().regex(/^[^/]+$/),
  reviewer: z.strictObject({
    displayName: z.string().min(1),
    profilePhotoUrl: z.string().optional(),
    isAnonymous: z.boolean(),
  }),
  starRating: z.enum(ALPHA_STAR_RATINGS),
  comment: z.string().max(REVIEW_COMMENT_MAX_LENGTH).optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
  reply: z
    .strictObject({
      comment: replyCommentSchema,
      updatedAt: z.number(),
      decideAt: z.number().nullable(),
      decision: z.enum(['APPROVED', 'REJECTED']),
    })
    .optional(),
});

export function reviewNameOf(record: Pick<ReviewRecord, 'accountId' | 'locationId' | 'id'>): string {
  return `accounts/${record.accountId}/locations/${record.locationId}/reviews/${record.id}`;
}

/** The reviews of every location, by resource name. */
export class AlphaSandboxReviews {
  private readonly reviews = new Map<string, ReviewRecord>();

  constructor(private readonly clock: () => number) {}

  clear(): void {
    this.reviews.clear();
  }

  has(name: string): boolean {
    return this.reviews.has(name);
  }

  add(record: ReviewRecord): AlphaReview {
    this.reviews.set(reviewNameOf(record), record);
    return this.view(record);
  }

  get(name: string): AlphaReview | undefined {
    const record = this.reviews.get(name);
    return record && this.view(record);
  }

  /** Newest first (createTime, then creation order); the average and count cover the whole location. */
  list(input: { accountId: string; locationId: string; pageSize: number; after?: ReviewPosition }): {
    reviews: AlphaReview[];
    averageRating: number;
    totalReviewCount: number;
    next?: ReviewPosition;
  } {
    const all = [...this.reviews.values()]
      .filter((record) => record.accountId === input.accountId && record.locationId === input.locationId)
      .sort((a, b) => b.createdAt - a.createdAt || b.seq - a.seq);
    const { after } = input;
    const matching =
      after === undefined
        ? all
        : all.filter(
            (record) =>
              record.createdAt < after.createdAt || (record.createdAt === after.createdAt && record.seq < after.seq),
          );
    const page = matching.slice(0, input.pageSize);
    const total = all.reduce((sum, record) => sum + STAR_VALUES[record.starRating], 0);
    const last = page[page.length - 1];
    return {
      reviews: page.map((record) => this.view(record)),
      averageRating: averageOf(total, all.length),
      totalReviewCount: all.length,
      ...(matching.length > page.length && last ? { next: { createdAt: last.createdAt, seq: last.seq } } : {}),
    };
  }

  /**
   * Replaces the review's reply. Its answer is always PENDING: moderation decides at the earliest on the next read.
   * undefined: no such review.
   */
  reply(
    name: string,
    comment: string,
    rules: { moderationMs: number; rejectMarker: string | null },
  ): AlphaReviewReply | undefined {
    const record = this.reviews.get(name);
    if (!record) return undefined;
    const now = this.clock();
    record.reply = {
      comment,
      updatedAt: now,
      decideAt: now + rules.moderationMs,
      decision: rules.rejectMarker !== null && comment.includes(rules.rejectMarker) ? 'REJECTED' : 'APPROVED',
    };
    return { comment, updateTime: new Date(now).toISOString(), state: 'PENDING' };
  }

  /** 'no-reply': the review has none; undefined: no such review. */
  deleteReply(name: string): 'deleted' | 'no-reply' | undefined {
    const record = this.reviews.get(name);
    if (!record) return undefined;
    if (!record.reply) return 'no-reply';
    delete record.reply;
    return 'deleted';
  }

  /** As when its author deletes it: it is gone for every call. */
  delete(name: string): boolean {
    return this.reviews.delete(name);
  }

  /** Each reviewed location's average and count, as its review list shows them, by `accounts/{a}/locations/{l}`. */
  ratings(): Map<string, { averageRating: number; totalReviewCount: number }> {
    const sums = new Map<string, { total: number; count: number }>();
    for (const record of this.reviews.values()) {
      const location = `accounts/${record.accountId}/locations/${record.locationId}`;
      const sum = sums.get(location) ?? { total: 0, count: 0 };
      sum.total += STAR_VALUES[record.starRating];
      sum.count += 1;
      sums.set(location, sum);
    }
    return new Map(
      [...sums].map(([location, { total, count }]) => [
        location,
        { averageRating: averageOf(total, count), totalReviewCount: count },
      ]),
    );
  }

  persisted(): ReviewRecord[] {
    return [...this.reviews.values()].sort((a, b) => a.seq - b.seq).map((record) => structuredClone(record));
  }

  replace(records: ReviewRecord[]): void {
    this.reviews.clear();
    for (const record of records) this.reviews.set(reviewNameOf(record), record);
  }

  /** Every review, oldest created first, with its account and location. */
  snapshot(): (AlphaReview & { accountId: string; locationId: string })[] {
    return [...this.reviews.values()]
      .sort((a, b) => a.seq - b.seq)
      .map((record) => ({ ...this.view(record), accountId: record.accountId, locationId: record.locationId }));
  }

  /** The review as the provider shows it now: its reply's state is worked out from the clock on every read. */
  private view(record: ReviewRecord): AlphaReview {
    const review: AlphaReview = {
      name: reviewNameOf(record),
      reviewId: record.id,
      reviewer: { ...record.reviewer },
      starRating: record.starRating,
      ...(record.comment !== undefined ? { comment: record.comment } : {}),
      createTime: new Date(record.createdAt).toISOString(),
      updateTime: new Date(record.updatedAt).toISOString(),
    };
    if (record.reply) review.reviewReply = replyView(record.reply, this.clock());
    return review;
  }
}

/** One decimal, as the provider shows it; 0 without reviews. */
function averageOf(totalStars: number, count: number): number {
  return count === 0 ? 0 : Math.round((totalStars / count) * 10) / 10;
}

function replyView(reply: ReplyRecord, now: number): AlphaReviewReply {
  const pending = reply.decideAt === null || now < reply.decideAt;
  return {
    comment: reply.comment,
    updateTime: new Date(reply.updatedAt).toISOString(),
    state: pending ? 'PENDING' : reply.decision,
  };
}
