import type { AsyncWorkSnapshot } from '../jobs/work-ledger';
import type { EntityEvent } from './entity-events';

/**
 * Every event topic and its payload, declared once. Payloads cross processes through PostgreSQL NOTIFY
 * (8000-byte limit) or Redis, so they stay small: ids, scope, and at most a compact snapshot.
 */
export interface TopicPayloads {
  /** A post changed; subscribers get the whole post as of this change (the snapshot, or loaded when too large). */
  'post.updated': EntityEvent & { organizationId: string; accountId: string; locationId: string };
  /** A location update job changed (created, started, finished); as posts, with the job as of this change. */
  'location-update-job.updated': EntityEvent & { organizationId: string; accountId: string; locationId: string };
  /** A unit of asynchronous work changed (queued, taken, retried, ended): its row as of this change. */
  'async-work.updated': AsyncWorkSnapshot;
  /** Jobs were enqueued: workers in every process wake instead of waiting for their next poll. */
  'jobs.enqueued': { queue: string };
  /** A 429 named a provider's project quota: no process calls that provider before `until` (ms since the epoch). */
  'provider.paused': { provider: 'alpha' | 'beta'; until: number };
  /** A token was revoked: every process closes the WebSockets opened with it, ending their subscriptions. */
  'token.revoked': { tokenId: string };
  /** Webhook work waits: activity events were committed (a database trigger sends it), a ping or redelivery was asked for, or a delivery ended and its record's next may go. The dispatcher looks now instead of at its next poll. */
  'webhooks.pending': Record<string, never>;
  /**
   * An activity event was committed, while a stream of its organization listens (`eventStream`): sent by a database
   * trigger on `activity_event` (migrations/…_EventStreams.ts), the event's ids and type only.
   */
  'activity.recorded': { id: string; organizationId: string; accountId: string | null; type: string };
}

export type Topic = keyof TopicPayloads;

export const TOPICS: readonly Topic[] = ['post.updated', 'location-update-job.updated', 'async-work.updated', 'jobs.enqueued', 'provider.paused', 'token.revoked', 'webhooks.pending', 'activity.recorded'];

export function isTopic(value: unknown): value is Topic {
  return typeof value === 'string' && (TOPICS as readonly string[]).includes(value);
}

