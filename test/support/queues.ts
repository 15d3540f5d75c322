import { composition } from '../../src/modules';

/** The queues whose jobs call a provider, named here so that the fault tests' tables must cover each one. */
export type ProviderQueueName =
  | 'post-publish'
  | 'post-check'
  | 'post-delete'
  | 'location-publish'
  | 'location-update'
  | 'account-import'
  | 'review-reply-send'
  | 'review-reply-check'
  | 'competitor-scan'
  | 'beta-brand-sync';

/** What the modules declare as calling a provider: the fault tests check their tables against it. */
export const PROVIDER_QUEUES = composition.queues.filter((queue) => queue.provider).map((queue) => queue.name as ProviderQueueName);
