import type { TopicPayloads } from '../events/topics';
import type { Runtime } from '../runtime';
import { entityOfEvent, eventSnapshot } from '../shared/entity-events';
import { Post } from './post.entity';

/**
 * Tells every subscriber, in every process, that a post changed; call after the change committed (best effort: a
 * lost event never fails the change). The event carries the post as it was at this change, so each subscriber sees
 * every transition, in order, even when the next one has already happened.
 */
export async function announcePostChange(runtime: Runtime, post: Post): Promise<void> {
  await runtime.events.announce('post.updated', {
    id: post.id,
    organizationId: post.organization.id,
    accountId: post.account.id,
    locationId: post.location.id,
    version: post.version,
    snapshot: eventSnapshot(runtime, Post, post),
  });
}

export function loadPostForEvent(runtime: Runtime, event: TopicPayloads['post.updated']): Promise<Post> {
  return entityOfEvent(runtime, Post, event);
}
