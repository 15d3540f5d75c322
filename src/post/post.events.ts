import type { EntityManager } from '@mikro-orm/postgresql';
import { announceOnCommit } from '../events/announce-on-commit';
import type { TopicPayloads } from '../events/topics';
import type { Runtime } from '../runtime';
import { entityOfEvent, eventSnapshot } from '../shared/entity-events';
import { Post } from './post.entity';

/** What announcing a post's change uses. */
export type PostEventDeps = Pick<Runtime, 'events' | 'database'>;

/**
 * Tells every subscriber, in every process, that a post changed, once the transaction of `em` commits (best
 * effort: a lost event never fails the change; src/events/announce-on-commit.ts). The event carries the post as
 * committed at this change, so each subscriber sees every transition, in order, even when the next one has
 * already happened.
 */
export function announcePostChange(em: EntityManager, runtime: PostEventDeps, post: Post): void {
  announceOnCommit(em, runtime.events, 'post.updated', () => ({
    id: post.id,
    organizationId: post.organization.id,
    accountId: post.account.id,
    locationId: post.location.id,
    version: post.version,
    snapshot: eventSnapshot(runtime.database.orm, Post, post),
  }));
}

export function loadPostForEvent(runtime: Pick<Runtime, 'database'>, event: TopicPayloads['post.updated']): Promise<Post> {
  return entityOfEvent(runtime.database.orm, Post, event);
}
