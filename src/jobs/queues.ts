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
}

export type QueueName = keyof QueuePayloads;

export const QUEUES: readonly QueueName[] = ['post-publish', 'post-check', 'post-delete'];

/** Jobs whose retries are exhausted land here, for inspection; nothing consumes it automatically. */
export const DEAD_LETTER_QUEUE = 'dead-letter';

/** Payloads come back from the database as `unknown`: these guards are the only way to a typed payload. */
export function isPostJobPayload(data: unknown): data is { postId: string; attempt?: number } {
  if (typeof data !== 'object' || data === null) return false;
  const { postId, attempt } = data as { postId?: unknown; attempt?: unknown };
  return typeof postId === 'string' && (attempt === undefined || typeof attempt === 'number');
}
