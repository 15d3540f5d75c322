/**
 * Every job queue and its payload, declared once. Payloads carry ids, never records: a worker reloads the
 * entity and checks its state, so running a job twice is harmless.
 */
export interface QueuePayloads {
  /** Send a SENDING post to the alpha provider. */
  'post-publish': { postId: string };
  /** Ask the provider how a PROCESSING or SCHEDULED post is doing. */
  'post-check': { postId: string; attempt: number };
  /** Delete a post at the provider, then mark it DELETED. */
  'post-delete': { postId: string };
  /** Create a new location at the provider; it is connected once the provider knows it. */
  'location-publish': { locationId: string };
  /** Send a QUEUED location update to the provider, then apply it. */
  'location-update': { jobId: string };
  /** Import (or re-sync) a connected account's locations and reviews from the provider. */
  'account-import': { accountId: string };
  /** Send a review's PENDING reply to the provider, then follow its moderation. */
  'review-reply-send': { reviewId: string };
  /** Ask the provider how the moderation of a review's reply is going. */
  'review-reply-check': { reviewId: string; attempt: number };
  /** Run a queued competitor scan: a search at each dot of its grid. */
  'competitor-scan': { scanId: string };
  /** Push a beta brand's pending change (create, replace or delete) to the beta provider. */
  'beta-brand-sync': { brandId: string };
  /** Send one SENDING webhook delivery; the receiver's failures are the delivery's to retry (docs/webhooks.md). */
  'webhook-deliver': { deliveryId: string };
}

export type QueueName = keyof QueuePayloads;

/**
 * Where a queue's jobs go when their retries are exhausted (or their worker died on the last attempt): the engine
 * takes them from there to settle their records (src/jobs/job-engine.ts), and they stay listed for inspection.
 */
export function deadLetterQueueOf(queue: QueueName): string {
  return `${queue}-dead`;
}

function isRecord(data: unknown): data is Record<string, unknown> {
  return typeof data === 'object' && data !== null && !Array.isArray(data);
}

const hasPostId = (data: unknown): data is { postId: string } => isRecord(data) && typeof data.postId === 'string';
const hasLocationId = (data: unknown): data is { locationId: string } => isRecord(data) && typeof data.locationId === 'string';
const hasJobId = (data: unknown): data is { jobId: string } => isRecord(data) && typeof data.jobId === 'string';
const hasAccountId = (data: unknown): data is { accountId: string } => isRecord(data) && typeof data.accountId === 'string';
const hasScanId = (data: unknown): data is { scanId: string } => isRecord(data) && typeof data.scanId === 'string';
const hasReviewId = (data: unknown): data is { reviewId: string } => isRecord(data) && typeof data.reviewId === 'string';
const hasBrandId = (data: unknown): data is { brandId: string } => isRecord(data) && typeof data.brandId === 'string';
const hasDeliveryId = (data: unknown): data is { deliveryId: string } => isRecord(data) && typeof data.deliveryId === 'string';

/**
 * Payloads come back from the database as `unknown`: these guards, one per queue, are the only way to a typed
 * payload. The mapped type makes a new queue fail to compile until it has its guard.
 */
const payloadGuards: { [Q in QueueName]: (data: unknown) => data is QueuePayloads[Q] } = {
  'post-publish': hasPostId,
  'post-check': (data): data is QueuePayloads['post-check'] =>
    hasPostId(data) && typeof (data as { attempt?: unknown }).attempt === 'number',
  'post-delete': hasPostId,
  'location-publish': hasLocationId,
  'location-update': hasJobId,
  'account-import': hasAccountId,
  'review-reply-send': hasReviewId,
  'review-reply-check': (data): data is QueuePayloads['review-reply-check'] =>
    hasReviewId(data) && typeof (data as { attempt?: unknown }).attempt === 'number',
  'competitor-scan': hasScanId,
  'beta-brand-sync': hasBrandId,
  'webhook-deliver': hasDeliveryId,
};

export const QUEUES = Object.keys(payloadGuards) as QueueName[];

export function isQueuePayload<Q extends QueueName>(queue: Q, data: unknown): data is QueuePayloads[Q] {
  return payloadGuards[queue](data);
}

/** Queues whose jobs call a provider (what the fault tests aim at); webhook deliveries call the organizations' receivers. */
export type ProviderQueueName = Exclude<QueueName, 'webhook-deliver'>;
export const PROVIDER_QUEUES = QUEUES.filter((queue): queue is ProviderQueueName => queue !== 'webhook-deliver');
